// axpb-harness: the harness's command line (verify, merge, gate, routes,
// compare) for the axpb operator.
#include <iostream>
#include <string>
#include <vector>

#include "harness/suite_cli.h"
#include "suite.h"

int main(int argc, char** argv) {
  return nvh::run_suite_cli(axpb::axpb_suite(), std::vector<std::string>(argv, argv + argc),
                            std::cout, std::cerr);
}
