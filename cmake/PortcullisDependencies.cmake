# The one place where Portcullis looks for its dependencies. Every one comes from a Debian 12
# package (see scripts/lib/packages.sh); nothing is downloaded at configure or build time.
include_guard(GLOBAL)

find_package(Threads REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(Boost 1.81.0 EXACT CONFIG REQUIRED COMPONENTS json)
find_package(spdlog CONFIG REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(GTest CONFIG REQUIRED)
find_package(benchmark CONFIG REQUIRED)
find_package(ICU REQUIRED COMPONENTS uc i18n)

find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBPQXX REQUIRED IMPORTED_TARGET libpqxx)
pkg_check_modules(CARES REQUIRED IMPORTED_TARGET libcares)
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
pkg_check_modules(GUMBO REQUIRED IMPORTED_TARGET gumbo)
pkg_check_modules(CBOR REQUIRED IMPORTED_TARGET libcbor)

# Short, stable names for the rest of the build.
add_library(portcullis_dep_pqxx INTERFACE)
target_link_libraries(portcullis_dep_pqxx INTERFACE PkgConfig::LIBPQXX)
add_library(portcullis::dep::pqxx ALIAS portcullis_dep_pqxx)
add_library(portcullis_dep_cares INTERFACE)
target_link_libraries(portcullis_dep_cares INTERFACE PkgConfig::CARES)
add_library(portcullis::dep::cares ALIAS portcullis_dep_cares)
add_library(portcullis_dep_curl INTERFACE)
target_link_libraries(portcullis_dep_curl INTERFACE PkgConfig::CURL)
add_library(portcullis::dep::curl ALIAS portcullis_dep_curl)
add_library(portcullis_dep_gumbo INTERFACE)
target_link_libraries(portcullis_dep_gumbo INTERFACE PkgConfig::GUMBO)
add_library(portcullis::dep::gumbo ALIAS portcullis_dep_gumbo)
add_library(portcullis_dep_cbor INTERFACE)
target_link_libraries(portcullis_dep_cbor INTERFACE PkgConfig::CBOR)
add_library(portcullis::dep::cbor ALIAS portcullis_dep_cbor)

# The allocator of release builds: tcmalloc (gperftools' minimal build, Debian's
# libgoogle-perftools-dev), linked through portcullis::lifecycle, which caps its caches
# (allocator_caches.h). Under load glibc's malloc was a quarter of the gateway's CPU and a
# fifth of the verifier's, much of it malloc_consolidate (every allocation of 1 KiB or more walks
# the fastbins; issue 21's profiles). Debug, sanitizer and fuzz builds keep glibc's, which the
# sanitizers replace anyway.
add_library(portcullis_dep_allocator INTERFACE)
if(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo|MinSizeRel)$"
   AND NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  pkg_check_modules(TCMALLOC REQUIRED IMPORTED_TARGET libtcmalloc_minimal)
  target_link_libraries(portcullis_dep_allocator INTERFACE PkgConfig::TCMALLOC)
  target_compile_definitions(portcullis_dep_allocator INTERFACE PORTCULLIS_TCMALLOC)
endif()
add_library(portcullis::dep::allocator ALIAS portcullis_dep_allocator)
