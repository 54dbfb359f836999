// packed_scales_compare.h - For the quant ops' case tables: scales compared
// bitwise, the packed UE8M0 bytes past a row's last scale wiped first (the
// original leaves them unwritten and its tests wipe them: clear_unused_sf).
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

} // namespace tilejit::harness
