// mhc_test.cpp - Tests of the mHC functional layer reference (spec §3.10):
// a whole layer's gradients through the shared residual-gradient protocol
// against finite differences of a float64 model, the protocol's order and
// fallbacks, inference vs training paths, and argument errors.
#include "modeling/mhc_reference.h"

#include "../mhc/mhc_test_util.h"

using namespace mhc_test;
using namespace tilejit::modeling;
namespace mhc = tilejit::mhc;

namespace {

constexpr int64_t kT = 2, kH = 4, kMhc = 4, kKd = kMhc * kH, kMhc3 = 24;

/// Inputs and parameters of one layer step followed by the head, as exact
/// double values of their f32/bf16 tensors.
struct Model {
  Vec emb, fn, scale, base, normw, wy, fn_head, scale_head, base_head, c;
  MhcPreKwargs pre_kw{std::nullopt, 1e-6f, 4, 2.0f, 1e-2f, 1e-6f, 10, 16};
  MhcHeadKwargs head_kw{std::nullopt, 1e-6f, 4, 1e-2f, 16};

  explicit Model(uint32_t seed) {
    emb = to_bf16(randn(kT * kH, seed));
    fn = to_f32(randn(kMhc3 * kKd, seed + 1, 0.3));
    scale = to_f32(randn(3, seed + 2, 0.3, 1.0));
    base = to_f32(randn(kMhc3, seed + 3, 0.5));
    normw = to_f32(randn(kKd, seed + 4, 0.1, 1.0));
    wy = to_f32(randn(kH, seed + 5, 0.5, 1.0));
    fn_head = to_f32(randn(kMhc * kKd, seed + 6, 0.3));
    scale_head = to_f32({0.8});
    base_head = to_f32(randn(kMhc, seed + 7, 0.5));
    c = to_bf16(randn(kT * kH, seed + 8));
  }

  /// The float64 model: loss = sum c * head(post(F(pre(R0)), R0)).
  double loss(const Vec &e, const Vec &f, const Vec &s, const Vec &b,
              const Vec &w, const Vec &fh, const Vec &sh, const Vec &bh) const {
    Vec r0(kT * kMhc * kH);
    for (int64_t t = 0; t < kT; ++t)
      for (int64_t m = 0; m < kMhc; ++m)
        for (int64_t h = 0; h < kH; ++h)
          r0[(t * kMhc + m) * kH + h] = e[t * kH + h];
    Vec merged(f.size());
    for (size_t i = 0; i < f.size(); ++i)
      merged[i] = f[i] * w[i % kKd];
    Vec mixes = norm_fn64(r0, merged, kT, kKd, kMhc3, pre_kw.norm_eps);
    Split64 sp =
        split64(mixes, s, b, kMhc, pre_kw.post_mult_value, pre_kw.pre_eps);
    Vec comb =
        sinkhorn64(sp.comb, kMhc, pre_kw.sinkhorn_repeat, pre_kw.sinkhorn_eps);
    Vec li = apply64(r0, sp.pre, kT, kMhc, kH);
    Vec y(li.size());
    for (size_t i = 0; i < li.size(); ++i)
      y[i] = wy[i % kH] * li[i];
    Vec r1 = post64(y, r0, sp.post, comb, kT, kMhc, kH);
    Vec hm = norm_fn64(r1, fh, kT, kKd, kMhc, head_kw.norm_eps);
    Vec mix = head_mix64(hm, sh[0], bh, head_kw.pre_eps);
    return dot(c, apply64(r1, mix, kT, kMhc, kH));
  }
};

/// y = bf16(wy * v) per element of a bf16 (T, H) tensor.
HostTensor scale_rows(const Vec &wy, const HostTensor &v) {
  Vec out = values(v);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<float>(wy[i % kH]) * static_cast<float>(out[i]);
  return bf16({kT, kH}, out);
}

} // namespace

TEST_CASE("mhc layer gradients through the shared residual buffer match "
          "finite differences",
          "[ref][modeling]") {
  Model md(700);
  MhcPreKwargs kw = md.pre_kw;
  kw.norm_weight = f32({kKd}, md.normw);
  HostTensor fn = f32({kMhc3, kKd}, md.fn), scale = f32({3}, md.scale),
             base = f32({kMhc3}, md.base);
  HostTensor fn_head = f32({kMhc, kKd}, md.fn_head),
             scale_head = f32({1}, md.scale_head),
             base_head = f32({kMhc}, md.base_head);

  HostTensor r0 = expand_from_embedding_ref(bf16({kT, kH}, md.emb), 4);
  MhcPreOutput pre = mhc_pre_ref(r0, fn, scale, base, kw);
  REQUIRE(pre.ctx.has_value());
  HostTensor y = scale_rows(md.wy, pre.layer_input);
  HostTensor r1 = mhc_post_ref(y, r0, pre.post_mix, pre.comb_mix);
  MhcHeadOutput head =
      mhc_head_ref(r1, fn_head, scale_head, base_head, md.head_kw);
  REQUIRE(head.out.shape() == Shape{kT, kH});

  // Backward in the original's order: head, post, F, pre.
  MhcResidualGradRegistry reg;
  MhcHeadGrads hg = mhc_head_bwd_ref(head.ctx, bf16({kT, kH}, md.c), reg);
  REQUIRE(hg.residual_grad.has_value()); // r1 fed no mhc_post
  mhc::MhcPostGrads pg = mhc_post_bwd_ref(*hg.residual_grad, y, r0,
                                          pre.post_mix, pre.comb_mix, reg);
  REQUIRE(reg.size() == 1);
  MhcPreGrads prg =
      mhc_pre_bwd_ref(*pre.ctx, scale_rows(md.wy, pg.x_grad),
                      pg.post_layer_mix_grad, pg.comb_res_mix_grad, reg);
  CHECK_FALSE(prg.residual_grad.has_value()); // added to post's buffer
  CHECK(reg.size() == 0);                     // and norm_fn removed it
  Vec d_emb = values(expand_from_embedding_bwd_ref(pg.residual_grad));
  REQUIRE(prg.norm_weight_grad.has_value());

  const Model &m = md;
  auto L = [&m](const Vec &e, const Vec &f, const Vec &s, const Vec &b,
                const Vec &w, const Vec &fh, const Vec &sh,
                const Vec &bh) { return m.loss(e, f, s, b, w, fh, sh, bh); };
  const double rt = 1e-2, at = 1e-2;
  check_gradient(
      "embedding", m.emb,
      [&](const Vec &v) {
        return L(v, m.fn, m.scale, m.base, m.normw, m.fn_head, m.scale_head,
                 m.base_head);
      },
      d_emb, rt, at);
  check_gradient(
      "fn", m.fn,
      [&](const Vec &v) {
        return L(m.emb, v, m.scale, m.base, m.normw, m.fn_head, m.scale_head,
                 m.base_head);
      },
      values(prg.fn_grad), rt, at);
  check_gradient(
      "scale", m.scale,
      [&](const Vec &v) {
        return L(m.emb, m.fn, v, m.base, m.normw, m.fn_head, m.scale_head,
                 m.base_head);
      },
      values(prg.scale_grad), rt, at);
  check_gradient(
      "base", m.base,
      [&](const Vec &v) {
        return L(m.emb, m.fn, m.scale, v, m.normw, m.fn_head, m.scale_head,
                 m.base_head);
      },
      values(prg.base_grad), rt, at);
  check_gradient(
      "norm_weight", m.normw,
      [&](const Vec &v) {
        return L(m.emb, m.fn, m.scale, m.base, v, m.fn_head, m.scale_head,
                 m.base_head);
      },
      values(*prg.norm_weight_grad), rt, at);
  check_gradient(
      "head fn", m.fn_head,
      [&](const Vec &v) {
        return L(m.emb, m.fn, m.scale, m.base, m.normw, v, m.scale_head,
                 m.base_head);
      },
      values(hg.fn_grad), rt, at);
  check_gradient(
      "head scale", m.scale_head,
      [&](const Vec &v) {
        return L(m.emb, m.fn, m.scale, m.base, m.normw, m.fn_head, v,
                 m.base_head);
      },
      values(hg.scale_grad), rt, at);
  check_gradient(
      "head base", m.base_head,
      [&](const Vec &v) {
        return L(m.emb, m.fn, m.scale, m.base, m.normw, m.fn_head, m.scale_head,
                 v);
      },
      values(hg.base_grad), rt, at);
}

TEST_CASE("mhc_pre backward adds post, then apply_mix, then norm_fn into "
          "one bf16 buffer",
          "[ref][modeling]") {
  Model md(710);
  HostTensor r0 = bf16({kT, kMhc, kH}, randn(kT * kKd, 711));
  HostTensor fn = f32({kMhc3, kKd}, md.fn), scale = f32({3}, md.scale),
             base = f32({kMhc3}, md.base);
  MhcPreOutput pre = mhc_pre_ref(r0, fn, scale, base, md.pre_kw);
  HostTensor d_post_r = bf16({kT, kMhc, kH}, randn(kT * kKd, 712));
  HostTensor d_li = bf16({kT, kH}, randn(kT * kH, 713));
  HostTensor d_post = f32({kT, kMhc, 1}, randn(kT * kMhc, 714));
  HostTensor d_comb = f32({kT, kMhc, kMhc}, randn(kT * 16, 715));

  // The protocol: the buffer installed for r0 receives both contributions.
  MhcResidualGradRegistry reg;
  HostTensor shared = d_post_r.clone();
  reg.install(r0, shared);
  MhcPreGrads g = mhc_pre_bwd_ref(*pre.ctx, d_li, d_post, d_comb, reg);
  CHECK_FALSE(g.residual_grad.has_value());
  CHECK(reg.size() == 0);

  // The same by hand, in the order post -> apply_mix -> norm_fn.
  const MhcPreContext &ctx = *pre.ctx;
  HostTensor manual = d_post_r.clone();
  mhc::MhcPreApplyMixGrads ag =
      mhc::mhc_pre_apply_mix_bwd_ref(d_li, r0, ctx.split.pre_mix, manual);
  HostTensor comb_grad =
      mhc::sinkhorn_normalize_bwd_ref(d_comb, ctx.split.comb_mix, 10, 1e-6f);
  mhc::MhcSplitMixesGrads sg = mhc::mhc_pre_split_mixes_bwd_ref(
      ag.mix_grad, d_post, comb_grad, ctx.norm.out, ctx.split.post_mix, scale,
      base, 4, md.pre_kw.post_mult_value);
  mhc::MhcPreNormFnGrads ng =
      mhc::mhc_pre_norm_fn_bwd_ref(sg.input_mixes_grad, r0, ctx.norm.fn_rounded,
                                   ctx.norm.mul, ctx.norm.sq, 1e-6f, manual);
  CHECK(compare_exact(shared, manual) == "");
  CHECK(compare_exact(g.fn_grad, ng.fn_grad) == "");
  CHECK(compare_exact(g.scale_grad, sg.mhc_scale_grad) == "");
  CHECK_FALSE(g.norm_weight_grad.has_value());

  // Without an installed buffer the contributions come back on their own;
  // with post's they sum to the shared total up to bf16 rounding.
  MhcResidualGradRegistry empty;
  MhcPreGrads own = mhc_pre_bwd_ref(*pre.ctx, d_li, d_post, d_comb, empty);
  REQUIRE(own.residual_grad.has_value());
  Vec total = values(shared), a = values(d_post_r),
      b = values(*own.residual_grad);
  for (size_t i = 0; i < total.size(); ++i)
    CHECK(total[i] == Approx(a[i] + b[i]).epsilon(2e-2).margin(2e-2));
  CHECK(compare_exact(own.fn_grad, g.fn_grad) == "");
}

TEST_CASE("mhc_post backward installs its residual gradient",
          "[ref][modeling]") {
  HostTensor r = bf16({kT, kMhc, kH}, randn(kT * kKd, 720));
  HostTensor x = bf16({kT, kH}, randn(kT * kH, 721));
  HostTensor post = f32({kT, kMhc, 1}, randn(kT * kMhc, 722));
  HostTensor comb = f32({kT, kMhc, kMhc}, randn(kT * 16, 723));
  HostTensor d_o = bf16({kT, kMhc, kH}, randn(kT * kKd, 724));
  MhcResidualGradRegistry reg;
  mhc::MhcPostGrads off = mhc_post_bwd_ref(d_o, x, r, post, comb, reg, false);
  CHECK(reg.size() == 0);
  mhc::MhcPostGrads on = mhc_post_bwd_ref(d_o, x, r, post, comb, reg);
  REQUIRE(reg.find(r).has_value());
  CHECK(reg.find(r)->raw() == on.residual_grad.raw()); // same storage
  CHECK(compare_exact(on.residual_grad, off.residual_grad) == "");
  CHECK(compare_exact(mhc_post_ref(x, r, post, comb),
                      mhc::mhc_post_ref(x, r, post, comb)) == "");
  // A second install replaces the first, as the original's attribute does.
  HostTensor other = HostTensor::zeros(DType::bf16, r.shape());
  reg.install(r, other);
  CHECK(reg.size() == 1);
  CHECK(reg.find(r)->raw() == other.raw());
  reg.erase(r);
  CHECK_FALSE(reg.find(r).has_value());
}

TEST_CASE("mhc_head backward uses a buffer only when one is installed",
          "[ref][modeling]") {
  Model md(730);
  HostTensor r = bf16({kT, kMhc, kH}, randn(kT * kKd, 731));
  HostTensor fn_head = f32({kMhc, kKd}, md.fn_head);
  HostTensor base_head = f32({kMhc}, md.base_head);
  HostTensor scalar = HostTensor::zeros(DType::f32, {});
  scalar.data<float>()[0] = 0.8f;
  MhcHeadKwargs kw = md.head_kw;
  kw.norm_weight = f32({kKd}, md.normw);
  MhcHeadOutput h1 = mhc_head_ref(r, fn_head, scalar, base_head, kw);
  MhcHeadOutput h2 = mhc_head_ref(r, fn_head, f32({1}, {0.8}), base_head, kw);
  CHECK(compare_exact(h1.out, h2.out) == "");
  HostTensor d_out = bf16({kT, kH}, randn(kT * kH, 732));

  MhcResidualGradRegistry none;
  MhcHeadGrads own = mhc_head_bwd_ref(h1.ctx, d_out, none);
  REQUIRE(own.residual_grad.has_value());
  CHECK(own.scale_grad.shape() == Shape{}); // the scalar's shape
  CHECK(own.fn_grad.shape() == Shape{kMhc, kKd});
  REQUIRE(own.norm_weight_grad.has_value());

  MhcResidualGradRegistry reg;
  Vec before = to_bf16(randn(kT * kKd, 733));
  HostTensor buf = bf16({kT, kMhc, kH}, before);
  reg.install(r, buf);
  MhcHeadGrads fused = mhc_head_bwd_ref(h2.ctx, d_out, reg);
  CHECK_FALSE(fused.residual_grad.has_value());
  CHECK(reg.size() == 0);
  CHECK(fused.scale_grad.shape() == Shape{1});
  CHECK(compare_exact(fused.fn_grad, own.fn_grad) == "");
  Vec after = values(buf), mine = values(*own.residual_grad);
  for (size_t i = 0; i < after.size(); ++i)
    CHECK(after[i] == Approx(before[i] + mine[i]).epsilon(2e-2).margin(2e-2));
}

TEST_CASE("mhc_pre without grad runs the big fuse and keeps norm_weight",
          "[ref][modeling]") {
  Model md(740);
  HostTensor r = bf16({3, kMhc, kH}, randn(3 * kKd, 741));
  HostTensor fn = f32({kMhc3, kKd}, md.fn), scale = f32({3}, md.scale),
             base = f32({kMhc3}, md.base);
  for (bool weighted : {false, true}) {
    MhcPreKwargs kw = md.pre_kw;
    if (weighted)
      kw.norm_weight = f32({kKd}, md.normw);
    MhcPreOutput train = mhc_pre_ref(r, fn, scale, base, kw, true);
    MhcPreOutput infer = mhc_pre_ref(r, fn, scale, base, kw, false);
    CHECK_FALSE(infer.ctx.has_value());
    CHECK(compare_exact(infer.layer_input, train.layer_input) == "");
    CHECK(compare_exact(infer.post_mix, train.post_mix) == "");
    CHECK(compare_exact(infer.comb_mix, train.comb_mix) == "");
    mhc::MhcBigFuseResult unweighted = mhc::mhc_pre_big_fuse_ref(
        r, fn, scale, base, kw.norm_eps, kw.pre_eps, kw.sinkhorn_eps,
        kw.post_mult_value, kw.sinkhorn_repeat);
    // The original's no-grad path would equal `unweighted` even with a
    // weight; ours differs exactly when a weight is given.
    CHECK((compare_exact(infer.comb_mix, unweighted.comb_mix) == "") ==
          !weighted);
  }
  // expand_from_embedding is expand_to_mhc.
  HostTensor e = bf16({3, kH}, randn(3 * kH, 742));
  CHECK(compare_exact(expand_from_embedding_ref(e),
                      mhc::expand_to_mhc_ref(e, 4)) == "");
}

TEST_CASE("mhc functional layer rejects bad arguments", "[ref][modeling]") {
  HostTensor r = HostTensor::zeros(DType::bf16, {2, 4, 8});
  HostTensor fn = HostTensor::zeros(DType::f32, {24, 32});
  HostTensor scale = HostTensor::zeros(DType::f32, {3});
  HostTensor base = HostTensor::zeros(DType::f32, {24});
  // mhc_mult disagrees with the residual's streams.
  MhcPreKwargs kw;
  kw.mhc_mult = 2;
  CHECK_USER_ERROR(mhc_pre_ref(r, fn, scale, base, kw),
                   "mhc_pre_ref: argument 'mhc_mult' is 2; requires the "
                   "residual's stream count 4 (residual shape (..., mhc, H))");
  HostTensor fh = HostTensor::zeros(DType::f32, {4, 32});
  HostTensor s1 = HostTensor::zeros(DType::f32, {1});
  HostTensor b4 = HostTensor::zeros(DType::f32, {4});
  // The head's fn already padded.
  CHECK_USER_ERROR(mhc_head_ref(r, fn, s1, b4),
                   "mhc_head_ref: argument 'fn' has shape [24, 32]; requires "
                   "[4, 32]");
  // A head scale of three values.
  CHECK_USER_ERROR(
      mhc_head_ref(r, fh, scale, b4),
      "mhc_head_ref: argument 'scale' has shape [3]; requires [1]");
  MhcHeadKwargs hk;
  hk.mhc_mult = 8;
  CHECK_USER_ERROR(mhc_head_ref(r, fh, s1, b4, hk),
                   "mhc_head_ref: argument 'mhc_mult' is 8; requires the "
                   "residual's stream count 4 (residual shape (..., mhc, H))");
  // Errors of the ops underneath name the op.
  CHECK_USER_ERROR(
      mhc_pre_ref(r, fn, scale, HostTensor::zeros(DType::f32, {4})),
      "mhc_pre_split_mixes_ref: argument 'mhc_base' has shape "
      "[4]; requires [24]");
}
