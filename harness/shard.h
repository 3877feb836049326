// Sharding, the GoogleTest way: a run split into `count` shards runs only the
// items whose index i has i % count == index, so the shards of one list are
// disjoint, cover it, and each can run on its own machine or GPU. A shard is
// chosen by `--shard i/n` or by GoogleTest's environment variables
// (GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX), the option winning; a runner that
// sets GTEST_SHARD_STATUS_FILE learns that the program honours them when the
// program touches that file (the protocol of googletest's advanced.md,
// "Distributing Test Functions to Multiple Machines").
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace nvh {

struct Shard {
  int index = 0;  // 0 .. count - 1
  int count = 1;
  // i % count == index: the round-robin split, so every shard gets a share of
  // every group of a list (each family's cases, in verify) and none waits on a
  // block of slow neighbours.
  bool owns(std::size_t i) const {
    return i % static_cast<std::size_t>(count) == static_cast<std::size_t>(index);
  }
  bool sharded() const { return count > 1; }
  std::string text() const;  // "1/3"
};

// "i/n": whole numbers, 0 <= i < n. Throws std::invalid_argument naming
// `what` (e.g. "--shard"), the text and what is wrong: "--shard: 3/2: the
// index 3 must be below the count 2".
Shard parse_shard(const std::string& text, const std::string& what);

// From GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX as they are (null: unset):
// none set gives nullopt; one without the other, a value that is not a whole
// number, a count below 1 or an index outside 0 .. count - 1 throws
// std::invalid_argument naming the variable and its value.
std::optional<Shard> shard_from_env(const char* total, const char* index);

// The shard an option and the environment choose: the option ("" = not given)
// wins over the environment; neither gives shard 0/1 (everything).
Shard choose_shard(const std::string& option, const char* env_total, const char* env_index);

// Touches `path` (creates it empty, as googletest does), as the protocol asks of a
// program that honours sharding; "" does nothing. Throws std::runtime_error
// naming the path when it cannot be created.
void touch_shard_status_file(const std::string& path);

}  // namespace nvh
