"""test_cache.py - tilejit.cache without a GPU: a call's kernel compiled
into a fresh disk cache and found again (memory, then disk in a second
process), explain's key and its nearest entry's differences, the listing,
stats and clear, and a refused call's error. Plain Python; prints
`cache: N passed, M failed`; exits 1 when M > 0.
"""
import os
import subprocess
import sys
import tempfile

directory = tempfile.mkdtemp(prefix="tilejit-cache-test-")
os.environ["TILEJIT_CACHE_DIR"] = directory
os.environ.pop("TILEJIT_CACHE", None)

from checks import finish, raises, report  # noqa: E402

import tilejit.cache as cache  # noqa: E402

x = cache.tensor("bf16", (4096, 7168))
report("the directory is TILEJIT_CACHE_DIR", cache.cache_dir() == directory,
       cache.cache_dir())
first = cache.precompile("per_token_cast", x, fmt="e4m3")
again = cache.precompile("per_token_cast", x, fmt="e4m3")
report("precompile compiles, without a GPU", first["source"] == "compiled"
       and len(first["digest"]) == 64, f"{first}")
report("and finds it in memory the second time",
       again["source"] == "memory" and again["digest"] == first["digest"],
       f"{again}")
child = subprocess.run(
    [sys.executable, "-c",
     "import tilejit.cache as c; print(c.precompile('per_token_cast', "
     "c.tensor('bf16', (4096, 7168)), fmt='e4m3')['source'])"],
    capture_output=True, text=True)
report("another process finds it on disk", child.stdout.strip() == "disk",
       child.stdout + child.stderr)
e = cache.explain("per_token_cast", x, fmt="e4m3")
report("explain: on disk, its key", e["on_disk"] and
       e["key"].startswith("op=per_token_cast\n") and
       e["digest"] == first["digest"], f"{e}")
e = cache.explain("per_token_cast", x, fmt="e4m3", round_sf=True)
report("explain: a miss says how the nearest entry differs",
       not e["on_disk"] and e["nearest_differs"] == ["round_sf: 0 -> 1"],
       f"{e}")
listed = cache.entries()
report("entries lists it", [d["digest"] for d in listed] == [first["digest"]]
       and listed[0]["op"] == "per_token_cast", f"{listed}")
s = cache.stats()["in_process"]
report("stats count the compile and the memory hit",
       s["compiles"] == 1 and s["memory_hits"] == 1, f"{s}")
got = cache.precompile_all([
    ("topk_gate", (cache.tensor("f32", (8192, 256)),), {"num_topk": 8}),
    ("transpose", (cache.tensor("bf16", (256, 448)),), {})])
report("precompile_all, in order", [g["source"] for g in got] ==
       ["compiled", "compiled"], f"{got}")
raises("a call the op refuses", ValueError,
       "per_token_cast: argument 'num_per_channels' is 100; requires 16, 32, "
       "64, 128, or K = 7168 when K is a multiple of 64",
       lambda: cache.precompile("per_token_cast", x, num_per_channels=100))
raises("an op that does not exist", ValueError, "no op named 'nope'",
       lambda: cache.precompile("nope", x))
report("clear removes every entry", cache.clear() == 3 and
       cache.entries() == [])
finish("cache")
