// churn_entry.h - Self-checking cache entries for the cache fault fuzzer's
// processes (tilejit_cache_probe churn/read, kernel_cache_test.cpp): an
// entry's blobs depend on each other, so that one mixed from two writes, or
// damaged, is told apart from any entry that was ever written.
#pragma once

#include "tilejit/runtime/kernel_cache.h"
#include "tilejit/runtime/sha256.h"

#include <string>

namespace tilejit::test {

/// The churned keys: "churn-0" ... "churn-7".
inline rt::SpecKey churn_key(int i) {
  rt::SpecKey k("churn_op");
  k.add("variant", "churn-" + std::to_string(i));
  return k;
}

/// Version `n` of the entry of `key`: ptx "<variant>:<n>:" and n filler
/// bytes, cubin the SHA-256 of the ptx, kernel name and ABI from the variant.
inline rt::CacheEntry churn_entry(const rt::SpecKey &key, int n) {
  const std::string v = key.get("variant");
  rt::CacheEntry e;
  e.key = key;
  e.kernel_name = "kernel_" + v.substr(6);
  e.threads = 128;
  e.ptx = v + ":" + std::to_string(n) + ":" +
          std::string(static_cast<size_t>(n), static_cast<char>('a' + n % 26));
  const std::string hash = rt::sha256_hex(e.ptx);
  e.cubin.assign(hash.begin(), hash.end());
  e.abi = "threads 128\nshared_bytes 0\narg tensor " + v.substr(6) + " f32 2\n";
  return e;
}

/// Whether `e` is some version of churn_entry(key, n).
inline bool churn_entry_ok(const rt::SpecKey &key, const rt::CacheEntry &e) {
  const std::string v = key.get("variant");
  const std::string head = v + ":";
  if (e.ptx.rfind(head, 0) != 0)
    return false;
  const size_t colon = e.ptx.find(':', head.size());
  if (colon == std::string::npos || colon == head.size() ||
      colon - head.size() > 9)
    return false;
  for (size_t i = head.size(); i < colon; ++i)
    if (e.ptx[i] < '0' || e.ptx[i] > '9')
      return false;
  const int n = std::stoi(e.ptx.substr(head.size(), colon - head.size()));
  const rt::CacheEntry want = churn_entry(key, n);
  return e.ptx == want.ptx && e.cubin == want.cubin &&
         e.kernel_name == want.kernel_name && e.threads == want.threads &&
         e.abi == want.abi;
}

} // namespace tilejit::test
