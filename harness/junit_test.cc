#include "harness/junit.h"

#include <gtest/gtest.h>

namespace nvh {
namespace {

TEST(JUnit, CountsFailuresAndSkipsAndEscapes) {
  JUnitSuite s{"fam<ily>", {}};
  s.cases.push_back({"ok_case", "verify", JUnitCase::Result::passed, "", 0.5});
  s.cases.push_back(
      {"bad \"case\"", "verify", JUnitCase::Result::failed, "got 0x1 & expected 0x2", 0.25});
  s.cases.push_back(
      {"gated", "verify", JUnitCase::Result::skipped, "NOT_SUPPORTED: needs sm_12x", 0});
  const std::string xml = junit_xml({s});
  EXPECT_NE(xml.find("<testsuite name=\"fam&lt;ily&gt;\" tests=\"3\" failures=\"1\" skipped=\"1\" "
                     "time=\"0.750\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase name=\"ok_case\" classname=\"verify\" time=\"0.500\"/>"),
            std::string::npos);
  EXPECT_NE(xml.find("name=\"bad &quot;case&quot;\""), std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"got 0x1 &amp; expected 0x2\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"NOT_SUPPORTED: needs sm_12x\"/>"), std::string::npos);
}

TEST(JUnit, DropsControlCharactersXmlForbids) {
  EXPECT_EQ(xml_escape(std::string("a\x01"
                                   "b\tc")),
            "ab\tc");
}

TEST(JUnit, UnwritablePathIsNamed) {
  try {
    write_junit_xml({}, "/nonexistent-dir/x.xml");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.xml"), std::string::npos);
  }
}

}  // namespace
}  // namespace nvh
