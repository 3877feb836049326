#include "harness/isolation.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>

#if defined(NVH_GCOV)
// libgcov's: writes this process's counters (a child ends with _exit, which would lose them).
extern "C" void __gcov_dump(void);
#endif

namespace nvh {
namespace {

// What a child says on the pipe, one frame each: kind, task, length, bytes.
enum class Frame : uint8_t {
  ready = 1,         // the worker is made; tasks follow
  setup_error = 2,   // the worker could not be made; the text says why
  returned = 3,      // a task returned; the text is its result
  threw = 4,         // a task threw; the text is what()
  finished = 5,      // every task is done; the text is finish()'s result
  finish_error = 6,  // finish() threw; the text is what()
};

struct Message {
  Frame kind;
  uint64_t task = 0;
  std::string text;
};

[[noreturn]] void fail_errno(const std::string& what) {
  throw std::runtime_error("run_tasks: " + what + ": " + std::strerror(errno));
}

// Blocking writes can be cut short by a signal; this finishes them.
bool write_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

// false at end of file (or a frame cut short by the child's death).
bool read_all(int fd, void* data, std::size_t bytes) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::read(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

void send(int fd, Frame kind, uint64_t task, const std::string& text) {
  const uint64_t length = text.size();
  const auto k = static_cast<uint8_t>(kind);
  // A parent that stopped listening cannot be told anything: the child just ends.
  if (!write_all(fd, &k, 1) || !write_all(fd, &task, sizeof task) ||
      !write_all(fd, &length, sizeof length) || !write_all(fd, text.data(), text.size())) {
    ::_exit(4);
  }
}

std::optional<Message> receive(int fd) {
  uint8_t kind = 0;
  Message m{Frame::ready, 0, ""};
  uint64_t length = 0;
  if (!read_all(fd, &kind, 1) || !read_all(fd, &m.task, sizeof m.task) ||
      !read_all(fd, &length, sizeof length)) {
    return std::nullopt;
  }
  m.kind = static_cast<Frame>(kind);
  m.text.resize(length);
  if (!read_all(fd, m.text.data(), length)) return std::nullopt;
  return m;
}

// One task, its exceptions caught: the same in a child and in process.
TaskOutcome run_one(TaskWorker& worker, std::size_t task) {
  TaskOutcome o;
  try {
    o.result = worker.run(task);
    o.returned = true;
  } catch (const std::exception& e) {
    o.failure = std::string("threw: ") + e.what();
  } catch (...) {
    o.failure = "threw: an exception not derived from std::exception";
  }
  return o;
}

[[noreturn]] void end_child(int code) {
#if defined(NVH_GCOV)
  __gcov_dump();
#endif
  ::_exit(code);
}

// The child: make a worker, run tasks first..count-1, report each, then finish.
[[noreturn]] void child_main(int fd, std::size_t first, std::size_t count,
                             const WorkerFactory& make_worker) {
  std::unique_ptr<TaskWorker> worker;
  try {
    worker = make_worker();
  } catch (const std::exception& e) {
    send(fd, Frame::setup_error, first, e.what());
    end_child(3);
  } catch (...) {
    send(fd, Frame::setup_error, first, "an exception not derived from std::exception");
    end_child(3);
  }
  send(fd, Frame::ready, first, "");
  for (std::size_t task = first; task < count; ++task) {
    const TaskOutcome o = run_one(*worker, task);
    send(fd, o.returned ? Frame::returned : Frame::threw, task, o.returned ? o.result : o.failure);
  }
  try {
    send(fd, Frame::finished, count, worker->finish());
  } catch (const std::exception& e) {
    send(fd, Frame::finish_error, count, e.what());
  }
  worker.reset();
  end_child(0);
}

// Output buffered in this process would otherwise be written twice: by the
// parent and by a child that flushed its copy (the child uses _exit, but its
// worker may print).
void flush_everything() {
  std::cout.flush();
  std::cerr.flush();
  std::clog.flush();
  std::fflush(nullptr);
}

// What one child said before its end of the pipe closed.
struct ChildReport {
  std::size_t next = 0;  // the task after the last one it reported
  bool ready = false, finished = false;
  std::string setup_error, finish_error;
};

// Reads a child's frames until its end of the pipe closes, handing each task's
// outcome to on_task as it arrives.
void read_child(int fd, const std::function<void(std::size_t, const TaskOutcome&)>& on_task,
                const std::function<void(const std::string&)>& on_finish, ChildReport& r) {
  while (const std::optional<Message> m = receive(fd)) {
    switch (m->kind) {
      case Frame::ready:
        r.ready = true;
        break;
      case Frame::setup_error:
        r.setup_error = m->text;
        break;
      case Frame::returned:
      case Frame::threw: {
        TaskOutcome o;
        o.returned = m->kind == Frame::returned;
        (o.returned ? o.result : o.failure) = m->text;
        on_task(static_cast<std::size_t>(m->task), o);
        r.next = static_cast<std::size_t>(m->task) + 1;
        break;
      }
      case Frame::finished:
        r.finished = true;
        if (on_finish) on_finish(m->text);
        break;
      case Frame::finish_error:
        r.finish_error = m->text;
        break;
    }
  }
}

// One child's life: runs tasks from `first` on. Returns the next task to run
// after this child (count when it ran them all).
std::size_t run_child(std::size_t first, std::size_t count, const WorkerFactory& make_worker,
                      const std::function<void(std::size_t, const TaskOutcome&)>& on_task,
                      const std::function<void(const std::string&)>& on_finish) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail_errno("pipe");
  flush_everything();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    fail_errno("fork");
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], first, count, make_worker);
  }
  ::close(fds[1]);

  ChildReport r;
  r.next = first;
  int status = 0;
  try {
    read_child(fds[0], on_task, on_finish, r);
  } catch (...) {  // on_task threw: stop the child rather than leave it running
    ::kill(pid, SIGKILL);
    ::close(fds[0]);
    ::waitpid(pid, &status, 0);
    throw;
  }
  ::close(fds[0]);
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) fail_errno("waitpid");
  }

  if (!r.setup_error.empty())
    throw std::runtime_error("run_tasks: the worker could not be made: " + r.setup_error);
  if (!r.ready) {
    throw std::runtime_error("run_tasks: the worker process " + describe_process_end(status) +
                             " before it was ready (no task ran)");
  }
  if (!r.finish_error.empty())
    throw std::runtime_error("run_tasks: the worker's finish() threw: " + r.finish_error);
  if (r.next < count) {  // the child ended inside task r.next
    TaskOutcome o;
    o.failure = describe_process_end(status);
    on_task(r.next, o);
    return r.next + 1;
  }
  if (!r.finished) {  // every task reported, then the child died in finish()
    throw std::runtime_error("run_tasks: the worker process " + describe_process_end(status) +
                             " after its last task, in finish()");
  }
  return count;
}

}  // namespace

std::string describe_signal(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  const char* text = ::strsignal(signal);
  std::string out = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
  if (abbrev && text) out += std::string(" (") + text + ")";
  return out;
}

std::string describe_process_end(int wait_status) {
  if (WIFSIGNALED(wait_status)) return "crashed: " + describe_signal(WTERMSIG(wait_status));
  if (WIFEXITED(wait_status))
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  return "ended with wait status " + std::to_string(wait_status);
}

void run_tasks(std::size_t count, const WorkerFactory& make_worker, Isolation isolation,
               const std::function<void(std::size_t, const TaskOutcome&)>& on_task,
               const std::function<void(const std::string&)>& on_finish) {
  if (count == 0) return;
  if (isolation == Isolation::forked) {
    for (std::size_t next = 0; next < count;)
      next = run_child(next, count, make_worker, on_task, on_finish);
    return;
  }
  std::unique_ptr<TaskWorker> worker;
  try {
    worker = make_worker();
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("run_tasks: the worker could not be made: ") + e.what());
  }
  for (std::size_t task = 0; task < count; ++task) on_task(task, run_one(*worker, task));
  if (on_finish) on_finish(worker->finish());
}

}  // namespace nvh
