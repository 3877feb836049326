// The command line every operator suite gets (CLI11): verify, merge, gate,
// routes and compare. An operator's own command line adds its commands beside
// them (cli/cli.cc does for NVFP4); one with none is run_suite_cli alone:
//
//   int main(int argc, char** argv) {
//     return nvh::run_suite_cli(my_suite(), {argv, argv + argc}, std::cout, std::cerr);
//   }
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/operator_suite.h"
#include "harness/verify_driver.h"

namespace nvh {

// What tests may inject; a binary passes none.
struct SuiteCliHooks {
  // Runs in the verify worker before each case (VerifyOptions::before_case).
  std::function<void(const std::string& group, const std::string& case_name)> before_case;
};

// --backend's values: "best" (the GPU when one can be used, else the host
// executor), "host", "cuda".
const std::vector<std::string>& backend_choices();
std::unique_ptr<Backend> backend_named(const std::string& name);

// Validators beyond CLI11's own (CLI11 puts the option's name in front of the message).
extern const CLI::Validator
    kWholeNumber;                   // digits, maybe a leading '-': "abc is not a whole number"
extern const CLI::Validator kSeed;  // a uint64, refusing "-1" and 2^64
extern const CLI::Validator kNotEmpty;
extern const CLI::Validator kFileToWrite;  // named, in a folder that exists, not a folder

// Adds the suite's commands to `app`; after app.parse, run() runs the one
// chosen, if it is one of them.
class SuiteCommands {
 public:
  SuiteCommands(CLI::App& app, const OperatorSuite& suite, SuiteCliHooks hooks = {});
  SuiteCommands(const SuiteCommands&) = delete;
  SuiteCommands& operator=(const SuiteCommands&) = delete;

  // The chosen command's exit code, or nullopt when none of these was chosen.
  // Throws what the command throws (run_app turns it into exit code 2).
  std::optional<int> run(std::ostream& out);

 private:
  const OperatorSuite& suite_;
  SuiteCliHooks hooks_;
  CLI::App *verify_, *merge_, *gate_, *routes_, *compare_;
  std::string backend_ = "best";
  VerifyOptions verify_options_;
  bool no_fork_ = false, list_families_ = false;
  std::string shard_;
  MergeOptions merge_options_;
  std::vector<std::string> logs_;
  std::string manifest_a_, manifest_b_;
};

// Parses `args` (args[0] is the program name, as in argv) into `app` and
// runs `dispatch`. Results go to `out`; errors, and progress of the long
// commands, to `err` (Progress writes to stderr itself). Returns the exit
// code: dispatch's (0 success, 1 a failed check), 2 for a command that threw
// (bad file, no GPU: "<tool>: <what>" on err), CLI11's codes (100 and up) for
// bad command-line input, an unknown command named in its error.
int run_app(CLI::App& app, const std::string& tool, const std::vector<std::string>& args,
            std::ostream& out, std::ostream& err, const std::function<int()>& dispatch);

// The command line of a suite with no commands of its own.
int run_suite_cli(const OperatorSuite& suite, const std::vector<std::string>& args,
                  std::ostream& out, std::ostream& err, const SuiteCliHooks& hooks = {});

}  // namespace nvh
