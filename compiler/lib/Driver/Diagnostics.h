//===- Diagnostics.h - Collect MLIR diagnostics as `file:line:col` text --===//
#ifndef TILEJIT_DRIVER_DIAGNOSTICS_H
#define TILEJIT_DRIVER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"

#include <string>

namespace tilejit {

/// While alive, captures every diagnostic of `ctx` as one line
/// `file:line:col: error: message` (notes indented below their error).
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *ctx);
  const std::string &text() const { return text_; }
  /// The same without the notes (MLIR's "see current operation" prints the
  /// op in tilejit's internal form: for tilejit's developers, not authors)
  /// and without the last line's newline (a message, as every other one).
  std::string errors() const {
    std::string e = errors_;
    while (!e.empty() && e.back() == '\n')
      e.pop_back();
    return e;
  }
  bool empty() const { return text_.empty(); }

private:
  std::string text_, errors_;
  mlir::ScopedDiagnosticHandler handler_;
};

} // namespace tilejit

#endif // TILEJIT_DRIVER_DIAGNOSTICS_H
