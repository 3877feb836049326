#include "harness/manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace nvh {
namespace {

const std::string kDigestA(64, 'a');
const std::string kDigestB(64, 'b');
const std::string kDigestC = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// A file name unique to the running test, so parallel ctest processes never collide.
std::string temp_path(const std::string& suffix) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "nvh_manifest_" + info->test_suite_name() + "_" + info->name() +
         suffix;
}

std::string write_text(const std::string& text) {
  const std::string path = temp_path(".json");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

Manifest sample() {
  Manifest m;
  m.backend = "host";
  m.arch = "x86_64";
  m.tool = "tool 1.0";
  m.created_by = "tool run --all";
  m.metadata = {{"seed", "7"}, {"commit", "abc"}};
  m.add_case("z last", kDigestA);
  m.add_case("a first", kDigestB);
  return m;
}

// The error message of read_manifest on text, or "" if it did not throw.
std::string read_error(const std::string& text) {
  try {
    read_manifest(write_text(text));
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// A valid document with one member replaced: `"key": value`.
std::string with_member(const std::string& key, const std::string& value) {
  std::string text = manifest_to_json(sample());
  const std::string needle = "\"" + key + "\": ";
  const std::size_t start = text.find(needle) + needle.size();
  const std::size_t end =
      key == "metadata" || key == "cases" ? text.find('}', start) + 1 : text.find('\n', start) - 1;
  return text.replace(start, end - start, value);
}

TEST(Manifest, JsonFormatIsPinned) {
  EXPECT_EQ(manifest_to_json(sample()),
            "{\n"
            "  \"format\": \"nvh.manifest.v1\",\n"
            "  \"backend\": \"host\",\n"
            "  \"arch\": \"x86_64\",\n"
            "  \"tool\": \"tool 1.0\",\n"
            "  \"created_by\": \"tool run --all\",\n"
            "  \"metadata\": {\n"
            "    \"commit\": \"abc\",\n"
            "    \"seed\": \"7\"\n"
            "  },\n"
            "  \"cases\": {\n"
            "    \"a first\": \"" +
                kDigestB +
                "\",\n"
                "    \"z last\": \"" +
                kDigestA +
                "\"\n"
                "  }\n"
                "}\n");
}

TEST(Manifest, WriteThenReadRoundTrips) {
  const std::string path = temp_path(".json");
  write_manifest(sample(), path);
  const Manifest back = read_manifest(path);
  const Manifest original = sample();
  EXPECT_EQ(back.backend, original.backend);
  EXPECT_EQ(back.arch, original.arch);
  EXPECT_EQ(back.tool, original.tool);
  EXPECT_EQ(back.created_by, original.created_by);
  EXPECT_EQ(back.metadata, original.metadata);
  EXPECT_EQ(back.cases, original.cases);
}

TEST(Manifest, AddCaseRejectsDuplicateName) {
  Manifest m = sample();
  EXPECT_THROW(m.add_case("a first", kDigestC), std::invalid_argument);
  EXPECT_EQ(m.cases.at("a first"), kDigestB);
}

TEST(Manifest, AddCaseRejectsMalformedDigest) {
  Manifest m;
  EXPECT_THROW(m.add_case("c", std::string(63, 'a')), std::invalid_argument);
  EXPECT_THROW(m.add_case("c", std::string(64, 'A')), std::invalid_argument);
  EXPECT_THROW(m.add_case("c", std::string(63, 'a') + "g"), std::invalid_argument);
  EXPECT_THROW(m.add_case("", kDigestA), std::invalid_argument);
  EXPECT_TRUE(m.cases.empty());
}

TEST(Manifest, AddCaseErrorNamesCaseAndDigest) {
  Manifest m;
  try {
    m.add_case("c1", "xyz");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "Manifest::add_case: case \"c1\": digest = \"xyz\": must be 64 lowercase hex digits");
  }
}

TEST(Manifest, WritingRefusesACaseThatBypassedAddCase) {
  Manifest m = sample();
  m.cases["bad"] = "not a digest";
  EXPECT_THROW(manifest_to_json(m), std::invalid_argument);
}

TEST(Manifest, WritingRefusesInvalidUtf8) {
  Manifest m = sample();
  m.metadata["note"] = "\xff";
  EXPECT_THROW(manifest_to_json(m), std::invalid_argument);
}

TEST(Manifest, ReadMissingFileNamesPath) {
  const std::string path = temp_path(".does-not-exist.json");
  try {
    read_manifest(path);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "read_manifest: " + path + ": cannot open for reading: No such file or directory");
  }
}

TEST(Manifest, WriteToMissingDirectoryNamesPath) {
  const std::string path = temp_path(".no-such-dir/m.json");
  try {
    write_manifest(sample(), path);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "write_manifest: " + path + ": cannot open for writing: No such file or directory");
  }
}

TEST(Manifest, FailedWriteNamesPath) {
  if (!std::filesystem::is_character_file("/dev/full")) GTEST_SKIP() << "needs /dev/full";
  try {
    write_manifest(sample(), "/dev/full");  // opens fine, every write fails with ENOSPC
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "write_manifest: /dev/full: write failed");
  }
}

TEST(Manifest, ReadBadJsonNamesFile) {
  const std::string error = read_error("{\"format\": ");
  EXPECT_EQ(error.rfind("read_manifest: " + temp_path(".json") + ": not valid JSON: ", 0), 0u)
      << error;
}

TEST(Manifest, ReadWrongTypeNamesKeyAndValue) {
  EXPECT_EQ(read_error(with_member("backend", "3")),
            "read_manifest: " + temp_path(".json") + ": key \"backend\" = 3: must be a string");
}

TEST(Manifest, ReadNonStringMetadataNamesKey) {
  EXPECT_EQ(
      read_error(with_member("metadata", "{\"seed\": 7}")),
      "read_manifest: " + temp_path(".json") + ": key \"metadata\".\"seed\" = 7: must be a string");
}

TEST(Manifest, ReadCasesNotAnObject) {
  EXPECT_EQ(read_error(with_member("cases", "[1, 2]")),
            "read_manifest: " + temp_path(".json") +
                ": key \"cases\" = [1,2]: must be an object of strings");
}

TEST(Manifest, ReadDuplicateCaseNameNamesIt) {
  const std::string cases = "{\"x\": \"" + kDigestA + "\", \"x\": \"" + kDigestB + "\"}";
  EXPECT_EQ(
      read_error(with_member("cases", cases)),
      "read_manifest: " + temp_path(".json") + ": key \"cases\".\"x\" appears more than once");
}

TEST(Manifest, ReadMalformedDigestNamesCaseAndValue) {
  EXPECT_EQ(read_error(with_member("cases", "{\"x\": \"ABC\"}")),
            "read_manifest: " + temp_path(".json") +
                ": key \"cases\".\"x\": digest = \"ABC\": must be 64 lowercase hex digits");
}

TEST(Manifest, ReadMissingKey) {
  std::string text = manifest_to_json(sample());
  const std::size_t start = text.find("  \"arch\"");
  text.erase(start, text.find('\n', start) + 1 - start);
  EXPECT_EQ(read_error(text), "read_manifest: " + temp_path(".json") + ": missing key \"arch\"");
}

TEST(Manifest, ReadUnknownKey) {
  std::string text = manifest_to_json(sample());
  text.insert(1, "\n  \"archh\": \"x\",");
  EXPECT_EQ(read_error(text), "read_manifest: " + temp_path(".json") + ": unknown key \"archh\"");
}

TEST(Manifest, ReadWrongFormatVersion) {
  EXPECT_EQ(read_error(with_member("format", "\"nvh.manifest.v0\"")),
            "read_manifest: " + temp_path(".json") +
                ": key \"format\" = \"nvh.manifest.v0\": expected \"nvh.manifest.v1\"");
}

TEST(Manifest, ReadTopLevelNotAnObject) {
  EXPECT_EQ(read_error("[]"),
            "read_manifest: " + temp_path(".json") + ": top level = []: must be an object");
}

TEST(ManifestDiff, IdenticalCasesAreEmptyEvenIfMetadataDiffers) {
  Manifest b = sample();
  b.backend = "cuda";
  b.metadata["seed"] = "8";
  const ManifestDiff diff = compare(sample(), b);
  EXPECT_TRUE(diff.empty());
  EXPECT_EQ(diff.matching, 2u);
}

TEST(ManifestDiff, FindsEveryKindOfDifference) {
  Manifest a;
  a.add_case("both same", kDigestA);
  a.add_case("both differ", kDigestA);
  a.add_case("only a", kDigestA);
  Manifest b;
  b.add_case("both same", kDigestA);
  b.add_case("both differ", kDigestB);
  b.add_case("only b1", kDigestC);
  b.add_case("only b0", kDigestC);
  const ManifestDiff diff = compare(a, b);
  EXPECT_FALSE(diff.empty());
  EXPECT_EQ(diff.matching, 1u);
  EXPECT_EQ(diff.only_in_a, std::vector<std::string>({"only a"}));
  EXPECT_EQ(diff.only_in_b, std::vector<std::string>({"only b0", "only b1"}));
  ASSERT_EQ(diff.differing.size(), 1u);
  EXPECT_EQ(diff.differing[0].name, "both differ");
  EXPECT_EQ(diff.differing[0].digest_a, kDigestA);
  EXPECT_EQ(diff.differing[0].digest_b, kDigestB);
}

TEST(ManifestDiff, EachKindAloneMakesItNonEmpty) {
  Manifest a;
  a.add_case("x", kDigestA);
  Manifest b;
  EXPECT_FALSE(compare(a, b).empty());
  EXPECT_FALSE(compare(b, a).empty());
  b.add_case("x", kDigestB);
  EXPECT_FALSE(compare(a, b).empty());
}

TEST(ManifestDiff, RendersDifferences) {
  Manifest a;
  a.add_case("same", kDigestC);
  a.add_case("changed", kDigestA);
  a.add_case("gone", kDigestA);
  Manifest b;
  b.add_case("same", kDigestC);
  b.add_case("changed", kDigestB);
  b.add_case("new", kDigestB);
  EXPECT_EQ(render_diff(compare(a, b), "cuda.json", "host.json"),
            "manifests DIFFER: a = cuda.json, b = host.json\n"
            "  matching digests: 1\n"
            "  only in a (1):\n"
            "    gone\n"
            "  only in b (1):\n"
            "    new\n"
            "  differing digests (1):\n"
            "    changed\n"
            "      a: " +
                kDigestA +
                "\n"
                "      b: " +
                kDigestB + "\n");
}

TEST(ManifestDiff, NoCaseInCommonIsNotAgreement) {
  const Manifest none;
  EXPECT_TRUE(compare(none, none).empty());
  EXPECT_FALSE(compare(none, none).agree());
  EXPECT_EQ(render_diff(compare(none, none), "x", "y"),
            "manifests have NO CASE IN COMMON: a = x, b = y\n"
            "  matching digests: 0\n");
  Manifest a, b;
  a.add_case("only a", kDigestA);
  b.add_case("only b", kDigestA);
  EXPECT_FALSE(compare(a, b).agree());
  EXPECT_EQ(render_diff(compare(a, b), "x", "y"),
            "manifests have NO CASE IN COMMON: a = x, b = y\n"
            "  matching digests: 0\n"
            "  only in a (1):\n"
            "    only a\n"
            "  only in b (1):\n"
            "    only b\n");
  EXPECT_TRUE(compare(sample(), sample()).agree());
}

TEST(Manifest, ParseFromTextNamesItsSource) {
  EXPECT_EQ(parse_manifest(manifest_to_json(sample()), "built in").cases, sample().cases);
  try {
    parse_manifest("{", "golden/seed8.host.json (built in)");
    ADD_FAILURE() << "expected a throw";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  "parse_manifest: golden/seed8.host.json (built in): not valid JSON", 0),
              0u)
        << e.what();
  }
}

TEST(ManifestDiff, RendersAgreement) {
  EXPECT_EQ(render_diff(compare(sample(), sample()), "x", "y"),
            "manifests agree: a = x, b = y\n"
            "  matching digests: 2\n");
}

}  // namespace
}  // namespace nvh
