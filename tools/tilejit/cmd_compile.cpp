// cmd_compile.cpp - `tilejit compile OP ...`: compile the op's kernel for
// the given case exactly as the JIT would (same key, TILEJIT_OPT_LEVEL,
// TILEJIT_PTXAS, TILEJIT_DUMP, TILEJIT_TIMINGS), store it in the kernel
// cache, and print the stages asked for.
#include "commands.h"
#include "options.h"
#include "output.h"
#include "sass.h"

#include "common/jit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace tilejit::cli {

int cmd_compile(Args args) {
  OpCommand cmd = parse_op_command(
      "compile", args,
      {"--shape", "--dtype", "--set", "--dump", "--timings", "--kernel"});
  if (cmd.dump.empty())
    cmd.dump = {Stage::ptx};

  const rt::SpecKey key = key_of(cmd);
  ops::JitCompile jit = ops::compile_entry(
      key, [&] { return kernel_of(cmd); }, cmd.dump);
  rt::KernelCache::global().store(jit.entry);
  CompiledKernel &compiled = jit.compiled;

  bool headers = cmd.dump.size() > 1;
  for (Stage stage : cmd.dump) {
    if (headers)
      fmt::print("// ===== stage: {} =====\n", name_of(stage));
    if (stage != Stage::sass) {
      fmt::print("{}", compiled.stages[stage]);
      continue;
    }
    SassResult sass =
        ptx_to_sass(compiled.ptx, ops::compile_options_from_env().chip);
    if (!sass.report.empty())
      fmt::print("{}", sass.report);
    fmt::print("{}\n", sass.text);
  }
  if (cmd.timings) {
    std::fflush(stdout); // keep the stages before the timings in a shared log
    double total = 0;
    for (const StageTime &t : compiled.timings) {
      print_err(
          fmt::format("tilejit: stage {:<5} {:8.2f} ms\n", t.stage, t.ms));
      total += t.ms;
    }
    print_err(fmt::format("tilejit: total       {:8.2f} ms\n", total));
  }
  return kOk;
}

} // namespace tilejit::cli
