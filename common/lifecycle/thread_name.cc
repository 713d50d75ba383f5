#include "common/lifecycle/thread_name.h"

#include <pthread.h>

#include <string>

namespace portcullis::lifecycle {

void NameCurrentThread(std::string_view name) {
  constexpr size_t kMaxNameBytes = 15;  // TASK_COMM_LEN - 1
  const std::string kept(name.substr(0, kMaxNameBytes));
  pthread_setname_np(pthread_self(), kept.c_str());
}

}  // namespace portcullis::lifecycle
