//===- Passes.h - Conversions out of the tile dialect --------------------===//
#ifndef TILEJIT_CONVERSION_PASSES_H
#define TILEJIT_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace tile {

#define GEN_PASS_DECL
#include "tilejit/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tilejit/Conversion/Passes.h.inc"

} // namespace tile
} // namespace mlir

#endif // TILEJIT_CONVERSION_PASSES_H
