// cuda_math.cpp - cuda_log1pf, and cuda_expf's thread-local recorder and table.
// Arguments that are bf16 values (the low 16 bits zero: every argument of a
// bf16 input's SwiGLU) take a direct table by their high 16 bits, others an
// open-addressing hash table of 32-bit keys, so that a reference of 10^8
// calls with 10^8 distinct arguments (a dequantized e4m3 x times f32 scales)
// stays fast (std::unordered_set took 40 s for 7 x 10^7).
#include "common/cuda_math.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace tilejit::ref {

namespace {

bool is_bf16(uint32_t bits) { return (bits & 0xffffu) == 0; }

/// A map from 32-bit keys to 32-bit values, linear probing, at most half
/// full. The empty-slot marker is a key of its own (held aside).
class FlatMap {
public:
  /// The value slot of `key`, inserted (as 0) when new.
  uint32_t &operator[](uint32_t key) {
    if (key == kEmpty) {
      has_empty_ = true;
      return empty_value_;
    }
    if (2 * (count_ + 1) > keys_.size())
      grow();
    size_t i = slot(key);
    if (keys_[i] == kEmpty) {
      keys_[i] = key;
      ++count_;
    }
    return values_[i];
  }
  /// The value of `key`, or nullptr.
  const uint32_t *find(uint32_t key) const {
    if (key == kEmpty)
      return has_empty_ ? &empty_value_ : nullptr;
    if (keys_.empty())
      return nullptr;
    const size_t i = slot(key);
    return keys_[i] == key ? &values_[i] : nullptr;
  }
  template <class Fn> void for_each_key(Fn &&fn) const {
    if (has_empty_)
      fn(kEmpty);
    for (uint32_t k : keys_)
      if (k != kEmpty)
        fn(k);
  }

private:
  static constexpr uint32_t kEmpty = 0xffffffffu;
  /// Where `key` is or would go.
  size_t slot(uint32_t key) const {
    // Fibonacci hashing: the product's high bits, which mix every bit of
    // the key (its low bits would depend only on the key's low bits: many
    // floats have trailing zeros).
    const size_t mask = keys_.size() - 1;
    size_t i = static_cast<uint32_t>(key * 0x9e3779b1u) >> shift_;
    while (keys_[i] != kEmpty && keys_[i] != key)
      i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<uint32_t> keys = std::move(keys_), values = std::move(values_);
    keys_.assign(std::max<size_t>(1024, 2 * keys.size()), kEmpty);
    values_.assign(keys_.size(), 0);
    shift_ = 32 - std::countr_zero(keys_.size());
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != kEmpty) {
        const size_t j = slot(keys[i]);
        keys_[j] = keys[i];
        values_[j] = values[i];
      }
  }
  std::vector<uint32_t> keys_, values_;
  int shift_ = 32; ///< 32 - log2(slots)
  size_t count_ = 0;
  bool has_empty_ = false;
  uint32_t empty_value_ = 0;
};

struct Recorder {
  std::vector<bool> bf16 = std::vector<bool>(1u << 16);
  FlatMap other; // values unused
};

struct Table {
  std::vector<uint32_t> bf16 = std::vector<uint32_t>(1u << 16);
  std::vector<bool> has_bf16 = std::vector<bool>(1u << 16);
  FlatMap other;
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
      t_recorder->other[bits];
  }
  if (t_table) {
    if (is_bf16(bits)) {
      if (t_table->has_bf16[bits >> 16])
        return std::bit_cast<float>(t_table->bf16[bits >> 16]);
    } else if (const uint32_t *value = t_table->other.find(bits)) {
      return std::bit_cast<float>(*value);
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
  t_recorder->other.for_each_key(
      [&](uint32_t bits) { args.push_back(std::bit_cast<float>(bits)); });
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

/// 1 + x rounded toward zero (PTX add.rz.f32): the sum in double, exact for
/// every x that matters here (|x| < 2^53 or x >= 2^-29 in magnitude), then
/// truncated; a negative x too small for the double sum gives the float
/// below 1.
static float add_one_toward_zero(float x) {
  const double exact = 1.0 + static_cast<double>(x);
  if (x < 0.0f && exact == 1.0)
    return std::nextafter(1.0f, 0.0f);
  float f = static_cast<float>(exact);
  if (std::fabs(static_cast<double>(f)) > std::fabs(exact))
    f = std::nextafter(f, 0.0f);
  return f;
}

float cuda_log1pf(float x) {
  auto bits = [](float f) { return std::bit_cast<uint32_t>(f); };
  auto from = [](uint32_t b) { return std::bit_cast<float>(b); };
  const uint32_t ix = bits(x);
  const uint32_t ebits =
      (bits(add_one_toward_zero(x)) - 0x3f400000u) & 0xff800000u;
  const float xs = from(ix - ebits);
  const float four = from(0x40800000u - ebits);
  const float t = std::fmaf(0.25f, four, -1.0f) + xs;
  const float e =
      static_cast<float>(static_cast<int32_t>(ebits)) * from(0x34000000u);
  float p = from(0xbd39bf78u);
  for (uint32_t c : {0x3dd80012u, 0xbe0778e0u, 0x3e146475u, 0xbe2a68ddu,
                     0x3e4caf9eu, 0xbe800042u, 0x3eaaaae6u, 0xbf000000u})
    p = std::fmaf(p, t, from(c));
  float y = std::fmaf(t * p, t, t);
  y = std::fmaf(e, from(0x3f317218u), y);
  if (ix < 0x7f800000u) // a finite x >= +0
    return y;
  if (x == 0.0f) // -0
    return -0.0f;
  // -1 <= x < 0 keeps y; x < -1, infinities and NaNs: fma(x, inf, inf).
  const float inf = std::numeric_limits<float>::infinity();
  return static_cast<int32_t>(ix) < static_cast<int32_t>(0xbf800001u)
             ? y
             : std::fmaf(x, inf, inf);
}

} // namespace tilejit::ref
