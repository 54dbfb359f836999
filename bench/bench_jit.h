// bench_jit.h - JIT figures of the benchmark (bench_jit.cpp).
#pragma once

void bench_cold_compile(bool with_driver);
void bench_first_call(const char *self);
int first_call_child();
void bench_dispatch();
