// jit.cpp - Key fingerprint, cached compile, link and load of kernels.
#include "common/jit.h"

#include "tilejit/build_id.h"
#include "tilejit/error.h"
#include "tilejit/runtime/ptxas.h"
#include "tilejit/version.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <unordered_map>

namespace tilejit::ops {

CompileOptions compile_options_from_env() {
  CompileOptions options;
  if (const char *level = std::getenv("TILEJIT_OPT_LEVEL"); level && *level) {
    if (std::string_view(level).size() != 1 || level[0] < '0' || level[0] > '3')
      throw UserError(fmt::format("TILEJIT_OPT_LEVEL is '{}'; requires 0, 1, "
                                  "2 or 3",
                                  level));
    options.opt_level = level[0] - '0';
  }
  return options;
}

rt::SpecKey make_key(std::string op) {
  CompileOptions options = compile_options_from_env();
  rt::SpecKey key(std::move(op));
  key.add("tilejit", kVersion)
      .add("build", kBuildId)
      .add("llvm", kLLVMVersion)
      .add("chip", options.chip)
      .add("features", options.features)
      .add("opt_level", std::to_string(options.opt_level))
      .add("cubin", rt::cubin_maker());
  return key;
}

namespace {

/// TILEJIT_DUMP=stage,... (or "all") parsed once.
std::vector<Stage> dump_stages() {
  std::vector<Stage> stages;
  const char *env = std::getenv("TILEJIT_DUMP");
  if (!env || !*env)
    return stages;
  std::string_view text(env);
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    if (name == "all")
      stages = {Stage::tile, Stage::gpu, Stage::mlir, Stage::llvm, Stage::ptx};
    else if (auto s = parse_stage(name); s && *s != Stage::sass)
      stages.push_back(*s);
    else
      throw UserError(fmt::format("TILEJIT_DUMP names stage '{}'; stages are "
                                  "tile, gpu, mlir, llvm, ptx, all",
                                  name));
    if (comma == std::string_view::npos)
      break;
    text.remove_prefix(comma + 1);
  }
  return stages;
}

void write_dumps(const rt::SpecKey &key, const CompiledKernel &compiled) {
  const char *dir_env = std::getenv("TILEJIT_DUMP_DIR");
  std::filesystem::path dir = dir_env && *dir_env ? dir_env : ".";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string stem = fmt::format("{}-{}", key.op(), key.digest().substr(0, 12));
  for (const auto &[stage, text] : compiled.stages) {
    std::filesystem::path path =
        dir / fmt::format("{}.{}", stem, name_of(stage));
    std::ofstream(path) << text;
    if (!std::ofstream(path, std::ios::app))
      throw UserError(
          fmt::format("TILEJIT_DUMP: cannot write '{}'", path.string()));
  }
  std::ofstream(dir / (stem + ".key")) << key.canonical();
}

bool timings_enabled() {
  const char *env = std::getenv("TILEJIT_TIMINGS");
  return env && *env && std::string_view(env) != "0";
}

/// The cubin of `entry`'s PTX, made the way its key says: ptxas (no driver
/// needed), or the driver's JIT linker.
rt::LinkResult make_cubin(const rt::CacheEntry &entry) {
  return rt::ptx_to_cubin(entry.ptx, entry.kernel_name, entry.key.get("cubin"));
}

/// Loads `entry`'s cubin; a cubin from ptxas that the driver refuses gets an
/// error that says what to do.
rt::Module load_cubin(const rt::CacheEntry &entry) {
  try {
    return rt::Module::load(entry.cubin);
  } catch (const DriverError &e) {
    if (entry.key.get("cubin") != "ptxas")
      throw;
    throw DriverError(fmt::format(
        "{}\nThe cubin of '{}' was made by ptxas '{}', which may be newer "
        "than the driver or built for another GPU; set TILEJIT_PTXAS to a "
        "ptxas the driver supports, or TILEJIT_PTXAS=0 to make cubins with "
        "the driver's JIT linker",
        e.what(), entry.kernel_name, rt::find_ptxas().value_or("?")));
  }
}

} // namespace

JitCompile compile_entry(const rt::SpecKey &key,
                         const std::function<Kernel()> &build,
                         const std::vector<Stage> &keep) {
  static const std::vector<Stage> dumps = dump_stages();
  CompileOptions options = compile_options_from_env();
  options.keep = dumps;
  for (Stage s : keep)
    if (s != Stage::sass)
      options.keep.push_back(s);
  auto start = std::chrono::steady_clock::now();
  Kernel kernel = build();
  std::chrono::duration<double, std::milli> build_ms =
      std::chrono::steady_clock::now() - start;
  JitCompile out;
  out.compiled = compile(kernel, options);
  const CompiledKernel &compiled = out.compiled;
  if (!dumps.empty())
    write_dumps(key, compiled);
  rt::CacheEntry &entry = out.entry;
  entry.key = key;
  entry.kernel_name = compiled.name;
  entry.threads = compiled.threads;
  entry.abi = compiled.abi.serialize();
  entry.ptx = compiled.ptx;
  // ptxas needs no driver: the entry gets its cubin now (a CPU machine
  // can precompile and bundle cubins). The driver's linker runs at load.
  double ptxas_ms = -1;
  if (key.get("cubin") == "ptxas") {
    rt::LinkResult cubin = make_cubin(entry);
    entry.cubin = std::move(cubin.cubin);
    ptxas_ms = cubin.wall_ms;
  }
  if (timings_enabled()) {
    std::string line =
        fmt::format("tilejit: compiled {} [{}]: build {:.2f} ms", key.op(),
                    key.digest().substr(0, 12), build_ms.count());
    for (const StageTime &t : compiled.timings)
      line += fmt::format(", {} {:.2f} ms", t.stage, t.ms);
    if (ptxas_ms >= 0)
      line += fmt::format(", ptxas {:.2f} ms", ptxas_ms);
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  return out;
}

rt::CacheResult compile_cached(const rt::SpecKey &key,
                               const std::function<Kernel()> &build) {
  static const bool dumping = !dump_stages().empty();
  auto compile_now = [&] { return compile_entry(key, build).entry; };
  if (dumping) {
    // A dump was asked for: compile even if cached, so it is never hidden.
    rt::CacheEntry entry = compile_now();
    rt::KernelCache::global().store(entry);
    return {std::make_shared<const rt::CacheEntry>(std::move(entry)),
            rt::CacheSource::compiled};
  }
  return rt::KernelCache::global().get_or_compile(key, compile_now);
}

const LoadedKernel &load_kernel(const rt::SpecKey &key,
                                const std::function<Kernel()> &build) {
  struct Slot {
    std::once_flag once;
    std::unique_ptr<LoadedKernel> kernel;
  };
  static std::mutex mutex;
  static std::unordered_map<std::string, std::unique_ptr<Slot>> loaded;
  std::string digest = key.digest();
  Slot *slot;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto &entry = loaded[digest];
    if (!entry)
      entry = std::make_unique<Slot>();
    slot = entry.get();
  }
  std::call_once(slot->once, [&] {
    auto k = std::make_unique<LoadedKernel>();
    k->entry = compile_cached(key, build).entry;
    bool linked_now = false;
    if (k->entry->cubin.empty()) {
      rt::CacheEntry with_cubin = *k->entry;
      with_cubin.cubin = make_cubin(with_cubin).cubin;
      rt::KernelCache::global().store(with_cubin);
      k->entry = std::make_shared<const rt::CacheEntry>(std::move(with_cubin));
      linked_now = true;
    }
    try {
      k->module = load_cubin(*k->entry);
    } catch (const DriverError &) {
      if (linked_now)
        throw;
      // A cubin cached for another GPU or driver: make this one afresh.
      rt::CacheEntry relinked = *k->entry;
      relinked.cubin = make_cubin(relinked).cubin;
      rt::KernelCache::global().store(relinked);
      k->entry = std::make_shared<const rt::CacheEntry>(std::move(relinked));
      k->module = load_cubin(*k->entry);
    }
    k->function = k->module.function(k->entry->kernel_name.c_str());
    std::string why;
    std::optional<KernelAbi> abi = KernelAbi::parse(k->entry->abi, why);
    if (!abi)
      throw InternalError(fmt::format("internal error: the cache entry of "
                                      "'{}' has an unreadable ABI: {}",
                                      k->entry->kernel_name, why));
    k->abi = std::move(*abi);
    slot->kernel = std::move(k);
  });
  return *slot->kernel;
}

} // namespace tilejit::ops
