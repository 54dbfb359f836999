// typed_op.h - make_op<Spec>: an OpDef's typed specialisation. From one
// spec function and the DSL kernel it derives the key (every spec field,
// listed once with TILEJIT_SPEC_FIELDS), the lock-free kernel table of the
// hot path, and the launch bound by name against the compiled kernel's ABI.
#pragma once

#include "common/jit.h"
#include "common/kernel_table.h"
#include "op/op_def.h"
#include "op/spec_fields.h"
#include "op/tuning.h"

#include "tilejit/error.h"
#include "tilejit/runtime/stream_memory.h"

#include <fmt/format.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace tilejit::ops {

/// How an op specialises: `spec` (one function of the validated call) and
/// the DSL kernel of a spec; `views` where the kernel takes other views of
/// the op's tensors than the op's own (a reshape, a reinterpretation).
template <class Spec> struct OpKernel {
  Spec (*spec)(const Call &) = nullptr;
  Kernel (*kernel)(const Spec &) = nullptr;
  void (*views)(const Call &, const Spec &, KernelArgs &) = nullptr;
  /// Kernels launched after `kernel`, in order on the call's stream, with
  /// the same tensors and scalars: for work that needs every block of the
  /// kernel before done (a grid-wide step without a grid-wide barrier).
  std::vector<Kernel (*)(const Spec &)> then = {};
  /// The layout of a tensor named "scratch" that the kernels share for one
  /// call (contiguous; allocated on the call's stream before the first
  /// kernel, freed after the last: rt::StreamMemory), from the spec and
  /// the call's sizes. Optional.
  TensorShape (*scratch)(const Call &, const Spec &) = nullptr;
};

/// The op's tensors and numeric parameters by their declared names.
KernelArgs default_kernel_args(const Call &call);

/// A launch's grid: the blocks `abi`'s rule gives for `args` along each
/// dimension, and the grid launched, the same but for a persistent kernel's
/// x, at most `sms` (0: not known, uncapped). UserError when a dimension
/// needs more blocks than a launch takes.
struct LaunchGrid {
  std::array<int64_t, 3> blocks{}, grid{};
  bool empty() const {
    return blocks[0] == 0 || blocks[1] == 0 || blocks[2] == 0;
  }
};
LaunchGrid launch_grid(const KernelAbi &abi, const KernelArgs &args,
                       std::string_view op, int sms);

/// Launches `kernel` with `args` bound by name to its ABI: the grid from its
/// rule (launch_grid; nothing is launched when a dimension has no blocks),
/// its block size and dynamic shared memory. UserError when the grid is too
/// large; InternalError when an ABI name is not bound.
void launch_kernel(const LoadedKernel &kernel, const KernelArgs &args,
                   std::string_view op, CUstream stream);

/// InternalError (an op's views break its kernel's promise) unless `view`
/// keeps what the kernel assumes of tensor `arg`: a last stride of 1 (where
/// the last dimension has more than one element) and a base address and
/// row starts aligned to arg.align_bytes. launch_kernel checks every
/// tensor; a view of no elements passes.
void check_binding(const AbiArg &arg, const rt::TensorView &view,
                   std::string_view op);

/// The key of `spec` for op `op`: the compiler's fingerprint and every
/// spec field.
template <class Spec>
rt::SpecKey spec_key(const std::string &op, const Spec &spec, int index = 0) {
  rt::SpecKey key = make_key(op);
  add_spec_fields(key, spec);
  if (index > 0) // the first kernel's key as an op of one kernel has it
    key.add("kernel", std::to_string(index));
  return key;
}

/// The DSL kernel `index` of an op's kernels (`kernel`, then `then`).
template <class Spec>
Kernel (*kernel_at(const OpKernel<Spec> &k, int index))(const Spec &) {
  if (index == 0)
    return k.kernel;
  if (index < 1 || static_cast<size_t>(index) > k.then.size())
    throw InternalError(
        fmt::format("internal error: an op of {} kernels has no kernel {}",
                    k.then.size() + 1, index));
  return k.then[static_cast<size_t>(index) - 1];
}

/// The view of `k`'s scratch tensor for call `c` of `spec` at address 0 (a
/// launch sets the address of its memory); nullopt for an op without one.
template <class Spec>
std::optional<rt::TensorView> scratch_view(const OpKernel<Spec> &k,
                                           const Call &c, const Spec &spec) {
  if (!k.scratch)
    return std::nullopt;
  const TensorShape s = k.scratch(c, spec);
  return rt::TensorView::contiguous(0, s.dtype, s.shape);
}

/// The tensors and scalars a launch of `c` binds: the op's, with its views.
template <class Spec>
KernelArgs bound_args(const OpKernel<Spec> &k, const Call &c,
                      const Spec &spec) {
  KernelArgs args = default_kernel_args(c);
  if (k.views)
    k.views(c, spec, args);
  return args;
}

template <class Spec> OpDef make_op(OpDef op, OpKernel<Spec> k) {
  static_assert(std::has_unique_object_representations_v<Spec>,
                "a spec is compared bytewise: no padding, no floats");
  op.prepare();
  const std::string name = op.name;
  const int count = 1 + static_cast<int>(k.then.size());
  op.kernel_count = count;
  // The spec function's result with TILEJIT_TUNE's fields (none: as is).
  const SpecTuning tuning = spec_tuning(name);
  auto spec_of = [spec = k.spec, tuning, name](const Call &c) {
    return tuned(spec(c), tuning, name);
  };
  op.key_of = [k, spec_of, name](const Call &c, int index) {
    (void)kernel_at(k, index); // the index checked
    return spec_key(name, spec_of(c), index);
  };
  op.kernel_of = [k, spec_of](const Call &c, int index) {
    return kernel_at(k, index)(spec_of(c));
  };
  op.kernel_args = [k, spec_of](const Call &c) {
    const Spec spec = spec_of(c);
    KernelArgs args = bound_args(k, c, spec);
    if (std::optional<rt::TensorView> view = scratch_view(k, c, spec))
      args.tensor("scratch", *view);
    return args;
  };
  if (count > 8)
    throw InternalError("internal error: an op of more than 8 kernels");
  std::vector<std::shared_ptr<KernelTable<Spec>>> tables;
  for (int i = 0; i < count; ++i)
    tables.push_back(std::make_shared<KernelTable<Spec>>());
  op.launch = [k, spec_of, tables, name](const Call &c, CUstream stream) {
    const Spec spec = spec_of(c);
    KernelArgs args = bound_args(k, c, spec);
    // Every kernel loaded (compiled on a miss) before any runs.
    std::array<const LoadedKernel *, 8> loaded{};
    for (size_t i = 0; i < tables.size(); ++i) {
      const int index = static_cast<int>(i);
      loaded[i] = &tables[i]->get(spec, [&]() -> const LoadedKernel & {
        return load_kernel(spec_key(name, spec, index),
                           [&] { return kernel_at(k, index)(spec); });
      });
    }
    std::optional<rt::StreamMemory> scratch;
    if (std::optional<rt::TensorView> view = scratch_view(k, c, spec)) {
      scratch.emplace(static_cast<size_t>(view->numel()) * size_of(view->dtype),
                      stream);
      view->data = scratch->ptr();
      args.tensor("scratch", *view);
    }
    for (size_t i = 0; i < tables.size(); ++i)
      launch_kernel(*loaded[i], args, name, stream);
  };
  return op;
}

} // namespace tilejit::ops
