// JUnit XML, the report format CI systems read: one <testsuite> per group,
// one <testcase> per case; failures and skips carry their message. A case
// that was not supported here is written as skipped with its reason, never
// as passed.
#pragma once

#include <string>
#include <vector>

namespace nvh {

struct JUnitCase {
  enum class Result { passed, failed, skipped };
  std::string name, classname;
  Result result = Result::passed;
  std::string message;  // why it failed or was skipped
  double seconds = 0;
};

struct JUnitSuite {
  std::string name;
  std::vector<JUnitCase> cases;
};

std::string junit_xml(const std::vector<JUnitSuite>& suites);
// Throws std::runtime_error naming the path when it cannot be written.
void write_junit_xml(const std::vector<JUnitSuite>& suites, const std::string& path);

// Escapes &, <, >, " and ' (and drops control characters XML 1.0 forbids).
std::string xml_escape(const std::string& text);

}  // namespace nvh
