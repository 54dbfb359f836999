// bench_fused_gemm.h - The gemm with a fused epilogue against the plain gemm
// (bench_fused_gemm.cpp).
#pragma once

/// Prints the table; false when a sampled element was wrong.
bool bench_fused_gemm();
