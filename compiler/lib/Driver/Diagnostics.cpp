//===- Diagnostics.cpp - Collect MLIR diagnostics as `file:line:col` text ===//
#include "Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static void printLocation(llvm::raw_ostream &os, Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
    return;
  }
  if (auto named = dyn_cast<NameLoc>(loc))
    return printLocation(os, named.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (!fused.getLocations().empty())
      return printLocation(os, fused.getLocations().front());
  }
  os << "<unknown>";
}

static const char *severityName(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

tilejit::DiagnosticCollector::DiagnosticCollector(MLIRContext *ctx)
    : handler_(ctx, [this](Diagnostic &diag) {
        llvm::raw_string_ostream os(text_);
        auto emit = [&](Diagnostic &d, const char *indent) {
          os << indent;
          printLocation(os, d.getLocation());
          os << ": " << severityName(d.getSeverity()) << ": " << d.str()
             << "\n";
        };
        emit(diag, "");
        for (Diagnostic &note : diag.getNotes())
          emit(note, "  ");
        llvm::raw_string_ostream errors(errors_);
        printLocation(errors, diag.getLocation());
        errors << ": " << severityName(diag.getSeverity()) << ": " << diag.str()
               << "\n";
        return success();
      }) {}
