// kernel.h - A tile kernel as the compiler holds it: tile IR plus signature.
#pragma once

#include "tilejit/compiler/abi.h"
#include "tilejit/dtype.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit {

/// One kernel parameter as the host passes it. A tensor is a strided global
/// tensor with run-time sizes and strides; a scalar is passed by value.
struct KernelParam {
  enum class Kind { tensor, scalar };
  std::string name;
  Kind kind;
  DType dtype;
  int rank = 0; // tensors only
  /// Tensors: what the kernel assumes of a bound view (its memref's static
  /// last stride of 1, its `tile.align`): launches check them.
  bool unit_inner = false;
  int64_t align_bytes = 0;
};

/// A verified tile kernel, ready to compile. Move-only; owns its IR.
///
///   Kernel k = Kernel::parse(text);   // or KernelBuilder::build()
///   CompiledKernel c = compile(k);
class Kernel {
public:
  struct Impl;
  explicit Kernel(std::unique_ptr<Impl> impl);
  Kernel(Kernel &&) noexcept;
  Kernel &operator=(Kernel &&) noexcept;
  ~Kernel();

  /// Parses tile IR text holding exactly one kernel (a func.func with
  /// `tile.threads`). Throws UserError with the parser's or verifier's
  /// messages, each as `file:line:col: error: ...`.
  static Kernel parse(std::string_view tile_ir,
                      std::string_view buffer_name = "<tile-ir>");

  const std::string &name() const;
  int threads() const;
  const std::vector<KernelParam> &params() const;
  /// The grid the kernel declared (KernelBuilder::grid, the `tile.grid`
  /// attribute), or nullopt: then whoever launches it gives the grid.
  const std::optional<std::array<GridExtent, 3>> &grid() const;

  /// The tile IR, as `tilejit compile --dump tile` prints it.
  std::string tile_ir() const;

  Impl &impl() const { return *impl_; }

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace tilejit
