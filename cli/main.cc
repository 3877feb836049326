// nvfp4-harness: the command line (cli/cli.h does the work).
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

int main(int argc, char** argv) {
  return nvfp4::run_cli(std::vector<std::string>(argv, argv + argc), std::cout, std::cerr);
}
