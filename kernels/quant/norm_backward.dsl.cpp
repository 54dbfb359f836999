// norm_backward.dsl.cpp - norm_backward in the tile DSL, two kernels.
// Rows: block b takes rows [b per, (b + 1) per); for each row, pass 1 sums
// dot = xh . gw over the chunks (xh = x rstd, go = out_grad out_scale, gw =
// go weight; 4 columns a thread), pass 2 reads them again (L1) and writes
// x_grad = (gw - xh (dot / H)) rstd (+ residual_out_grad), adding xh go to the
// block's weight-gradient chunks, carried in registers across its rows and
// stored as its row of the scratch partials. Weight: a block of 256 columns
// sums the partials' rows (4 at a time), adds the given weight_grad and writes
// weight_grad_out in its dtype.
#include "quant/norm_backward.h"

#include "tilejit/compiler/dsl.h"

#include <algorithm>
#include <optional>

namespace tilejit::quant {

Kernel norm_backward_kernel(const NormBackwardSpec &s) {
  using dsl::Value;
  dsl::KernelBuilder k("norm_backward", s.threads);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  const dsl::Access access = dsl::vectors_of(s.vector_bytes);
  auto go_t = k.tensor("out_grad", s.dtype, 2, access); // (T, H)
  auto x = k.tensor("x", s.dtype, 2, access);
  std::optional<dsl::Tensor> weight, residual;
  if (s.weight)
    weight = k.tensor("weight_row", s.dtype, 2, access); // (1, H)
  auto rstd = k.tensor("rstd", f32, 1);
  if (s.residual)
    residual = k.tensor("residual_out_grad", s.dtype, 2, access);
  auto dx_t = k.tensor("x_grad", s.dtype, 2, access);
  std::optional<dsl::Tensor> partials;
  if (s.weight_out)
    partials = k.tensor("scratch", f32, 2, dsl::vectors_of(16)); // (B, H)
  auto out_scale = k.scalar("out_scale", f32);
  const int64_t chunk = s.chunk, chunks = (s.hidden + chunk - 1) / chunk;
  const std::vector<int64_t> box = {1, chunk};
  k.grid({dsl::Extent(s.blocks)});
  auto b = k.block_id(0), zero = k.index(0);
  auto rows = k.dim(x, 0), blocks = k.index(s.blocks);
  auto per = (rows + blocks - k.index(1)) / blocks;
  auto begin = k.min(b * per, rows), end = k.min(begin + per, rows);
  auto at = [&](int64_t c) { return k.index(c * chunk); };
  // 4 consecutive columns a thread.
  auto f = [&](Value v) { return k.cast(k.relayout(v, 4), f32); };
  // A row's chunks of x and out_grad as loaded (4 columns a thread).
  struct Raw {
    std::vector<Value> x, go;
  };
  auto raw = [&](Value r) {
    Raw w;
    for (int64_t c = 0; c < chunks; ++c) {
      w.x.push_back(k.relayout(k.load(x, {r, at(c)}, box), 4));
      w.go.push_back(k.relayout(k.load(go_t, {r, at(c)}, box), 4));
    }
    return w;
  };
  // Chunk c's xh, go and gw, from row r's chunks as carried (prefetch) or
  // loaded here.
  struct Terms {
    Value xh, go, gw;
  };
  auto terms = [&](const Raw &w, Value r, Value sr, int64_t c) {
    auto xc = s.prefetch ? w.x[c] : k.load(x, {r, at(c)}, box);
    auto goc = s.prefetch ? w.go[c] : k.load(go_t, {r, at(c)}, box);
    Terms t;
    t.xh = f(xc) * sr;
    t.go = f(goc) * out_scale;
    t.gw = weight ? t.go * f(k.load(*weight, {zero, at(c)}, box)) : t.go;
    return t;
  };
  const size_t n = static_cast<size_t>(chunks);
  std::vector<Value> init;
  if (partials)
    init.assign(n, k.relayout(k.full(box, 0, f32), 4));
  // With prefetch, the row's chunks come carried from the step before,
  // which loaded them while it reduced and wrote its own row (a block's
  // last step reads the next block's first row, or zeros past the end).
  const size_t carried = init.size();
  if (s.prefetch) {
    // Two rows' chunks within 128 registers: two blocks an SM.
    k.min_blocks_per_sm(2);
    Raw first = raw(begin);
    init.insert(init.end(), first.x.begin(), first.x.end());
    init.insert(init.end(), first.go.begin(), first.go.end());
  }
  auto sums = k.serial(begin, end, init, [&](Value r, std::vector<Value> v) {
    // Pass 1 unrolled, every chunk's loads issued together (a loop of
    // chunks had one chunk's in flight, and the op moved 36 % of a copy's
    // bandwidth on an H100, session 63); without prefetch pass 2 loads them
    // again (from L1), so that they need no registers across the reduction.
    Raw row, next;
    if (s.prefetch) {
      row.x.assign(v.begin() + carried, v.begin() + carried + n);
      row.go.assign(v.begin() + carried + n, v.end());
      next = raw(r + k.index(1));
    }
    auto sr = k.load_scalar(rstd, {r});
    Value dot = k.relayout(k.full(box, 0, f32), 4);
    for (int64_t c = 0; c < chunks; ++c) {
      Terms t = terms(row, r, sr, c);
      dot = k.fma(t.xh, t.gw, dot);
    }
    auto mean =
        k.reduce_sum(dot, 1) / k.constant(static_cast<double>(s.hidden), f32);
    std::vector<Value> out(v.begin(), v.begin() + carried);
    for (int64_t c = 0; c < chunks; ++c) {
      Terms t = terms(row, r, sr, c);
      Value dx = (t.gw - t.xh * mean) * sr;
      if (residual)
        dx = dx + f(k.load(*residual, {r, at(c)}, box));
      k.store(k.relayout(k.cast(dx, s.dtype), 4), dx_t, {r, at(c)});
      if (partials)
        out[static_cast<size_t>(c)] =
            k.fma(t.xh, t.go, out[static_cast<size_t>(c)]);
    }
    out.insert(out.end(), next.x.begin(), next.x.end());
    out.insert(out.end(), next.go.begin(), next.go.end());
    return out;
  });
  if (partials) // every block its row, zeros where it has no rows
    for (int64_t c = 0; c < chunks; ++c)
      k.store(sums[static_cast<size_t>(c)], *partials, {b, at(c)});
  return k.build();
}

Kernel norm_backward_weight_kernel(const NormBackwardSpec &s) {
  using dsl::Value;
  constexpr int64_t cols = 256;
  dsl::KernelBuilder k("norm_backward_weight", 64);
  k.programmatic_launch();
  const auto f32 = DType::f32;
  auto partials = k.tensor("scratch", f32, 2, dsl::vectors_of(16)); // (B, H)
  // No weight gradient asked for: no blocks (the scratch has no columns).
  k.grid({k.blocks(partials, 1, cols)});
  if (!s.weight_out)
    return k.build();
  std::optional<dsl::Tensor> given;
  if (s.weight_grad)
    given = k.tensor("weight_grad_row", s.out_dtype, 2); // (1, H)
  auto out = k.tensor("weight_grad_out_row", s.out_dtype, 2);
  auto c0 = k.block_id(0) * k.index(cols), zero = k.index(0);
  const int64_t step = std::min<int64_t>(4, s.blocks);
  auto acc = k.serial(
      zero, k.index(s.blocks / step), {k.full({step, cols}, 0, f32)},
      [&](Value i, std::vector<Value> a) {
        return std::vector<Value>{
            a[0] + k.load(partials, {i * k.index(step), c0}, {step, cols})};
      });
  Value sum = k.reduce_sum(acc[0], 0);
  if (given)
    sum = sum + k.cast(k.load(*given, {zero, c0}, {1, cols}), f32);
  k.store(k.cast(sum, s.out_dtype), out, {zero, c0});
  return k.build();
}

} // namespace tilejit::quant
