#include "harness/shard.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

namespace nvh {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Shard, OptionParses) {
  const Shard s = parse_shard("2/3", "--shard");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 3);
  EXPECT_EQ(s.text(), "2/3");
  EXPECT_EQ(parse_shard("0/1", "--shard").sharded(), false);
}

TEST(Shard, BadOptionsAreNamed) {
  const auto err = [](const std::string& text) {
    return error_of([&] { parse_shard(text, "--shard"); });
  };
  EXPECT_EQ(err("3/2"), "--shard: 3/2: the index 3 must be below the count 2");
  EXPECT_EQ(err("2/2"), "--shard: 2/2: the index 2 must be below the count 2");
  EXPECT_EQ(err("-1/2"), "--shard: -1/2: the index -1 is not a whole number 0 or more");
  EXPECT_EQ(err("x/2"), "--shard: x/2: the index x is not a whole number 0 or more");
  EXPECT_EQ(err("1/x"), "--shard: 1/x: the count x is not a whole number 1 or more");
  EXPECT_EQ(err("0/0"), "--shard: 0/0: the count must be 1 or more");
  EXPECT_EQ(err("1"), "--shard: 1: not of the form INDEX/COUNT (e.g. 0/4)");
  EXPECT_EQ(err("1/99999999999"),
            "--shard: 1/99999999999: the count 99999999999 is not a whole number 1 or more");
}

TEST(Shard, EnvironmentFollowsGoogleTest) {
  EXPECT_FALSE(shard_from_env(nullptr, nullptr).has_value());
  const Shard s = *shard_from_env("4", "3");
  EXPECT_EQ(s.text(), "3/4");
  const auto err = [](const char* total, const char* index) {
    return error_of([&] { shard_from_env(total, index); });
  };
  EXPECT_EQ(err("2", "2"), "GTEST_SHARD_INDEX = 2: must be below GTEST_TOTAL_SHARDS = 2");
  EXPECT_EQ(err("2", "-1"), "GTEST_SHARD_INDEX = -1: must be a whole number 0 or more");
  EXPECT_EQ(err("0", "0"), "GTEST_TOTAL_SHARDS = 0: must be a whole number 1 or more");
  EXPECT_EQ(err("x", "0"), "GTEST_TOTAL_SHARDS = x: must be a whole number 1 or more");
  EXPECT_EQ(err(nullptr, "1"), "GTEST_SHARD_INDEX = 1: set without GTEST_TOTAL_SHARDS");
  EXPECT_EQ(err("3", nullptr), "GTEST_TOTAL_SHARDS = 3: set without GTEST_SHARD_INDEX");
}

TEST(Shard, TheOptionWinsOverTheEnvironment) {
  EXPECT_EQ(choose_shard("1/2", "4", "3").text(), "1/2");
  EXPECT_EQ(choose_shard("", "4", "3").text(), "3/4");
  EXPECT_EQ(choose_shard("", nullptr, nullptr).text(), "0/1");
  // A bad environment is still an error without the option, but not with it.
  EXPECT_THROW(choose_shard("", "4", "9"), std::invalid_argument);
  EXPECT_EQ(choose_shard("0/2", "4", "9").text(), "0/2");
}

// Round robin: the shards of a list are disjoint and cover it.
TEST(Shard, ShardsPartitionTheList) {
  for (int n = 1; n <= 4; ++n) {
    for (std::size_t i = 0; i < 11; ++i) {
      int owners = 0;
      for (int k = 0; k < n; ++k) owners += Shard{k, n}.owns(i) ? 1 : 0;
      EXPECT_EQ(owners, 1) << "item " << i << " of " << n << " shards";
      EXPECT_TRUE((Shard{static_cast<int>(i % n), n}.owns(i)));
    }
  }
}

TEST(Shard, StatusFileIsTouched) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "nvh_shard_status").string();
  std::filesystem::remove(path);
  touch_shard_status_file("");
  touch_shard_status_file(path);
  EXPECT_TRUE(std::filesystem::exists(path));
  std::filesystem::remove(path);
  EXPECT_NE(
      error_of([] { touch_shard_status_file("/nonexistent-folder/x"); }).find("cannot be created"),
      std::string::npos);
}

}  // namespace
}  // namespace nvh
