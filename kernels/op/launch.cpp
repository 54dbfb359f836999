// launch.cpp - Launch by name: the op's tensors and parameters bound to the
// compiled kernel's ABI (arguments, grid rule, block, shared memory).
#include "op/typed_op.h"

#include "common/abi.h"

#include "tilejit/error.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/tensor_map.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilejit::ops {

void OpDef::run(const Call &c, CUstream stream) const {
  // Nothing to write: no kernel is compiled or launched (and no GPU needed).
  bool empty = true;
  for (size_t i = 0; i < tensors.size(); ++i)
    empty = empty && (!tensors[i].output || c.tensors()[i].numel() == 0);
  if (empty || (special && special(c, stream)))
    return;
  launch(c, stream);
}

void KernelArgs::tensor(std::string_view name, const rt::TensorView &view) {
  for (int i = 0; i < num_tensors_; ++i)
    if (tensors_[i].first == name) {
      tensors_[i].second = view;
      return;
    }
  if (num_tensors_ == kMax)
    throw InternalError(
        fmt::format("internal error: more than {} kernel tensors", kMax));
  tensors_[num_tensors_++] = {name, view};
}

void KernelArgs::flat(std::string_view name, const rt::TensorView &view) {
  const int64_t numel[1] = {view.numel()};
  tensor(name, rt::TensorView::contiguous(view.data, view.dtype, numel));
}

void KernelArgs::scalar(std::string_view name, double value) {
  for (int i = 0; i < num_scalars_; ++i)
    if (scalars_[i].first == name) {
      scalars_[i].second = value;
      return;
    }
  if (num_scalars_ == kMax)
    throw InternalError(
        fmt::format("internal error: more than {} kernel scalars", kMax));
  scalars_[num_scalars_++] = {name, value};
}

const rt::TensorView *KernelArgs::find_tensor(std::string_view name) const {
  for (int i = 0; i < num_tensors_; ++i)
    if (tensors_[i].first == name)
      return &tensors_[i].second;
  return nullptr;
}

const double *KernelArgs::find_scalar(std::string_view name) const {
  for (int i = 0; i < num_scalars_; ++i)
    if (scalars_[i].first == name)
      return &scalars_[i].second;
  return nullptr;
}

KernelArgs default_kernel_args(const Call &call) {
  KernelArgs args;
  const OpDef &op = call.op();
  for (size_t i = 0; i < op.tensors.size(); ++i)
    if (!is_absent(call.tensors()[i])) // a kernel for the call has none
      args.tensor(op.tensors[i].name, call.tensors()[i]);
  for (size_t i = 0; i < op.params.size(); ++i) {
    const ParamValue &v = call.params()[i];
    if (const bool *b = std::get_if<bool>(&v))
      args.scalar(op.params[i].name, *b ? 1 : 0);
    else if (const int64_t *n = std::get_if<int64_t>(&v))
      args.scalar(op.params[i].name, static_cast<double>(*n));
    else if (const double *d = std::get_if<double>(&v))
      args.scalar(op.params[i].name, *d);
  }
  return args;
}

namespace {

/// Blocks along one grid dimension; -1 past `limit`.
int64_t extent(const GridExtent &rule, const KernelArgs &args,
               std::string_view op, int64_t limit) {
  int64_t blocks = 1;
  for (const GridFactor &f : rule.factors) {
    int64_t n = f.divisor;
    if (!f.tensor.empty()) {
      const rt::TensorView *t = args.find_tensor(f.tensor);
      if (!t || f.dim >= t->rank)
        throw InternalError(fmt::format("internal error: {}: the kernel's "
                                        "grid names {}[{}], which is not "
                                        "bound",
                                        op, f.tensor, f.dim));
      n = (t->shape[f.dim] + f.divisor - 1) / f.divisor;
    }
    if (n == 0)
      return 0;
    if (blocks > limit / n)
      return -1;
    blocks *= n;
  }
  return blocks;
}

void push_scalar(rt::ArgPack &pack, DType dtype, double v) {
  switch (dtype) {
  case DType::f32:
    pack.push(static_cast<float>(v));
    return;
  case DType::f64:
    pack.push(v);
    return;
  case DType::i32:
    pack.push(static_cast<int32_t>(v));
    return;
  case DType::u32:
    pack.push(static_cast<uint32_t>(v));
    return;
  case DType::i64:
    pack.push(static_cast<int64_t>(v));
    return;
  case DType::u64:
    pack.push(static_cast<uint64_t>(v));
    return;
  case DType::boolean:
  case DType::u8:
    pack.push(static_cast<uint8_t>(v));
    return;
  case DType::i8:
    pack.push(static_cast<int8_t>(v));
    return;
  default:
    throw InternalError(fmt::format("internal error: no scalar of dtype {} "
                                    "is passed to a kernel",
                                    name_of(dtype)));
  }
}

} // namespace

void check_binding(const AbiArg &arg, const rt::TensorView &view,
                   std::string_view op) {
  if (view.numel() == 0 || view.rank == 0)
    return;
  const int last = view.rank - 1;
  const bool inner =
      !arg.unit_inner || view.shape[last] == 1 || view.strides[last] == 1;
  bool aligned = true;
  if (arg.align_bytes > 1) {
    const int64_t bytes = static_cast<int64_t>(size_of(view.dtype));
    aligned = view.data % static_cast<uint64_t>(arg.align_bytes) == 0;
    for (int d = 0; d < last; ++d)
      if (view.shape[d] > 1 && (view.strides[d] * bytes) % arg.align_bytes != 0)
        aligned = false;
  }
  if (inner && aligned)
    return;
  std::string assumes;
  if (arg.unit_inner)
    assumes = "a last stride of 1";
  if (arg.align_bytes > 1)
    assumes += fmt::format("{}rows aligned to {} bytes",
                           assumes.empty() ? "" : " and ", arg.align_bytes);
  throw InternalError(fmt::format("internal error: {}: the kernel's tensor "
                                  "'{}' assumes {}; it is bound to {} at {:#x}",
                                  op, arg.name, assumes, view.to_string(),
                                  view.data));
}

LaunchGrid launch_grid(const KernelAbi &abi, const KernelArgs &args,
                       std::string_view op, int sms) {
  const int64_t limits[3] = {0x7fffffff, 65535, 65535};
  LaunchGrid g;
  for (int d = 0; d < 3; ++d) {
    g.blocks[d] = extent(abi.grid[d], args, op, limits[d]);
    if (g.blocks[d] < 0)
      throw UserError(fmt::format(
          "{}: the tensors' sizes need more than {} blocks along grid "
          "dimension {} ({}); requires fewer",
          op, limits[d], d, abi.grid[d].to_string()));
  }
  g.grid = g.blocks;
  // A persistent kernel walks the rule's blocks itself: a block an SM (all
  // of them where the SMs are not known, each walking one).
  if (abi.persistent && sms > 0)
    g.grid[0] = std::min<int64_t>(g.grid[0], sms);
  return g;
}

void launch_kernel(const LoadedKernel &kernel, const KernelArgs &args,
                   std::string_view op, CUstream stream) {
  const KernelAbi &abi = kernel.abi;
  if (!abi.has_grid)
    throw InternalError(fmt::format("internal error: {}: the kernel declares "
                                    "no grid (KernelBuilder::grid)",
                                    op));
  const LaunchGrid g =
      launch_grid(abi, args, op, abi.persistent ? rt::sm_count_of(stream) : 0);
  if (g.empty())
    return;
  const std::array<int64_t, 3> &blocks = g.blocks, &grid = g.grid;

  rt::ArgPack pack;
  for (const AbiArg &a : abi.args) {
    if (a.kind == AbiArg::Kind::blocks) {
      pack.push(blocks[a.dim]);
      continue;
    }
    if (a.kind == AbiArg::Kind::scalar) {
      const double *v = args.find_scalar(a.name);
      if (!v)
        throw InternalError(fmt::format("internal error: {}: the kernel's "
                                        "scalar '{}' is not bound",
                                        op, a.name));
      push_scalar(pack, a.dtype, *v);
      continue;
    }
    // MLIR's integers are signless: a u8 tensor's ABI reads i8.
    const rt::TensorView *t = args.find_tensor(a.name);
    if (!t || t->rank != a.rank || size_of(t->dtype) != size_of(a.dtype))
      throw InternalError(fmt::format(
          "internal error: {}: the kernel's tensor '{}' ({}, rank {}) is {}",
          op, a.name, name_of(a.dtype), a.rank,
          t ? t->to_string() : std::string("not bound")));
    switch (a.kind) {
    case AbiArg::Kind::tensor:
      check_binding(a, *t, op);
      push_tensor(pack, *t);
      break;
    case AbiArg::Kind::tensor_map:
      pack.push(rt::encode_tensor_map(*t, a.name.c_str(), a.box, a.swizzle));
      break;
    case AbiArg::Kind::pointer:
      pack.push(static_cast<uint64_t>(t->data));
      break;
    case AbiArg::Kind::size:
      pack.push(t->shape[a.dim]);
      break;
    case AbiArg::Kind::row_stride:
      pack.push(t->shape[0] > 1 ? t->strides[0] : t->shape[1]);
      break;
    case AbiArg::Kind::scalar:
    case AbiArg::Kind::blocks:
      break;
    }
  }
  rt::LaunchConfig config;
  config.grid = {static_cast<uint32_t>(grid[0]), static_cast<uint32_t>(grid[1]),
                 static_cast<uint32_t>(grid[2])};
  config.block = {static_cast<uint32_t>(abi.threads), 1, 1};
  config.shared_bytes = static_cast<uint32_t>(abi.shared_bytes);
  config.stream = stream;
  config.programmatic = abi.programmatic;
  rt::launch(kernel.function, config, pack.data());
}

} // namespace tilejit::ops
