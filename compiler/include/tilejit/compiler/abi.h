// abi.h - A compiled kernel's calling convention: its launch arguments, each
// bound by name to a host tensor or scalar, the rule that gives its grid, its
// block size and its dynamic shared memory. The compiler reports it; the
// host binds by it and computes nothing the compiler knows.
#pragma once

#include "tilejit/dtype.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilejit {

/// One factor of a grid extent: ceil(size(tensor, dim) / divisor) of a
/// tensor parameter, or the constant `divisor` when `tensor` is empty.
struct GridFactor {
  std::string tensor;
  int dim = 0;
  int64_t divisor = 1;
  bool operator==(const GridFactor &) const = default;
};

/// Blocks along one grid dimension: the product of the factors (1 when
/// there are none). Printed and parsed as `ceil(x[0] / 32) * 4`.
struct GridExtent {
  std::vector<GridFactor> factors;
  std::string to_string() const;
  /// nullopt and `why` for text to_string() does not write.
  static std::optional<GridExtent> parse(std::string_view text,
                                         std::string &why);
  bool operator==(const GridExtent &) const = default;
};

/// One launch argument of a compiled kernel, bound by `name` to a tensor or
/// scalar parameter of the kernel as the author declared it.
struct AbiArg {
  enum class Kind {
    tensor,     ///< 3 + 2 rank words: pointer, pointer, 0, sizes, strides
    scalar,     ///< the scalar's value, of `dtype`
    tensor_map, ///< CUtensorMap of `name` for copies of `box` (swizzled)
    pointer,    ///< the tensor's address
    size,       ///< size(name, dim), i64
    row_stride, ///< stride[0] of 2-D `name` in elements (its size[1] when it
                ///< has one row), i64
    blocks,     ///< the blocks the grid rule gives along dimension `dim`
                ///< before a persistent kernel's cap (`name` is "grid"), i64
  };
  Kind kind = Kind::tensor;
  std::string name;
  DType dtype = DType::f32;
  int rank = 0;
  int dim = 0;              ///< size, blocks
  std::vector<int64_t> box; ///< tensor_map, outermost first
  /// tensor: the kernel assumes a last stride of 1 / rows aligned to this
  /// many bytes (0: its element size) of the view bound to it
  bool unit_inner = false;
  int64_t align_bytes = 0;
  /// tensor_map: the span of its shared-memory swizzle in bytes, 128 (the
  /// layout WGMMA reads) or 0 (none: the box's rows dense)
  int64_t swizzle = 128;
  bool operator==(const AbiArg &) const = default;
};

std::string_view name_of(AbiArg::Kind kind);

/// The calling convention of a compiled kernel.
struct KernelAbi {
  std::vector<AbiArg> args; ///< in launch order
  /// The grid the kernel declared (KernelBuilder::grid); `has_grid` false:
  /// the host must give one.
  std::array<GridExtent, 3> grid;
  bool has_grid = false;
  int threads = 0;
  int64_t shared_bytes = 0; ///< dynamic shared memory a block
  /// Launched as a programmatic dependent launch (KernelBuilder::
  /// programmatic_launch): the kernel waits for the grid before it itself.
  bool programmatic = false;
  /// Persistent: launched with at most one block an SM along grid dimension
  /// x; the kernel walks the blocks its grid rule gives (its `blocks`
  /// argument) in strides of the grid.
  bool persistent = false;

  /// Text, a line per item, that parse() reads back.
  std::string serialize() const;
  /// nullopt and `why` for text that serialize() did not write.
  static std::optional<KernelAbi> parse(std::string_view text,
                                        std::string &why);
  bool operator==(const KernelAbi &) const = default;
};

/// Whether `name` can name a kernel or a parameter: an ASCII letter or '_',
/// then letters, digits and '_' (what PTX and the ABI text take).
bool is_identifier(std::string_view name);

} // namespace tilejit
