// spec_key.cpp - Canonical text, digest, parsing and comparison of keys.
#include "tilejit/runtime/spec_key.h"

#include "tilejit/error.h"
#include "tilejit/runtime/sha256.h"

#include <algorithm>
#include <fmt/format.h>

namespace tilejit::rt {

SpecKey &SpecKey::add(std::string_view name, std::string_view value) {
  if (name.empty() || name.find_first_of("=\n") != std::string_view::npos ||
      value.find('\n') != std::string_view::npos || name == "op")
    throw UserError(fmt::format("SpecKey: field '{}' = '{}' is malformed; "
                                "names are non-empty, not 'op', without '=' "
                                "or newlines, values without newlines",
                                name, value));
  auto it = std::lower_bound(
      fields_.begin(), fields_.end(), name,
      [](const auto &field, std::string_view n) { return field.first < n; });
  if (it != fields_.end() && it->first == name)
    it->second = value;
  else
    fields_.insert(it, {std::string(name), std::string(value)});
  return *this;
}

std::string SpecKey::get(std::string_view name) const {
  for (const auto &[n, v] : fields_)
    if (n == name)
      return v;
  return "";
}

std::string SpecKey::canonical() const {
  std::string text = "op=" + op_ + "\n";
  for (const auto &[name, value] : fields_)
    text += name + "=" + value + "\n";
  return text;
}

std::string SpecKey::digest() const { return sha256_hex(canonical()); }

SpecKey SpecKey::parse(std::string_view text) {
  SpecKey key;
  bool first = true;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos)
      throw UserError("SpecKey::parse: the last line has no newline");
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      throw UserError(
          fmt::format("SpecKey::parse: line '{}' has no '='", line));
    std::string_view name = line.substr(0, eq), value = line.substr(eq + 1);
    if (first) {
      if (name != "op")
        throw UserError(fmt::format("SpecKey::parse: first line '{}' must be "
                                    "op=...",
                                    line));
      key.op_ = value;
      first = false;
    } else {
      key.add(name, value);
    }
  }
  if (first)
    throw UserError("SpecKey::parse: empty text");
  return key;
}

std::vector<std::string> key_differences(const SpecKey &a, const SpecKey &b) {
  std::vector<std::string> out;
  if (a.op() != b.op())
    out.push_back(fmt::format("op: {} -> {}", a.op(), b.op()));
  std::vector<std::string> names;
  for (const auto &[n, v] : a.fields())
    names.push_back(n);
  for (const auto &[n, v] : b.fields())
    names.push_back(n);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const std::string &n : names) {
    std::string va = a.get(n), vb = b.get(n);
    bool ina = std::any_of(a.fields().begin(), a.fields().end(),
                           [&](const auto &f) { return f.first == n; });
    bool inb = std::any_of(b.fields().begin(), b.fields().end(),
                           [&](const auto &f) { return f.first == n; });
    if (ina != inb || va != vb)
      out.push_back(fmt::format("{}: {} -> {}", n, ina ? va : "<absent>",
                                inb ? vb : "<absent>"));
  }
  return out;
}

} // namespace tilejit::rt
