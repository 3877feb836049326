# harness_records: SHA-256 tensor digests, hash manifests, route records (JSON
# lines), the route-coverage gate, safetensors files and GoogleTest-style sharding. Operator-agnostic: no CUDA, no NVFP4.
set(_nvh_records_dir ${CMAKE_CURRENT_LIST_DIR})

add_library(harness_records STATIC
  ${_nvh_records_dir}/sha256.cc
  ${_nvh_records_dir}/manifest.cc
  ${_nvh_records_dir}/route_record.cc
  ${_nvh_records_dir}/route_gate.cc
  ${_nvh_records_dir}/safetensors.cc
  ${_nvh_records_dir}/shard.cc)
# Headers are included as "harness/foo.h" from the repository root.
target_include_directories(harness_records PUBLIC ${NVH_INCLUDE_DIRS})
# The headers expose neither OpenSSL nor nlohmann_json; the recorder's mutex needs Threads.
target_link_libraries(harness_records
  PUBLIC Threads::Threads
  PRIVATE OpenSSL::Crypto nlohmann_json::nlohmann_json)

nvfp4_add_gtest(harness_records_tests
  SOURCES
    ${_nvh_records_dir}/sha256_test.cc
    ${_nvh_records_dir}/manifest_test.cc
    ${_nvh_records_dir}/route_record_test.cc
    ${_nvh_records_dir}/route_gate_test.cc
    ${_nvh_records_dir}/safetensors_test.cc
    ${_nvh_records_dir}/shard_test.cc
  LIBS harness_records nlohmann_json::nlohmann_json)
# RouteRecorder's tests record from several threads at once.
nvh_atomic_counters_under_coverage(harness_records harness_records_tests)
