#include "harness/route_record.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace nvh {

// Failure messages show a record as its log line rather than raw bytes.
void PrintTo(const LaunchRecord& record, std::ostream* out) { *out << to_json_line(record); }

namespace {

namespace fs = std::filesystem;

// A fresh directory unique to the running test (ctest runs tests in parallel).
fs::path test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("nvh_route_" + std::string(info->test_suite_name()) + "_" + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

LaunchRecord sample(const std::string& route = "route_a") {
  LaunchRecord r;
  r.op = "op";
  r.route = route;
  r.variant = "v1";
  r.reason = "because";
  r.backend = "host";
  r.arch = "cpu";
  r.attrs = {{"N", "16"}, {"M", "8"}, {"dtype", "f16"}};
  return r;
}

// The error message of read_route_log on a file holding text, or "" if it did not throw.
std::string read_error(const std::string& text) {
  const fs::path path = test_dir() / "log.jsonl";
  write_text(path, text);
  try {
    read_route_log(path.string());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(RouteRecord, JsonLineFormatIsPinned) {
  LaunchRecord r = sample();
  r.family = "fam";
  r.case_name = "case \"1\"";
  EXPECT_EQ(to_json_line(r),
            "{\"op\":\"op\",\"route\":\"route_a\",\"variant\":\"v1\",\"reason\":\"because\","
            "\"backend\":\"host\",\"arch\":\"cpu\",\"family\":\"fam\",\"case_name\":\"case "
            "\\\"1\\\"\",\"attrs\":[[\"N\",\"16\"],[\"M\",\"8\"],[\"dtype\",\"f16\"]]}");
}

TEST(RouteRecord, InvalidUtf8IsReplacedNotDropped) {
  LaunchRecord r = sample();
  r.reason = "bad \xff byte";
  const fs::path path = test_dir() / "log.jsonl";
  RouteRecorder recorder;
  recorder.set_log_path(path.string());
  recorder.record(r);
  const std::vector<LaunchRecord> back = read_route_log(path.string());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].reason, "bad \xEF\xBF\xBD byte");
}

TEST(RouteRecorder, LogRoundTripsRecords) {
  const fs::path path = test_dir() / "log.jsonl";
  RouteRecorder recorder;
  recorder.set_log_path(path.string());
  recorder.record(sample("route_a"));
  LaunchRecord second = sample("route_b");
  second.attrs.clear();
  recorder.record(second);
  const std::vector<LaunchRecord> back = read_route_log(path.string());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back, recorder.records());
  EXPECT_EQ(back[0], sample("route_a"));
  EXPECT_EQ(back[1], second);
}

TEST(RouteRecorder, RecordsAreKeptInOrderAndClearEmptiesMemoryOnly) {
  const fs::path path = test_dir() / "log.jsonl";
  RouteRecorder recorder;
  recorder.set_log_path(path.string());
  recorder.record(sample("one"));
  recorder.record(sample("two"));
  ASSERT_EQ(recorder.records().size(), 2u);
  EXPECT_EQ(recorder.records()[1].route, "two");
  recorder.clear();
  EXPECT_TRUE(recorder.records().empty());
  EXPECT_EQ(read_route_log(path.string()).size(), 2u);
}

TEST(RouteRecorder, EmptyLogPathStopsLogging) {
  const fs::path path = test_dir() / "log.jsonl";
  RouteRecorder recorder;
  recorder.set_log_path(path.string());
  recorder.record(sample());
  recorder.set_log_path("");
  recorder.record(sample());
  EXPECT_EQ(recorder.records().size(), 2u);
  EXPECT_EQ(read_route_log(path.string()).size(), 1u);
}

TEST(RouteRecorder, LogPathComesFromEnvironment) {
  ASSERT_EQ(setenv("NVFP4_ROUTE_LOG", "/some/where.jsonl", 1), 0);
  EXPECT_EQ(RouteRecorder().log_path(), "/some/where.jsonl");
  ASSERT_EQ(unsetenv("NVFP4_ROUTE_LOG"), 0);
  EXPECT_EQ(RouteRecorder().log_path(), "");
}

TEST(RouteRecorder, GlobalIsOneObject) {
  RouteRecorder* from_thread = nullptr;
  std::thread([&] { from_thread = &RouteRecorder::global(); }).join();
  EXPECT_EQ(&RouteRecorder::global(), from_thread);
}

TEST(RouteRecorder, UnwritableLogThrowsNamingPathAndKeepsRecord) {
  const std::string path = (test_dir() / "missing-dir" / "log.jsonl").string();
  RouteRecorder recorder;
  recorder.set_log_path(path);
  try {
    recorder.record(sample());
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "RouteRecorder::record: log " + path + ": cannot open: No such file or directory");
  }
  EXPECT_EQ(recorder.records().size(), 1u);
}

TEST(RouteRecorder, FailedLogWriteThrowsWithReason) {
  if (!fs::is_character_file("/dev/full")) GTEST_SKIP() << "needs the /dev/full device";
  RouteRecorder recorder;
  recorder.set_log_path("/dev/full");  // opens fine, every write fails with ENOSPC
  try {
    recorder.record(sample());
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "RouteRecorder::record: log /dev/full: write failed: No space left on device");
  }
}

TEST(RouteRecorder, ConcurrentRecordsAreAllKeptAndLoggedWhole) {
  const fs::path path = test_dir() / "log.jsonl";
  RouteRecorder recorder;
  recorder.set_log_path(path.string());
  constexpr int kThreads = 8;
  constexpr int kPerThread = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&recorder, t] {
      for (int i = 0; i < kPerThread; ++i) {
        LaunchRecord r = sample("thread" + std::to_string(t));
        r.case_name = std::to_string(i);
        recorder.record(r);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(recorder.records().size(), std::size_t{kThreads * kPerThread});
  const std::vector<LaunchRecord> logged = read_route_log(path.string());
  ASSERT_EQ(logged.size(), std::size_t{kThreads * kPerThread});
  // Each thread's records appear in the order it made them.
  std::vector<int> next(kThreads, 0);
  for (const LaunchRecord& r : logged) {
    const std::size_t t = std::stoul(r.route.substr(6));
    EXPECT_EQ(r.case_name, std::to_string(next[t]++));
  }
}

TEST(RecordContext, FillsEmptyFamilyAndCase) {
  RouteRecorder recorder;
  {
    RecordContext ctx("family1", "case1");
    recorder.record(sample());
  }
  recorder.record(sample());
  const std::vector<LaunchRecord> records = recorder.records();
  EXPECT_EQ(records[0].family, "family1");
  EXPECT_EQ(records[0].case_name, "case1");
  EXPECT_EQ(records[1].family, "");
  EXPECT_EQ(records[1].case_name, "");
}

TEST(RecordContext, RecordsOwnValuesWin) {
  RouteRecorder recorder;
  RecordContext ctx("family1", "case1");
  LaunchRecord r = sample();
  r.family = "own family";
  recorder.record(r);
  EXPECT_EQ(recorder.records()[0].family, "own family");
  EXPECT_EQ(recorder.records()[0].case_name, "case1");
}

TEST(RecordContext, InnermostNonEmptyValueWins) {
  RouteRecorder recorder;
  RecordContext outer("outer family", "outer case");
  {
    RecordContext inner("", "inner case");
    recorder.record(sample());
  }
  recorder.record(sample());
  const std::vector<LaunchRecord> records = recorder.records();
  EXPECT_EQ(records[0].family, "outer family");
  EXPECT_EQ(records[0].case_name, "inner case");
  EXPECT_EQ(records[1].case_name, "outer case");
}

TEST(RecordContext, IsPerThread) {
  RouteRecorder recorder;
  RecordContext ctx("main family", "main case");
  std::thread([&recorder] {
    RecordContext mine("thread family", "thread case");
    recorder.record(sample());
  }).join();
  std::thread([&recorder] { recorder.record(sample()); }).join();
  const std::vector<LaunchRecord> records = recorder.records();
  EXPECT_EQ(records[0].family, "thread family");
  EXPECT_EQ(records[1].family, "");
}

TEST(ReadRouteLog, IgnoresBlankLines) {
  const fs::path path = test_dir() / "log.jsonl";
  write_text(path,
             "\n" + to_json_line(sample("a")) + "\n  \t\n\n" + to_json_line(sample("b")) + "\r\n");
  const std::vector<LaunchRecord> records = read_route_log(path.string());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1], sample("b"));
}

TEST(ReadRouteLog, MalformedLineNamesFileAndLine) {
  const std::string error = read_error(to_json_line(sample()) + "\n\n{\"op\": \n");
  const std::string prefix =
      "read_route_log: " + (test_dir() / "log.jsonl").string() + ":3: not valid JSON: ";
  EXPECT_EQ(error.rfind(prefix, 0), 0u) << error;
}

TEST(ReadRouteLog, WrongTypeNamesKey) {
  std::string line = to_json_line(sample());
  line.replace(line.find("\"route_a\""), 9, "7");
  EXPECT_EQ(read_error(line), "read_route_log: " + (test_dir() / "log.jsonl").string() +
                                  ":1: key \"route\" = 7: must be a string");
}

TEST(ReadRouteLog, MissingKeyNamed) {
  std::string line = to_json_line(sample());
  line.erase(line.find("\"variant\""), std::string("\"variant\":\"v1\",").size());
  EXPECT_EQ(read_error(line), "read_route_log: " + (test_dir() / "log.jsonl").string() +
                                  ":1: missing key \"variant\"");
}

TEST(ReadRouteLog, UnknownKeyNamed) {
  std::string line = to_json_line(sample());
  line.insert(1, "\"rout\":\"x\",");
  EXPECT_EQ(read_error(line),
            "read_route_log: " + (test_dir() / "log.jsonl").string() + ":1: unknown key \"rout\"");
}

TEST(ReadRouteLog, MalformedAttrNamed) {
  std::string line = to_json_line(sample());
  line.replace(line.find("[\"M\",\"8\"]"), 9, "[\"M\"]");
  EXPECT_EQ(read_error(line), "read_route_log: " + (test_dir() / "log.jsonl").string() +
                                  ":1: key \"attrs\"[1] = [\"M\"]: must be a [name, value] "
                                  "pair of strings");
}

TEST(ReadRouteLog, NonObjectLine) {
  EXPECT_EQ(read_error("[1]\n"), "read_route_log: " + (test_dir() / "log.jsonl").string() +
                                     ":1: line = [1]: must be a JSON object");
}

TEST(ReadRouteLog, MissingFileNamed) {
  const std::string path = (test_dir() / "absent.jsonl").string();
  try {
    read_route_log(path);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "read_route_log: " + path + ": cannot open for reading: No such file or directory");
  }
}

TEST(ReadRouteLog, DirectoryIsNotALog) {
  const std::string path = test_dir().string();
  try {
    read_route_log(path);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "read_route_log: " + path + ": read failed: Is a directory");
  }
}

TEST(ReadRouteLogs, MergesFilesAndDirectoriesInOrder) {
  const fs::path dir = test_dir();
  fs::create_directory(dir / "logs");
  write_text(dir / "logs" / "b.jsonl", to_json_line(sample("dir_b")) + "\n");
  write_text(dir / "logs" / "a.jsonl", to_json_line(sample("dir_a")) + "\n");
  write_text(dir / "logs" / "notes.txt", "not a log\n");
  write_text(dir / "first.jsonl", to_json_line(sample("file")) + "\n");
  const std::vector<LaunchRecord> merged =
      read_route_logs({(dir / "first.jsonl").string(), (dir / "logs").string()});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].route, "file");
  EXPECT_EQ(merged[1].route, "dir_a");
  EXPECT_EQ(merged[2].route, "dir_b");
}

TEST(ReadRouteLogs, MissingPathIsAnError) {
  EXPECT_THROW(read_route_logs({(test_dir() / "absent").string()}), std::runtime_error);
}

// Two "binaries" (recorders) appending to one file one after the other.
TEST(ReadRouteLogs, SequentialWritersToOneFileMerge) {
  const fs::path path = test_dir() / "shared.jsonl";
  for (const char* route : {"first", "second"}) {
    RouteRecorder recorder;
    recorder.set_log_path(path.string());
    recorder.record(sample(route));
  }
  const std::vector<LaunchRecord> merged = read_route_logs({path.string()});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].route, "first");
  EXPECT_EQ(merged[1].route, "second");
}

}  // namespace
}  // namespace nvh
