//===- WgmmaAsm.cpp - A K tile's wgmma instructions as one asm statement -===//
//
// The leaf of the gemm lowering that stays PTX text: a K tile's
// wgmma.mma_async instructions, each written as NVVM's lowering of
// nvvm.wgmma.mma_async writes it, in one inline-asm statement chained
// through the same tied accumulator operands. One statement instead of
// bk / kInstr keeps instruction selection to one node (measured: the
// separate ops cost the back end seconds at BN = 256).
//
//===----------------------------------------------------------------------===//
#include "GemmKernel.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <fmt/format.h>

using namespace mlir;

SmallVector<Value> mlir::tile::buildWgmmaTile(OpBuilder &b, Location loc,
                                              const GemmKernelConfig &c,
                                              ValueRange accs,
                                              ArrayRef<Value> descA,
                                              ArrayRef<Value> descB) {
  const int nacc = static_cast<int>(accs.size());
  const int steps = static_cast<int>(descA.size());
  const int kInstr = 32 / gemmInputBytes(c);
  const std::string mma = c.inputType == "f32" ? "tf32" : c.inputType;
  // bf16 and f16 take the operands' transpose flags (K-major: 0, 0).
  const bool transOperands = mma == "bf16" || mma == "f16";
  auto list = [](int first, int n) {
    std::string l;
    for (int i = 0; i < n; ++i)
      l += (i ? ", $" : "$") + std::to_string(first + i);
    return l;
  };
  // Operands: the accumulators (outputs, then tied inputs), the descriptor
  // pairs, the scale-d flag.
  const int descBase = 2 * nacc, scaleD = descBase + 2 * steps;
  std::string text = "{\n.reg .pred p;\n";
  text += fmt::format("setp.ne.b32 p, ${}, 0;\n", scaleD);
  for (int kk = 0; kk < steps; ++kk)
    text +=
        fmt::format("wgmma.mma_async.sync.aligned.m64n{}k{}.f32.{}.{} "
                    "{{{}}}, ${}, ${}, p, 1, 1{};\n",
                    c.bn, kInstr, mma, mma, list(0, nacc), descBase + 2 * kk,
                    descBase + 2 * kk + 1, transOperands ? ", 0, 0" : "");
  text += "}\n";
  std::string constraints;
  for (int i = 0; i < nacc; ++i)
    constraints += "=f,";
  for (int i = 0; i < nacc; ++i)
    constraints += std::to_string(i) + ",";
  for (int kk = 0; kk < steps; ++kk)
    constraints += "l,l,";
  constraints += "n";

  SmallVector<Value> operands(accs.begin(), accs.end());
  for (int kk = 0; kk < steps; ++kk) {
    operands.push_back(descA[kk]);
    operands.push_back(descB[kk]);
  }
  operands.push_back(
      LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(1)));
  SmallVector<Type> fields(nacc, b.getF32Type());
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, type, operands, text, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  SmallVector<Value> results;
  for (int i = 0; i < nacc; ++i)
    results.push_back(
        LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), i));
  return results;
}
