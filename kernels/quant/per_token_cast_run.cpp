// per_token_cast_run.cpp - Runs per_token_cast on the GPU with seeded normal
// inputs and checks data and scales bytewise against the CPU reference;
// shared by the CLI, the GPU tests and the benchmark.
#include "quant/per_token_cast_run.h"
#include "quant/per_token_cast.h"
#include "quant/reference.h"
#include "registry.h"

#include "common/convert.h"
#include "common/rotation.h"

#include "tilejit/error.h"
#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/stream.h"
#include "tilejit/runtime/timer.h"

#include <fmt/format.h>

#include <cstring>
#include <random>

namespace tilejit::ops {

namespace {

struct PerTokenCastArgs {
  int64_t m, k, group;
  DType dtype;
  bool col_major, round_sf, packed;
};

PerTokenCastArgs parse(const OpArgs &args) {
  constexpr std::string_view op = "per_token_cast";
  PerTokenCastArgs a;
  a.dtype = args.dtype.value_or(DType::bf16);
  if (a.dtype != DType::bf16 && a.dtype != DType::f32)
    throw UserError(fmt::format("{}: --dtype {} is not supported; requires "
                                "bf16 or f32",
                                op, name_of(a.dtype)));
  std::vector<int64_t> shape =
      args.shape.empty() ? std::vector<int64_t>{8064, 7168} : args.shape;
  if (shape.size() != 2)
    throw UserError(fmt::format("{}: --shape has {} dimensions; requires 2 "
                                "(MxK)",
                                op, shape.size()));
  a.m = shape[0];
  a.k = shape[1];
  a.group = static_cast<int64_t>(args.number(op, "num_per_channels", 128));
  quant::check_num_per_channels(a.group, a.k);
  a.packed = args.number(op, "use_packed_ue8m0", 0) != 0;
  a.col_major = args.number(op, "use_tma_aligned_col_major_sf", a.packed) != 0;
  a.round_sf = args.number(op, "round_sf", a.packed) != 0;
  if (a.packed && (!a.col_major || !a.round_sf))
    throw UserError(fmt::format("{}: argument 'use_packed_ue8m0' is true; "
                                "requires use_tma_aligned_col_major_sf and "
                                "round_sf",
                                op));
  auto fmt_it = args.set.find("fmt");
  if (fmt_it != args.set.end() && fmt_it->second != "e4m3")
    throw UserError(fmt::format("{}: --set fmt={} is not supported; requires "
                                "e4m3",
                                op, fmt_it->second));
  return a;
}

quant::PerTokenCastSpec spec_for(const OpArgs &args) {
  PerTokenCastArgs a = parse(args);
  quant::PerTokenCastSpec spec;
  spec.in_dtype = a.dtype;
  spec.round_sf = a.round_sf;
  spec.sf_layout = a.packed      ? quant::SfLayout::packed_ue8m0
                   : a.col_major ? quant::SfLayout::col_major
                                 : quant::SfLayout::row_major;
  spec = quant::per_token_cast_tiling(spec, a.m, a.k, a.group);
  int64_t elt = static_cast<int64_t>(size_of(a.dtype));
  // As the host entry does for contiguous rows.
  const int64_t vector_bytes = spec.vector_bytes ? spec.vector_bytes : 16;
  spec.vector_bytes =
      (a.k * elt) % vector_bytes == 0 ? static_cast<int32_t>(vector_bytes) : 0;
  return spec;
}

} // namespace

Kernel build_per_token_cast(const OpArgs &args) {
  return quant::per_token_cast_kernel(spec_for(args));
}

rt::SpecKey key_per_token_cast(const OpArgs &args) {
  return quant::per_token_cast_key(spec_for(args));
}

/// Bytes of the int32 packed scales whose group is past the last one hold
/// garbage (the spec's clear_unused_sf): zero them.
static void clear_unused_sf(ref::HostTensor &sf, int64_t groups) {
  for (int64_t m = 0; m < sf.size(0); ++m)
    for (int64_t w = 0; w < sf.size(1); ++w)
      for (int64_t j = 0; j < 4; ++j)
        if (4 * w + j >= groups)
          reinterpret_cast<uint8_t *>(&sf.at<int32_t>({m, w}))[j] = 0;
}

struct PerTokenCastRun::State {
  PerTokenCastCase c;
  std::vector<std::byte> host; ///< x, rows of row_stride elements
  quant::QuantTensor expected;
  int64_t sf_elems = 0;
  rt::DeviceBuffer dx, dout, dsf;
  rt::TensorView vx, vout, vsf;
};

PerTokenCastRun::PerTokenCastRun(const PerTokenCastCase &c)
    : PerTokenCastRun(prepare(c)) {
  upload();
}

PerTokenCastRun::PerTokenCastRun(std::unique_ptr<State> state)
    : s_(std::move(state)) {}

PerTokenCastRun::PerTokenCastRun(PerTokenCastRun &&) noexcept = default;

PerTokenCastRun PerTokenCastRun::prepare(const PerTokenCastCase &c) {
  PerTokenCastRun run(std::make_unique<State>());
  State *s_ = run.s_.get();
  s_->c = c;
  const int64_t row_stride = c.row_stride ? c.row_stride : c.k;
  const int64_t shape[2] = {c.m, c.k}, strides[2] = {row_stride, 1};
  // Whole rows of row_stride elements: the padding is random too.
  const int64_t x_elems = c.m * row_stride;
  const size_t elt = size_of(c.dtype);
  std::vector<std::byte> &host = s_->host;
  host.resize(static_cast<size_t>(std::max<int64_t>(x_elems, 1)) * elt);
  std::mt19937_64 gen(c.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < x_elems; ++i) {
    float v = normal(gen);
    if (c.dtype == DType::bf16) {
      uint16_t b = ref::f32_to_bf16(v);
      std::memcpy(&host[static_cast<size_t>(i) * 2], &b, 2);
    } else {
      std::memcpy(&host[static_cast<size_t>(i) * 4], &v, 4);
    }
  }
  ref::HostTensor x =
      ref::HostTensor::view(host.data(), c.dtype, shape, strides);
  s_->expected = quant::per_token_cast_ref(x, "e4m3", c.group, std::nullopt,
                                           c.col_major, c.round_sf, c.packed);
  // The scales' storage as the reference lays it out (strides included).
  const ref::HostTensor &esf = s_->expected.sf;
  s_->sf_elems = 1;
  for (int d = 0; d < esf.rank(); ++d)
    s_->sf_elems += (esf.size(d) - 1) * esf.stride(d);
  return run;
}

void PerTokenCastRun::upload() {
  const PerTokenCastCase &c = s_->c;
  const ref::HostTensor &esf = s_->expected.sf;
  const std::vector<std::byte> &host = s_->host;
  const int64_t row_stride = c.row_stride ? c.row_stride : c.k;
  const int64_t shape[2] = {c.m, c.k}, strides[2] = {row_stride, 1};
  s_->dx = rt::DeviceBuffer(host.size());
  s_->dx.upload(host.data(), host.size());
  s_->dout =
      rt::DeviceBuffer(static_cast<size_t>(std::max<int64_t>(c.m * c.k, 1)));
  s_->dsf = rt::DeviceBuffer(
      static_cast<size_t>(std::max<int64_t>(s_->sf_elems, 1)) * 4);
  s_->dout.fill_zero();
  s_->dsf.fill_zero();
  s_->vx = rt::TensorView::strided(s_->dx.ptr(), c.dtype, shape, strides);
  s_->vout = rt::TensorView::contiguous(s_->dout.ptr(), DType::e4m3, shape);
  s_->vsf = rt::TensorView::strided(s_->dsf.ptr(), esf.dtype(), esf.shape(),
                                    esf.strides());
}

PerTokenCastRun::~PerTokenCastRun() = default;

void PerTokenCastRun::call(CUstream stream, const Rotation *rotation,
                           int set) const {
  auto at = [&](const rt::TensorView &v) {
    return rotation ? rotation->at(v, set) : v;
  };
  quant::per_token_cast(at(s_->vx), "e4m3", s_->c.group, at(s_->vout),
                        at(s_->vsf), s_->c.col_major, s_->c.round_sf,
                        s_->c.packed, stream);
}

Rotation PerTokenCastRun::rotation(double footprint) const {
  return Rotation({&s_->dx, &s_->dout, &s_->dsf}, footprint);
}

std::string PerTokenCastRun::check() const {
  const PerTokenCastCase &c = s_->c;
  const int64_t shape[2] = {c.m, c.k};
  rt::synchronize(nullptr);
  ref::HostTensor got = ref::HostTensor::zeros(DType::e4m3, shape);
  if (c.m * c.k > 0)
    s_->dout.download(got.raw(), static_cast<size_t>(c.m * c.k));
  const ref::HostTensor &esf = s_->expected.sf;
  ref::HostTensor got_sf =
      ref::HostTensor::zeros_strided(esf.dtype(), esf.shape(), esf.strides());
  if (esf.numel() > 0)
    s_->dsf.download(got_sf.raw(), static_cast<size_t>(s_->sf_elems) * 4);
  if (c.packed)
    clear_unused_sf(got_sf, (c.k + c.group - 1) / c.group);
  std::string diff = ref::compare_exact(got, s_->expected.data);
  if (!diff.empty())
    return "out: " + diff;
  diff = ref::compare_exact(got_sf, esf);
  return diff.empty() ? "" : "out_sf: " + diff;
}

double PerTokenCastRun::bytes() const {
  const PerTokenCastCase &c = s_->c;
  return static_cast<double>(c.m * c.k) * (size_of(c.dtype) + 1) +
         static_cast<double>(s_->expected.sf.numel()) * 4;
}

RunResult run_per_token_cast(const OpArgs &args, const RunOptions &options) {
  PerTokenCastArgs a = parse(args);
  PerTokenCastCase c{a.dtype,     a.m,        a.k,      0,           a.group,
                     a.col_major, a.round_sf, a.packed, options.seed};
  PerTokenCastRun run(c);
  run.call();
  RunResult r;
  r.shape = fmt::format("{}x{} {} group {}{}{}{}", a.m, a.k, name_of(a.dtype),
                        a.group, a.round_sf ? " round_sf" : "",
                        a.col_major && !a.packed ? " col_major" : "",
                        a.packed ? " packed_ue8m0" : "");
  r.bytes = run.bytes();
  std::string diff = run.check();
  r.passed = diff.empty();
  r.check = r.passed ? fmt::format("out and out_sf bitwise equal to CPU "
                                   "reference ({} elements)",
                                   a.m * a.k)
                     : diff;
  if (options.iters > 0 && a.m * a.k > 0) {
    const Rotation rotation = run.rotation(r.bytes);
    r.ms = rt::time_graph_ms(
        [&](CUstream s, int call) { run.call(s, &rotation, call); },
        options.warmup, options.iters);
    r.copy_ms = copy_roofline_ms(r.bytes, options);
  }
  return r;
}

} // namespace tilejit::ops
