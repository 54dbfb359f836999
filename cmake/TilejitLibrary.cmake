# TilejitLibrary.cmake - tilejit_library(NAME EXPORT INCLUDE SOURCES...): a
# shared library tilejit::EXPORT whose headers are included from the current
# source directory here and from include/tilejit/INCLUDE once installed.
function(tilejit_library name export include)
  add_library(${name} SHARED ${ARGN})
  add_library(tilejit::${export} ALIAS ${name})
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${export})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/tilejit/${include}>)
endfunction()
