#include "exec_backend.hpp"
#include "ixo/judge_mutants.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ixo/case_io.hpp"
#include "ixo/error.hpp"

extern char** environ;

namespace ixo {

namespace fs = std::filesystem;

std::vector<std::string> split_command(const std::string& command, const std::string& field) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char ch = command[i];
    if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (in_word) words.push_back(word), word.clear(), in_word = false;
      continue;
    }
    in_word = true;
    if (ch == '\\') {
      if (i + 1 < command.size()) word += command[++i];
    } else if (ch == '\'') {
      const auto end = command.find('\'', i + 1);
      if (end == std::string::npos) throw InputError(field, "unterminated ' in command '" + command + "'");
      word += command.substr(i + 1, end - i - 1);
      i = end;
    } else if (ch == '"') {
      std::size_t j = i + 1;
      for (; j < command.size() && command[j] != '"'; ++j) {
        if (command[j] == '\\' && j + 1 < command.size() && std::strchr("\"\\$`", command[j + 1])) ++j;
        word += command[j];
      }
      if (j >= command.size()) throw InputError(field, "unterminated \" in command '" + command + "'");
      i = j;
    } else {
      word += ch;
    }
  }
  if (in_word) words.push_back(word);
  if (words.empty()) throw InputError(field, "exec: needs a command, e.g. exec:'python3 my_kernel.py'");
  return words;
}

namespace {

// The program a command's first word names, looked up like execvp does; "" if none.
std::string find_program(const std::string& word) {
  auto runnable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
  };
  if (word.find('/') != std::string::npos) return runnable(word) ? word : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / word;
    if (runnable(p)) return p.string();
  }
  return "";
}

std::string tail_of(const fs::path& file, std::size_t max_bytes = 2000) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() > max_bytes) s = "..." + s.substr(s.size() - max_bytes);
  return s.empty() ? "(stderr empty)" : s;
}

// A fresh temporary folder, removed when this goes out of scope.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ixo-exec-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw std::runtime_error("cannot create a temporary folder: " + std::string(std::strerror(errno)));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

class ExecBackend : public Backend {
 public:
  ExecBackend(std::string command, double timeout_s)
      : command_(std::move(command)), argv_(split_command(command_)), timeout_s_(timeout_s) {}

  std::string name() const override { return "exec:" + command_; }
  bool in_tree() const override { return false; }

  bool available(std::string* why) const override {
    if (!find_program(argv_[0]).empty()) return true;
    if (why) *why = "command '" + argv_[0] + "' not found or not executable";
    return false;
  }

  Observed run(const Case& c, const RunOptions& /*options*/) override {
    TempDir tmp;
    const fs::path case_dir = tmp.path / "case", out_dir = tmp.path / "out", err = tmp.path / "stderr.txt",
                   out_log = tmp.path / "stdout.txt";
    save_case(c, case_dir.string());
    fs::create_directories(out_dir);
    const int status = spawn_and_wait(case_dir, out_dir, out_log, err);
    const std::string who = name();
    if (status == -1)
      throw KernelFailure(
          fmt::format("{} timed out after {} s (killed); stderr tail:\n{}", who, timeout_s_, tail_of(err)));
    if (WIFSIGNALED(status))
      throw KernelFailure(fmt::format("{} was killed by signal {} ({}); stderr tail:\n{}", who, WTERMSIG(status),
                                      strsignal(WTERMSIG(status)), tail_of(err)));
    const int code = WEXITSTATUS(status);
    if (code == 77 && !IXO_JUDGE_MUTANT(exec_exit77_passes))
      throw Unsupported(who + " does not support this case (exit 77): " + tail_of(err, 300));
    if (code != 0 && code != 77 && !IXO_JUDGE_MUTANT(exec_nonzero_exit_ignored))
      throw KernelFailure(fmt::format("{} exited with status {}; stderr tail:\n{}", who, code, tail_of(err)));
    const fs::path topk = out_dir / "topk_idx.npy", scores = out_dir / "scores.npy";
    if (!fs::exists(topk))
      throw KernelFailure(
          fmt::format("{} exited 0 but wrote no OUT_DIR/topk_idx.npy; stderr tail:\n{}", who, tail_of(err)));
    try {
      return load_observed(c, topk.string(), fs::exists(scores) ? scores.string() : "");
    } catch (const InputError& e) {
      throw KernelFailure(fmt::format("{} wrote malformed outputs: {}; stderr tail:\n{}", who, e.what(), tail_of(err)));
    }
  }

 private:
  // Returns the wait status, or -1 after a timeout (the whole process group is killed).
  int spawn_and_wait(const fs::path& case_dir, const fs::path& out_dir, const fs::path& out_log,
                     const fs::path& err) const {
    std::vector<std::string> words = argv_;
    words.push_back(case_dir.string());
    words.push_back(out_dir.string());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);  // its own process group: a timeout kills its children too
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) throw KernelFailure(name() + ": cannot start '" + argv_[0] + "': " + std::strerror(rc));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
    auto nap = std::chrono::microseconds(200);
    for (;;) {
      int status = 0;
      const pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid) {
        kill(-pid, SIGKILL);  // stray children of a finished kernel
        return status;
      }
      if (done < 0 && errno != EINTR) throw KernelFailure(name() + ": waitpid failed: " + std::strerror(errno));
      if (interrupt_flag().load()) {  // Ctrl-C: the command is stopped with the run
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        throw Interrupted(name() + ": interrupted");
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(20000));
    }
  }

  std::string command_;
  std::vector<std::string> argv_;
  double timeout_s_;
};

class CallableBackend : public Backend {
 public:
  CallableBackend(std::string name, std::function<Observed(const Case&)> kernel)
      : name_(std::move(name)), kernel_(std::move(kernel)) {}
  std::string name() const override { return name_; }
  bool available(std::string*) const override { return true; }
  bool in_tree() const override { return false; }
  Observed run(const Case& c, const RunOptions&) override { return kernel_(c); }

 private:
  std::string name_;
  std::function<Observed(const Case&)> kernel_;
};

}  // namespace

std::unique_ptr<Backend> make_exec_backend(const std::string& command, double timeout_s) {
  if (!(timeout_s > 0)) throw InputError("--exec-timeout", "must be > 0 seconds, got " + std::to_string(timeout_s));
  return std::make_unique<ExecBackend>(command, timeout_s);
}

std::unique_ptr<Backend> make_callable_backend(std::string name, std::function<Observed(const Case&)> kernel) {
  return std::make_unique<CallableBackend>(std::move(name), std::move(kernel));
}

}  // namespace ixo
