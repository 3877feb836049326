// nvfp4-harness's command line as a function, so tests can run it in process
// and read what it says. main.cc is only `return run_cli(argv...)`.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace nvfp4 {

// What tests may inject; the binary passes none.
struct CliHooks {
  // Runs in the verify worker before each case (nvh::VerifyOptions::before_case).
  std::function<void(const std::string& group, const std::string& case_name)> before_case;
};

// args[0] is the program name, as in argv. Results go to `out`; errors, and
// progress of the long commands, to `err` (nvh::Progress writes to stderr
// itself). Returns the exit code: 0 success, 1 a failed check (verify, compare,
// gate, primitives), 2 a command that could not run (bad file, no GPU),
// CLI11's codes (100 and up) for bad command-line input.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const CliHooks& hooks = {});

}  // namespace nvfp4
