// cuda_math.cpp - cuda_expf's thread-local recorder and table. Arguments
// that are bf16 values (the low 16 bits zero: every argument of a bf16
// input's SwiGLU) take a direct table by their high 16 bits, others a hash
// map, so that a reference of 10^8 calls stays fast.
#include "common/cuda_math.h"

#include <bit>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace tilejit::ref {

namespace {

bool is_bf16(uint32_t bits) { return (bits & 0xffffu) == 0; }

struct Recorder {
  std::vector<bool> bf16 = std::vector<bool>(1u << 16);
  std::unordered_set<uint32_t> other;
};

struct Table {
  std::vector<uint32_t> bf16 = std::vector<uint32_t>(1u << 16);
  std::vector<bool> has_bf16 = std::vector<bool>(1u << 16);
  std::unordered_map<uint32_t, uint32_t> other;
  int64_t misses = 0;
};

thread_local Recorder *t_recorder = nullptr;
thread_local Table *t_table = nullptr;

} // namespace

float cuda_expf(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if (t_recorder) {
    if (is_bf16(bits))
      t_recorder->bf16[bits >> 16] = true;
    else
      t_recorder->other.insert(bits);
  }
  if (t_table) {
    if (is_bf16(bits)) {
      if (t_table->has_bf16[bits >> 16])
        return std::bit_cast<float>(t_table->bf16[bits >> 16]);
    } else if (auto it = t_table->other.find(bits);
               it != t_table->other.end()) {
      return std::bit_cast<float>(it->second);
    }
    ++t_table->misses;
  }
  return std::exp(x);
}

ExpfRecorder::ExpfRecorder() { t_recorder = new Recorder; }
ExpfRecorder::~ExpfRecorder() {
  delete t_recorder;
  t_recorder = nullptr;
}

std::vector<float> ExpfRecorder::arguments() const {
  std::vector<float> args;
  for (uint32_t hi = 0; hi < (1u << 16); ++hi)
    if (t_recorder->bf16[hi])
      args.push_back(std::bit_cast<float>(hi << 16));
  for (uint32_t bits : t_recorder->other)
    args.push_back(std::bit_cast<float>(bits));
  return args;
}

ExpfValues::ExpfValues(std::span<const float> args,
                       std::span<const float> values) {
  t_table = new Table;
  for (size_t i = 0; i < args.size() && i < values.size(); ++i) {
    const uint32_t bits = std::bit_cast<uint32_t>(args[i]);
    const uint32_t value = std::bit_cast<uint32_t>(values[i]);
    if (is_bf16(bits)) {
      t_table->bf16[bits >> 16] = value;
      t_table->has_bf16[bits >> 16] = true;
    } else {
      t_table->other[bits] = value;
    }
  }
}
ExpfValues::~ExpfValues() {
  delete t_table;
  t_table = nullptr;
}

int64_t ExpfValues::misses() const { return t_table->misses; }

} // namespace tilejit::ref
