// spec_key.h - The specialisation key of a compiled kernel: every input that
// changes its code, as named fields, with a canonical text and a digest.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilejit::rt {

/// Fields are (name, value) pairs: the op, its static parameters, dtypes,
/// shape classes, the target and a fingerprint of the compiler. The
/// canonical text lists them sorted by name, one `name=value` a line, so
/// the same inputs give the same key in every process.
///
///   SpecKey k("scale_copy"); k.add("dtype", "f32"); k.digest();
class SpecKey {
public:
  SpecKey() = default;
  explicit SpecKey(std::string op) : op_(std::move(op)) {}

  /// Adds or replaces a field. Names and values may not contain '\n' or
  /// '=' in names (UserError).
  SpecKey &add(std::string_view name, std::string_view value);

  const std::string &op() const { return op_; }
  /// Sorted by name.
  const std::vector<std::pair<std::string, std::string>> &fields() const {
    return fields_;
  }
  /// Value of a field, or "" if absent.
  std::string get(std::string_view name) const;

  /// `op=<op>\n` then `name=value\n` per field, sorted by name.
  std::string canonical() const;
  /// Lowercase hex SHA-256 of canonical().
  std::string digest() const;

  /// Parses canonical(); UserError on malformed text.
  static SpecKey parse(std::string_view canonical);

  friend bool operator==(const SpecKey &a, const SpecKey &b) {
    return a.op_ == b.op_ && a.fields_ == b.fields_;
  }

private:
  std::string op_;
  std::vector<std::pair<std::string, std::string>> fields_;
};

/// One line per field where `a` and `b` differ: `name: a-value -> b-value`
/// (`<absent>` for a missing field); empty when equal.
std::vector<std::string> key_differences(const SpecKey &a, const SpecKey &b);

} // namespace tilejit::rt
