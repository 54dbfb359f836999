//===- Abi.cpp - A compiled kernel's calling convention as text -----------===//
//
// KernelAbi::serialize writes one item a line; the kernel cache keeps that
// text with the PTX, so a kernel loaded from disk is launched by the same
// rule without building it again.
//
//===----------------------------------------------------------------------===//
#include "tilejit/compiler/abi.h"

#include <charconv>
#include <fmt/format.h>

namespace tilejit {

bool is_identifier(std::string_view name) {
  auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (name.empty() || !letter(name[0]))
    return false;
  for (char c : name)
    if (!letter(c) && !(c >= '0' && c <= '9'))
      return false;
  return true;
}

namespace {

bool toInt(std::string_view text, int64_t &out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

/// `x[0]` -> ("x", 0).
bool parseDim(std::string_view text, std::string &name, int &dim) {
  size_t open = text.find('[');
  int64_t d = 0;
  if (open == std::string_view::npos || !text.ends_with("]") ||
      !is_identifier(text.substr(0, open)) ||
      !toInt(text.substr(open + 1, text.size() - open - 2), d) || d < 0 ||
      d > 5)
    return false;
  name = text.substr(0, open);
  dim = static_cast<int>(d);
  return true;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  while (!line.empty()) {
    size_t sp = line.find(' ');
    if (sp != 0)
      out.push_back(line.substr(0, sp));
    if (sp == std::string_view::npos)
      break;
    line.remove_prefix(sp + 1);
  }
  return out;
}

} // namespace

std::string GridExtent::to_string() const {
  if (factors.empty())
    return "1";
  std::string out;
  for (const GridFactor &f : factors) {
    if (!out.empty())
      out += " * ";
    if (f.tensor.empty())
      out += std::to_string(f.divisor);
    else if (f.divisor == 1)
      out += fmt::format("{}[{}]", f.tensor, f.dim);
    else
      out += fmt::format("ceil({}[{}] / {})", f.tensor, f.dim, f.divisor);
  }
  return out;
}

std::optional<GridExtent> GridExtent::parse(std::string_view text,
                                            std::string &why) {
  GridExtent out;
  text = trim(text);
  if (text == "1")
    return out;
  while (true) {
    size_t star = text.find('*');
    std::string_view item = trim(text.substr(0, star));
    GridFactor f;
    int64_t value = 0;
    if (item.starts_with("ceil(") && item.ends_with(")")) {
      std::string_view inner = item.substr(5, item.size() - 6);
      size_t slash = inner.find('/');
      if (slash == std::string_view::npos ||
          !parseDim(trim(inner.substr(0, slash)), f.tensor, f.dim) ||
          !toInt(trim(inner.substr(slash + 1)), f.divisor) || f.divisor < 1) {
        why = fmt::format("grid factor '{}' is not ceil(NAME[DIM] / N)", item);
        return std::nullopt;
      }
    } else if (toInt(item, value) && value >= 0) {
      f.divisor = value;
    } else if (!parseDim(item, f.tensor, f.dim)) {
      why = fmt::format("grid factor '{}' is not ceil(NAME[DIM] / N), "
                        "NAME[DIM] or a non-negative integer",
                        item);
      return std::nullopt;
    }
    out.factors.push_back(std::move(f));
    if (star == std::string_view::npos)
      return out;
    text.remove_prefix(star + 1);
  }
}

std::string_view name_of(AbiArg::Kind kind) {
  switch (kind) {
  case AbiArg::Kind::tensor:
    return "tensor";
  case AbiArg::Kind::scalar:
    return "scalar";
  case AbiArg::Kind::tensor_map:
    return "tensor_map";
  case AbiArg::Kind::pointer:
    return "pointer";
  case AbiArg::Kind::size:
    return "size";
  case AbiArg::Kind::row_stride:
    return "row_stride";
  case AbiArg::Kind::blocks:
    return "blocks";
  }
  return "?";
}

std::string KernelAbi::serialize() const {
  std::string out =
      fmt::format("threads {}\nshared_bytes {}\n", threads, shared_bytes);
  if (programmatic)
    out += "programmatic\n";
  if (persistent)
    out += "persistent\n";
  if (has_grid)
    for (int d = 0; d < 3; ++d)
      out += fmt::format("grid {} {}\n", d, grid[d].to_string());
  for (const AbiArg &a : args) {
    out += fmt::format("arg {} {} {} {}", name_of(a.kind), a.name,
                       name_of(a.dtype), a.rank);
    if (a.kind == AbiArg::Kind::size || a.kind == AbiArg::Kind::blocks)
      out += fmt::format(" {}", a.dim);
    for (int64_t b : a.box)
      out += fmt::format(" {}", b);
    if (a.unit_inner)
      out += " inner";
    if (a.align_bytes > 0)
      out += fmt::format(" align {}", a.align_bytes);
    if (a.kind == AbiArg::Kind::tensor_map && a.swizzle != 128)
      out += fmt::format(" swizzle {}", a.swizzle);
    out += '\n';
  }
  return out;
}

std::optional<KernelAbi> KernelAbi::parse(std::string_view text,
                                          std::string &why) {
  KernelAbi abi;
  int grids = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    std::vector<std::string_view> w = words(line);
    if (w.empty())
      continue;
    int64_t v = 0;
    auto bad = [&] {
      why = fmt::format("malformed ABI line '{}'", line);
      return std::nullopt;
    };
    if (w[0] == "threads" && w.size() == 2 && toInt(w[1], v)) {
      abi.threads = static_cast<int>(v);
    } else if (w[0] == "shared_bytes" && w.size() == 2 && toInt(w[1], v)) {
      abi.shared_bytes = v;
    } else if (w[0] == "programmatic" && w.size() == 1) {
      abi.programmatic = true;
    } else if (w[0] == "persistent" && w.size() == 1) {
      abi.persistent = true;
    } else if (w[0] == "grid" && w.size() >= 3 && toInt(w[1], v) &&
               v == grids) {
      size_t at = line.find(' ', line.find(' ') + 1); // after "grid N"
      std::optional<GridExtent> e = GridExtent::parse(line.substr(at), why);
      if (!e)
        return std::nullopt;
      abi.grid[grids++] = std::move(*e);
      abi.has_grid = grids == 3;
    } else if (w[0] == "arg" && w.size() >= 5) {
      AbiArg a;
      bool known = false;
      for (auto k :
           {AbiArg::Kind::tensor, AbiArg::Kind::scalar,
            AbiArg::Kind::tensor_map, AbiArg::Kind::pointer, AbiArg::Kind::size,
            AbiArg::Kind::row_stride, AbiArg::Kind::blocks})
        if (w[1] == name_of(k)) {
          a.kind = k;
          known = true;
        }
      std::optional<DType> dtype = parse_dtype(w[3]);
      if (!known || !is_identifier(w[2]) || !dtype || !toInt(w[4], v))
        return bad();
      a.name = w[2];
      a.dtype = *dtype;
      a.rank = static_cast<int>(v);
      size_t next = 5;
      if (a.kind == AbiArg::Kind::size || a.kind == AbiArg::Kind::blocks) {
        if (w.size() < 6 || !toInt(w[5], v) ||
            (a.kind == AbiArg::Kind::blocks && (v < 0 || v > 2)))
          return bad();
        a.dim = static_cast<int>(v);
        next = 6;
      }
      for (size_t i = next; i < w.size(); ++i) {
        if (w[i] == "inner") {
          a.unit_inner = true;
          continue;
        }
        if (w[i] == "align" && i + 1 < w.size() && toInt(w[i + 1], v)) {
          a.align_bytes = v;
          ++i;
          continue;
        }
        if (w[i] == "swizzle" && a.kind == AbiArg::Kind::tensor_map &&
            i + 1 < w.size() && toInt(w[i + 1], v) && (v == 0 || v == 128)) {
          a.swizzle = v;
          ++i;
          continue;
        }
        if (!toInt(w[i], v))
          return bad();
        a.box.push_back(v);
      }
      abi.args.push_back(std::move(a));
    } else {
      return bad();
    }
  }
  if (grids != 0 && grids != 3) {
    why = fmt::format("the ABI has {} grid lines; requires 0 or 3", grids);
    return std::nullopt;
  }
  return abi;
}

} // namespace tilejit
