//===- GemmKernelText.cpp - The warp-specialised TMA + WGMMA main loop ---===//
//
// The kernel a pipelined gemm lowers to, written as MLIR text (nvgpu, nvvm,
// scf, cf, arith, memref, and llvm for the wgmma asm and the epilogue) and
// parsed: one producer warpgroup whose elected
// thread issues the TMA copies of A and B `stages` K-tiles ahead, each
// completing on the stage's `full` mbarrier; two consumer warpgroups, each
// running wgmma.mma_async m64nBNk16 (k32 for fp8, k8 for tf32) on 64 rows of
// the 128 x BN tile, keeping one wgmma group in flight and releasing a stage
// on its `empty` mbarrier once the group that read it has retired. The
// epilogue converts the f32 accumulators and stores them, masked at the M
// and N edges unless the author promised whole tiles.
//
// Shared memory is dynamic (stages x (A + B tiles) + 1 KiB to realign to the
// 1024 bytes the 128-byte swizzle needs). The tensor maps arrive by value
// as grid constants (.param .align 64 .b8 [128]).
//
// Kernel parameters: (tensor map of A, tensor map of B, C (global pointer),
// M, N, K, ldc (i64)). The tile origin (m0, n0) is left to placeholders
// (`unrealized_conversion_cast` with a `tilejit.placeholder` name) that the
// lowering replaces with the author's index arithmetic.
//
//===----------------------------------------------------------------------===//
#include "GemmKernel.h"

#include <fmt/format.h>

#include <set>

namespace mlir::tile {

std::string gemmKernelText(const GemmKernelConfig &c) {
  const int bm = 128, bk = c.bk, bn = c.bn, stages = c.stages;
  const int elt = gemmInputBytes(c);
  // One wgmma reads 32 bytes of K: k16 of 16-bit inputs, k32 of fp8.
  const int kInstr = 32 / elt;
  const int aBytes = bm * bk * elt, bBytes = bn * bk * elt,
            tx = aBytes + bBytes;
  const int nacc = bn / 2;
  const std::string in = c.inputType, out = c.outputType;
  // Shared tiles and TMA boxes of fp8 are bytes to the copies; f32 inputs
  // are multiplied as tf32 (their low 13 mantissa bits ignored).
  const std::string mem = elt == 1 ? "i8" : in;
  const std::string mmaType = in == "f32" ? "tf32" : in;
  const std::string smem = "#gpu.address_space<workgroup>";
  std::string acc = "!llvm.struct<(";
  for (int i = 0; i < nacc; ++i)
    acc += i ? ", f32" : "f32";
  acc += ")>";

  std::string o;
  auto w = [&](const std::string &line) {
    o += line;
    o += '\n';
  };
  w(fmt::format("!tmA = !nvgpu.tensormap.descriptor<tensor = memref<{}x{}x{}, "
                "3>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = "
                "zero, interleave = none>",
                bm, bk, mem));
  w(fmt::format("!tmB = !nvgpu.tensormap.descriptor<tensor = memref<{}x{}x{}, "
                "3>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = "
                "zero, interleave = none>",
                bn, bk, mem));
  w(fmt::format("!bars = !nvgpu.mbarrier.group<memorySpace = {}, num_barriers "
                "= {}>",
                smem, 2 * stages));
  w("!acc = " + acc);
  w("module {");
  w(fmt::format(
      "llvm.func @{}(%tmA_p: !llvm.ptr {{llvm.byval = !llvm.array<16 x i64>, "
      "llvm.align = 64 : i64, nvvm.grid_constant}}, %tmB_p: !llvm.ptr "
      "{{llvm.byval = !llvm.array<16 x i64>, llvm.align = 64 : i64, "
      "nvvm.grid_constant}}, %C: !llvm.ptr<1> {{llvm.noalias, llvm.align = 16 "
      ": i64}}, %M: i64, %N: i64, %K: i64, %ldc: i64) attributes "
      "{{nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 "
      ": i32}} {{",
      c.name));
  auto I = [&](const std::string &s) { w("  " + s); };
  I("%tmA = builtin.unrealized_conversion_cast %tmA_p : !llvm.ptr to !tmA");
  I("%tmB = builtin.unrealized_conversion_cast %tmB_p : !llvm.ptr to !tmB");
  I("%m0 = builtin.unrealized_conversion_cast to index "
    "{tilejit.placeholder = \"m0\"}");
  I("%n0 = builtin.unrealized_conversion_cast to index "
    "{tilejit.placeholder = \"n0\"}");
  I("%KT = builtin.unrealized_conversion_cast to index "
    "{tilejit.placeholder = \"count\"}");
  std::set<int> consts = {0,  1,  2,   4,      8,          16,
                          32, 64, 128, stages, stages - 1, bk,
                          bm, bn, tx,  aBytes, bBytes};
  for (int v : consts)
    I(fmt::format("%c{} = arith.constant {} : index", v, v));
  I("%ticks = arith.constant 10000000 : index");
  I("%true = arith.constant true");
  I("%tid = gpu.thread_id x");
  I("%Mi = arith.index_cast %M : i64 to index");
  I("%Ni = arith.index_cast %N : i64 to index");
  // Dynamic shared memory realigned to 1024 bytes.
  I(fmt::format("%dyn = gpu.dynamic_shared_memory : memref<?xi8, {}>", smem));
  I(fmt::format("%dynbase = memref.extract_aligned_pointer_as_index %dyn : "
                "memref<?xi8, {}> -> index",
                smem));
  I("%c1023 = arith.constant 1023 : index");
  I("%alignup = arith.addi %dynbase, %c1023 : index");
  I("%cm1024 = arith.constant -1024 : index");
  I("%aligned = arith.andi %alignup, %cm1024 : index");
  I("%shift = arith.subi %aligned, %dynbase : index");
  I(fmt::format("%cBbase = arith.constant {} : index", stages * aBytes));
  // mbarriers: full[s] = s, empty[s] = stages + s.
  I("%bar = nvgpu.mbarrier.create -> !bars");
  I("%is0 = arith.cmpi eq, %tid, %c0 : index");
  I("%ncons = arith.constant 8 : index");
  for (int s = 0; s < stages; ++s) {
    I(fmt::format("%cf{} = arith.constant {} : index", s, s));
    I(fmt::format("%ce{} = arith.constant {} : index", s, stages + s));
  }
  for (int s = 0; s < stages; ++s) {
    I(fmt::format("nvgpu.mbarrier.init %bar[%cf{}], %c1, predicate = %is0 : "
                  "!bars",
                  s));
    I(fmt::format("nvgpu.mbarrier.init %bar[%ce{}], %ncons, predicate = %is0 "
                  ": !bars",
                  s));
  }
  I("nvgpu.tma.prefetch.descriptor %tmA, predicate = %is0 : !tmA");
  I("nvgpu.tma.prefetch.descriptor %tmB, predicate = %is0 : !tmB");
  I("gpu.barrier");
  I("%wg = arith.divui %tid, %c128 : index");
  I("%wgtid = arith.remui %tid, %c128 : index");
  I("%isProducer = arith.cmpi eq, %wg, %c0 : index");
  I("scf.if %isProducer {");
  I("  nvvm.setmaxregister decrease 40");
  I("  %leader = arith.cmpi eq, %wgtid, %c0 : index");
  I("  scf.if %leader {");
  I("    scf.for %kt = %c0 to %KT step %c1 {");
  I(fmt::format("      %s = arith.remui %kt, %c{} : index", stages));
  I(fmt::format("      %r = arith.divui %kt, %c{} : index", stages));
  I("      %r1 = arith.andi %r, %c1 : index");
  I("      %rb = arith.index_cast %r1 : index to i1");
  I("      %pe = arith.xori %rb, %true : i1");
  I(fmt::format("      %es = arith.addi %s, %c{} : index", stages));
  I("      nvgpu.mbarrier.try_wait.parity %bar[%es], %pe, %ticks : !bars");
  I(fmt::format("      nvgpu.mbarrier.arrive.expect_tx %bar[%s], %c{} : !bars",
                tx));
  I(fmt::format("      %k0 = arith.muli %kt, %c{} : index", bk));
  I(fmt::format("      %sAo = arith.muli %s, %c{} : index", aBytes));
  I(fmt::format("      %sBo = arith.muli %s, %c{} : index", bBytes));
  I("      %oA = arith.addi %shift, %sAo : index");
  I("      %oB0 = arith.addi %shift, %sBo : index");
  I("      %oB = arith.addi %oB0, %cBbase : index");
  I(fmt::format("      %dstA = memref.view %dyn[%oA][] : memref<?xi8, {0}> to "
                "memref<{1}x{2}x{3}, {0}>",
                smem, bm, bk, mem));
  I(fmt::format("      %dstB = memref.view %dyn[%oB][] : memref<?xi8, {0}> to "
                "memref<{1}x{2}x{3}, {0}>",
                smem, bn, bk, mem));
  I(fmt::format("      nvgpu.tma.async.load %tmA[%k0, %m0], %bar[%s] to %dstA "
                ": !tmA, !bars -> memref<{}x{}x{}, {}>",
                bm, bk, mem, smem));
  I(fmt::format("      nvgpu.tma.async.load %tmB[%k0, %n0], %bar[%s] to %dstB "
                ": !tmB, !bars -> memref<{}x{}x{}, {}>",
                bn, bk, mem, smem));
  I("    }");
  I("  }");
  I("} else {");
  I("  nvvm.setmaxregister increase 232");
  I("  %cw = arith.subi %wg, %c1 : index");
  I("  %aligned64 = arith.index_cast %aligned : index to i64");
  I(fmt::format("  %cwrows = arith.constant {} : index", 64 * bk * elt));
  I("  %cwA = arith.muli %cw, %cwrows : index");
  I("  %cwA64 = arith.index_cast %cwA : index to i64");
  I("  %baseA = arith.addi %aligned64, %cwA64 : i64");
  I(fmt::format("  %bOff = arith.constant {} : i64", stages * aBytes));
  I("  %baseB = arith.addi %aligned64, %bOff : i64");
  // wgmma shared-memory descriptor, K-major with the 128-byte swizzle:
  // [0,14) address >> 4, [16,30) LBO >> 4 = 1 (unused), [32,46) SBO >> 4 =
  // 1024 >> 4 (8 rows of 128 bytes), [62,64) swizzle mode 1 (128 bytes).
  I("  %dconst = arith.constant 4611686293305360384 : i64");
  I("  %m3ffff = arith.constant 262143 : i64");
  I("  %c4_i64 = arith.constant 4 : i64");
  I("  %aA = arith.andi %baseA, %m3ffff : i64");
  I("  %aA4 = arith.shrui %aA, %c4_i64 : i64");
  I("  %descA0 = arith.ori %aA4, %dconst : i64");
  I("  %aB = arith.andi %baseB, %m3ffff : i64");
  I("  %aB4 = arith.shrui %aB, %c4_i64 : i64");
  I("  %descB0 = arith.ori %aB4, %dconst : i64");
  I(fmt::format("  %stA = arith.constant {} : i64", aBytes >> 4));
  I(fmt::format("  %stB = arith.constant {} : i64", bBytes >> 4));
  // Descriptors count 16 bytes: each wgmma moves 32 bytes along K.
  for (int kk = 1; kk < bk / kInstr; ++kk)
    I(fmt::format("  %kk{} = arith.constant {} : i64", kk, kk * 2));
  I("  %zf = arith.constant 0.0 : f32");
  I("  %lane0 = arith.remui %wgtid, %c32 : index");
  I("  %isWgLeader = arith.cmpi eq, %lane0, %c0 : index");
  // The main loop carries the nacc accumulators as scalars and is written
  // as blocks. Scalars: the back end copies a struct-typed phi out of its
  // registers once per use, so nacc extractions from a struct phi cost
  // nacc^2 nodes. Blocks: the back edge carries `llvm.loop.unroll.disable`;
  // LLVM would otherwise peel the first iteration (to drop the `kt > 0`
  // test of the release), doubling the wgmma code and the back end's time.
  auto list = [&](const std::string &prefix, int n, const char *sep = ", ") {
    std::string l;
    for (int i = 0; i < n; ++i)
      l += (i ? sep + prefix : prefix) + std::to_string(i);
    return l;
  };
  std::string f32s, zeros, headArgs;
  for (int i = 0; i < nacc; ++i) {
    f32s += i ? ", f32" : "f32";
    zeros += ", %zf";
    headArgs += fmt::format(", %a{}: f32", i);
  }
  I(fmt::format("  %accF:{} = scf.execute_region -> ({}) {{", nacc, f32s));
  I(fmt::format("    cf.br ^head(%c0{} : index, {})", zeros, f32s));
  I(fmt::format("  ^head(%kt: index{}):", headArgs));
  I("    %more = arith.cmpi ult, %kt, %KT : index");
  I("    cf.cond_br %more, ^body, ^done");
  I("  ^body:");
  I(fmt::format("    %s = arith.remui %kt, %c{} : index", stages));
  I(fmt::format("    %r = arith.divui %kt, %c{} : index", stages));
  I("    %r1 = arith.andi %r, %c1 : index");
  I("    %pf = arith.index_cast %r1 : index to i1");
  I("    nvgpu.mbarrier.try_wait.parity %bar[%s], %pf, %ticks : !bars");
  I("    %s64 = arith.index_cast %s : index to i64");
  I("    %sa = arith.muli %s64, %stA : i64");
  I("    %sb = arith.muli %s64, %stB : i64");
  I("    %dA = arith.addi %descA0, %sa : i64");
  I("    %dB = arith.addi %descB0, %sb : i64");
  I("    nvvm.wgmma.fence.aligned");
  // The K tile's wgmma instructions form one inline asm statement, each
  // written as NVVM's lowering of nvvm.wgmma.mma_async writes it, chained
  // through the same nacc tied accumulator operands: instruction selection
  // of one statement instead of bk / kInstr.
  const int steps = bk / kInstr;
  const bool transOperands = mmaType == "bf16" || mmaType == "f16";
  const int descBase = 2 * nacc, scaleD = descBase + 2 * steps;
  std::string text = "{\\n.reg .pred p;\\n";
  text += fmt::format("setp.ne.b32 p, ${}, 0;\\n", scaleD);
  for (int kk = 0; kk < steps; ++kk)
    text += fmt::format("wgmma.mma_async.sync.aligned.m64n{}k{}.f32.{}.{} "
                        "{{{}}}, ${}, ${}, p, 1, 1{};\\n",
                        bn, kInstr, mmaType, mmaType, list("$", nacc),
                        descBase + 2 * kk, descBase + 2 * kk + 1,
                        transOperands ? ", 0, 0" : "");
  text += "}\\n";
  std::string constraints;
  for (int i = 0; i < nacc; ++i)
    constraints += "=f,";
  constraints += list("", nacc, ",") + ",";
  std::string operands = list("%a", nacc) + ", ", types = f32s + ", ";
  for (int kk = 0; kk < steps; ++kk) {
    std::string da = "%dA", db = "%dB";
    if (kk) {
      I(fmt::format("    %dA{0} = arith.addi %dA, %kk{0} : i64", kk));
      I(fmt::format("    %dB{0} = arith.addi %dB, %kk{0} : i64", kk));
      da = fmt::format("%dA{}", kk);
      db = fmt::format("%dB{}", kk);
    }
    constraints += "l,l,";
    operands += da + ", " + db + ", ";
    types += "i64, i64, ";
  }
  constraints += "n";
  operands += "%one_i32";
  types += "i32";
  I("    %one_i32 = llvm.mlir.constant(1 : i32) : i32");
  I(fmt::format(
      "    %wAcc = llvm.inline_asm has_side_effects asm_dialect = att "
      "\"{}\", \"{}\" {} : ({}) -> !acc",
      text, constraints, operands, types));
  for (int i = 0; i < nacc; ++i)
    I(fmt::format("    %w{0} = llvm.extractvalue %wAcc[{0}] : !acc", i));
  I("    nvvm.wgmma.commit.group.sync.aligned");
  I("    nvvm.wgmma.wait.group.sync.aligned 1");
  I("    %notFirst = arith.cmpi ugt, %kt, %c0 : index");
  I("    %rel = arith.andi %notFirst, %isWgLeader : i1");
  I("    scf.if %rel {");
  I(fmt::format("      %pk = arith.addi %kt, %c{} : index", stages - 1));
  I(fmt::format("      %ps = arith.remui %pk, %c{} : index", stages));
  I(fmt::format("      %pes = arith.addi %ps, %c{} : index", stages));
  I("      %tok = nvgpu.mbarrier.arrive %bar[%pes] : !bars -> "
    "!nvgpu.mbarrier.token");
  I("    }");
  I("    %kt1 = arith.addi %kt, %c1 : index");
  I(fmt::format("    cf.br ^head(%kt1, {} : index, {}) {{loop_annotation = "
                "#llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = "
                "true>>}}",
                list("%w", nacc), f32s));
  I("  ^done:");
  I(fmt::format("    scf.yield {} : {}", list("%a", nacc), f32s));
  I("  }");
  I("  nvvm.wgmma.wait.group.sync.aligned 0");
  // Epilogue: accumulator (warp w, lane l): row 16w + l/4 (+8), column
  // 8j + 2(l%4) (+1).
  I("  %warp = arith.divui %wgtid, %c32 : index");
  I("  %lane = arith.remui %wgtid, %c32 : index");
  I("  %wr = arith.muli %warp, %c16 : index");
  I("  %lr = arith.divui %lane, %c4 : index");
  I("  %lc0 = arith.remui %lane, %c4 : index");
  I("  %lc = arith.muli %lc0, %c2 : index");
  I("  %cwr = arith.muli %cw, %c64 : index");
  I("  %r0a = arith.addi %m0, %cwr : index");
  I("  %r0b = arith.addi %r0a, %wr : index");
  I("  %row0 = arith.addi %r0b, %lr : index");
  I("  %row1 = arith.addi %row0, %c8 : index");
  I("  %colb = arith.addi %n0, %lc : index");
  I("  %okr0 = arith.cmpi ult, %row0, %Mi : index");
  I("  %okr1 = arith.cmpi ult, %row1, %Mi : index");
  I("  %row0_64 = arith.index_cast %row0 : index to i64");
  I("  %row1_64 = arith.index_cast %row1 : index to i64");
  I("  %col0_64 = arith.index_cast %colb : index to i64");
  I("  %ro0 = arith.muli %row0_64, %ldc : i64");
  I("  %ro1 = arith.muli %row1_64, %ldc : i64");
  I("  %base0 = arith.addi %ro0, %col0_64 : i64");
  I("  %base1 = arith.addi %ro1, %col0_64 : i64");
  I(fmt::format("  %p0 = llvm.getelementptr %C[%base0] : (!llvm.ptr<1>, i64) "
                "-> !llvm.ptr<1>, {}",
                out));
  I(fmt::format("  %p1 = llvm.getelementptr %C[%base1] : (!llvm.ptr<1>, i64) "
                "-> !llvm.ptr<1>, {}",
                out));
  I("  %undef2 = llvm.mlir.poison : vector<2xf32>");
  I("  %i0 = llvm.mlir.constant(0 : i32) : i32");
  I("  %i1 = llvm.mlir.constant(1 : i32) : i32");
  const bool toBf16 = out != "f32";
  const int storeAlign = toBf16 ? 4 : 8;
  for (int j = 0; j < bn / 8; ++j) {
    for (int h = 0; h < 2; ++h) {
      int e0 = 4 * j + 2 * h, e1 = e0 + 1;
      std::string t = fmt::format("{}_{}", j, h);
      const std::string x = fmt::format("%accF#{}", e0),
                        y = fmt::format("%accF#{}", e1);
      I(fmt::format("  %v{0}a = llvm.insertelement {1}, %undef2[%i0 : i32] "
                    ": vector<2xf32>",
                    t, x));
      I(fmt::format("  %v{0}b = llvm.insertelement {1}, %v{0}a[%i1 : i32] "
                    ": vector<2xf32>",
                    t, y));
      if (toBf16)
        I(fmt::format("  %h{0} = llvm.fptrunc %v{0}b : vector<2xf32> to "
                      "vector<2x{1}>",
                      t, out));
    }
    I(fmt::format("  %cj{}_64 = arith.constant {} : i64", j, 8 * j));
    if (c.checkBounds) {
      I(fmt::format("  %cj{} = arith.constant {} : index", j, 8 * j));
      I(fmt::format("  %col{0} = arith.addi %colb, %cj{0} : index", j));
      I(fmt::format("  %okc{0} = arith.cmpi ult, %col{0}, %Ni : index", j));
    }
    for (int h = 0; h < 2; ++h) {
      std::string t = fmt::format("{}_{}", j, h);
      std::string rowOk = h ? "%okr1" : "%okr0", ptr = h ? "%p1" : "%p0";
      std::string value = toBf16 ? "%h" + t : "%v" + t + "b";
      const std::string indent = c.checkBounds ? "    " : "  ";
      if (c.checkBounds) {
        I(fmt::format("  %ok{} = arith.andi {}, %okc{} : i1", t, rowOk, j));
        I(fmt::format("  scf.if %ok{} {{", t));
      }
      I(fmt::format("{}%q{} = llvm.getelementptr {}[%cj{}_64] : "
                    "(!llvm.ptr<1>, i64) -> !llvm.ptr<1>, {}",
                    indent, t, ptr, j, out));
      I(fmt::format("{}llvm.store {}, %q{} {{alignment = {} : i64}} : "
                    "vector<2x{}>, !llvm.ptr<1>",
                    indent, value, t, storeAlign, out));
      if (c.checkBounds)
        I("  }");
    }
  }
  I("}");
  I("llvm.return");
  w("}");
  w("}");
  return o;
}

int gemmInputBytes(const GemmKernelConfig &c) {
  if (c.inputType == "e4m3" || c.inputType == "e5m2")
    return 1;
  return c.inputType == "f32" ? 4 : 2;
}

int64_t gemmSharedBytes(const GemmKernelConfig &c) {
  return static_cast<int64_t>(c.stages) * (128 + c.bn) * c.bk *
             gemmInputBytes(c) +
         1024;
}

} // namespace mlir::tile
