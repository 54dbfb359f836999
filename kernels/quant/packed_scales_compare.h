// packed_scales_compare.h - For the quant ops' case tables: scales compared
// bitwise, the packed UE8M0 bytes past a row's last scale (or, column-pack,
// a column's last block) wiped first (the original leaves them unwritten
// and its tests wipe them: clear_unused_sf, clear_unused_sf_col_pack).
#pragma once

#include "op_test.h"

#include <functional>

namespace tilejit::harness {

/// `groups(call)`: the scales a row holds (e.g. ceil(K / num_per_channels)).
inline Compare
packed_scales(std::function<int64_t(const ops::HostCall &)> groups) {
  return {"bitwise equal",
          [groups](const ref::HostTensor &got, const ref::HostTensor &want,
                   const RunData &run) {
            if (!run.call.flag("use_packed_ue8m0"))
              return ref::compare_exact(got, want);
            const int64_t n = groups(run.call);
            ref::HostTensor wiped = ref::HostTensor::zeros_strided(
                got.dtype(), got.shape(), got.strides());
            for (int64_t m = 0; m < got.size(0); ++m)
              for (int64_t w = 0; w < got.size(1); ++w) {
                int32_t v = got.at<int32_t>({m, w});
                for (int64_t j = 0; j < 4; ++j)
                  if (4 * w + j >= n)
                    reinterpret_cast<uint8_t *>(&v)[j] = 0;
                wiped.at<int32_t>({m, w}) = v;
              }
            return ref::compare_exact(wiped, want);
          }};
}

/// 2.1's column-pack scales (int32 (ceil(B / 4), K), byte j of word (q, c)
/// block 4q + j, `blocks(call)` = B of them): bytes past block B wiped.
inline Compare
col_packed_scales(std::function<int64_t(const ops::HostCall &)> blocks) {
  return {"bitwise equal",
          [blocks](const ref::HostTensor &got, const ref::HostTensor &want,
                   const RunData &run) {
            if (!run.call.flag("use_packed_ue8m0"))
              return ref::compare_exact(got, want);
            const int64_t n = blocks(run.call);
            ref::HostTensor wiped = ref::HostTensor::zeros_strided(
                got.dtype(), got.shape(), got.strides());
            for (int64_t q = 0; q < got.size(0); ++q)
              for (int64_t c = 0; c < got.size(1); ++c) {
                int32_t v = got.at<int32_t>({q, c});
                for (int64_t j = 0; j < 4; ++j)
                  if (4 * q + j >= n)
                    reinterpret_cast<uint8_t *>(&v)[j] = 0;
                wiped.at<int32_t>({q, c}) = v;
              }
            return ref::compare_exact(wiped, want);
          }};
}

} // namespace tilejit::harness
