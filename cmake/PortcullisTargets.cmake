# Helpers that give every Portcullis target the same shape: warnings as errors, a
# portcullis:: alias, tests registered with ctest one gtest case at a time.
include_guard(GLOBAL)
include(GoogleTest)

function(portcullis_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror
                                           -Wno-missing-field-initializers)
  # The fuzz build uses clang, whose warnings differ from g++'s: warnings stay, as warnings, so
  # that a clang-only warning in someone's code does not stop the fuzzers.
  if(PORTCULLIS_FUZZ)
    target_compile_options(${target} PRIVATE -Wno-error)
  endif()
endfunction()

# portcullis_library(NAME alias SOURCES ... [DEPS ...])
#   Builds a static library `portcullis_<name>` with alias `portcullis::<name>`; the project root
#   is its public include directory so headers are included as "common/status/status.h".
function(portcullis_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  set(target portcullis_${name})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(portcullis::${name} ALIAS ${target})
  target_include_directories(${target} PUBLIC "${PROJECT_SOURCE_DIR}")
  target_link_libraries(${target} PUBLIC ${ARG_DEPS})
  portcullis_warnings(${target})
endfunction()

# portcullis_executable(NAME SOURCES main.cc DEPS ...)
function(portcullis_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  portcullis_warnings(${name})
endfunction()

# portcullis_test(NAME SOURCES ... DEPS ... [LABELS ...] [SERIAL])
#   A gtest binary; each TEST becomes its own ctest case (discovered when ctest runs). SERIAL: its
#   cases run with nothing else beside them (tests that load the machine and time what they see).
function(portcullis_test name)
  cmake_parse_arguments(ARG "SERIAL" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  portcullis_warnings(${name})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
                       PROPERTIES LABELS "${ARG_LABELS}" RUN_SERIAL ${serial})
endfunction()
