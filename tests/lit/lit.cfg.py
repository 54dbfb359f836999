# lit.cfg.py - FileCheck tests over tilejit-opt and the tilejit CLI.
import os
import lit.formats

config.name = "tilejit"
# bash, so tests can check exit codes with $?.
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tilejit_bin_dir, "..", "tests", "lit-out")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in"]

config.environment["PATH"] = os.pathsep.join(
    [config.tilejit_bin_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
# Tests must not see a real driver's GPU unless they ask for one.
config.environment["TILEJIT_LIBCUDA"] = "/nonexistent/libcuda.so.1"
# Kernels compiled by the tests are cached here, not in the user's cache.
config.environment["TILEJIT_CACHE_DIR"] = os.path.join(config.test_exec_root, "kernel-cache")

config.substitutions.append(("%{tilejit_bench}", os.path.join(config.tilejit_bin_dir, "tilejit_bench")))
config.substitutions.append(("%tilejit-opt", os.path.join(config.tilejit_bin_dir, "tilejit-opt")))
config.substitutions.append(("%tilejit", os.path.join(config.tilejit_bin_dir, "tilejit")))

if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.environment["PATH"] = os.pathsep.join(
        [os.path.dirname(config.ptxas), config.environment["PATH"]])
