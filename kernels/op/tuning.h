// tuning.h - TILEJIT_TUNE: integer spec fields of named ops overridden
// after their spec function, for measuring a kernel's variants (block
// sizes, unrolls, stages) without a parameter for each. A developer's
// tool: a variant the kernel does not support may fail to compile or give
// wrong results, which tests and benchmarks (checked against the CPU
// reference) report.
//
//   TILEJIT_TUNE="grad_w_reduce:unroll=33;expand_to_fused:threads=128,block_h=7168"
#pragma once

#include "tilejit/error.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilejit::ops {

/// One op's overrides from a TILEJIT_TUNE text. Parsing never throws (ops
/// are declared during static initialisation): a malformed text is kept
/// as `error`, which every call of every op then throws.
struct SpecTuning {
  std::vector<std::pair<std::string, int64_t>> fields;
  std::string error;
  bool empty() const { return fields.empty() && error.empty(); }
};

/// The overrides of op `op` in `text` ("op:field=value,...;op:..."; empty:
/// none).
SpecTuning parse_spec_tuning(std::string_view text, std::string_view op);

/// parse_spec_tuning of the environment's TILEJIT_TUNE.
SpecTuning spec_tuning(std::string_view op);

/// `spec` with `tuning`'s fields set (set_spec_field, from
/// TILEJIT_SPEC_FIELDS). UserError naming the text, or the field and the
/// spec's fields, when a field is not an integer field of the spec or its
/// value does not fit.
template <class Spec>
Spec tuned(Spec spec, const SpecTuning &tuning, std::string_view op) {
  if (tuning.empty())
    return spec;
  if (!tuning.error.empty())
    throw UserError(tuning.error);
  for (const auto &[field, value] : tuning.fields)
    if (!set_spec_field(spec, field, value))
      throw UserError(fmt::format(
          "TILEJIT_TUNE: op {} has no integer spec field '{}' that holds {}; "
          "its fields: {}",
          op, field, value, spec_field_names(spec)));
  return spec;
}

} // namespace tilejit::ops
