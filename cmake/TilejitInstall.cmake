# TilejitInstall.cmake - Install the libraries, tools and headers, and export
# a package that `find_package(tilejit)` finds (see tests/find_package).
include(CMakePackageConfigHelpers)

set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tilejit)

install(TARGETS tilejit_core tilejit_runtime tilejit_compiler tilejit_reference tilejit_kernels
  tilejit_harness
  EXPORT tilejitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tilejit tilejit-opt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(DIRECTORY core/include/ runtime/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
install(FILES ${PROJECT_BINARY_DIR}/core/include/tilejit/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilejit)
# Only the compiler's public API; its MLIR-facing headers stay internal.
install(DIRECTORY compiler/include/tilejit/compiler
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilejit)
# (*_cases.h: case tables' shared rows, part of the harness's build only)
install(DIRECTORY kernels/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilejit/kernels
  FILES_MATCHING PATTERN "*.h" PATTERN "*_cases.h" EXCLUDE)
install(DIRECTORY harness/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilejit/harness
  FILES_MATCHING PATTERN "*.h")

install(EXPORT tilejitTargets NAMESPACE tilejit:: DESTINATION ${_cmake_dir})
configure_package_config_file(cmake/tilejitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tilejitConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tilejitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tilejitConfig.cmake
              ${PROJECT_BINARY_DIR}/tilejitConfigVersion.cmake
  DESTINATION ${_cmake_dir})
