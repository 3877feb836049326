# `cmake --install <build> --prefix <dir>`: the harness libraries and the NVFP4
# operator's, their headers under include/nvfp4_harness/ (the same paths as in
# the source tree), the nvfp4-harness command, and a CMake package:
#
#   find_package(nvfp4_harness REQUIRED)      # CMAKE_PREFIX_PATH=<dir>
#   target_link_libraries(my_tool PRIVATE nvfp4_harness::harness_suite)
#
# examples/axpb is an operator built this way (README.md, "Putting your
# operator under the harness").
include(CMakePackageConfigHelpers)

set(_nvh_exported
    cuda_headers harness_records harness_exec harness_report harness_suite
    nvfp4_reference nvfp4_toolkit_crosscheck nvfp4_kernels nvfp4_cases)
# A gcov build's static libraries need gcov where they are linked.
if(NVFP4_COVERAGE)
  target_link_options(harness_exec INTERFACE --coverage)
endif()
install(TARGETS ${_nvh_exported}
        EXPORT nvfp4_harnessTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS nvfp4-harness RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(dir harness kernels/nvfp4_matmul properties/nvfp4_matmul reference/nvfp4_matmul)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nvfp4_harness/${dir}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh"
          PATTERN "golden" EXCLUDE)
endforeach()

set(_nvh_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/nvfp4_harness)
install(EXPORT nvfp4_harnessTargets NAMESPACE nvfp4_harness:: DESTINATION ${_nvh_package_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nvfp4_harnessConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/nvfp4_harnessConfig.cmake
                              INSTALL_DESTINATION ${_nvh_package_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/nvfp4_harnessConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/nvfp4_harnessConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/nvfp4_harnessConfigVersion.cmake
        DESTINATION ${_nvh_package_dir})
