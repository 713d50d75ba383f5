#pragma once

// FUZZ_CHECK(cond, what): the invariant a fuzz target asserts. On failure it prints what broke
// and aborts, which libFuzzer reports as a crash and saves the input.

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, what)                                                        \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "fuzz invariant broken: %s (%s:%d): %s\n", #cond, __FILE__, \
                   __LINE__, std::string(what).c_str());                              \
      std::abort();                                                                   \
    }                                                                                 \
  } while (false)
