// Launch records: every operator launch says which route ran, why, on what,
// for which test family and case. Records are kept in memory and, when a log
// path is set, appended to a JSON-lines file that the route-coverage gate reads
// back, merged across test binaries.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nvh {

struct LaunchRecord {
  std::string op;       // the operator
  std::string route;    // the dispatch route taken
  std::string variant;  // the route's kernel variant, if it has several
  std::string reason;   // why the dispatcher chose the route
  std::string backend;
  std::string arch;
  std::string family;     // test family; filled from RecordContext when empty
  std::string case_name;  // test case; filled from RecordContext when empty
  std::vector<std::pair<std::string, std::string>> attrs;  // shape fields, dtype..., in order
};

bool operator==(const LaunchRecord& a, const LaunchRecord& b);
bool operator!=(const LaunchRecord& a, const LaunchRecord& b);

// One JSON object on one line, no newline, keys in this order:
//   {"op":..,"route":..,"variant":..,"reason":..,"backend":..,"arch":..,
//    "family":..,"case_name":..,"attrs":[["M","8"],["N","4096"],...]}
// attrs is a list of pairs so that order and repeated names survive.
std::string to_json_line(const LaunchRecord& record);

// Names the test family and case of every record made on this thread while it
// lives, unless the record names its own. Contexts nest: the innermost
// non-empty value wins. Thread-local: threads started inside the scope do not
// inherit it.
class RecordContext {
 public:
  RecordContext(std::string family, std::string case_name);
  ~RecordContext();
  RecordContext(const RecordContext&) = delete;
  RecordContext& operator=(const RecordContext&) = delete;

  const std::string& family() const { return family_; }
  const std::string& case_name() const { return case_name_; }

 private:
  std::string family_;
  std::string case_name_;
};

// Collects launch records; every member is thread-safe.
class RouteRecorder {
 public:
  // Logs to $NVFP4_ROUTE_LOG when that is set and non-empty.
  RouteRecorder();

  // The process-wide recorder that launches report to; created on first use.
  static RouteRecorder& global();

  // Fills family and case_name from the RecordContext, keeps the record and,
  // if a log path is set, appends its line to the log (throws
  // std::runtime_error naming the path if that fails; the record is kept).
  void record(LaunchRecord record);
  std::vector<LaunchRecord> records() const;
  // Forgets the records in memory; the log file is left as it is.
  void clear();
  // "" stops logging. Each record is one write(2) on an O_APPEND descriptor,
  // so several processes appending to one file interleave whole lines.
  void set_log_path(std::string path);
  std::string log_path() const;

 private:
  mutable std::mutex mutex_;
  std::vector<LaunchRecord> records_;
  std::string log_path_;
};

// Reads a JSON-lines route log; blank lines are ignored. Throws
// std::runtime_error naming "path:line" for a malformed line, and the path if
// the file cannot be read.
std::vector<LaunchRecord> read_route_log(const std::string& path);

// Reads and concatenates several logs, in the order given; a directory stands
// for its "*.jsonl" files (not recursive), in name order.
std::vector<LaunchRecord> read_route_logs(const std::vector<std::string>& paths);

// Appends records to a log as RouteRecorder does, each line one write(2) on an
// O_APPEND descriptor (so other processes writing the same log interleave
// whole lines). Throws std::runtime_error naming the path if a write fails.
void append_route_log(const std::string& path, const std::vector<LaunchRecord>& records);

}  // namespace nvh
