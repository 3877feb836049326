# harness_report: what long runs print and leave behind: progress on stderr,
# JUnit XML, lcov tracefiles of the branch probes.
add_library(harness_report
  ${CMAKE_CURRENT_LIST_DIR}/progress.cc
  ${CMAKE_CURRENT_LIST_DIR}/junit.cc
  ${CMAKE_CURRENT_LIST_DIR}/lcov_trace.cc)
target_include_directories(harness_report PUBLIC ${NVH_INCLUDE_DIRS})

nvfp4_add_gtest(harness_report_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/junit_test.cc ${CMAKE_CURRENT_LIST_DIR}/lcov_trace_test.cc
  LIBS harness_report)
