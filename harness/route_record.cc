#include "harness/route_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace nvh {
namespace {

using json = nlohmann::json;

// The string members in their JSON order: one table for writing and reading.
struct Field {
  const char* key;
  std::string LaunchRecord::*member;
};
const Field kFields[] = {
    {"op", &LaunchRecord::op},           {"route", &LaunchRecord::route},
    {"variant", &LaunchRecord::variant}, {"reason", &LaunchRecord::reason},
    {"backend", &LaunchRecord::backend}, {"arch", &LaunchRecord::arch},
    {"family", &LaunchRecord::family},   {"case_name", &LaunchRecord::case_name},
};
constexpr const char* kAttrsKey = "attrs";

// This thread's open RecordContexts, outermost first.
thread_local std::vector<const RecordContext*> t_contexts;

// Walking outward, each empty field takes the innermost non-empty context value.
void fill_from_contexts(LaunchRecord& record) {
  for (auto it = t_contexts.rbegin(); it != t_contexts.rend(); ++it) {
    if (record.family.empty()) record.family = (*it)->family();
    if (record.case_name.empty()) record.case_name = (*it)->case_name();
  }
}

// One write(2) of a whole line on an O_APPEND descriptor: other threads and
// processes appending to the same file cannot split it.
// `who` names the caller in the message.
void append_line(const std::string& who, const std::string& path, const std::string& line) {
  const std::string where = who + ": log " + path + ": ";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(where + "cannot open: " + std::strerror(errno));
  const ssize_t written = ::write(fd, line.data(), line.size());
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (written < 0) throw std::runtime_error(where + "write failed: " + std::strerror(write_errno));
  if (static_cast<std::size_t>(written) != line.size() || !closed) {
    throw std::runtime_error(where + "incomplete write");
  }
}

// Every read error names "path:line"; `where` carries it.
[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

std::string quoted(const std::string& text) { return json(text).dump(); }

void read_attrs(const json& attrs, LaunchRecord& record, const std::string& where) {
  if (!attrs.is_array()) fail(where, "key \"attrs\" = " + attrs.dump() + ": must be an array");
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    const json& pair = attrs[i];
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) {
      fail(where, "key \"attrs\"[" + std::to_string(i) + "] = " + pair.dump() +
                      ": must be a [name, value] pair of strings");
    }
    record.attrs.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
  }
}

// A line holds exactly the keys to_json_line writes.
LaunchRecord record_from_line(const std::string& line, const std::string& where) {
  json object;
  try {
    object = json::parse(line);
  } catch (const json::parse_error& e) {
    fail(where, std::string("not valid JSON: ") + e.what());
  }
  if (!object.is_object()) fail(where, "line = " + object.dump() + ": must be a JSON object");
  for (const auto& item : object.items()) {
    const bool known =
        item.key() == kAttrsKey || std::any_of(std::begin(kFields), std::end(kFields),
                                               [&](const Field& f) { return item.key() == f.key; });
    if (!known) fail(where, "unknown key " + quoted(item.key()));
  }
  LaunchRecord record;
  for (const Field& field : kFields) {
    if (!object.contains(field.key)) fail(where, std::string("missing key \"") + field.key + "\"");
    const json& value = object[field.key];
    if (!value.is_string()) {
      fail(where,
           std::string("key \"") + field.key + "\" = " + value.dump() + ": must be a string");
    }
    record.*field.member = value.get<std::string>();
  }
  if (!object.contains(kAttrsKey)) fail(where, "missing key \"attrs\"");
  read_attrs(object[kAttrsKey], record, where);
  return record;
}

bool is_blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

// A directory's logs in name order, so merged output does not depend on readdir order.
std::vector<std::string> jsonl_files_in(const std::filesystem::path& directory) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().extension() == ".jsonl") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

bool operator==(const LaunchRecord& a, const LaunchRecord& b) {
  for (const Field& field : kFields) {
    if (a.*field.member != b.*field.member) return false;
  }
  return a.attrs == b.attrs;
}

bool operator!=(const LaunchRecord& a, const LaunchRecord& b) { return !(a == b); }

std::string to_json_line(const LaunchRecord& record) {
  nlohmann::ordered_json object;
  for (const Field& field : kFields) object[field.key] = record.*field.member;
  object[kAttrsKey] = nlohmann::ordered_json::array();
  for (const auto& [name, value] : record.attrs) object[kAttrsKey].push_back({name, value});
  // A log line must never be lost to a stray byte: invalid UTF-8 becomes U+FFFD.
  return object.dump(-1, ' ', false, json::error_handler_t::replace);
}

RecordContext::RecordContext(std::string family, std::string case_name)
    : family_(std::move(family)), case_name_(std::move(case_name)) {
  t_contexts.push_back(this);
}

RecordContext::~RecordContext() {
  t_contexts.erase(std::find(t_contexts.begin(), t_contexts.end(), this));
}

RouteRecorder::RouteRecorder() {
  if (const char* path = std::getenv("NVFP4_ROUTE_LOG")) log_path_ = path;
}

RouteRecorder& RouteRecorder::global() {
  // Never destroyed, so launches from other static destructors still find it.
  static RouteRecorder* const recorder = new RouteRecorder();
  return *recorder;
}

void RouteRecorder::record(LaunchRecord record) {
  fill_from_contexts(record);  // outside the lock: the contexts are this thread's
  const std::string line = to_json_line(record) + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  records_.push_back(std::move(record));
  if (!log_path_.empty()) append_line("RouteRecorder::record", log_path_, line);
}

std::vector<LaunchRecord> RouteRecorder::records() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return records_;
}

void RouteRecorder::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  records_.clear();
}

void RouteRecorder::set_log_path(std::string path) {
  std::lock_guard<std::mutex> lock(mutex_);
  log_path_ = std::move(path);
}

std::string RouteRecorder::log_path() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return log_path_;
}

std::vector<LaunchRecord> read_route_log(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("read_route_log: " + path +
                             ": cannot open for reading: " + std::strerror(errno));
  }
  std::vector<LaunchRecord> records;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (is_blank(line)) continue;
    records.push_back(
        record_from_line(line, "read_route_log: " + path + ":" + std::to_string(number)));
  }
  if (in.bad()) {
    throw std::runtime_error("read_route_log: " + path + ": read failed: " + std::strerror(errno));
  }
  return records;
}

std::vector<LaunchRecord> read_route_logs(const std::vector<std::string>& paths) {
  std::vector<LaunchRecord> merged;
  auto append = [&merged](const std::string& file) {
    std::vector<LaunchRecord> records = read_route_log(file);
    merged.insert(merged.end(), std::make_move_iterator(records.begin()),
                  std::make_move_iterator(records.end()));
  };
  for (const std::string& path : paths) {
    std::error_code ignored;  // a missing path is reported by read_route_log
    if (std::filesystem::is_directory(path, ignored)) {
      for (const std::string& file : jsonl_files_in(path)) append(file);
    } else {
      append(path);
    }
  }
  return merged;
}

void append_route_log(const std::string& path, const std::vector<LaunchRecord>& records) {
  for (const LaunchRecord& r : records)
    append_line("append_route_log", path, to_json_line(r) + "\n");
}

}  // namespace nvh
