// packed_scales_compare.h - For the quant ops' case tables: scales compared
// bitwise, the packed UE8M0 bytes past a row's last scale (or, column-pack,
// a column's last block) wiped first (the original leaves them unwritten
// and its tests wipe them: clear_unused_sf, clear_unused_sf_col_pack).
#pragma once

#include "op_test.h"

#include <functional>

namespace tilejit::harness {

/// Packed UE8M0 scales compared bitwise after the bytes that are not scales
/// are wiped: byte j of int32 (a, b) is scale `index(a, b, j)` of
/// `count(call)`.
inline Compare packed_bytes(std::function<int64_t(const ops::HostCall &)> count,
                            int64_t (*index)(int64_t a, int64_t b, int64_t j)) {
  return {"bitwise equal",
          [count, index](const ref::HostTensor &got,
                         const ref::HostTensor &want, const RunData &run) {
            if (!run.call.flag("use_packed_ue8m0"))
              return ref::compare_exact(got, want);
            const int64_t n = count(run.call);
            ref::HostTensor wiped = ref::HostTensor::zeros_strided(
                got.dtype(), got.shape(), got.strides());
            for (int64_t a = 0; a < got.size(0); ++a)
              for (int64_t b = 0; b < got.size(1); ++b) {
                int32_t v = got.at<int32_t>({a, b});
                for (int64_t j = 0; j < 4; ++j)
                  if (index(a, b, j) >= n)
                    reinterpret_cast<uint8_t *>(&v)[j] = 0;
                wiped.at<int32_t>({a, b}) = v;
              }
            return ref::compare_exact(wiped, want);
          }};
}

/// Row-packed scales (int32 (M, W), byte j of word (m, w) group 4w + j);
/// `groups(call)`: the scales a row holds (e.g. ceil(K / num_per_channels)).
inline Compare
packed_scales(std::function<int64_t(const ops::HostCall &)> groups) {
  return packed_bytes(std::move(groups),
                      [](int64_t, int64_t w, int64_t j) { return 4 * w + j; });
}

/// 2.1's column-pack scales (int32 (ceil(B / 4), K), byte j of word (q, c)
/// block 4q + j; `blocks(call)` = B).
inline Compare
col_packed_scales(std::function<int64_t(const ops::HostCall &)> blocks) {
  return packed_bytes(std::move(blocks),
                      [](int64_t q, int64_t, int64_t j) { return 4 * q + j; });
}

} // namespace tilejit::harness
