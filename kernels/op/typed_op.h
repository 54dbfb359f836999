// typed_op.h - make_op<Spec>: an OpDef's typed specialisation. From one
// spec function and the DSL kernel it derives the key (every spec field,
// listed once with TILEJIT_SPEC_FIELDS), the lock-free kernel table of the
// hot path, and the launch bound by name against the compiled kernel's ABI.
#pragma once

#include "common/jit.h"
#include "common/kernel_table.h"
#include "op/op_def.h"
#include "op/spec_fields.h"

#include <memory>
#include <type_traits>

namespace tilejit::ops {

/// How an op specialises: `spec` (one function of the validated call) and
/// the DSL kernel of a spec; `views` where the kernel takes other views of
/// the op's tensors than the op's own (a reshape, a reinterpretation).
template <class Spec> struct OpKernel {
  Spec (*spec)(const Call &) = nullptr;
  Kernel (*kernel)(const Spec &) = nullptr;
  void (*views)(const Call &, const Spec &, KernelArgs &) = nullptr;
};

/// The op's tensors and numeric parameters by their declared names.
KernelArgs default_kernel_args(const Call &call);

/// Launches `kernel` with `args` bound by name to its ABI: the grid from its
/// rule (nothing is launched when a dimension has no blocks), its block
/// size and dynamic shared memory. UserError when the grid is too large;
/// InternalError when an ABI name is not bound.
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
rt::SpecKey spec_key(const std::string &op, const Spec &spec) {
  rt::SpecKey key = make_key(op);
  add_spec_fields(key, spec);
  return key;
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
  op.key = [k, name](const Call &c) { return spec_key(name, k.spec(c)); };
  op.kernel = [k](const Call &c) { return k.kernel(k.spec(c)); };
  op.kernel_args = [k](const Call &c) { return bound_args(k, c, k.spec(c)); };
  auto table = std::make_shared<KernelTable<Spec>>();
  op.launch = [k, table, name](const Call &c, CUstream stream) {
    const Spec spec = k.spec(c);
    const LoadedKernel &kernel =
        table->get(spec, [&]() -> const LoadedKernel & {
          return load_kernel(spec_key(name, spec),
                             [&] { return k.kernel(spec); });
        });
    launch_kernel(kernel, bound_args(k, c, spec), name, stream);
  };
  return op;
}

} // namespace tilejit::ops
