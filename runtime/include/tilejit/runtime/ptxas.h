// ptxas.h - PTX -> cubin: ptxas as a whole program when there is one, else
// the driver's JIT linker.
//
// The driver's linker compiles PTX as a relocatable unit, and for one it
// drops `setmaxnreg` and serialises every wgmma.mma_async ("to maintain
// compatibility across compilation units", as its info log says). ptxas on
// its own compiles a whole program and keeps both. So tilejit uses ptxas
// when it finds one, and the driver's linker otherwise.
#pragma once

#include "tilejit/runtime/module.h"

#include <optional>
#include <string>
#include <string_view>

namespace tilejit::rt {

/// The ptxas this process compiles with, from TILEJIT_PTXAS: unset or empty
/// searches $CUDA_HOME/bin, $CUDA_PATH/bin, PATH and /usr/local/cuda/bin;
/// "0" means none (the driver's linker makes every cubin); anything else is
/// the path of ptxas. Throws UserError when TILEJIT_PTXAS names no
/// executable file. Read on every call (a stat or a few), not cached.
std::optional<std::string> find_ptxas();

/// "ptxas" or "driver": who makes this process's cubins (find_ptxas). Part
/// of every specialisation key, since the two make different code.
std::string cubin_maker();

/// The `.target` of a PTX text ("sm_90a"), or "" when it has none.
std::string ptx_target(std::string_view ptx);

/// Compiles PTX with the ptxas at `ptxas_path`, as a whole program for the
/// PTX's own `.target`, at -O3; no driver needed. `name_for_messages` names
/// the PTX in errors. Throws UserError when the PTX has no `.target`,
/// InternalError when ptxas cannot be run or rejects the PTX ("ptxas
/// '<path>' failed for PTX '<name>' (exit status N):" and its output).
LinkResult compile_with_ptxas(const std::string &ptxas_path,
                              std::string_view ptx,
                              std::string_view name_for_messages);

/// PTX -> cubin by `maker` (a cubin_maker() value, by default this
/// process's): "ptxas" with a ptxas found runs compile_with_ptxas; anything
/// else runs link_ptx (which needs a driver and targets the current device).
LinkResult ptx_to_cubin(std::string_view ptx,
                        std::string_view name_for_messages,
                        std::string_view maker = cubin_maker());

} // namespace tilejit::rt
