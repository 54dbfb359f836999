// cache_probe.cpp - A process that asks the kernel cache for scale_copy's
// kernel, for the multi-process cache tests (kernel_cache_test.cpp).
//
//   cache_probe key            print the key's digest
//   cache_probe compile        compile_cached; print "<source> <sha256 of PTX>"
//   cache_probe hang           take the key's compile lock, print "compiling",
//                              then sleep (the test kills it mid-compile)
// The cache directory comes from TILEJIT_CACHE_DIR.
#include "common/jit.h"
#include "elementwise/scale_copy.h"
#include "op/typed_op.h"

#include "tilejit/runtime/sha256.h"

#include <chrono>
#include <cstdio>
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
  std::fprintf(stderr, "cache_probe: mode must be key, compile or hang\n");
  return 2;
}
