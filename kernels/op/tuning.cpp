// tuning.cpp - TILEJIT_TUNE parsed (tuning.h).
#include "op/tuning.h"

#include <charconv>
#include <cstdlib>

namespace tilejit::ops {

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

/// The next item of `text` up to `separator`, removed from `text`.
std::string_view next_item(std::string_view &text, char separator) {
  const size_t at = text.find(separator);
  std::string_view item = text.substr(0, at);
  text =
      at == std::string_view::npos ? std::string_view{} : text.substr(at + 1);
  return trimmed(item);
}

} // namespace

SpecTuning parse_spec_tuning(std::string_view text, std::string_view op) {
  SpecTuning tuning;
  const std::string whole(text);
  auto fail = [&](std::string_view what) {
    tuning.fields.clear();
    tuning.error = fmt::format("TILEJIT_TUNE is '{}': {}; requires "
                               "op:field=value[,field=value][;op:...]",
                               whole, what);
    return tuning;
  };
  while (!trimmed(text).empty()) {
    std::string_view entry = next_item(text, ';');
    const size_t colon = entry.find(':');
    if (colon == std::string_view::npos ||
        trimmed(entry.substr(0, colon)).empty())
      return fail(fmt::format("'{}' names no op", entry));
    const std::string_view name = trimmed(entry.substr(0, colon));
    std::string_view fields = entry.substr(colon + 1);
    if (trimmed(fields).empty())
      return fail(fmt::format("'{}' sets no field", entry));
    while (!trimmed(fields).empty()) {
      std::string_view item = next_item(fields, ',');
      const size_t eq = item.find('=');
      const std::string_view field =
          trimmed(item.substr(0, eq == std::string_view::npos ? 0 : eq));
      const std::string_view value = eq == std::string_view::npos
                                         ? std::string_view{}
                                         : trimmed(item.substr(eq + 1));
      int64_t number = 0;
      const auto [end, ec] =
          std::from_chars(value.data(), value.data() + value.size(), number);
      if (field.empty() || value.empty() || ec != std::errc() ||
          end != value.data() + value.size())
        return fail(fmt::format("'{}' is not field=integer", item));
      if (name == op)
        tuning.fields.emplace_back(std::string(field), number);
    }
  }
  return tuning;
}

SpecTuning spec_tuning(std::string_view op) {
  const char *text = std::getenv("TILEJIT_TUNE");
  return text ? parse_spec_tuning(text, op) : SpecTuning{};
}

} // namespace tilejit::ops
