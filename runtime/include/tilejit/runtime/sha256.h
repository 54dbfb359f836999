// sha256.h - SHA-256 of byte strings, as lowercase hex (cache keys, checksums).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tilejit::rt {

/// Incremental SHA-256 (FIPS 180-4).
///
///   Sha256 h; h.update("abc"); std::string hex = h.hex();
class Sha256 {
public:
  Sha256();
  void update(const void *data, std::size_t bytes);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// Finishes and returns the digest; the object must not be updated after.
  std::array<uint8_t, 32> digest();
  std::string hex();

private:
  void block(const uint8_t *p);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  uint64_t total_ = 0;
};

/// Hex SHA-256 of one byte string.
std::string sha256_hex(std::string_view bytes);

} // namespace tilejit::rt
