# TilejitLLVM.cmake - Find LLVM/MLIR 22 and make every MLIR target link LLVM's
# static component libraries instead of the shared libLLVM.so / libMLIR.so.
#
# Debian's CMake exports make MLIR targets link "LLVM" (libLLVM.so). The GPU
# machine has no LLVM, so tilejit's binaries must carry the code they use. We
# rewrite the imported targets' INTERFACE_LINK_LIBRARIES: "LLVM" becomes
# tilejit_llvm_static (the static components below), "MLIR" is dropped, and
# LLVMSupport loses libz3 (only the static analyzer uses it).

find_package(MLIR REQUIRED CONFIG
  PATHS "${TILEJIT_LLVM_ROOT}/lib/cmake/mlir" NO_DEFAULT_PATH)
message(STATUS "tilejit: MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_DIR}")
if(NOT LLVM_PACKAGE_VERSION VERSION_GREATER_EQUAL 22 OR LLVM_PACKAGE_VERSION VERSION_GREATER_EQUAL 23)
  message(FATAL_ERROR "tilejit needs LLVM/MLIR 22, found ${LLVM_PACKAGE_VERSION}")
endif()

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)

llvm_map_components_to_libnames(TILEJIT_LLVM_COMPONENT_LIBS
  NVPTXCodeGen NVPTXDesc NVPTXInfo
  Passes Core Support IRReader Linker BitWriter BitReader AsmParser
  Analysis TransformUtils Target MC Object FrontendOpenMP FrontendOffloading)

add_library(tilejit_llvm_static INTERFACE)
target_link_libraries(tilejit_llvm_static INTERFACE ${TILEJIT_LLVM_COMPONENT_LIBS})

get_property(_tilejit_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(_t IN LISTS _tilejit_imported)
  get_target_property(_libs ${_t} INTERFACE_LINK_LIBRARIES)
  if(NOT _libs)
    continue()
  endif()
  set(_new "")
  foreach(_l IN LISTS _libs)
    if(_l STREQUAL "LLVM" OR _l STREQUAL "$<LINK_ONLY:LLVM>")
      list(APPEND _new tilejit_llvm_static)
    elseif(_l STREQUAL "MLIR" OR _l STREQUAL "$<LINK_ONLY:MLIR>" OR _l MATCHES "libz3" OR _l STREQUAL "Polly")
      # dropped: shared MLIR, Z3 (static analyzer only), Polly (not shipped)
    else()
      list(APPEND _new "${_l}")
    endif()
  endforeach()
  set_target_properties(${_t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_new}")
endforeach()

# MLIR's and LLVM's headers; SYSTEM keeps their warnings out of ours.
add_library(tilejit_mlir_headers INTERFACE)
target_include_directories(tilejit_mlir_headers SYSTEM INTERFACE
  ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
target_compile_options(tilejit_mlir_headers INTERFACE -fno-rtti)
separate_arguments(_llvm_definitions UNIX_COMMAND "${LLVM_DEFINITIONS}")
target_compile_options(tilejit_mlir_headers INTERFACE ${_llvm_definitions})
# Under AddressSanitizer, LLVM's headers poison and unpoison the memory of
# its allocators (BumpPtrAllocator) inline: mixed with Debian's
# uninstrumented LLVM libraries that gives false use-after-poison reports.
# Code that includes LLVM's headers sees them as in an uninstrumented build.
if(TILEJIT_SANITIZE MATCHES "address")
  target_compile_options(tilejit_mlir_headers INTERFACE -U__SANITIZE_ADDRESS__)
endif()

# A faster linker where one is installed (lld-22 from the same packages). GCC
# finds "ld.lld" through -B, so point it at a folder holding just that link.
find_program(TILEJIT_LLD NAMES ld.lld PATHS "${TILEJIT_LLVM_ROOT}/bin" NO_DEFAULT_PATH)
if(TILEJIT_LLD)
  set(_lld_dir "${PROJECT_BINARY_DIR}/linker")
  file(MAKE_DIRECTORY "${_lld_dir}")
  file(CREATE_LINK "${TILEJIT_LLD}" "${_lld_dir}/ld.lld" SYMBOLIC)
  add_link_options("-B${_lld_dir}" "-fuse-ld=lld")
endif()
add_link_options("LINKER:--as-needed")
