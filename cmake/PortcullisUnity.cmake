# Unity builds (CMAKE_UNITY_BUILD, on in the `asan` and `fuzz` presets that CI builds): each
# target's sources are compiled in batches of 8, one translation unit per batch, so the heavy
# headers (gRPC, protobuf, Abseil, Boost, gtest) are parsed and their inline code is instrumented
# and emitted once per batch instead of once per file. A file whose file-local names (anonymous
# namespace, static) clash with another file's is compiled on its own: it is listed here.
# A clash shows up in the asan build only, as "redefinition of ..." or "conflicting
# declaration ..." naming the file: add that file below.
include_guard(GLOBAL)

set(portcullis_unity_skip
  ingest-gateway/src/http/request_reader.cc
  ingest-gateway/src/ingest_handler.cc
  ingest-gateway/src/webmention_handlers.cc
  tests/common/net/address_policy_test.cc
  tests/common/net/special_ranges_test.cc
  tests/ingest-gateway/gateway_config_test.cc
  tests/ingest-gateway/mentions_feed_test.cc
  tests/integration/admin_cli_test.cc
  tests/integration/lifecycle_test.cc
  tests/verifier-service/fetch/safe_fetcher_test.cc
  tests/verifier-service/html/mention_classifier_test.cc
  tests/verifier-service/html/mf2_json_test.cc
  tests/verifier-service/intake/target_rules_test.cc
  tests/verifier-service/server/fetch_rpcs_test.cc
  tests/verifier-service/server/mention_rpcs_test.cc
  tests/verifier-service/server/publisher_rpcs_test.cc
  tests/verifier-service/server/token_rpcs_test.cc
  tests/verifier-service/server/verifier_service_test.cc
  tools/portcullis/src/authorship_conformance.cc
  tools/portcullis/src/block_commands.cc
  tools/portcullis/src/mf2_commands.cc
  verifier-service/src/fetch/cares_resolver.cc
  verifier-service/src/fetch/curl_http_client.cc
  verifier-service/src/html/authorship.cc
  verifier-service/src/html/html_sanitizer.cc
  verifier-service/src/html/link_matcher.cc
  verifier-service/src/html/mention_classifier.cc
  verifier-service/src/html/mf2_json.cc
  verifier-service/src/html/mf2_parser.cc
  verifier-service/src/server/blocklist_rpcs.cc
  verifier-service/src/server/fetch_rpcs.cc
  verifier-service/src/server/publisher_rpcs.cc
  verifier-service/src/server/site_rpcs.cc
  verifier-service/src/server/verify_now_rpcs.cc
  verifier-service/src/store/pg_job_store.cc)

if(CMAKE_UNITY_BUILD)
  foreach(path IN LISTS portcullis_unity_skip)
    get_filename_component(dir "${PROJECT_SOURCE_DIR}/${path}" DIRECTORY)
    # The property is read in the directory that defines the target (up the tree from the file).
    set(dirs)
    while(NOT dir STREQUAL PROJECT_SOURCE_DIR)
      if(EXISTS "${dir}/CMakeLists.txt")
        list(APPEND dirs "${dir}")
      endif()
      get_filename_component(dir "${dir}" DIRECTORY)
    endwhile()
    set_source_files_properties("${PROJECT_SOURCE_DIR}/${path}" DIRECTORY ${dirs}
                                PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endforeach()
endif()
