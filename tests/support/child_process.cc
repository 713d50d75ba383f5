#include "tests/support/child_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace portcullis::testing {

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::string& binary, const std::vector<std::string>& args,
    const std::map<std::string, std::string>& env, const std::string& log_path) {
  std::vector<std::string> argv_storage = {binary};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);

  std::map<std::string, std::string> merged;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string line(*entry);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) {
      merged[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  for (const auto& [key, value] : env) {
    merged[key] = value;
  }
  std::vector<std::string> env_storage;
  for (const auto& [key, value] : merged) {
    env_storage.push_back(absl::StrCat(key, "=", value));
  }
  std::vector<char*> envp;
  for (std::string& entry : env_storage) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // Children must not inherit a blocked SIGTERM from a test that blocked it.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attributes, &empty);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int error =
      posix_spawn(&pid, binary.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    return absl::InternalError(absl::StrCat("cannot start ", binary, ": errno ", error));
  }
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, log_path));
}

ChildProcess::~ChildProcess() { Stop(absl::Seconds(5)); }

bool ChildProcess::running() {
  if (exit_code_ >= 0) {
    return false;
  }
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  return done == 0;
}

void ChildProcess::Signal(int signal) {
  if (running()) {
    ::kill(pid_, signal);
  }
}

absl::StatusOr<int> ChildProcess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (running()) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("pid ", pid_, " still running"));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return exit_code_;
}

int ChildProcess::Stop(absl::Duration timeout) {
  Signal(SIGTERM);
  if (auto code = Wait(timeout); code.ok()) {
    return *code;
  }
  Signal(SIGKILL);
  return Wait(absl::Seconds(5)).value_or(-1);
}

std::string ChildProcess::Log() const {
  std::ifstream file(log_path_);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

namespace {

// True when a listening socket could take `port` on 127.0.0.1 now (port 0: any; `*port` is set
// to what was bound).
bool BindLoopback(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(*port));
  socklen_t length = sizeof(address);
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (bound) {
    *port = ntohs(address.sin_port);
  }
  return bound;
}

}  // namespace

// Below Linux's ephemeral range (ip_local_port_range, 32768-60999 by default): a port picked
// inside it can be taken, before the process meant to listen on it binds it, by the local end of
// any outgoing connection of a test running in parallel (seen: a verifier's gRPC port, "Address
// already in use"). Below it only another test's pick can collide: random, and checked free.
int FreeLoopbackPort() {
  thread_local std::mt19937 random(std::random_device{}() ^ static_cast<unsigned>(::getpid()));
  std::uniform_int_distribution<int> pick(20000, 32767);
  for (int attempt = 0; attempt < 200; ++attempt) {
    int port = pick(random);
    if (BindLoopback(&port)) {
      return port;
    }
  }
  int port = 0;
  return BindLoopback(&port) ? port : 0;
}

CommandResult RunCommand(const std::string& binary, const std::vector<std::string>& args,
                         absl::Duration timeout) {
  char log_template[] = "/tmp/portcullis-command-XXXXXX";
  const int fd = ::mkstemp(log_template);
  ::close(fd);
  CommandResult result{-1, ""};
  {
    auto child = ChildProcess::Start(binary, args, {}, log_template);
    if (!child.ok()) {
      result.output = std::string(child.status().message());
    } else {
      result.exit_code = (*child)->Wait(timeout).value_or(-1);
      result.output = (*child)->Log();
    }
  }
  ::unlink(log_template);
  return result;
}

}  // namespace portcullis::testing
