//===- InitTilejit.h - Register everything tilejit's compiler uses -------===//
#ifndef TILEJIT_INITTILEJIT_H
#define TILEJIT_INITTILEJIT_H

namespace mlir {
class DialectRegistry;
}

namespace tilejit {

/// Adds the tile dialect and every upstream dialect, interface and LLVM IR
/// translation the pipeline needs, and nothing else (no registerAll*).
void registerTilejitDialects(mlir::DialectRegistry &registry);

/// Registers the passes tilejit-opt exposes (tile passes and the upstream
/// passes the pipeline uses) with the global pass registry. Idempotent.
void registerTilejitPasses();

/// Initialises LLVM's NVPTX back end once per process.
void initializeNVPTXBackend();

/// The main of tilejit-opt: mlir-opt restricted to tilejit's dialects/passes.
int runTilejitOptMain(int argc, char **argv);

} // namespace tilejit

#endif // TILEJIT_INITTILEJIT_H
