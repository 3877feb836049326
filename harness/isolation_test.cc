#include "harness/isolation.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvh {
namespace {

// What each task does: return its process id, or fail in one of the ways a
// kernel can end a process.
enum class Act { ok, fpe, segv, abort, exit3, throws };

class ScriptedWorker : public TaskWorker {
 public:
  explicit ScriptedWorker(std::vector<Act> script) : script_(std::move(script)) {}
  std::string run(std::size_t task) override {
    switch (script_.at(task)) {
      case Act::ok:
        break;
      case Act::fpe:
        std::raise(SIGFPE);
        break;
      case Act::segv:
        std::raise(SIGSEGV);
        break;
      case Act::abort:
        std::abort();
      case Act::exit3:
        ::_exit(3);
      case Act::throws:
        throw std::invalid_argument("task " + std::to_string(task) + " refuses");
    }
    ++ran_;
    return std::to_string(::getpid());
  }
  std::string finish() override { return std::to_string(ran_); }

 private:
  std::vector<Act> script_;
  int ran_ = 0;
};

// Crashing children must not leave core files behind in the test's folder.
void no_core_files() {
  const rlimit none{0, 0};
  ::setrlimit(RLIMIT_CORE, &none);
}

struct ScriptRun {
  std::map<std::size_t, TaskOutcome> outcomes;
  std::vector<std::size_t> order;
  std::vector<std::string> finishes;
};

ScriptRun run_script(const std::vector<Act>& script, Isolation isolation) {
  ScriptRun r;
  run_tasks(
      script.size(), [&] { return std::make_unique<ScriptedWorker>(script); }, isolation,
      [&](std::size_t task, const TaskOutcome& o) {
        r.order.push_back(task);
        r.outcomes[task] = o;
      },
      [&](const std::string& finished) { r.finishes.push_back(finished); });
  return r;
}

TEST(Isolation, ACrashFailsItsTaskAndAFreshChildRunsTheNext) {
  no_core_files();
  const ScriptRun r = run_script(
      {Act::ok, Act::fpe, Act::ok, Act::throws, Act::segv, Act::abort, Act::exit3, Act::ok},
      Isolation::forked);
  EXPECT_EQ(r.order, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(r.outcomes.at(0).returned);
  EXPECT_EQ(r.outcomes.at(1).failure, "crashed: SIGFPE (Floating point exception)");
  EXPECT_TRUE(r.outcomes.at(2).returned);
  EXPECT_EQ(r.outcomes.at(3).failure, "threw: task 3 refuses");
  EXPECT_EQ(r.outcomes.at(4).failure, "crashed: SIGSEGV (Segmentation fault)");
  EXPECT_EQ(r.outcomes.at(5).failure, "crashed: SIGABRT (Aborted)");
  EXPECT_EQ(r.outcomes.at(6).failure, "exited with status 3");
  EXPECT_TRUE(r.outcomes.at(7).returned);
  for (std::size_t task : {1, 3, 4, 5, 6}) EXPECT_FALSE(r.outcomes.at(task).returned) << task;
  // Tasks ran in children, a fresh one after each crash: 0 | 2 3 | 7 (4, 5, 6 each died alone).
  const std::string self = std::to_string(::getpid());
  EXPECT_NE(r.outcomes.at(0).result, self);
  EXPECT_NE(r.outcomes.at(0).result, r.outcomes.at(2).result);
  EXPECT_NE(r.outcomes.at(2).result, r.outcomes.at(7).result);
  // Only the child that lived to the end reports its finish(): it ran task 7 alone.
  EXPECT_EQ(r.finishes, std::vector<std::string>{"1"});
}

TEST(Isolation, InProcessRunsEveryTaskHereAndCatchesThrows) {
  const ScriptRun r = run_script({Act::ok, Act::throws, Act::ok}, Isolation::in_process);
  EXPECT_EQ(r.outcomes.at(0).result, std::to_string(::getpid()));
  EXPECT_EQ(r.outcomes.at(1).failure, "threw: task 1 refuses");
  EXPECT_TRUE(r.outcomes.at(2).returned);
  EXPECT_EQ(r.finishes, std::vector<std::string>{"2"});
}

TEST(Isolation, ACleanForkedRunUsesOneChildAndFinishesOnce) {
  const ScriptRun r = run_script({Act::ok, Act::ok, Act::ok}, Isolation::forked);
  EXPECT_NE(r.outcomes.at(0).result, std::to_string(::getpid()));  // in a child
  EXPECT_EQ(r.outcomes.at(0).result, r.outcomes.at(2).result);
  EXPECT_EQ(r.finishes, std::vector<std::string>{"3"});
}

TEST(Isolation, AWorkerThatCannotBeMadeEndsTheRunNamingWhy) {
  for (Isolation isolation : {Isolation::forked, Isolation::in_process}) {
    try {
      run_tasks(
          2, []() -> std::unique_ptr<TaskWorker> { throw std::runtime_error("no GPU here"); },
          isolation, [](std::size_t, const TaskOutcome&) { ADD_FAILURE() << "no task may run"; });
      ADD_FAILURE() << "expected a throw";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "run_tasks: the worker could not be made: no GPU here");
    }
  }
}

TEST(Isolation, AChildThatDiesBeforeItIsReadyEndsTheRun) {
  no_core_files();
  try {
    run_tasks(
        2,
        []() -> std::unique_ptr<TaskWorker> {
          std::raise(SIGSEGV);
          return nullptr;
        },
        Isolation::forked,
        [](std::size_t, const TaskOutcome&) { ADD_FAILURE() << "no task may run"; });
    ADD_FAILURE() << "expected a throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "run_tasks: the worker process crashed: SIGSEGV (Segmentation fault) before it "
                 "was ready (no task ran)");
  }
}

TEST(Isolation, DescribesSignalsByNameAndText) {
  EXPECT_EQ(describe_signal(SIGFPE), "SIGFPE (Floating point exception)");
  EXPECT_EQ(describe_signal(SIGBUS), "SIGBUS (Bus error)");
  EXPECT_EQ(describe_signal(SIGILL), "SIGILL (Illegal instruction)");
}

}  // namespace
}  // namespace nvh
