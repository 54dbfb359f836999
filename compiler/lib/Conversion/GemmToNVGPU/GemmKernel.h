//===- GemmKernel.h - The TMA + WGMMA kernel a pipelined gemm becomes ----===//
#ifndef TILEJIT_CONVERSION_GEMMTONVGPU_GEMMKERNEL_H
#define TILEJIT_CONVERSION_GEMMTONVGPU_GEMMKERNEL_H

#include <cstdint>
#include <string>

namespace mlir::tile {

/// One specialisation of the kernel: a 128 x bn x bk tile, `stages` buffers.
struct GemmKernelConfig {
  std::string name;
  int bn = 256;
  int bk = 64;
  int stages = 4;
  std::string inputType =
      "bf16"; ///< "bf16", "f16", "f32" (tf32), "e4m3", "e5m2"
  std::string outputType = "bf16"; ///< "bf16", "f16" or "f32"
  /// Mask the epilogue's stores at the M and N edges; false when the
  /// author promised the tile inside C (whole tiles only).
  bool checkBounds = true;
};

/// The kernel as MLIR text (a module holding one llvm.func); see
/// GemmKernelText.cpp for what it does and its parameters.
std::string gemmKernelText(const GemmKernelConfig &config);

/// Bytes of one input element (2; 1 for fp8, 4 for f32).
int gemmInputBytes(const GemmKernelConfig &config);

/// Dynamic shared memory the kernel needs, in bytes.
int64_t gemmSharedBytes(const GemmKernelConfig &config);

} // namespace mlir::tile

#endif // TILEJIT_CONVERSION_GEMMTONVGPU_GEMMKERNEL_H
