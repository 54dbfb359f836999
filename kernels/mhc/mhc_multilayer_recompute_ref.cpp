// mhc_multilayer_recompute_ref.cpp - CPU reference of
// mhc_multilayer_recompute (spec §3.9): layer inputs and residuals of a stack
// of sublayers recomputed from the saved mixes and layer outputs.
#include "mhc/mhc_common.h"
#include "mhc/reference.h"

#include "common/parallel.h"

#include <fmt/format.h>

namespace tilejit::mhc {

using namespace detail;

namespace {

void check_list(const char *fn, const char *name,
                const std::vector<HostTensor> &list, size_t count,
                std::string_view rule, DType dtype,
                const std::vector<int64_t> &shape) {
  if (list.size() != count)
    fail_value(fn, name, fmt::format("a list of {} tensors", list.size()),
               rule);
  for (size_t l = 0; l < list.size(); ++l) {
    std::string arg = fmt::format("{}[{}]", name, l);
    check_tensor(fn, arg, list[l], dtype, 0, "");
    check_shape(fn, arg, list[l], shape);
  }
}

} // namespace

void mhc_multilayer_recompute_ref(
    const HostTensor &initial_residual,
    const std::vector<HostTensor> &pre_mix_list,
    const std::vector<HostTensor> &layer_output_list,
    const std::vector<HostTensor> &post_mix_list,
    const std::vector<HostTensor> &comb_mix_list,
    const std::vector<HostTensor> &layer_input_list,
    const std::vector<HostTensor> &residual_list) {
  const char *fn = "mhc_multilayer_recompute_ref";
  check_tensor(fn, "initial_residual", initial_residual, DType::bf16, 2,
               "(..., mhc, H)");
  const int mhc = static_cast<int>(initial_residual.shape().end()[-2]);
  const int64_t hid = initial_residual.shape().back();
  std::vector<int64_t> lead = leading_shape(initial_residual, 2);
  size_t num_layers = pre_mix_list.size(), num_post = layer_output_list.size();
  if (num_layers == 0)
    fail_value(fn, "pre_mix_list", "a list of 0 tensors", "L >= 1 tensors");
  std::vector<int64_t> col = with_tail(lead, {mhc, 1});
  std::vector<int64_t> row = with_tail(lead, {hid});
  check_list(fn, "pre_mix_list", pre_mix_list, num_layers, "", DType::f32, col);
  if (num_post != num_layers && num_post + 1 != num_layers)
    fail_value(fn, "layer_output_list",
               fmt::format("a list of {} tensors", num_post),
               fmt::format("L - 1 or L tensors (L = {})", num_layers));
  std::string p_rule =
      fmt::format("P = {} tensors (P = len(layer_output_list))", num_post);
  std::string l_rule =
      fmt::format("L = {} tensors (L = len(pre_mix_list))", num_layers);
  check_list(fn, "layer_output_list", layer_output_list, num_post, p_rule,
             DType::bf16, row);
  check_list(fn, "post_mix_list", post_mix_list, num_post, p_rule, DType::f32,
             col);
  check_list(fn, "comb_mix_list", comb_mix_list, num_post, p_rule, DType::f32,
             with_tail(lead, {mhc, mhc}));
  check_list(fn, "layer_input_list", layer_input_list, num_layers, l_rule,
             DType::bf16, row);
  check_list(fn, "residual_list", residual_list, num_post, p_rule, DType::bf16,
             initial_residual.shape());

  int64_t n = product(lead);
  const uint16_t *r0 = initial_residual.data<uint16_t>();
  // Tokens share nothing: on the machine's threads.
  ref::parallel_ranges(n, 64, [&](int64_t first, int64_t last) {
    std::vector<float> r(mhc), rn(mhc);
    for (int64_t t = first; t < last; ++t)
      for (int64_t h = 0; h < hid; ++h) {
        for (int m = 0; m < mhc; ++m)
          r[m] = bf16_value(r0[(t * mhc + m) * hid + h]);
        for (size_t l = 0; l < num_layers; ++l) {
          layer_input_list[l].data<uint16_t>()[t * hid + h] =
              bf16_bits(apply_mix_chain(pre_mix_list[l].data<float>() + t * mhc,
                                        r.data(), mhc));
          if (l == num_post)
            break; // L = P + 1: the last layer has only its input
          float y =
              bf16_value(layer_output_list[l].data<uint16_t>()[t * hid + h]);
          const float *post = post_mix_list[l].data<float>() + t * mhc;
          const float *comb = comb_mix_list[l].data<float>() + t * mhc * mhc;
          for (int o = 0; o < mhc; ++o)
            rn[o] = post_chain(post[o], y, comb, r.data(), mhc, o);
          for (int o = 0; o < mhc; ++o) {
            uint16_t bits = bf16_bits(rn[o]);
            residual_list[l].data<uint16_t>()[(t * mhc + o) * hid + h] = bits;
            r[o] = bf16_value(bits); // re-rounded to bf16 between layers
          }
        }
      }
  });
}

} // namespace tilejit::mhc
