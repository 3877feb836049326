# harness_report: what long runs print and leave behind: progress on stderr,
# JUnit XML.
add_library(harness_report
  ${CMAKE_CURRENT_LIST_DIR}/progress.cc
  ${CMAKE_CURRENT_LIST_DIR}/junit.cc)
target_include_directories(harness_report PUBLIC ${PROJECT_SOURCE_DIR})

nvfp4_add_gtest(harness_report_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/junit_test.cc
  LIBS harness_report)
