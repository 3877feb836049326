# harness_exec: the kernel context abstraction, the host grid executor, the
# backends, and running tasks in child processes so a crash fails one task
# (isolation.h). With NVFP4_ENABLE_CUDA it also holds the CUDA backend.
add_library(harness_exec
  ${CMAKE_CURRENT_LIST_DIR}/isolation.cc
  ${CMAKE_CURRENT_LIST_DIR}/host_executor.cc
  ${CMAKE_CURRENT_LIST_DIR}/host_memcheck.cc
  ${CMAKE_CURRENT_LIST_DIR}/tensor_map.cc
  ${CMAKE_CURRENT_LIST_DIR}/backend.cc
  ${CMAKE_CURRENT_LIST_DIR}/gpu_timing.cc
  ${CMAKE_CURRENT_LIST_DIR}/probe.cc)
target_include_directories(harness_exec PUBLIC ${NVH_INCLUDE_DIRS})
# Branch probes in kernel bodies count (harness/probe.h); off, they are the bare condition.
if(NVFP4_DEVICE_PROBES)
  target_compile_definitions(harness_exec PUBLIC NVH_PROBES=1)
endif()
# A child process ends with _exit; under gcov it writes its counters first.
if(NVFP4_COVERAGE)
  target_compile_definitions(harness_exec PRIVATE NVH_GCOV=1)
endif()
nvh_optimize_under_coverage(TARGET harness_exec)
nvh_atomic_counters_under_coverage(harness_exec)  # its worker threads run blocks at once
target_link_libraries(harness_exec PUBLIC cuda_headers Boost::context Threads::Threads)
if(NVFP4_ENABLE_CUDA)
  target_sources(harness_exec PRIVATE ${CMAKE_CURRENT_LIST_DIR}/backend_cuda.cu
                                      ${CMAKE_CURRENT_LIST_DIR}/gpu_timing.cu)
  target_compile_definitions(harness_exec PUBLIC NVH_HAVE_CUDA=1)
  target_link_libraries(harness_exec PUBLIC CUDA::cudart_static CUDA::cublas CUDA::cublasLt)
endif()

nvfp4_add_gtest(harness_exec_tests GPU
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/host_executor_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/host_memcheck_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/backend_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/gpu_timing_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/fast_divmod_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/probe_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/isolation_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/last_block_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/co_resident_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/cluster_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/ldmatrix_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/wgmma_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/cp_async_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/mbarrier_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/tma_test.cc
  LIBS harness_exec)
nvh_atomic_counters_under_coverage(harness_exec_tests)  # 8 executor threads in one test
if(NVFP4_ENABLE_CUDA)
  target_sources(harness_exec_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/last_block_test_cuda.cu
                                            ${CMAKE_CURRENT_LIST_DIR}/co_resident_test_cuda.cu
                                            ${CMAKE_CURRENT_LIST_DIR}/cluster_test_cuda.cu
                                            ${CMAKE_CURRENT_LIST_DIR}/ldmatrix_test_cuda.cu
                                            ${CMAKE_CURRENT_LIST_DIR}/wgmma_test_cuda.cu
                                            ${CMAKE_CURRENT_LIST_DIR}/cp_async_test_cuda.cu
                                            ${CMAKE_CURRENT_LIST_DIR}/mbarrier_test_cuda.cu
                                            ${CMAKE_CURRENT_LIST_DIR}/tma_test_cuda.cu)
endif()
