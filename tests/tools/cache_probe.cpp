// cache_probe.cpp - A process that asks the kernel cache for scale_copy's
// kernel, for the multi-process cache tests (kernel_cache_test.cpp).
//
//   cache_probe key            print the key's digest
//   cache_probe compile        compile_cached; print "<source> <sha256 of PTX>"
//   cache_probe hang           take the key's compile lock, print "compiling",
//                              then sleep (the test kills it mid-compile)
//   cache_probe churn SEED     store versions of the churn keys' entries, of
//                              random sizes, without end (the test kills it
//                              at random points)
//   cache_probe read MS        for MS milliseconds, read the churn keys from
//                              disk with fresh caches and ask for them; print
//                              "loaded L compiled C bad B" (B: an entry that
//                              no writer wrote was served)
// The cache directory comes from TILEJIT_CACHE_DIR.
#include "churn_entry.h"
#include "common/jit.h"
#include "elementwise/scale_copy.h"
#include "op/typed_op.h"

#include "tilejit/runtime/sha256.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>
#include <thread>

using namespace tilejit;

namespace {
/// scale_copy's key for a spec, as the op's call computes it.
rt::SpecKey scale_copy_key(const elementwise::ScaleCopySpec &spec) {
  return ops::spec_key("scale_copy", spec);
}
} // namespace

int main(int argc, char **argv) {
  std::string_view mode = argc > 1 ? argv[1] : "";
  rt::SpecKey key = scale_copy_key({});
  if (mode == "key") {
    std::printf("%s\n", key.digest().c_str());
    return 0;
  }
  auto build = [] { return elementwise::scale_copy_kernel({}); };
  if (mode == "compile") {
    rt::CacheResult r = ops::compile_cached(key, build);
    const char *source = r.source == rt::CacheSource::compiled ? "compiled"
                         : r.source == rt::CacheSource::disk   ? "disk"
                                                               : "memory";
    std::printf("%s %s\n", source, rt::sha256_hex(r.entry->ptx).c_str());
    return 0;
  }
  if (mode == "hang") {
    rt::KernelCache::global().get_or_compile(key, []() -> rt::CacheEntry {
      std::printf("compiling\n");
      std::fflush(stdout);
      std::this_thread::sleep_for(std::chrono::hours(1));
      return {};
    });
    return 1;
  }
  if (mode == "churn" && argc > 2) {
    std::mt19937 gen(static_cast<unsigned>(std::atoll(argv[2])));
    rt::KernelCache cache(rt::CacheConfig::from_env());
    for (;;) {
      const rt::SpecKey key = test::churn_key(static_cast<int>(gen() % 8));
      cache.store(test::churn_entry(key, static_cast<int>(gen() % 300000)));
    }
  }
  if (mode == "read" && argc > 2) {
    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(std::atoll(argv[2]));
    int loaded = 0, compiled = 0, bad = 0;
    while (std::chrono::steady_clock::now() < end) {
      rt::KernelCache cache(rt::CacheConfig::from_env());
      for (int i = 0; i < 8; ++i) {
        const rt::SpecKey key = test::churn_key(i);
        if (std::optional<rt::CacheEntry> e = cache.load(key.digest())) {
          ++loaded;
          bad += !test::churn_entry_ok(key, *e);
        }
        rt::CacheResult r = cache.get_or_compile(
            key, [&] { return test::churn_entry(key, 7); });
        compiled += r.source == rt::CacheSource::compiled;
        bad += !test::churn_entry_ok(key, *r.entry);
      }
    }
    std::printf("loaded %d compiled %d bad %d\n", loaded, compiled, bad);
    return 0;
  }
  std::fprintf(stderr, "cache_probe: mode must be key, compile, hang, churn "
                       "SEED or read MS\n");
  return 2;
}
