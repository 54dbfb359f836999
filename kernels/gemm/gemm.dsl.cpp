// gemm.dsl.cpp - gemm in the tile DSL: each block walks the K dimension in
// steps of 128 bytes (64 bf16/f16 or 128 fp8 elements), copying a 128 x bk
// tile of A and a block_n x bk tile of B to shared memory and accumulating
// their product; the copies run `stages` steps ahead (TMA), the products are
// WGMMA. Blocks are ordered in bands of
// group_m row tiles so that consecutive blocks share B tiles in L2.
#include "gemm/gemm.h"

#include "tilejit/compiler/dsl.h"

namespace tilejit::gemm {

Kernel gemm_kernel(const GemmSpec &s) { return gemm_kernel(s, nullptr); }

Kernel gemm_kernel(const GemmSpec &s, const GemmEpilogue &epilogue) {
  constexpr int64_t bm = 128;
  const int64_t bk = gemm_block_k(s); // 128 bytes: 64 bf16/f16, 128 fp8
  const int64_t bn = s.block_n;
  dsl::KernelBuilder k("gemm", 384);
  auto a = k.tensor("a", s.in_dtype, 2, dsl::inner_contiguous(16));
  auto b = k.tensor("b", s.in_dtype, 2, dsl::inner_contiguous(16));
  auto c = k.tensor("c", s.out_dtype, 2,
                    dsl::inner_contiguous(s.aligned_c ? 16 : 4));

  k.grid({k.blocks(a, 0, bm) * k.blocks(b, 0, bn)});
  // Grouped order: band of group_m row tiles, column tiles within a band.
  auto ceil_div = [&](dsl::Value x, int64_t d) {
    return (x + k.index(d - 1)) / k.index(d);
  };
  auto row_tiles = ceil_div(k.dim(a, 0), bm);
  auto per_band = ceil_div(k.dim(b, 0), bn) * k.index(s.group_m);
  auto pid = k.block_id(0);
  auto band = pid / per_band;
  auto first = band * k.index(s.group_m);
  auto rows_in_band = k.min(row_tiles - first, k.index(s.group_m));
  auto in_band = pid - band * per_band;
  auto m0 = (first + (in_band - (in_band / rows_in_band) * rows_in_band)) *
            k.index(bm);
  auto n0 = (in_band / rows_in_band) * k.index(bn);

  auto sa = k.alloc_shared(s.in_dtype, {bm, bk});
  auto sb = k.alloc_shared(s.in_dtype, {bn, bk});
  auto acc = k.full({bm, bn}, 0.0, DType::f32);
  acc = k.pipelined(ceil_div(k.dim(a, 1), bk), s.stages, {acc},
                    [&](dsl::Value step, std::vector<dsl::Value> carried) {
                      k.copy(a, {m0, step * k.index(bk)}, sa);
                      k.copy(b, {n0, step * k.index(bk)}, sb);
                      return std::vector{k.gemm(sa, sb, carried[0])};
                    })[0];
  k.store(epilogue ? epilogue(k, acc, m0, n0) : k.cast(acc, s.out_dtype), c,
          {m0, n0},
          s.full_tiles ? dsl::Bounds::promised_inside : dsl::Bounds::checked);
  return k.build();
}

} // namespace tilejit::gemm
