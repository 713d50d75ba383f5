#include "common/config/flag_spelling.h"

#include <cstring>

namespace portcullis::config {

void AcceptDashedFlagNames(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    char* arg = argv[i];
    if (std::strcmp(arg, "--") == 0) {
      return;
    }
    if (arg[0] != '-') {
      continue;
    }
    char* name = arg + (arg[1] == '-' ? 2 : 1);
    for (char* c = name; *c != '\0' && *c != '='; ++c) {
      if (*c == '-') {
        *c = '_';
      }
    }
  }
}

}  // namespace portcullis::config
