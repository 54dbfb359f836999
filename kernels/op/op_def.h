// op_def.h - An op declared once: its name and summary, its tensor
// parameters (dtypes, symbolic shapes, layout), its typed static parameters,
// one function to the kernel spec, the DSL kernel and the CPU reference.
// Validation, the specialisation key, the launch (bound by name against the
// compiled kernel's ABI), `tilejit list`, `--set` parsing and the test
// harness all derive from it. docs/adding-an-op.md walks through one.
#pragma once

#include "common/host_tensor.h"

#include "tilejit/compiler/kernel.h"
#include "tilejit/runtime/spec_key.h"
#include "tilejit/runtime/tensor.h"

#include <cuda.h>

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tilejit::ops {

/// A static parameter's value: bool, integer, real or one of named choices.
using ParamValue = std::variant<bool, int64_t, double, std::string>;

/// A typed static parameter (TileKernels' argument name and meaning).
struct ParamDecl {
  enum class Type { boolean, integer, real, choice };
  std::string name;
  Type type = Type::integer;
  ParamValue default_value;
  int64_t min = std::numeric_limits<int64_t>::min();          ///< integer
  int64_t max = std::numeric_limits<int64_t>::max();          ///< integer
  double real_min = -std::numeric_limits<double>::infinity(); ///< real
  std::vector<std::string> choices;                           ///< choice
  std::string doc;
};

ParamDecl flag(std::string name, bool fallback, std::string doc);
ParamDecl integer(std::string name, int64_t fallback, int64_t min, int64_t max,
                  std::string doc);
/// A finite real at least `min`.
ParamDecl real(std::string name, double fallback, double min, std::string doc);
/// Any finite real.
ParamDecl real(std::string name, double fallback, std::string doc);
ParamDecl choice(std::string name, std::string fallback,
                 std::vector<std::string> choices, std::string doc);

/// What a tensor parameter's memory must be beyond its shape.
enum class Layout {
  strided,          ///< any non-negative strides
  inner_contiguous, ///< stride 1 along the last dimension
  contiguous,       ///< row-major, dense
  /// The strides OpDef::shape_of gives (a shape-less tensor): a stride of 1
  /// must be 1, any other may be larger (rows padded further).
  as_shaped,
};

/// A tensor parameter. `shape` names its dimensions, comma-separated:
/// a name binds a dimension (the same name elsewhere must agree), an integer
/// is a fixed size, a static integer parameter's name is its value, and one
/// `*` stands for any number of leading dimensions ("*, n, n"). A tensor with
/// an empty shape is laid out by OpDef::shape_of: a call's tensor must have
/// that dtype and shape, and its strides follow `layout`.
struct TensorDecl {
  std::string name;
  bool output = false;
  std::vector<DType> dtypes; ///< allowed; empty: as `same_dtype_as`
  std::string same_dtype_as; ///< another tensor whose dtype this one has
  std::string shape;
  Layout layout = Layout::strided;
  std::string doc;
  /// An input the caller may leave out (TileKernels' `None`), or an output
  /// it need not ask for: passed as an absent view (`absent()`); nothing
  /// about it is checked then, and the op's spec asks Call::has.
  bool optional = false;
  /// Whether an optional tensor is passed when nothing says (the harness's
  /// and the CLI's default case; `--set NAME=none` or `=passed` decides).
  bool passed_by_default = true;
};

/// The view that stands for an optional input left out.
inline rt::TensorView absent() { return {}; }
/// Whether `t` is that view: no data and rank 0 (a real rank-0 tensor has
/// an element, so memory).
inline bool is_absent(const rt::TensorView &t) {
  return t.data == 0 && t.rank == 0;
}

TensorDecl input(std::string name, std::vector<DType> dtypes, std::string shape,
                 Layout layout = Layout::strided, std::string doc = "");
TensorDecl output(std::string name, std::vector<DType> dtypes,
                  std::string shape, Layout layout = Layout::contiguous,
                  std::string doc = "");
/// An input that may be left out (TensorDecl::optional).
TensorDecl optional_input(std::string name, std::vector<DType> dtypes,
                          std::string shape, Layout layout = Layout::strided,
                          std::string doc = "");
/// An output the caller may leave out (TensorDecl::optional), e.g. a count
/// only some calls want.
TensorDecl optional_output(std::string name, std::vector<DType> dtypes,
                           std::string shape,
                           Layout layout = Layout::contiguous,
                           std::string doc = "");
/// `t`, an optional tensor, left out unless a case or `--set NAME=passed`
/// passes it: for an input that only some dtypes take, so that the op's
/// default case is valid.
TensorDecl absent_by_default(TensorDecl t);
/// `t` made optional (TensorDecl::optional), passed by default or not: for
/// the forms without an optional_ variant (input_like, output_like).
inline TensorDecl optional(TensorDecl t, bool passed_by_default = true) {
  t.optional = true;
  t.passed_by_default = passed_by_default;
  return t;
}
/// A tensor whose dtype is that of tensor `like`.
TensorDecl input_like(std::string name, std::string like, std::string shape,
                      Layout layout = Layout::strided, std::string doc = "");
TensorDecl output_like(std::string name, std::string like, std::string shape,
                       Layout layout = Layout::contiguous,
                       std::string doc = "");

/// A rule on a named dimension or an integer parameter: min <= value <=
/// max, value % multiple == 0 and, with `at_most`, value <= the value of
/// that dimension or parameter (`{.dim = "num_topk", .at_most = "E"}`).
struct DimRule {
  std::string dim;
  int64_t min = 0;
  int64_t max = std::numeric_limits<int64_t>::max();
  int64_t multiple = 1;
  std::string at_most = {};
};

class OpDef;

/// A tensor's dtype, shape and strides (in elements), without memory.
struct TensorShape {
  DType dtype = DType::f32;
  std::vector<int64_t> shape, strides;
};

/// What an output's layout may depend on: the named dimensions, the static
/// parameters and the dtypes of a call (OpDef::shape_of). Views of the
/// caller's: a call checks its shape-less tensors with them on every launch,
/// without allocating.
struct ShapeArgs {
  const OpDef *op = nullptr;
  std::span<const std::pair<std::string_view, int64_t>> dims;
  std::span<const ParamValue> params;
  std::span<const DType> dtypes; ///< per tensor
  int64_t dim(std::string_view name) const;
  bool flag(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  const std::string &choice(std::string_view name) const;
  DType dtype(std::string_view tensor) const;
};

/// One call of an op: its tensors and static parameters, in declaration
/// order, validated, with the named dimensions bound.
class Call {
public:
  Call(const OpDef &op, std::span<const rt::TensorView> tensors,
       std::span<const ParamValue> params);

  const OpDef &op() const { return *op_; }
  const rt::TensorView &tensor(std::string_view name) const;
  /// Whether tensor `name` was passed (an optional input may be absent).
  bool has(std::string_view name) const;
  /// A named dimension's size; InternalError if the op has none of the name.
  int64_t dim(std::string_view name) const;
  bool flag(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  double real(std::string_view name) const;
  const std::string &choice(std::string_view name) const;
  std::span<const rt::TensorView> tensors() const { return tensors_; }
  std::span<const ParamValue> params() const { return params_; }

private:
  friend class OpDef;
  /// A call whose outputs may be absent (OpDef::output_layouts): the
  /// inputs and parameters are checked, the dimensions they bind bound, and
  /// the dim rules on those applied; the op's `check` and the shape-less
  /// tensors are left to the call that follows.
  struct InputsOnly {};
  Call(const OpDef &op, std::span<const rt::TensorView> tensors,
       std::span<const ParamValue> params, InputsOnly);
  void validate(bool inputs_only);
  const ParamValue &param(std::string_view name) const;
  void bind_dims();
  /// Binds dimension `name` (of some declared shape) to `value` unless a
  /// tensor bound it (OpDef::dims_from_inputs).
  void bind_derived(std::string_view name, int64_t value);
  void check_shaped() const;
  struct Dim {
    std::string_view name;
    int64_t value;
    int tensor; ///< the tensor that bound it
  };
  /// The bound dimension `name`, or nullptr.
  const Dim *find_dim(std::string_view name) const;
  using DimPairs = std::array<std::pair<std::string_view, int64_t>, 16>;
  /// The bound dimensions as ShapeArgs takes them, written into `buffer`.
  std::span<const std::pair<std::string_view, int64_t>>
  dim_pairs(DimPairs &buffer) const;
  const OpDef *op_;
  std::span<const rt::TensorView> tensors_;
  std::span<const ParamValue> params_;
  std::array<Dim, 16> dims_{};
  int num_dims_ = 0;
  int rest_tensor_ = -1; ///< the tensor whose leading dims bound `*`
  int rest_rank_ = 0;
};

/// The CPU reference's view of a call: host tensors (inputs, in declaration
/// order) and the static parameters.
struct HostCall {
  const OpDef *op = nullptr;
  std::vector<ref::HostTensor> inputs;
  std::vector<ParamValue> params;
  /// The layouts of the outputs, in declaration order (their dtypes are
  /// the caller's choice where the op allows several).
  std::vector<TensorShape> outputs;
  /// Per output: an optional output left out (the reference gives an
  /// empty HostTensor for it).
  std::vector<bool> absent_outputs;

  /// An absent optional input is an empty HostTensor (rank 0, no data).
  const ref::HostTensor &tensor(std::string_view name) const;
  /// Whether input or output `name` was passed.
  bool has(std::string_view name) const;
  /// Input `name` when it was passed, else nullopt (a reference's optional
  /// argument).
  std::optional<ref::HostTensor> given(std::string_view name) const;
  const TensorShape &output(std::string_view name) const;
  bool flag(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  double real(std::string_view name) const;
  const std::string &choice(std::string_view name) const;
};

/// The tensors and scalars a kernel launch binds by name: the op's tensors
/// and parameters, or views of them an op supplies (OpDef::views).
class KernelArgs {
public:
  static constexpr int kMax = 64;
  /// Adds or replaces the tensor `name` (which must outlive this object).
  void tensor(std::string_view name, const rt::TensorView &view);
  /// Adds or replaces the tensor `name`: the contiguous `view` as one
  /// dimension of its numel elements (an elementwise kernel's flat run).
  void flat(std::string_view name, const rt::TensorView &view);
  /// Adds or replaces the scalar `name`, converted to the kernel's dtype.
  void scalar(std::string_view name, double value);
  const rt::TensorView *find_tensor(std::string_view name) const;
  const double *find_scalar(std::string_view name) const;

private:
  std::array<std::pair<std::string_view, rt::TensorView>, kMax> tensors_;
  std::array<std::pair<std::string_view, double>, kMax> scalars_;
  int num_tensors_ = 0, num_scalars_ = 0;
};

/// An op. Build one with make_op<Spec> (typed_op.h); register it with
/// TILEJIT_REGISTER_OP.
class OpDef {
public:
  std::string name;    ///< TileKernels' name
  std::string summary; ///< one line
  std::vector<TensorDecl> tensors;
  std::vector<ParamDecl> params;
  std::vector<DimRule> dim_rules;
  /// The dimensions `--shape` gives, in order (e.g. "M, K"); every other
  /// dimension follows from them and the parameters.
  std::string cli_shape;
  std::vector<int64_t> default_shape;
  /// Checks beyond the declaration (throws UserError); optional.
  std::function<void(const Call &)> check;
  /// Runs before the kernel: handles a call with no kernel to launch (e.g.
  /// gemm's K = 0) and returns true, or prepares the outputs for it (e.g.
  /// group_count zeroing the counts its kernel adds to) and returns false.
  /// Optional.
  std::function<bool(const Call &, CUstream)> special;
  /// The layout of a tensor declared without a shape (the others are
  /// contiguous, of their declared shape): what a call's tensor is checked
  /// against (after `check`), and what callers that allocate outputs or make
  /// inputs create. Required when a tensor has no shape.
  std::function<TensorShape(std::string_view output, const ShapeArgs &)>
      shape_of;
  /// Dimensions no declared input shape gives (only outputs and shape-less
  /// inputs have them), from the inputs: what output_layouts lays the
  /// outputs out with, e.g. cast_back's (M, K) from its shape-less data's
  /// dtype and shape. Optional; a call checks them against its outputs.
  std::function<std::vector<std::pair<std::string, int64_t>>(const Call &)>
      dims_from_inputs;
  /// Dimensions that follow from cli_shape's and the parameters, for what
  /// lays a call's inputs out from `--shape` (the test harness, the CLI):
  /// engram_hash's n1 = n - 1 and C = n1 * M; `--set NAME=SIZE` (a case's
  /// `set`) gives one instead, e.g. apply_rotary's cache rows L. A call
  /// binds them from its tensors like any other (and `check` relates them).
  /// Optional.
  std::function<std::vector<std::pair<std::string, int64_t>>(const ShapeArgs &)>
      derived_dims;
  /// The CPU reference: the outputs, in declaration order. Optional (then
  /// the test harness's comparison computes what it checks itself).
  std::function<std::vector<ref::HostTensor>(const HostCall &)> reference;

  // Filled by make_op<Spec>: the typed specialisation.
  /// The kernels a call launches, one after another on its stream: more
  /// than one where a step needs every block of the step before done (say,
  /// all counts before any position), with a scratch tensor between them.
  int kernel_count = 1;
  std::function<rt::SpecKey(const Call &, int index)> key_of;
  std::function<Kernel(const Call &, int index)> kernel_of;
  std::function<void(const Call &, CUstream)> launch;
  /// The tensors and scalars a launch of this call binds (the op's views
  /// applied; a scratch tensor bound to no memory).
  std::function<KernelArgs(const Call &)> kernel_args;

  /// The specialisation key of the call's kernel `index` (0 to
  /// kernel_count - 1).
  rt::SpecKey key(const Call &c, int index = 0) const {
    return key_of(c, index);
  }
  /// The DSL kernel `index` of the call.
  Kernel kernel(const Call &c, int index = 0) const {
    return kernel_of(c, index);
  }

  /// Validates and runs: tensors and params in declaration order (params
  /// of the declared types). Throws UserError naming the argument, its
  /// value and the requirement; nothing is launched then.
  void call(std::span<const rt::TensorView> tensors,
            std::span<const ParamValue> params, CUstream stream) const;
  void call(std::initializer_list<rt::TensorView> tensors,
            std::initializer_list<ParamValue> params, CUstream stream) const {
    call(std::span(tensors.begin(), tensors.size()),
         std::span(params.begin(), params.size()), stream);
  }
  /// `leading` (the first parameters, in declaration order) followed by
  /// the declared defaults of the rest: for callers that set only the
  /// leading ones (a layer composing ops), so that a parameter added later
  /// takes its default there.
  std::vector<ParamValue> with_defaults(std::vector<ParamValue> leading) const;
  /// Validates without launching: the key and kernel of this call.
  Call bind(std::span<const rt::TensorView> tensors,
            std::span<const ParamValue> params) const;
  /// Runs a call bind() validated (no second validation): what a
  /// composition of ops uses once every step is bound. Nothing is launched
  /// when no output has an element or `special` handles the call.
  void run(const Call &c, CUstream stream) const;
  /// The layouts of the outputs, in declaration order, from the inputs and
  /// parameters alone (`tensors` in declaration order, the outputs absent):
  /// what a caller that allocates them (the Python package) creates. A
  /// declared shape is dense, of the first declared dtype (or that of its
  /// `same_dtype_as`); a shape-less output is what shape_of gives. The
  /// dimensions are the inputs' and then dims_from_inputs'. Throws
  /// UserError for inputs a call would refuse, or an output dimension no
  /// input binds. The call itself validates the rest.
  std::vector<TensorShape>
  output_layouts(std::span<const rt::TensorView> tensors,
                 std::span<const ParamValue> params) const;

  /// Parses the declared shapes (make_op calls it); InternalError for a
  /// malformed declaration.
  void prepare();

  /// One item of a declared shape.
  struct ShapeItem {
    enum class Kind { name, size, param, rest } kind;
    std::string name;
    int64_t size = 0;
  };
  std::vector<std::vector<ShapeItem>> shapes; ///< per tensor, by prepare()

  const TensorDecl *find_tensor(std::string_view tensor) const;
  const ParamDecl *find_param(std::string_view param) const;
  int tensor_index(std::string_view tensor) const;
  /// The position of `tensor` among the inputs (outputs: false) or the
  /// outputs (true); InternalError if it is not one of them.
  int index_among(std::string_view tensor, bool outputs) const;
  int param_index(std::string_view param) const;
};

/// Every registered op, in name order.
std::vector<const OpDef *> all_ops();
/// nullptr if no op has this name.
const OpDef *find_op(std::string_view name);

struct OpRegistrar {
  explicit OpRegistrar(const OpDef &(*get)());
};

/// Registers the op that `getter()` returns (a function holding a static
/// OpDef), so that the CLI, tests and benchmarks find it by name.
#define TILEJIT_REGISTER_OP(getter)                                            \
  static const ::tilejit::ops::OpRegistrar tilejit_register_##getter(getter)

/// The items of a declared shape: "T, E" -> {"T", "E"}, "*, n, n" ->
/// {"*", "n", "n"}.
std::vector<std::string> shape_items(std::string_view shape);

/// The named dimensions that only optional tensors have and the op's
/// cli_shape does not give (to_physical_map's rows and columns): a case or
/// the command line sets them (`--set C=33`) when it passes such a tensor.
std::vector<std::string> optional_dims(const OpDef &op);

/// The names of the dimensions the op derives (OpDef::derived_dims), which
/// `--set NAME=SIZE` may give instead (apply_rotary's cache rows L).
std::vector<std::string> derivable_dims(const OpDef &op);

/// How a message lists what is allowed: "a", "a or b", "a, b, or c".
std::string one_of(std::span<const std::string> items);

/// The text of a parameter value ("true", "8", "1e-06", "e4m3").
std::string param_text(const ParamValue &value);
/// Parses `text` as a value of `param` (strict: "8.5" is no integer, "2"
/// no bool, out-of-range integers and non-finite reals are refused).
/// Throws UserError "OP: --set NAME=TEXT ...; requires ...".
ParamValue parse_param(const OpDef &op, const ParamDecl &param,
                       std::string_view text);
/// UserError unless `value` has `param`'s type and range.
void check_param(const OpDef &op, const ParamDecl &param,
                 const ParamValue &value);

} // namespace tilejit::ops
