# cmake -DCTEST_FILE=.../CTestTestfile.cmake -P check_conformance_commands.cmake
# Fails when a conformance test runs its runner through a shell: `sh -c "runner ...; echo ..."`
# exits with the status of its last command, so a runner that crashed would pass. Every
# conformance test's exit code must be the runner's own.
file(STRINGS "${CTEST_FILE}" lines REGEX "^add_test\\(")
set(checked 0)
set(wrapped "")
foreach(line IN LISTS lines)
  if(line MATCHES "^add_test\\(\\[=\\[([^]]*conformance[^]]*)\\]=\\] \"([^\"]+)\"")
    set(name "${CMAKE_MATCH_1}")
    get_filename_component(program "${CMAKE_MATCH_2}" NAME)
    math(EXPR checked "${checked} + 1")
    if(program MATCHES "^(sh|bash|dash|env|timeout)$")
      list(APPEND wrapped "${name} (runs ${program})")
    endif()
  endif()
endforeach()
if(checked LESS 5)
  message(FATAL_ERROR "found only ${checked} conformance tests in ${CTEST_FILE}: is the scan broken?")
endif()
if(wrapped)
  message(FATAL_ERROR "conformance tests whose exit code is not the runner's: ${wrapped}")
endif()
message(STATUS "${checked} conformance tests, each exiting with its runner's status")
