// Runs a list of tasks so that one that kills its process (SIGFPE from an
// integer division by zero, SIGSEGV, SIGBUS, SIGABRT, SIGILL) fails alone:
// the tasks run in a forked child that reports each task's result to the
// parent over a pipe; when the child dies, the task it was running is
// recorded as crashed and a fresh child carries on with the next task.
// Operator-agnostic: tasks are indices, results are strings.
//
// A child makes its own worker (and with it, e.g., its own GPU backend: a CUDA
// context does not survive fork, so the parent must not have made one) and
// ends with _exit, so it never flushes stdio buffers or runs static
// destructors that belong to the parent.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace nvh {

// Runs tasks by index in one process. Made once per process.
class TaskWorker {
 public:
  virtual ~TaskWorker() = default;
  // The task's result; may throw (the task then fails with "threw: what()").
  virtual std::string run(std::size_t task) = 0;
  // What the process gathered across its tasks (e.g. branch probe counts),
  // read once after its last task; lost if the process crashes.
  virtual std::string finish() { return ""; }
};

using WorkerFactory = std::function<std::unique_ptr<TaskWorker>()>;

// How a task ended.
struct TaskOutcome {
  bool returned = false;  // the task returned: `result` is what it returned
  std::string result;
  // Otherwise how it ended: "threw: <what()>", "crashed: SIGFPE (Floating point
  // exception)", "exited with status 3".
  std::string failure;
};

enum class Isolation {
  in_process,  // in this process (--no-fork: debuggers, and no fork cost); a crash ends the run
  forked,      // in child processes, so a crash fails only its task
};

// Runs tasks 0 .. count-1 in order, each once; on_task sees each outcome in
// this process, in order, as it arrives. on_finish (may be empty) sees the
// finish() result of every worker whose process did not crash. Throws
// std::runtime_error when a worker cannot be made (its factory threw, or the
// child died before it was ready): no task could run.
void run_tasks(std::size_t count, const WorkerFactory& make_worker, Isolation isolation,
               const std::function<void(std::size_t, const TaskOutcome&)>& on_task,
               const std::function<void(const std::string&)>& on_finish = {});

// "SIGFPE (Floating point exception)"; "signal 77" for one without a name.
std::string describe_signal(int signal);

// How a child process ended, from a waitpid status: "crashed: SIGSEGV
// (Segmentation fault)" or "exited with status 3".
std::string describe_process_end(int wait_status);

}  // namespace nvh
