// bench_tma_transpose.h - batched_transpose with its tiles through a TMA
// pipeline against the op's kernel (bench_tma_transpose.cpp).
#pragma once

/// Prints the table; false when a variant's output differs from the op's.
bool bench_tma_transpose();
