// op_test.h - An op's evidence, next to it (kernels/<family>/<op>_test.cpp):
// how its inputs are filled, how its outputs are checked, and its case table
// (GPU cases, benchmark cases, deliberate mistakes with their messages).
// One harness (run.h) turns every table into CPU tests, GPU tests,
// benchmark rows and the CLI's `run` and `bench`.
#pragma once

#include "op/op_def.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tilejit::harness {

/// How an input is filled (seeded): normal(mean, stddev), its values of
/// magnitude at least some bound, uniform(lo, hi), random bytes (every bit
/// pattern, NaNs included), bytes in a range, or power-of-two scales.
struct Fill {
  enum class Kind {
    normal,
    normal_outside,
    uniform,
    bytes,
    byte_range,
    exponents,
    row_indices,
    element_indices,
    inverse_indices,
    psum,
    ids_below,
    distinct_indices,
    integers
  } kind = Kind::normal;
  double a = 0, b = 1;
  std::string of = {}; ///< *_indices: the tensor they index
};
inline Fill normal(double mean = 0, double stddev = 1) {
  return {Fill::Kind::normal, mean, stddev};
}
/// normal(0, stddev), each value of magnitude below `min_abs` drawn again.
inline Fill normal_outside(double stddev, double min_abs) {
  return {Fill::Kind::normal_outside, stddev, min_abs};
}
inline Fill uniform(double lo, double hi) {
  return {Fill::Kind::uniform, lo, hi};
}
inline Fill random_bytes() { return {Fill::Kind::bytes, 0, 0}; }
/// Every byte uniform in [lo, hi] (e.g. UE8M0 scale codes).
inline Fill bytes_in(int lo, int hi) {
  return {Fill::Kind::byte_range, 1.0 * lo, 1.0 * hi};
}
/// Power-of-two scales 2^e, e uniform in [lo, hi]: an f32 2^e each, or an
/// int32 of four UE8M0 bytes e + 127 (packed scales).
inline Fill exponents(int lo, int hi) {
  return {Fill::Kind::exponents, 1.0 * lo, 1.0 * hi};
}

/// Row indices into input `tensor` (a gather's pos_to_token): i mod rows
/// for every entry i, shuffled, then each -1 (padding) with probability
/// `padding`; all -1 when `tensor` has no rows.
inline Fill row_indices(std::string tensor, double padding = 0.125) {
  return {Fill::Kind::row_indices, padding, 0, std::move(tensor)};
}

/// The same over every element of `tensor` (its flat indices, i mod numel):
/// a flat gather's positions, such as pos_to_token_topk into topk_weights.
inline Fill element_indices(std::string tensor, double padding = 0.125) {
  return {Fill::Kind::element_indices, padding, 0, std::move(tensor)};
}

/// Distinct row indices into `tensor` (a scatter's targets, such as
/// token_topk_to_pos naming fused rows): each of its rows kept with
/// probability 1 - `padding` and put at a random element of this tensor,
/// one row an element (rows beyond the elements left out); the other
/// elements -1. Any sizes: no row is named twice.
inline Fill distinct_indices(std::string tensor, double padding = 0.125) {
  return {Fill::Kind::distinct_indices, padding, 0, std::move(tensor)};
}

/// The inverse of the index input `tensor` (declared before this one, and
/// holding flat indices into this one, such as element_indices): -1
/// everywhere, then e at flat index tensor[e] for every e where it is >= 0
/// and inside (token_topk_to_pos from pos_to_token_topk).
inline Fill inverse_indices(std::string tensor) {
  return {Fill::Kind::inverse_indices, 0, 0, std::move(tensor)};
}

/// TileKernels 2.1's MoE row layout over the rows of `tensor`, as an int32
/// (E,) prefix sum: expert e's segment starts at align(psum[e - 1],
/// alignment) and takes a random share of the rows left (some none), so
/// that the rows have padding between segments and past the last one.
inline Fill psum(std::string tensor, int alignment = 128) {
  return {Fill::Kind::psum, 1.0 * alignment, 0, std::move(tensor)};
}

/// Ids below the integer parameter or named dimension `param` (group or
/// expert ids, such as group_count's below num_groups): each element
/// uniform in [0, param), or -1 (none) with probability `none`.
inline Fill ids_below(std::string param, double none = 0.125) {
  return {Fill::Kind::ids_below, none, 0, std::move(param)};
}

/// Integers uniform in [lo, hi] (i32 or i64), such as counts of at least 1.
inline Fill integers(int64_t lo, int64_t hi) {
  return {Fill::Kind::integers, 1.0 * lo, 1.0 * hi};
}

/// What a run computed: the inputs, the parameters, the outputs the GPU
/// wrote and the reference's (empty when the op has no reference).
struct RunData {
  ops::HostCall call;
  std::vector<ref::HostTensor> outputs;  ///< in declaration order
  std::vector<ref::HostTensor> expected; ///< from the reference
  uint64_t seed = 0;
  const ref::HostTensor &output(std::string_view name) const;
};

/// Compares output `got` with the reference's `want`: `fn` returns "" when
/// they agree, else the first difference in one line; `what` says how they
/// are compared ("bitwise equal").
struct Compare {
  std::string what;
  std::function<std::string(const ref::HostTensor &got,
                            const ref::HostTensor &want, const RunData &run)>
      fn;
};
/// Every byte of every element equal.
Compare exact();
/// |got - want| <= atol + rtol |want| for every element
/// (torch.testing.assert_close).
Compare allclose(double rtol, double atol);
/// The sum of got's rows (dim 0: per-block partials a caller adds up)
/// within atol + rtol |want| of the reference's one row.
Compare rows_summed(double rtol, double atol);
/// 1 - 2 sum(got want) / sum(got^2 + want^2) below `max` (in f64; 0 when
/// both are all zeros): TileKernels' calc_diff, for sums in no fixed order.
Compare calc_diff(double max);
/// `bf16` for a bf16 output, `f32` for any other dtype: one compare key for
/// an output whose dtype follows the input's (a rounding of either).
inline Compare by_dtype(const Compare &bf16, const Compare &f32) {
  return {.what = bf16.what + " (bf16), " + f32.what + " (f32)",
          .fn = [bf16, f32](const ref::HostTensor &got,
                            const ref::HostTensor &want, const RunData &run) {
            return (got.dtype() == DType::bf16 ? bf16 : f32).fn(got, want, run);
          }};
}

/// One row of the case table. Shapes and parameters are written as on the
/// command line: `shape` is `--shape`, `set` holds `--set NAME=VALUE` (the
/// op's parameters and named dimensions) and `dtypes` `--dtype NAME=DTYPE`
/// (a bare "" name is the first input).
struct Case {
  std::string label;
  std::vector<int64_t> shape;
  std::map<std::string, std::string> set = {};
  std::map<std::string, DType> dtypes = {};
  /// Inputs whose rows are padded: stride[-2] in elements.
  std::map<std::string, int64_t> row_stride = {};
  /// Inputs of other strides than their declared layout (in elements).
  std::map<std::string, std::vector<int64_t>> strides = {};
  enum Kind { gpu = 1, bench = 2, big = 4 };
  int kind = gpu;
  /// This case's fills, over the test's (OpTest::fills), e.g. values with
  /// many ties.
  std::map<std::string, Fill> fills = {};
  /// A benchmark case's peer time: TileKernels' own µs on the H200 for the
  /// same call (shared/perf/tilekernels_h200.md); 0 where not measured.
  double peer_us = 0;
};

/// A deliberate mistake: the tensors and parameters of a call (tensors in
/// declaration order; parameters by name, the others at their defaults) and
/// the exact message of the UserError it must raise before any launch.
struct ErrorCase {
  std::string label;
  std::vector<rt::TensorView> tensors;
  std::map<std::string, ops::ParamValue> params;
  std::string message;
};

/// A tensor of fake device memory for error cases: contiguous at a
/// 256-byte-aligned address, or with the given strides.
rt::TensorView fake(DType dtype, std::vector<int64_t> shape,
                    std::vector<int64_t> strides = {},
                    CUdeviceptr address = 0x10000);

struct OpTest {
  std::string op;
  /// By tensor name, or "name:dtype" for one dtype of it; default normal().
  std::map<std::string, Fill> fills = {};
  std::map<std::string, Compare> compare = {}; ///< default: exact()
  /// Checks the outputs itself (instead of a whole reference, which would
  /// be too slow: gemm checks sampled rows); "" when they pass.
  std::function<std::string(const RunData &)> check = nullptr;
  /// Floating-point work of a compute-bound op (its benchmark reports
  /// TFLOP/s); nullptr for a memory-bound one (GB/s against a copy).
  std::function<double(const ops::HostCall &)> flops = nullptr;
  /// Fill the outputs with 0xff bytes (NaN floats, -1 integers) before a
  /// checked call instead of zeros, so that an element the kernel never
  /// writes differs from the reference: for ops that write every element
  /// of every output (a zero the op must write is then checked).
  bool poison_outputs = false;
  /// Time back-to-back launches rather than a CUDA graph's replays (as
  /// cuBLAS is timed: a graph runs a long gemm into power throttling).
  bool time_launches = false;
  std::vector<Case> cases = {};
  std::vector<ErrorCase> errors = {};
};

/// Every registered op test, by op name; nullptr if the op has none.
const OpTest *find_test(std::string_view op);
std::vector<const OpTest *> all_tests();

struct TestRegistrar {
  explicit TestRegistrar(OpTest (*make)());
};

/// Registers the op test that the function body returns:
///
///   TILEJIT_OP_TEST(topk_gate) { return {.op = "topk_gate", ...}; }
#define TILEJIT_OP_TEST(name)                                                  \
  static ::tilejit::harness::OpTest make_##name##_test();                      \
  static const ::tilejit::harness::TestRegistrar register_##name##_test(       \
      make_##name##_test);                                                     \
  static ::tilejit::harness::OpTest make_##name##_test()

} // namespace tilejit::harness
