// options.h - Parsing of the options the op subcommands share, typed by the
// op's declaration.
#pragma once

#include "run.h"

#include "tilejit/compiler/compile.h"

#include <span>
#include <string_view>
#include <vector>

namespace tilejit::cli {

/// `tilejit compile|run|bench OP [options]`, parsed and resolved against
/// the op's declaration.
struct OpCommand {
  const ops::OpDef *op = nullptr;
  harness::Case c;
  harness::Resolved resolved;
  std::vector<Stage> dump; ///< --dump (compile)
  bool timings = false;    ///< --timings
  int iters = 20;          ///< --iters (bench)
  /// --seed (run, bench): the inputs' generator seed; a failed GPU test
  /// prints its case's.
  uint64_t seed = harness::RunOptions{}.seed;
  int kernel = 0; ///< --kernel: which of an op's kernels (compile, explain)
};

/// Parses OP and its options; `allowed` lists the options this subcommand
/// takes. Throws UserError for an unknown op or option (with a suggestion),
/// a repeated option, a malformed value, a --set name the op does not have,
/// a value of the wrong type or range, or a shape the op does not take:
/// everything is checked before anything needs a GPU.
OpCommand parse_op_command(std::string_view command,
                           std::span<const std::string_view> argv,
                           const std::vector<std::string_view> &allowed);

/// The key and kernel the JIT would compile for the command's case: its
/// kernel `kernel` of the op's kernel_count (-1: the one --kernel names).
rt::SpecKey key_of(const OpCommand &cmd, int kernel = -1);
Kernel kernel_of(const OpCommand &cmd, int kernel = -1);

/// `tilejit OP --help` text of an op: its tensors, parameters and shape.
std::string op_help(const ops::OpDef &op);

} // namespace tilejit::cli
