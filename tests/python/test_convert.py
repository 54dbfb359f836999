#!/usr/bin/env python3
"""test_convert.py - Cross-checks the exact conversions of
kernels/common/convert.h against an independent implementation.

    test_convert.py PATH/TO/tilejit_convert_dump

Generates a few million seeded float32 values (special patterns, every bf16
and fp16 code, every rounding tie of every format with its float32
neighbours, subnormals, huge values, NaN/inf, random bit patterns and random
magnitudes), runs the dumper on them and compares each result with numpy and
ml_dtypes (bfloat16, float8_e4m3fn, float8_e5m2, float4_e2m1fn, numpy
float16). fp16 round-toward-zero and E5M6 have no ml_dtypes counterpart: they
are checked against bit-level Python models written from
shared/specs/quant_transpose.md §2.4, plus value-level checks of those models.
The decodes of all codes (2^8 fp8 and ue8m0, 2^4 fp4, 2^16 bf16 and fp16,
2^12 E5M6) are compared too. NaN results are compared by NaN-ness only.

Prints one line per check and a closing line
`convert cross-check: N passed, M failed`; exits 1 when M > 0, 2 on a usage
or tool error. Plain Python 3 with numpy and ml_dtypes; no pytest.
"""
import os
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

F32, U8, U16, U32 = np.float32, np.uint8, np.uint16, np.uint32
SEED = 20260423

passed = 0
failed = 0


def report(name, ok, inputs=None, got=None, want=None):
    """Counts one element comparison per entry of `ok`; prints a summary line
    and, on a mismatch, the first few offending inputs."""
    global passed, failed
    ok = np.asarray(ok, dtype=bool)
    bad = np.flatnonzero(~ok)
    passed += int(ok.size - bad.size)
    failed += int(bad.size)
    status = "ok" if bad.size == 0 else f"{bad.size} MISMATCHES"
    print(f"{name}: {ok.size} compared, {status}")
    for i in bad[:8]:
        line = f"    index {i}"
        if inputs is not None:
            line += f": input {float(inputs[i])!r} (0x{inputs.view(U32)[i]:08x})"
        if got is not None:
            line += f", got 0x{int(got[i]):x}"
        if want is not None:
            line += f", want 0x{int(want[i]):x}"
        print(line)


# --- inputs ---------------------------------------------------------------


def from_bits(bits):
    return np.asarray(bits, dtype=U32).view(F32)


def ties_and_neighbours(grid):
    """Given the non-negative finite values of a format (float64, sorted,
    including the first value past the largest finite one as the overflow
    boundary), returns float32 inputs: every grid value, every midpoint
    between neighbours (a rounding tie; exact in float32 for all our formats)
    and the float32 values just below and above each, with both signs."""
    grid = np.unique(np.asarray(grid, dtype=np.float64))
    mids = (grid[:-1] + grid[1:]) / 2
    pts = np.concatenate([grid, mids]).astype(F32)
    assert np.array_equal(pts.astype(np.float64), np.concatenate([grid, mids]))
    pts = np.concatenate([pts, np.nextafter(pts, F32(np.inf)),
                          np.nextafter(pts, F32(-np.inf))])
    return np.concatenate([pts, -pts])


def format_grid(dtype, count):
    """The non-negative finite values of an ml_dtypes/numpy narrow type,
    decoded from its codes [0, count) (the sign bit clear)."""
    codes = np.arange(count, dtype=U8 if np.dtype(dtype).itemsize == 1 else U16)
    vals = codes.view(dtype).astype(np.float64)
    return vals[np.isfinite(vals) & (vals >= 0)]


def make_inputs():
    rng = np.random.default_rng(SEED)
    parts = []
    # Special bit patterns: zeros, infinities, NaNs (quiet, signalling, with
    # payloads, negative), float32 extremes and subnormal boundaries.
    special = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
               0xFFC00000, 0x7F800001, 0xFF800001, 0x7FA00000, 0x7FFFFFFF,
               0xFFFFFFFF, 0x7FC00001, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000,
               0x80800000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,
               0x00400000, 0x3F800000, 0xBF800000]
    parts.append(from_bits(special))
    # Every bf16 code as float32, its rounding tie towards the next code, and
    # the tie's float32 neighbours (low 16 bits 0x0000, 0x8000, 0x7FFF,
    # 0x8001, 0xFFFF).
    hi = np.arange(65536, dtype=U32) << 16
    for low in (0x0000, 0x8000, 0x7FFF, 0x8001, 0xFFFF):
        parts.append(from_bits(hi | low))
    # Every fp16 code as float32 (numpy's own, exact, decode).
    parts.append(np.arange(65536, dtype=U16).view(np.float16).astype(F32))
    # Ties and neighbours of each format; the last grid point is the first
    # value past the largest finite one, where saturation or overflow starts.
    parts.append(ties_and_neighbours(
        np.append(format_grid(np.float16, 0x8000), 65536.0)))
    parts.append(ties_and_neighbours(
        np.append(format_grid(ml_dtypes.float8_e4m3fn, 0x80), 480.0)))
    parts.append(ties_and_neighbours(
        np.append(format_grid(ml_dtypes.float8_e5m2, 0x80), 65536.0)))
    parts.append(ties_and_neighbours(
        np.append(format_grid(ml_dtypes.float4_e2m1fn, 8), 8.0)))
    e5m6_grid = (np.arange(0x7C0, dtype=U16) << 4).view(np.float16)
    parts.append(ties_and_neighbours(
        np.append(e5m6_grid.astype(np.float64), 65536.0)))
    # Random float32 bit patterns: every exponent, NaN payloads, subnormals.
    parts.append(rng.integers(0, 2**32, size=1_000_000, dtype=np.uint64)
                 .astype(U32).view(F32))
    # Random magnitudes, log-uniform over the formats' ranges, random signs.
    def log_uniform(n, lo, hi):
        mag = np.exp2(rng.uniform(lo, hi, size=n))
        sign = np.where(rng.integers(0, 2, size=n) == 1, -1.0, 1.0)
        return (sign * mag).astype(F32)
    parts.append(log_uniform(1_000_000, -30, 20))   # everything
    parts.append(log_uniform(400_000, -26, -13))    # fp16 / E5M6 subnormals
    parts.append(log_uniform(300_000, -11, 10))     # e4m3 and e2m1
    parts.append(log_uniform(300_000, 14, 17))      # fp16/e5m2/E5M6 overflow
    # Random values with float32 low bits exactly at a rounding boundary of
    # each format width (mantissa tails 100..0 with a random head).
    heads = rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(U32)
    for drop in (13, 17, 20, 21, 22):   # fp16, E5M6, e4m3, e5m2, e2m1 tails
        parts.append(from_bits((heads & ~np.uint32((1 << drop) - 1))
                               | np.uint32(1 << (drop - 1))))
    return np.concatenate(parts).astype(F32)


# --- independent models ---------------------------------------------------


def f16_rz_model(x):
    """fp16 bits of x rounded toward zero (CUDA __float2half_rz), from the
    float32 fields: normal fp16 range keeps the top 10 mantissa bits, the
    subnormal range shifts the 24-bit significand, below 2^-24 is +-0, finite
    overflow is +-65504 (0x7BFF), inf stays inf; NaN gives 0x7E00 (only its
    NaN-ness is compared)."""
    b = x.view(U32).astype(np.int64)
    sign = (b >> 31) << 15
    exp = (b >> 23) & 0xFF
    man = b & 0x7FFFFF
    e = exp - 127
    out = np.zeros_like(b)
    finite = exp != 255
    normal = finite & (exp != 0) & (e >= -14) & (e <= 15)
    out[normal] = ((e[normal] + 15) << 10) | (man[normal] >> 13)
    out[finite & (e > 15)] = 0x7BFF
    sub = finite & (exp != 0) & (e >= -24) & (e <= -15)
    out[sub] = (man[sub] | 0x800000) >> (-(e[sub] + 1))
    out[(exp == 255) & (man == 0)] = 0x7C00
    out[(exp == 255) & (man != 0)] = 0x7E00
    return (out | sign).astype(U16)


def e5m6_model(x):
    """Spec §2.4, step by step: code = rz16 >> 4; round up when
    (code & 1) + (bits32 & 0x1FFFF) > 0x10000; keep 12 bits."""
    code = f16_rz_model(x).astype(np.int64) >> 4
    rem = x.view(U32).astype(np.int64) & 0x1FFFF
    code = np.where((code & 1) + rem > 0x10000, code + 1, code)
    return (code & 0xFFF).astype(U16)


def decode_f16(bits):
    return np.asarray(bits, dtype=U16).view(np.float16).astype(np.float64)


def same_code(got, want, got_is_nan, want_is_nan):
    """Codes equal, or both NaN."""
    return np.where(want_is_nan | got_is_nan, want_is_nan & got_is_nan,
                    got == want)


# --- checks ---------------------------------------------------------------


def check_encodes(x, out):
    # numpy warns about NaN/overflow in casts, which are the point here.
    np.seterr(all="ignore")
    nan_in = np.isnan(x)
    load = lambda name, dt: np.fromfile(os.path.join(out, name), dtype=dt)

    # bf16: ml_dtypes' cast is RNE.
    got = load("enc_bf16.u16", U16)
    want = x.astype(ml_dtypes.bfloat16).view(U16)
    report("f32 -> bf16 vs ml_dtypes.bfloat16",
           same_code(got, want, np.isnan(got.view(ml_dtypes.bfloat16)), nan_in),
           x, got, want)

    # fp16: numpy's float32 -> float16 cast is RNE with subnormals and
    # overflow to inf, as required.
    got = load("enc_f16.u16", U16)
    want = x.astype(np.float16).view(U16)
    report("f32 -> f16 vs numpy.float16",
           same_code(got, want, np.isnan(got.view(np.float16)), nan_in),
           x, got, want)

    # fp16 RZ: the bit model, and a value-level check of the model itself
    # (|rz| <= |x| < the next fp16 above |rz|, for finite x).
    got = load("enc_f16_rz.u16", U16)
    want = f16_rz_model(x)
    report("f32 -> f16 (round toward zero) vs bit model",
           same_code(got, want, np.isnan(got.view(np.float16)), nan_in),
           x, got, want)
    fin = np.isfinite(x)
    ax = np.abs(x[fin].astype(np.float64))
    r = np.abs(want[fin].view(np.float16))
    up = np.nextafter(r, np.float16(np.inf)).astype(np.float64)
    report("f16 RZ model: |rz| <= |x| < next fp16",
           (r.astype(np.float64) <= ax) & (ax < up))

    # e4m3: the spec's saturation (torch reference: clamp to +-448, then
    # cast). ml_dtypes alone would turn out-of-range values into NaN, so the
    # clamp is applied first; NaN stays NaN through np.clip.
    got = load("enc_e4m3.u8", U8)
    want = np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(U8)
    report("f32 -> e4m3 (saturating) vs clamp(+-448) + ml_dtypes",
           same_code(got, want, np.isnan(got.view(ml_dtypes.float8_e4m3fn)),
                     nan_in), x, got, want)

    # e5m2 without saturation: ml_dtypes' cast overflows to inf, as ours.
    got = load("enc_e5m2.u8", U8)
    want = x.astype(ml_dtypes.float8_e5m2).view(U8)
    report("f32 -> e5m2 vs ml_dtypes.float8_e5m2",
           same_code(got, want, np.isnan(got.view(ml_dtypes.float8_e5m2)),
                     nan_in), x, got, want)
    # e5m2 with saturate=true: clamp to +-57344 first (inf clamps too).
    got = load("enc_e5m2_sat.u8", U8)
    want = np.clip(x, -57344, 57344).astype(ml_dtypes.float8_e5m2).view(U8)
    report("f32 -> e5m2 (saturating) vs clamp(+-57344) + ml_dtypes",
           same_code(got, want, np.isnan(got.view(ml_dtypes.float8_e5m2)),
                     nan_in), x, got, want)

    # e2m1: RNE saturating to +-6 (spec §2.2), so clamp before ml_dtypes'
    # cast. The format has no NaN: the spec's reference maps NaN to code 7 or
    # 15 by sign, where ml_dtypes gives +-0, so NaN inputs are compared with
    # the spec's rule instead.
    got = load("enc_e2m1.u8", U8)
    want = np.clip(x, -6, 6).astype(ml_dtypes.float4_e2m1fn).view(U8) & 0xF
    nan_code = np.where(np.signbit(x), 15, 7).astype(U8)
    want = np.where(nan_in, nan_code, want)
    report("f32 -> e2m1 (saturating) vs clamp(+-6) + ml_dtypes",
           got == want, x, got, want)

    # E5M6: the spec's steps on the RZ bit model, all inputs (NaN by
    # NaN-ness of the decoded code).
    got = load("enc_e5m6.u16", U16)
    want = e5m6_model(x)
    report("f32 -> e5m6 vs spec §2.4 model",
           same_code(got, want, np.isnan(decode_f16(got << 4)), nan_in),
           x, got, want)
    # And its meaning in the fp16-normal range: round to nearest even at 6
    # mantissa bits, overflowing to inf from 65280 (the tie above 65024) on.
    xs = x.astype(np.float64)
    ax = np.abs(xs)
    sel = np.isfinite(xs) & (ax >= 2.0**-14) & (ax < 2.0**16)
    m, e = np.frexp(ax[sel])            # ax = m * 2^e, m in [0.5, 1)
    quantum = np.ldexp(1.0, e - 1 - 6)
    value = np.rint(ax[sel] / quantum) * quantum   # np.rint: ties to even
    value = np.where(value >= 2.0**16, np.inf, value)
    report("e5m6 in the fp16-normal range is RNE at 6 mantissa bits",
           decode_f16(got[sel] << 4) == np.copysign(value, xs[sel]),
           x[sel], got[sel])


def check_decodes(out):
    load = lambda name: np.fromfile(os.path.join(out, name), dtype=F32)

    def compare(name, got, want):
        want = np.asarray(want, dtype=F32)
        both_nan = np.isnan(got) & np.isnan(want)
        same = got.view(U32) == want.view(U32)   # bit-exact, -0 included
        report(name, both_nan | same, None, got.view(U32), want.view(U32))

    compare("decode all 2^16 bf16 codes vs ml_dtypes", load("dec_bf16.f32"),
            np.arange(65536, dtype=U16).view(ml_dtypes.bfloat16).astype(F32))
    compare("decode all 2^16 fp16 codes vs numpy", load("dec_f16.f32"),
            np.arange(65536, dtype=U16).view(np.float16).astype(F32))
    compare("decode all 2^8 e4m3 codes vs ml_dtypes", load("dec_e4m3.f32"),
            np.arange(256, dtype=U8).view(ml_dtypes.float8_e4m3fn).astype(F32))
    compare("decode all 2^8 e5m2 codes vs ml_dtypes", load("dec_e5m2.f32"),
            np.arange(256, dtype=U8).view(ml_dtypes.float8_e5m2).astype(F32))
    compare("decode all 2^4 e2m1 codes vs ml_dtypes", load("dec_e2m1.f32"),
            np.arange(16, dtype=U8).view(ml_dtypes.float4_e2m1fn).astype(F32))
    # E5M6: (code << 4) read as fp16 (spec §2.4).
    compare("decode all 2^12 e5m6 codes vs fp16 of code << 4",
            load("dec_e5m6.f32"),
            (np.arange(4096, dtype=U16) << 4).view(np.float16).astype(F32))
    # ue8m0: 2^(b-127), except that b = 0 is +0.0 (the float32 with bits
    # b << 23, spec §2.3); b = 255 overflows float32 to inf.
    b = np.arange(256)
    want = np.where(b == 0, 0.0, np.ldexp(1.0, b - 127)).astype(F32)
    compare("decode all 2^8 ue8m0 codes vs 2^(b-127)", load("dec_ue8m0.f32"),
            want)


def main():
    if len(sys.argv) != 2:
        print("usage: test_convert.py PATH/TO/tilejit_convert_dump",
              file=sys.stderr)
        return 2
    x = make_inputs()
    print(f"{x.size} float32 inputs (seed {SEED})")
    with tempfile.TemporaryDirectory(prefix="tilejit_convert_") as tmp:
        path = os.path.join(tmp, "input.f32")
        x.tofile(path)
        run = subprocess.run([sys.argv[1], path, tmp])
        if run.returncode != 0:
            print(f"tilejit_convert_dump failed with status {run.returncode}",
                  file=sys.stderr)
            return 2
        check_encodes(x, tmp)
        check_decodes(tmp)
    print(f"convert cross-check: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
