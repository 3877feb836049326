# harness_suite: the operator-suite interface (operator_suite.h), the one
# verify driver that runs any suite (verify_driver.h: verify, --case, shards,
# merge) and the command line every suite gets (suite_cli.h).
add_library(harness_suite
  ${CMAKE_CURRENT_LIST_DIR}/verify_driver.cc
  ${CMAKE_CURRENT_LIST_DIR}/suite_cli.cc)
target_include_directories(harness_suite PUBLIC ${NVH_INCLUDE_DIRS})
target_link_libraries(harness_suite PUBLIC harness_exec harness_records harness_report CLI11::CLI11
                                    PRIVATE nlohmann_json::nlohmann_json)

# The driver on a toy suite: no operator of this tree involved.
nvfp4_add_gtest(harness_suite_tests SOURCES ${CMAKE_CURRENT_LIST_DIR}/verify_driver_test.cc
                LIBS harness_suite)
