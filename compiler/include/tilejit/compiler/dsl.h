// dsl.h - The embedded C++ tile DSL: build a kernel through a builder.
#pragma once

#include "tilejit/compiler/kernel.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <source_location>
#include <string_view>
#include <vector>

namespace tilejit::dsl {

class KernelBuilder;

/// A value of the kernel being built: an index, a scalar or a fragment (a
/// tile held in the registers of the whole block). Cheap to copy. Integer
/// values remember whether they are unsigned (u8, u32, u64): shifts right,
/// divisions, comparisons and casts follow it.
class Value {
public:
  Value() = default;
  bool valid() const { return builder_ != nullptr; }
  /// The element type (i64 for indices).
  DType dtype() const { return dtype_; }
  /// The underlying mlir::Value as an opaque pointer (for tilejit's compiler).
  void *raw() const { return value_; }
  KernelBuilder *builder() const { return builder_; }
  /// Shape of a fragment; empty for a scalar or an index.
  std::vector<int64_t> shape() const;

  Value(KernelBuilder *b, void *v, DType dtype)
      : builder_(b), value_(v), dtype_(dtype) {}

private:
  KernelBuilder *builder_ = nullptr;
  void *value_ = nullptr; // mlir::Value, opaque
  DType dtype_ = DType::i64;
};

/// A global tensor argument: strided, with run-time sizes and strides.
class Tensor {
public:
  int rank() const { return rank_; }
  DType dtype() const { return dtype_; }
  void *raw() const { return value_; }
  /// The builder whose kernel takes this tensor.
  KernelBuilder *builder() const { return builder_; }

private:
  friend class KernelBuilder;
  KernelBuilder *builder_ = nullptr;
  void *value_ = nullptr;
  int rank_ = 0;
  DType dtype_ = DType::f32;
};

using Loc = std::source_location;

/// A number of blocks along one grid dimension, computed by the host at
/// launch from the sizes of the tensors bound to the kernel
/// (KernelBuilder::blocks, products of them, constants).
class Extent {
public:
  /// A constant number of blocks.
  Extent(int64_t blocks = 1) {
    if (blocks != 1)
      rule_.factors.push_back({"", 0, blocks});
  }
  friend Extent operator*(Extent a, const Extent &b) {
    a.rule_.factors.insert(a.rule_.factors.end(), b.rule_.factors.begin(),
                           b.rule_.factors.end());
    return a;
  }
  const GridExtent &rule() const { return rule_; }

private:
  friend class KernelBuilder;
  GridExtent rule_;
};

/// What the kernel may assume of a tensor argument's memory, beyond its dtype
/// and rank. The host entry checks the promise before it picks the kernel
/// that relies on it (the promise is part of the specialisation key).
struct Access {
  /// The last dimension has stride 1.
  bool inner_contiguous = false;
  /// The base address and the start of every row (every index with a last
  /// coordinate of 0) are multiples of this many bytes (0: element size).
  int align_bytes = 0;
  /// Some stride may be 0 (a view that repeats rows, e.g. a weight read by
  /// every token): `copy` in a pipeline then stays on cp.async (TMA cannot
  /// read such a view).
  bool repeats = false;
};

/// `Access` for row-major rows aligned to `align_bytes`: what a contiguous
/// tensor from a caching allocator gives when its row bytes divide by it.
inline Access inner_contiguous(int align_bytes = 16) {
  return Access{true, align_bytes};
}

/// inner_contiguous(bytes), or no promise when `bytes` is 0: a spec's
/// vector width, which the host sets only where the rows are aligned.
inline Access vectors_of(int bytes) {
  return bytes ? inner_contiguous(bytes) : Access{};
}

/// `access` for a view that may repeat rows (Access::repeats).
inline Access repeating(Access access) {
  access.repeats = true;
  return access;
}

/// Whether a load or store checks each element against the tensor's sizes
/// (the default: outside, loads read zero and stores are dropped) or the
/// author promises the whole box is inside and no checks are emitted. A
/// broken promise reads and writes out of bounds.
enum class Bounds { checked, promised_inside };

/// How a gemm's f32 operands become tf32: `truncated` (the tensor core
/// reads an f32 operand's bits as tf32, dropping the low 13 mantissa bits)
/// or `rounded` (to the nearest tf32, ties away from zero: adding 0x1000 to
/// the bits, then truncating; mma.sync only).
enum class Tf32 { truncated, rounded };

/// How KernelBuilder::from_e2m1 decodes (the values are the same, bit for
/// bit): `select` builds the f32 bits from the code's exponent and
/// mantissa fields (two selects); `multiply` places the code's bits at bit
/// 22, the value times 2^-126 (0.5 an f32 subnormal), and multiplies by
/// 2^126, exact. Which is faster depends on the kernel around it: on an
/// H100 (session 66, both in one process) per_block_cast_lossless took
/// 46.0 us with `multiply` and 62.6 us with `select`, per_token_cast_back
/// of packed e2m1 71.5 us and 57.5 us.
enum class E2m1Decode { select, multiply };

/// How KernelBuilder::to_e2m1 encodes (the codes are the same, bit for
/// bit): `select` rounds |x| >= 1 in the f32 bits and |x| < 1 by an fma
/// into 2^23's last place, then picks one (session 66's form, mostly
/// integer operations); `least` takes the least of three such fmas,
/// RN(2|x|), RN(|x|) + 2 and RN(|x| / 2) + 4 (the codes of |x| below 2, 4
/// and past), and 7, as integers: three fmas and three minimums an element
/// where `select` spends seven integer operations and one fma, for kernels
/// bound by the integer pipe (session 68, an H100: per_block_cast e2m1
/// 32 x 32 60.0 -> 52.6 us, per_token_cast e2m1 by 32 63.6 -> 55.8 us).
enum class E2m1Encode { select, least };

/// How KernelBuilder::gemm reads its operands beyond the defaults (a: M x
/// K, b: N x K, f32 operands truncated to tf32).
struct GemmOptions {
  Tf32 tf32 = Tf32::truncated;
  /// a is given as its transpose, a K x M tile (b: K x N): the layout of a
  /// tensor whose rows run along K, e.g. a weight gradient's activations
  /// and output gradients, copied as they are. mma.sync only.
  bool transpose_a = false, transpose_b = false;
};

/// Builds one kernel. Every call records the caller's source line, so a
/// verifier error names the line of the kernel author's code.
///
///   dsl::KernelBuilder k("scale_copy", /*threads=*/256);
///   auto x = k.tensor("x", DType::f32, 2);
///   auto row = k.block_id(0) * k.index(32);
///   auto t = k.load(x, {row, k.index(0)}, {32, 64});
class KernelBuilder {
public:
  KernelBuilder(std::string_view name, int threads, Loc loc = Loc::current());
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder &) = delete;
  KernelBuilder &operator=(const KernelBuilder &) = delete;

  /// A global tensor argument of the given element type and rank, with
  /// run-time sizes and strides. With `inner_contiguous` access the last
  /// stride is 1, and with 16-byte alignment tile loads and stores use 16-byte
  /// vector instructions.
  Tensor tensor(std::string_view name, DType dtype, int rank,
                Access access = {}, Loc loc = Loc::current());
  /// A scalar argument passed by value.
  Value scalar(std::string_view name, DType dtype, Loc loc = Loc::current());

  /// The block's index along grid dimension `dim` (0, 1 or 2).
  Value block_id(int dim, Loc loc = Loc::current());
  /// An index constant.
  Value index(int64_t value, Loc loc = Loc::current());

  /// Loads the box of `shape` starting at `origin` into a fragment; elements
  /// outside the tensor read as zero (see Bounds). An origin index may be an
  /// integer scalar (say, a position read by load_scalar): a negative one is
  /// outside, so the checked load reads zeros there.
  Value load(const Tensor &src, const std::vector<Value> &origin,
             const std::vector<int64_t> &shape, Bounds bounds = Bounds::checked,
             Loc loc = Loc::current());
  /// Loads one element of `src` as a scalar, the same in every thread (each
  /// thread reads it: one L1-cached load they share): `index` has an index
  /// or an integer scalar (say, another load_scalar's) a dimension; outside
  /// the tensor (a negative index too) it reads 0.
  /// What TileLang's `if pos_to_expert[b] < 0:` reads: a scalar compared
  /// is a condition for k.if_else, a bound for k.serial.
  Value load_scalar(const Tensor &src, const std::vector<Value> &index,
                    Loc loc = Loc::current());
  /// Loads rows of `src` picked at run time by the rank-1 i32/i64 tensor
  /// `rows` (TileLang's gathered copies, `x[pos_to_token[r], :]`): element
  /// [i, j, ...] of the result is src[rows[origin[0] + i], origin[1] + j,
  /// ...]; `origin[0]` indexes `rows`. A row past the end of `rows`, or
  /// whose index is outside `src` (a negative one too: padding, -1), reads
  /// zeros, also under Bounds::promised_inside, which then promises the
  /// other dimensions only. Each vector access reads its row index (an
  /// L1-cached load the threads of a row share) and checks it.
  Value gather(const Tensor &src, const Tensor &rows,
               const std::vector<Value> &origin,
               const std::vector<int64_t> &shape,
               Bounds bounds = Bounds::checked, Loc loc = Loc::current());
  /// Reads `src` at positions computed per element (TileLang's `A[idx[i]]`,
  /// a table looked up at run-time positions): element e of the result is
  /// src[indices[0][e], indices[1][e], ...], one index a dimension of
  /// `src`: integer fragments of one shape (the result's) or scalars (the
  /// same position for every element). A position outside the tensor (a
  /// negative index too) reads 0. One scalar load an element, laid out as
  /// the indices: for small tables, not for tiles (load and gather read
  /// whole vectors).
  Value load_at(const Tensor &src, const std::vector<Value> &indices,
                Loc loc = Loc::current());
  /// The same from a shared tile (alloc_shared): a table in shared memory.
  /// Writes by other threads need a `barrier()` in between.
  Value load_at(Value shared, const std::vector<Value> &indices,
                Loc loc = Loc::current());
  /// The inverse of load_at: element e of `fragment` (or a scalar, the same
  /// for every element) goes to dst[indices[0][e], indices[1][e], ...],
  /// where `mask` (a comparison's result of the indices' shape; none: every
  /// element) holds. A position outside the tensor or tile (a negative
  /// index too) is dropped; two elements naming one position write it in no
  /// defined order. One scalar store an element. The value's dtype is the
  /// memory's.
  void store_at(Value fragment, const Tensor &dst,
                const std::vector<Value> &indices, Value mask = {},
                Loc loc = Loc::current());
  void store_at(Value fragment, Value shared, const std::vector<Value> &indices,
                Value mask = {}, Loc loc = Loc::current());
  /// store_at into a shared tile that adds each element atomically (a
  /// histogram: `atomic_add_at(ones, hist, {ids})`; i32, u32, i64, u64,
  /// f32). Reads by other threads need a `barrier()` in between.
  void atomic_add_at(Value fragment, Value shared,
                     const std::vector<Value> &indices, Value mask = {},
                     Loc loc = Loc::current());
  /// Stores a fragment at `origin`; elements outside the tensor are dropped
  /// (see Bounds). An origin index may be an integer scalar, as load's.
  void store(Value fragment, const Tensor &dst,
             const std::vector<Value> &origin, Bounds bounds = Bounds::checked,
             Loc loc = Loc::current());

  /// Stores a fragment to rows of `dst` picked at run time by the rank-1
  /// i32/i64 tensor `rows` (the inverse of gather, `out[pos[r], :] = t`):
  /// element [i, j, ...] goes to dst[rows[origin[0] + i], origin[1] + j,
  /// ...]. An element whose row is past the end of `rows`, or outside `dst`
  /// (a negative one too: padding), is dropped, also under
  /// Bounds::promised_inside, which then promises the other dimensions
  /// only. Two rows naming one row of `dst` write it in no defined order.
  void scatter(Value fragment, const Tensor &dst, const Tensor &rows,
               const std::vector<Value> &origin,
               Bounds bounds = Bounds::checked, Loc loc = Loc::current());

  /// Stores the elements of a fragment whose `mask` (a comparison's result
  /// of the same shape) is true; the others, and those outside the tensor,
  /// are left as they were. A thread's chunk whose mask holds throughout
  /// goes as one vector access (a mask per row costs little), the others
  /// element by element.
  void store_where(Value mask, Value fragment, const Tensor &dst,
                   const std::vector<Value> &origin, Loc loc = Loc::current());

  /// Atomically adds each element of a fragment to the tensor's element at
  /// `origin` + its coordinates (f32, f64, i32, i64; elements outside the
  /// tensor are dropped; each element of a reduction result is added once).
  void atomic_add(Value fragment, const Tensor &dst,
                  const std::vector<Value> &origin, Loc loc = Loc::current());
  /// The same with the maximum (floats as maxNum: NaN loses; integers by
  /// their dtype's signedness).
  void atomic_max(Value fragment, const Tensor &dst,
                  const std::vector<Value> &origin, Loc loc = Loc::current());

  /// Swaps the last two dimensions of a fragment (the others must be 1);
  /// the compiler moves the data through shared memory.
  Value transpose(Value fragment, Loc loc = Loc::current());

  /// A scalar constant of `dtype` (a float or an integer type).
  Value constant(double value, DType dtype, Loc loc = Loc::current());

  /// Arithmetic. Both sides have one dtype; a scalar meeting a fragment is
  /// broadcast to its shape, and fragments broadcast along dimensions of
  /// size 1 (as numpy does). Float division is IEEE (correctly rounded);
  /// `a * b + c` may become one fused multiply-add (as nvcc's default).
  Value add(Value a, Value b, Loc loc = Loc::current());
  Value sub(Value a, Value b, Loc loc = Loc::current());
  Value mul(Value a, Value b, Loc loc = Loc::current());
  Value div(Value a, Value b, Loc loc = Loc::current());
  /// The remainder of integers as C's %: a - (a / b) * b, with the sign of
  /// a (undefined for b = 0, as on the GPU).
  Value rem(Value a, Value b, Loc loc = Loc::current());
  /// Maximum and minimum; for floats a NaN operand is ignored (fmaxf).
  Value max(Value a, Value b, Loc loc = Loc::current());
  Value min(Value a, Value b, Loc loc = Loc::current());
  /// Bitwise and, or, xor and shifts of integers (shift right is logical for
  /// unsigned dtypes, arithmetic for signed).
  Value bit_and(Value a, Value b, Loc loc = Loc::current());
  Value bit_or(Value a, Value b, Loc loc = Loc::current());
  Value bit_xor(Value a, Value b, Loc loc = Loc::current());
  Value shl(Value a, Value b, Loc loc = Loc::current());
  Value shr(Value a, Value b, Loc loc = Loc::current());
  Value abs(Value a, Loc loc = Loc::current());
  /// The number of set bits of integers (popc), in their dtype.
  Value popcount(Value a, Loc loc = Loc::current());
  /// e^x of f32 values, bit for bit CUDA's expf (libdevice, no
  /// flush-to-zero; within 2 ulp), which torch.exp computes too.
  Value exp(Value a, Loc loc = Loc::current());
  /// 1 / (1 + exp(-x)) with IEEE division.
  Value sigmoid(Value a, Loc loc = Loc::current());
  /// Natural logarithm of f32 values, bit for bit CUDA's logf (within 1
  /// ulp; log(0) = -inf, log of a negative value = NaN).
  Value log(Value a, Loc loc = Loc::current());
  /// log(1 + x) of f32 values, bit for bit CUDA's log1pf (accurate for
  /// small x too, within 2 ulp).
  Value log1p(Value a, Loc loc = Loc::current());
  /// x > 20 ? x : log1p(exp(x)), as PyTorch's softplus with beta 1.
  Value softplus(Value a, Loc loc = Loc::current());
  /// IEEE (correctly rounded) square root of f32 values.
  Value sqrt(Value a, Loc loc = Loc::current());
  /// 1 / sqrt(x) of f32 values, approximate as CUDA's rsqrtf (within 2 ulp;
  /// there is no IEEE rsqrt).
  Value rsqrt(Value a, Loc loc = Loc::current());
  /// a * b + c of f32 values with one rounding.
  Value fma(Value a, Value b, Value c, Loc loc = Loc::current());

  /// Comparisons give a boolean (i1) value; `select` picks per element.
  Value lt(Value a, Value b, Loc loc = Loc::current());
  Value le(Value a, Value b, Loc loc = Loc::current());
  Value gt(Value a, Value b, Loc loc = Loc::current());
  Value ge(Value a, Value b, Loc loc = Loc::current());
  Value eq(Value a, Value b, Loc loc = Loc::current());
  Value ne(Value a, Value b, Loc loc = Loc::current());
  Value select(Value cond, Value a, Value b, Loc loc = Loc::current());

  /// Converts values to `to`: floats round to nearest even (to e4m3 and
  /// e5m2 also saturating to the largest finite value); floats to integers
  /// truncate toward zero; integers extend by their signedness.
  Value cast(Value a, DType to, Loc loc = Loc::current());
  /// Reinterprets the bits as `to` (same width; signedness may change).
  Value bitcast(Value a, DType to, Loc loc = Loc::current());
  /// fp4 e2m1 codes of f32 values, a u8 each with the code in the low
  /// nibble: round to nearest even, saturating to +-6 (infinities too), the
  /// sign kept (-0 and tiny negatives -> 8), NaN -> 7 / 15 by its sign
  /// (e2m1 has no NaN). `how`: see E2m1Encode.
  Value to_e2m1(Value a, E2m1Encode how = E2m1Encode::select,
                Loc loc = Loc::current());
  /// Two 4-bit codes a byte along the last dimension (of even size 2n -> n,
  /// u8): element 2j in the low nibble, 2j + 1 in the high one.
  Value pack_nibbles(Value codes, Loc loc = Loc::current());
  /// The f32 values of fp4 e2m1 codes (u8, the code in the low nibble; the
  /// high nibble is ignored): exact, code 8 is -0. `how`: see E2m1Decode.
  Value from_e2m1(Value codes, E2m1Decode how = E2m1Decode::select,
                  Loc loc = Loc::current());
  /// The inverse of pack_nibbles: u8 bytes (last dimension n) -> u8 codes
  /// (last dimension 2n), element 2j from the low nibble of byte j; in
  /// registers (a stack of the low and high nibbles: each thread's bytes
  /// become twice as many consecutive codes).
  Value unpack_nibbles(Value bytes, Loc loc = Loc::current());
  /// E5M6 codes of f32 values (the top 12 bits of an fp16, in u32), as
  /// ref::f32_to_e5m6: fp16 rounded toward zero, then the 17 low bits of
  /// the f32 round the 12-bit code to nearest even (spec quant_transpose
  /// 2.4, with its quirk for fp16 subnormals); a NaN of either sign gives
  /// the positive NaN code 0x7E0 (0x7E1 by its low bits).
  Value to_e5m6(Value a, Loc loc = Loc::current());
  /// The f32 values of E5M6 codes (u32, low 12 bits), exact (a NaN code
  /// gives a NaN; its payload is the hardware's).
  Value from_e5m6(Value codes, Loc loc = Loc::current());
  /// Eight 12-bit codes -> three u32 words along the last dimension (of size
  /// 8n -> 3n): c0 .. c7 as one big-endian 96-bit string, as
  /// ref::pack_e5m6. In registers where each thread holds whole groups of
  /// eight codes (relayout 8), the words then three consecutive a thread.
  Value pack_e5m6(Value codes, Loc loc = Loc::current());
  /// The inverse: three u32 words -> eight codes (u32) along the last
  /// dimension (3n -> 8n), as ref::unpack_e5m6; in registers, each thread
  /// holding whole groups of three words (a load feeding it reads them so),
  /// then eight consecutive codes.
  Value unpack_e5m6(Value words, Loc loc = Loc::current());

  /// The inclusive prefix sum along `dim` (any size): element i is the sum
  /// of elements 0..i; i32, i64 or f32 (added in a fixed tree order). Goes
  /// through shared memory: ceil(log2(size)) steps of one barrier each.
  Value cumsum(Value fragment, int dim, Loc loc = Loc::current());
  /// Reductions of a fragment along `dim`; the result keeps `dim` with size
  /// 1 and broadcasts back for free. `reduce_absmax` is max |x|.
  Value reduce_sum(Value fragment, int dim, Loc loc = Loc::current());
  Value reduce_max(Value fragment, int dim, Loc loc = Loc::current());
  Value reduce_min(Value fragment, int dim, Loc loc = Loc::current());
  Value reduce_absmax(Value fragment, int dim, Loc loc = Loc::current());
  /// A fragment of `shape` whose elements are their coordinate along `dim`
  /// (an integer dtype).
  Value iota(const std::vector<int64_t> &shape, int dim,
             DType dtype = DType::i32, Loc loc = Loc::current());
  /// The same elements (row-major order) in another shape.
  Value reshape(Value fragment, const std::vector<int64_t> &shape,
                Loc loc = Loc::current());
  /// Fragments of one shape (..., 1) and dtype side by side along the last
  /// dimension: (..., k) for k >= 2 parts, part j at [..., j]. In registers:
  /// each thread's slots of the parts become k consecutive elements of the
  /// result, so the result holds k times the parts' vector (e.g. the three
  /// words packed from a thread's eight codes, or a byte's two nibbles).
  Value stack(const std::vector<Value> &parts, Loc loc = Loc::current());
  /// The inverse: the k >= 2 parts (..., 1) of a fragment (..., k), part j
  /// = fragment[..., j]. In registers when each thread holds whole groups
  /// of k (a load feeding it, through reshapes, reads them so; any other
  /// fragment is converted first).
  std::vector<Value> unstack(Value fragment, Loc loc = Loc::current());
  /// The same fragment in the layout the author picks: chunks of `vector`
  /// consecutive elements (row-major), dealt to the threads in turn, so
  /// thread t holds chunks t, t + threads, ... (a power of two; the element
  /// count must be a multiple of threads x vector). A load used only here
  /// reads straight into the layout, and stores write from it, when the
  /// tensor's accesses take such chunks (within its alignment promise, or
  /// whole multiples of it in rows `vector` divides); otherwise the data
  /// moves through shared memory. E.g. 8 consecutive f32 a thread, so that
  /// a reduction over groups of 8 stays in registers.
  Value relayout(Value fragment, int vector, Loc loc = Loc::current());
  /// Exchanges elements between the lanes of each warp:
  /// result[..., i, ...] = fragment[..., i xor mask, ...] along `dim`, one
  /// shfl.sync.bfly per element a thread holds. `dim` must be the thread
  /// dimension: the dimensions after it hold one vector of the kernel's
  /// layout (16 bytes of elements when every access allows it; a narrower
  /// vector is chosen to fit), and `dim`'s size and the thread count are
  /// multiples of the power of two above `mask`. For a (rows, cols) f32 tile
  /// of 128 threads: reshape to (rows * cols / 512, 128, 4). 32-bit
  /// elements, 0 < mask < 32.
  Value shuffle_xor(Value fragment, int dim, int mask,
                    Loc loc = Loc::current());
  /// Broadcasts within groups of S = min(size of `dim`, 32) coordinates
  /// along the thread dimension: result[..., i, ...] = fragment[..., i -
  /// i mod S + lane, ...] (one shfl.sync.idx an element; the same
  /// requirements as shuffle_xor, S a power of two dividing the thread
  /// count). 32-bit elements, 0 <= lane < S.
  Value shuffle_idx(Value fragment, int dim, int lane,
                    Loc loc = Loc::current());
  /// Which lanes of each warp hold an equal element: result[..., i, ...]
  /// (u32) has bit j set where fragment[..., i - i mod 32 + j, ...] equals
  /// fragment[..., i, ...], over the group of 32 coordinates along `dim`
  /// that holds i (CUDA's __match_any_sync, one match.any.sync an element).
  /// The same requirements as shuffle_xor, with `dim`'s size and the
  /// thread count multiples of 32: a group is one warp, bit j lane j. Every
  /// lane of the warp must reach it (not inside a `when` that splits a
  /// warp). i32, u32, i64 or u64 elements. With `popcount`: an element's
  /// rank among its equals before it is popcount(mask & ((1 << lane) - 1)),
  /// their number popcount(mask).
  Value match_any(Value fragment, int dim, Loc loc = Loc::current());
  /// Run-time indexing along a dimension (TileLang's `alloc_local` arrays
  /// indexed by a loop variable or a computed position): the element at
  /// `index` along `dim`, for every position of the other dimensions. The
  /// result has `fragment`'s shape with `dim` of size 1; `index` is an
  /// integer scalar or index (the same position everywhere) or an integer
  /// fragment of the result's shape (a position per row). An index outside
  /// [0, size) reads 0. Any layout works (a sum over `dim` of the one
  /// matching element); laid out so that each thread holds whole rows along
  /// `dim` (`relayout(f, size)` for the last dimension) it is a per-thread
  /// array: a compare and select per element, in registers. Exact for every
  /// dtype (bits are moved, not added).
  Value take(Value fragment, int dim, Value index, Loc loc = Loc::current());
  /// `fragment` with the element at `index` along `dim` replaced by `value`
  /// (a scalar, or a fragment of take's result shape), shapes as for take;
  /// an index outside [0, size) changes nothing. Carried through `serial`,
  /// this is a per-thread array updated at run-time positions.
  Value put(Value fragment, int dim, Value index, Value value,
            Loc loc = Loc::current());
  /// Repeats a fragment along its dimensions of size 1.
  Value broadcast(Value fragment, const std::vector<int64_t> &shape,
                  Loc loc = Loc::current());

  /// The run-time size of dimension `dim` of a tensor (an index).
  Value dim(const Tensor &t, int dim, Loc loc = Loc::current());
  /// ceil(size(t, dim) / per_block): the blocks that cover dimension `dim`
  /// of `t` in steps of `per_block`, for grid().
  Extent blocks(const Tensor &t, int dim, int64_t per_block = 1,
                Loc loc = Loc::current());
  /// Declares the launch grid, up to three dimensions (the others are 1):
  /// the host computes it from the tensors it binds, so it never repeats
  /// the kernel's tiling. `k.grid({k.blocks(x, 0, 32), k.blocks(x, 1, 64)})`
  void grid(const std::vector<Extent> &dims, Loc loc = Loc::current());
  /// Asks for at least `blocks` blocks of the kernel resident on each SM
  /// (1 to 32, blocks x threads at most 2048): ptxas then keeps each
  /// thread's registers within 65536 / (blocks x threads), spilling if it
  /// must. For memory-bound kernels of few threads a block, whose loads
  /// need many warps in flight.
  void min_blocks_per_sm(int64_t blocks, Loc loc = Loc::current());
  /// Programmatic dependent launch (Hopper): the kernel may be launched
  /// while the kernel before it on the stream is finishing. Its threads wait
  /// at the start until that grid has completed and its writes are visible
  /// (griddepcontrol.wait), then let the kernel after it launch at once
  /// (griddepcontrol.launch_dependents); the host launches it with the
  /// programmatic stream serialization attribute (ABI `programmatic`). What
  /// overlaps is the next launch's latency and block scheduling with this
  /// grid's tail: for chains of short kernels (an op's steps, a MoE
  /// layer's routing). Nothing the kernel does runs before the wait, unless
  /// grid_wait() places it.
  void programmatic_launch(Loc loc = Loc::current());
  /// In a programmatic launch, where the kernel waits for the grid before
  /// it (at most once, in the kernel's body, not in a loop or a branch);
  /// the kernel after it launches only once the wait is over. What comes
  /// before may write no global memory and read only what the grid before
  /// it does not write: an op's second kernel counting the op's inputs
  /// while the first kernel finishes (get_fused_mapping's place kernel).
  void grid_wait(Loc loc = Loc::current());
  /// A fragment of `shape` whose every element is `value` (of `dtype`).
  Value full(const std::vector<int64_t> &shape, double value, DType dtype,
             Loc loc = Loc::current());

  /// A tile of shared memory; the compiler picks its layout (for gemm
  /// operands the 128-byte swizzle WGMMA reads) and its buffers.
  Value alloc_shared(DType dtype, const std::vector<int64_t> &shape,
                     Loc loc = Loc::current());
  /// Loads the box of `shape` at `origin` of a shared tile into a fragment
  /// (16-byte vectors where the tile's rows allow; zeros outside the tile).
  /// Writes to the tile by other threads need a `barrier()` in between.
  Value load(Value shared, const std::vector<Value> &origin,
             const std::vector<int64_t> &shape, Loc loc = Loc::current());
  /// Stores a fragment into a shared tile at `origin` (outside: dropped).
  void store(Value fragment, Value shared, const std::vector<Value> &origin,
             Loc loc = Loc::current());
  /// A block-wide barrier (bar.sync): shared-memory writes before it are
  /// seen by reads after it, in every thread.
  void barrier(Loc loc = Loc::current());
  /// A warp's barrier (bar.warp.sync, CUDA's __syncwarp()): shared-memory
  /// writes before it by the lanes of a warp are seen by that warp's reads
  /// after it. For data each warp keeps to itself (a row a warp): the warps
  /// do not wait for each other. Every lane of the warp must reach it (not
  /// in a branch that splits a warp).
  void sync_warp(Loc loc = Loc::current());

  /// Copies the box of `shared`'s shape at `origin` of `src` into `shared`
  /// (zeros outside the tensor): every thread's cp.async pieces of up to 16
  /// bytes (as wide as the tensor's alignment promise allows), awaited, then
  /// a barrier: afterwards every thread sees the tile. Like `store`, it needs
  /// a `barrier()` before it where other threads still read the tile. Inside
  /// `pipelined` it is issued stages ahead: TMA in the main loop of a
  /// 384-thread gemm, and in a loop of two or more stages whose every copy
  /// can be one TMA copy (`src` a tensor declared inner_contiguous(16) and
  /// not `repeating`; a tile of `src`'s rank, sides of at most 256, rows of
  /// a multiple of 16 bytes, a multiple of 128 bytes in all, not a `gemm`
  /// operand: the kernel then takes a tensor map of `src` as a launch
  /// argument of its own, and a view of `src` with a zero stride, which
  /// TMA cannot read, fails its launch with a UserError naming it: declare
  /// such a tensor `repeating`), cp.async anywhere else.
  void copy(const Tensor &src, const std::vector<Value> &origin, Value shared,
            Loc loc = Loc::current());
  /// acc + a * b^T: shared tiles a (M x K) and b (N x K) of one type, an
  /// f32 accumulator fragment (M x N). In the main loop of `pipelined`:
  /// TMA + WGMMA (bf16, f16, f32 as tf32, e4m3, e5m2). Anywhere else:
  /// warp-level mma.sync (bf16, f16, f32 as tf32; M, N, K multiples of 16,
  /// 8 and 16, or 8 for tf32), the accumulator passing through shared
  /// memory on the way in (unless it is a splat) and out; there a bf16 or
  /// f16 tile may meet an f32 one (tf32, the 16-bit tile widened exactly),
  /// and `tf32` says how f32 operands are rounded. Writes to a and b need a
  /// `barrier()` before it.
  Value gemm(Value a, Value b, Value acc, Loc loc = Loc::current());
  Value gemm(Value a, Value b, Value acc, Tf32 tf32, Loc loc = Loc::current());
  /// The same with transposed operands (GemmOptions), e.g. acc (M x N) +=
  /// g^T x for g (K x M) and x (K x N) shared tiles:
  /// `k.gemm(sg, sx, acc, {.transpose_a = true, .transpose_b = true})`.
  Value gemm(Value a, Value b, Value acc, GemmOptions options,
             Loc loc = Loc::current());
  /// A loop of `count` steps (an index) carrying `init`; `body(step,
  /// carried)` returns the next carried values. The copies of the body run
  /// up to `stages - 1` steps ahead of the compute that reads them, each
  /// copied tile in `stages` buffers; the loop orders them with the other
  /// threads (no `barrier()` needed around them). The copies must be at the
  /// body's top level, their origins computed from the step and values from
  /// outside, and their tiles used only in this loop. A 384-thread kernel
  /// whose loop multiplies two copied tiles becomes a warp-specialised TMA +
  /// WGMMA gemm (see kernels/gemm); any other loop runs on TMA (see `copy`)
  /// or cp.async, with one barrier a step (two for one stage).
  std::vector<Value> pipelined(
      Value count, int stages, const std::vector<Value> &init,
      const std::function<std::vector<Value>(Value, std::vector<Value>)> &body,
      Loc loc = Loc::current());

  /// The body of a loop or branch: gets the loop index (an index; unused by
  /// branches) and the carried values, returns the next carried values.
  using Body =
      std::function<std::vector<Value>(Value, std::vector<Value> carried)>;

  /// A sequential loop every thread runs, i = lo, lo + 1, ..., hi - 1 (index
  /// or integer scalars, the same in every thread), carrying `init`
  /// (fragments or scalars; a carried fragment keeps its layout). Returns
  /// the values after the last step (`init` when the loop runs no step).
  std::vector<Value> serial(Value lo, Value hi, const std::vector<Value> &init,
                            const Body &body, Loc loc = Loc::current());
  /// The same loop over constant bounds, unrolled while the kernel is built:
  /// `body` is called hi - lo times with i a constant.
  std::vector<Value> unroll(int64_t lo, int64_t hi,
                            const std::vector<Value> &init, const Body &body,
                            Loc loc = Loc::current());
  /// if (cond) then_ else else_: `cond` is an i1 scalar (the same in every
  /// thread); both branches get `values` and return the results, of the
  /// same types.
  std::vector<Value> if_else(Value cond, const std::vector<Value> &values,
                             const Body &then_, const Body &else_,
                             Loc loc = Loc::current());
  /// if (cond) body: if_else without an else branch and without values
  /// (a row skipped, a block's one-off store); errors as if_else's.
  void when(Value cond, const std::function<void()> &body,
            Loc loc = Loc::current());

  /// Finishes the kernel and verifies it. Throws UserError whose lines read
  /// `file:line:col: error: message` at the author's call that is wrong.
  Kernel build(Loc loc = Loc::current());

  struct Impl;
  Impl &impl() { return *impl_; }

private:
  std::unique_ptr<Impl> impl_;
};

// Operators use the location of the latest builder call.
Value operator+(Value a, Value b);
Value operator-(Value a, Value b);
Value operator*(Value a, Value b);
Value operator/(Value a, Value b);
Value operator&(Value a, Value b);
Value operator|(Value a, Value b);
Value operator^(Value a, Value b);
Value operator%(Value a, Value b);
Value operator<<(Value a, Value b);
Value operator>>(Value a, Value b);

} // namespace tilejit::dsl
