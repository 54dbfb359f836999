// check.h - Argument validation for host entry points: each failure throws
// UserError naming the op, the argument, the value and the requirement.
#pragma once

#include "tilejit/runtime/tensor.h"

#include <string_view>
#include <vector>

namespace tilejit::ops {

void check_dtype(std::string_view op, std::string_view arg,
                 const rt::TensorView &t, DType want);
void check_rank(std::string_view op, std::string_view arg,
                const rt::TensorView &t, int want);
/// `b` must have the same shape as `a`.
void check_same_shape(std::string_view op, std::string_view a_name,
                      const rt::TensorView &a, std::string_view b_name,
                      const rt::TensorView &b);
/// Non-null unless empty, aligned to its element size, strides >= 0.
void check_pointer(std::string_view op, std::string_view arg,
                   const rt::TensorView &t);

/// `t`'s elements as their bytes: a u8 view with one more, innermost
/// dimension of size_of(dtype) (an int32 (M, W) of packed UE8M0 scales is
/// the u8 (M, W, 4) whose byte j of (m, w) is group 4w + j).
rt::TensorView as_bytes(const rt::TensorView &t);

/// A u8 `t` of unit inner stride as its 32-bit words: u32 with the last
/// dimension and the other strides divided by 4 (E5M6 data, 8 codes in 3
/// words). The caller checks that they divide and the address is aligned.
rt::TensorView as_words(const rt::TensorView &t);

/// `t`'s memory (data and dtype) seen with another shape and strides (in
/// elements): a kernel's view such as a flat index space or a stride-0
/// repeat. The caller keeps it inside `t`.
rt::TensorView view_as(const rt::TensorView &t, std::vector<int64_t> shape,
                       std::vector<int64_t> strides);

/// `t` with a dimension of `copies` elements and stride 0 inserted before
/// dimension `at`: every element read `copies` times (a kernel's way to
/// spread a few scales over many threads).
rt::TensorView repeated(const rt::TensorView &t, int at, int64_t copies);

/// True when `t` has unit inner stride (or one column) and its base address
/// and every row start are multiples of `bytes`: the promise of
/// dsl::inner_contiguous(bytes).
bool rows_aligned(const rt::TensorView &t, int bytes);

} // namespace tilejit::ops
