// stream_cases.h - The case table the mHC stream ops share (mhc_stream.h):
// 1 to 8 streams, rows of H with tails (narrower than a block, not a
// multiple of it), leading dims, no tokens, TileKernels' benchmark shape.
#pragma once

#include "op_test.h"

#include <string>

namespace tilejit::harness {

/// Cases over (..., mhc, H); `peer_us`: TileKernels' time at the benchmark
/// shape (2 x 4096 tokens, 4 streams of 7168), 0 where not measured. With
/// `mhc_param` (an op whose streams only its output has) the shapes are
/// (..., H) and the streams --set mhc_mult.
inline std::vector<Case> mhc_stream_cases(double peer_us,
                                          const char *mhc_param = nullptr) {
  std::vector<Case> cases;
  auto add = [&](std::string label, std::vector<int64_t> shape,
                 int kind = Case::gpu) {
    Case c{.label = std::move(label), .shape = std::move(shape), .kind = kind};
    if (mhc_param) {
      c.set[mhc_param] = std::to_string(c.shape.end()[-2]);
      c.shape.erase(c.shape.end() - 2);
    }
    if (kind == Case::bench)
      c.peer_us = peer_us;
    cases.push_back(std::move(c));
  };
  for (int64_t mhc : {1, 2, 4, 8})
    for (int64_t h : {1280, 2560, 7168})
      add("", {37, mhc, h});
  for (int64_t h : {8, 100, 1000, 1030})
    add("", {19, 4, h});
  add("leading dims", {2, 3, 4, 1280});
  add("no tokens", {0, 4, 1280});
  add("", {2, 4096, 4, 7168}, Case::big);
  add("", {2, 4096, 4, 7168}, Case::bench);
  return cases;
}

} // namespace tilejit::harness
