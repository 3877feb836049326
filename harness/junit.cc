#include "harness/junit.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nvh {

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t' || c == '\r') out += c;
    }
  }
  return out;
}

std::string junit_xml(const std::vector<JUnitSuite>& suites) {
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  for (const JUnitSuite& s : suites) {
    int failures = 0, skipped = 0;
    double seconds = 0;
    for (const JUnitCase& c : s.cases) {
      failures += c.result == JUnitCase::Result::failed;
      skipped += c.result == JUnitCase::Result::skipped;
      seconds += c.seconds;
    }
    char time[32];
    std::snprintf(time, sizeof time, "%.3f", seconds);
    o << "  <testsuite name=\"" << xml_escape(s.name) << "\" tests=\"" << s.cases.size()
      << "\" failures=\"" << failures << "\" skipped=\"" << skipped << "\" time=\"" << time
      << "\">\n";
    for (const JUnitCase& c : s.cases) {
      std::snprintf(time, sizeof time, "%.3f", c.seconds);
      o << "    <testcase name=\"" << xml_escape(c.name) << "\" classname=\""
        << xml_escape(c.classname) << "\" time=\"" << time << "\"";
      if (c.result == JUnitCase::Result::passed) {
        o << "/>\n";
        continue;
      }
      const char* tag = c.result == JUnitCase::Result::failed ? "failure" : "skipped";
      o << ">\n      <" << tag << " message=\"" << xml_escape(c.message)
        << "\"/>\n    </testcase>\n";
    }
    o << "  </testsuite>\n";
  }
  o << "</testsuites>\n";
  return o.str();
}

void write_junit_xml(const std::vector<JUnitSuite>& suites, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  f << junit_xml(suites);
  if (!f) throw std::runtime_error("write_junit_xml: cannot write " + path);
}

}  // namespace nvh
