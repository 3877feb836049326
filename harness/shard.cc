#include "harness/shard.h"

#include <charconv>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace nvh {
namespace {

// A whole number as written: digits only (a sign, a blank or "1.5" is not one).
std::optional<int> whole_number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string Shard::text() const { return std::to_string(index) + "/" + std::to_string(count); }

Shard parse_shard(const std::string& text, const std::string& what) {
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument(what + ": " + text + ": " + why);
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) fail("not of the form INDEX/COUNT (e.g. 0/4)");
  const std::string index_text = text.substr(0, slash), count_text = text.substr(slash + 1);
  const std::optional<int> index = whole_number(index_text), count = whole_number(count_text);
  if (!index) fail("the index " + index_text + " is not a whole number 0 or more");
  if (!count) fail("the count " + count_text + " is not a whole number 1 or more");
  if (*count < 1) fail("the count must be 1 or more");
  if (*index >= *count) fail("the index " + index_text + " must be below the count " + count_text);
  return {*index, *count};
}

std::optional<Shard> shard_from_env(const char* total, const char* index) {
  if (!total && !index) return std::nullopt;
  if (!total) {
    throw std::invalid_argument(std::string("GTEST_SHARD_INDEX = ") + index +
                                ": set without GTEST_TOTAL_SHARDS");
  }
  if (!index) {
    throw std::invalid_argument(std::string("GTEST_TOTAL_SHARDS = ") + total +
                                ": set without GTEST_SHARD_INDEX");
  }
  const std::optional<int> n = whole_number(total), i = whole_number(index);
  if (!n || *n < 1) {
    throw std::invalid_argument(std::string("GTEST_TOTAL_SHARDS = ") + total +
                                ": must be a whole number 1 or more");
  }
  if (!i)
    throw std::invalid_argument(std::string("GTEST_SHARD_INDEX = ") + index +
                                ": must be a whole number 0 or more");
  if (*i >= *n) {
    throw std::invalid_argument(std::string("GTEST_SHARD_INDEX = ") + index +
                                ": must be below GTEST_TOTAL_SHARDS = " + total);
  }
  return Shard{*i, *n};
}

Shard choose_shard(const std::string& option, const char* env_total, const char* env_index) {
  if (!option.empty()) return parse_shard(option, "--shard");
  return shard_from_env(env_total, env_index).value_or(Shard{});
}

void touch_shard_status_file(const std::string& path) {
  if (path.empty()) return;
  std::ofstream file(path);  // created empty, as googletest's own runner does (fopen "w")
  if (!file) throw std::runtime_error("GTEST_SHARD_STATUS_FILE = " + path + ": cannot be created");
}

}  // namespace nvh
