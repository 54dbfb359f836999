//===- GemmToNVGPU.cpp - A pipelined copy + gemm loop to TMA + WGMMA -----===//
//
// Recognises the main loop of a tile kernel that copies an A and a B tile
// into shared memory and accumulates their product (see the pass's
// description in Passes.td), checks every part of it, and replaces the
// kernel by the warp-specialised kernel GemmKernel.h builds, with the
// author's tile origin and step count cloned in.
//
//===----------------------------------------------------------------------===//
#include "GemmEpilogue.h"
#include "GemmKernel.h"

#include "../KernelModule.h"

#include "tilejit/Conversion/Passes.h"
#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTGEMMTONVGPU
#include "tilejit/Conversion/Passes.h.inc"
} // namespace mlir::tile

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The parts of a matched kernel.
struct GemmMatch {
  PipelinedOp loop;
  CopyOp copyA, copyB;
  GemmOp gemm;
  StoreOp store;
  Value m0, n0, count;
  BlockArgument a, b, c;
  GemmKernelConfig config;
  GemmEpilogueMatch epilogue;
};

/// `v` is `step * bk` (either order) for the loop's step.
bool isStepTimes(Value v, Value step, int64_t bk) {
  auto mul = v.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return false;
  for (auto [x, y] : {std::pair{mul.getLhs(), mul.getRhs()},
                      std::pair{mul.getRhs(), mul.getLhs()}}) {
    auto c = y.getDefiningOp<arith::ConstantIndexOp>();
    if (x == step && c && c.value() == bk)
      return true;
  }
  return false;
}

/// Shared memory a block may have on Hopper (the opt-in maximum).
constexpr int64_t kMaxSharedBytes = 232448;

/// A memref whose last stride is 1.
bool isInnerContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return false;
  auto strided = dyn_cast<StridedLayoutAttr>(memref.getLayout());
  return strided && !strided.getStrides().empty() &&
         strided.getStrides().back() == 1;
}

bool isZeroFragment(Value v) {
  if (auto splat = v.getDefiningOp<SplatOp>()) {
    auto c = splat.getValue().getDefiningOp<arith::ConstantFloatOp>();
    return c && c.value().isZero();
  }
  if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    return dense && dense.isSplat() && dense.getSplatValue<APFloat>().isZero();
  }
  return false;
}

FailureOr<GemmMatch> match(func::FuncOp kernel, PipelinedOp loop) {
  GemmMatch m;
  m.loop = loop;
  auto fail = [&](Operation *op, const Twine &what) {
    op->emitOpError() << "cannot lower to TMA + WGMMA: " << what;
    return failure();
  };
  if (loop.getInits().size() != 1 || !isZeroFragment(loop.getInits()[0]))
    return fail(loop, "the loop must carry one accumulator starting at zero");
  Block &body = loop.getBody().front();
  Value step = body.getArgument(0);
  for (Operation &op : body) {
    if (auto copy = dyn_cast<CopyOp>(op)) {
      (m.copyA ? m.copyB : m.copyA) = copy;
      continue;
    }
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      if (m.gemm)
        return fail(&op, "the loop holds more than one gemm");
      m.gemm = gemm;
      continue;
    }
    if (isa<YieldOp, arith::MulIOp, arith::ConstantOp>(op))
      continue;
    return fail(&op, "the loop may hold only tile.copy, tile.gemm and index "
                     "arithmetic");
  }
  if (!m.gemm || !m.copyA || !m.copyB)
    return fail(loop, "the loop must copy two tiles and multiply them");
  if (m.gemm.getAcc() != body.getArgument(1) ||
      body.getTerminator()->getOperand(0) != m.gemm.getResult())
    return fail(m.gemm, "the loop must yield acc = gemm(a, b, acc)");
  if (m.copyA.getDest() != m.gemm.getA())
    std::swap(m.copyA, m.copyB);
  if (m.copyA.getDest() != m.gemm.getA() || m.copyB.getDest() != m.gemm.getB())
    return fail(m.gemm, "its operands must be the tiles the loop copies");

  MemRefType sa = m.gemm.getA().getType(), sb = m.gemm.getB().getType();
  if (sa.getElementType() != sb.getElementType())
    return fail(m.gemm, "the operands must be of one type");
  if (m.gemm.getRoundTf32())
    return fail(m.gemm, "round_tf32 is for mma.sync (WGMMA reads tf32 as "
                        "the bits of its f32 operands)");
  if (m.gemm.getTransposeA() || m.gemm.getTransposeB())
    return fail(m.gemm, "transposed operands are for mma.sync (a 128-thread "
                        "kernel); the WGMMA kernel reads a as M x K and b as "
                        "N x K");
  int64_t bk = sa.getDimSize(1), bn = sb.getDimSize(0);
  int64_t rowBytes = bk * sa.getElementTypeBitWidth() / 8;
  if (sa.getDimSize(0) != 128 || rowBytes != 128 || bn % 16 != 0 || bn < 16 ||
      bn > 256)
    return fail(m.gemm, "tiles must be a: 128 x K and b: N x K with rows of "
                        "128 bytes (K = 32 for f32, 64 for bf16 and f16, 128 "
                        "for fp8) and N a multiple of 16 up to 256");
  for (CopyOp copy : {m.copyA, m.copyB}) {
    auto arg = dyn_cast<BlockArgument>(copy.getSource());
    if (!arg || arg.getOwner() != &kernel.getBody().front())
      return fail(copy, "the source must be a tensor argument of the kernel");
    if (copy.getIndices().size() != 2 ||
        !isStepTimes(copy.getIndices()[1], step, bk))
      return fail(copy,
                  "the tile origin must be [row, step * " + Twine(bk) + "]");
    if (copy.getIndices()[0].getParentRegion() == &loop.getBody())
      return fail(copy, "the row of the tile must not change in the loop");
  }
  m.a = cast<BlockArgument>(m.copyA.getSource());
  m.b = cast<BlockArgument>(m.copyB.getSource());
  m.m0 = m.copyA.getIndices()[0];
  m.n0 = m.copyB.getIndices()[0];
  m.count = loop.getCount();

  // The accumulator, through the author's epilogue, is stored at [m0, n0]
  // of c.
  FailureOr<GemmEpilogueMatch> epilogue =
      matchGemmEpilogue(kernel, loop.getResult(0), m.m0, m.n0);
  if (failed(epilogue))
    return failure();
  m.epilogue = std::move(*epilogue);
  m.store = m.epilogue.store;
  Value stored = m.store.getValue();
  auto c = dyn_cast<BlockArgument>(m.store.getDest());
  if (!c || c.getOwner() != &kernel.getBody().front())
    return fail(m.store, "the destination must be a tensor argument");
  m.c = c;

  m.config.name = kernel.getName().str();
  m.config.bn = static_cast<int>(bn);
  m.config.bk = static_cast<int>(bk);
  m.config.stages = static_cast<int>(loop.getStages());
  m.config.checkBounds = !m.store.getInBounds();
  m.config.inputType = gemmTypeName(sa.getElementType());
  m.config.outputType =
      gemmTypeName(cast<RankedTensorType>(stored.getType()).getElementType());
  if (m.config.outputType != "bf16" && m.config.outputType != "f16" &&
      m.config.outputType != "f32")
    return fail(m.store, "the output must be bf16, f16 or f32");
  // 16-bit results go out through TMA where the author declared C's rows
  // 16-byte aligned (what a tensor map needs), the tile's columns fill the
  // store buffers in whole 64-column boxes, and the buffers fit beside the
  // stages; else through st.global.
  auto align = kernel.getArgAttrOfType<IntegerAttr>(
      c.getArgNumber(), TileDialect::getAlignAttrName());
  GemmKernelConfig withTma = m.config;
  withTma.tmaStore = true;
  m.config.tmaStore =
      m.config.outputType != "f32" && align && align.getInt() >= 16 &&
      isInnerContiguous(c.getType()) && bn % 64 == 0 &&
      bn % gemmStoreColumns(withTma) == 0 &&
      gemmSharedBytes(withTma) + 16 * m.config.stages <= kMaxSharedBytes;
  // Nothing else may happen in the kernel.
  for (Operation &op : kernel.getBody().front()) {
    if (&op == loop || &op == m.store || m.epilogue.all.contains(&op) ||
        isa<func::ReturnOp, AllocSharedOp, SplatOp, BlockIdOp>(op) ||
        isa<arith::ArithDialect>(op.getDialect()) || isa<memref::DimOp>(op))
      continue;
    return fail(&op, "a gemm kernel may hold only its main loop, the index "
                     "arithmetic of the tile origin and the final store");
  }
  return m;
}

/// Clones the computation of an index (block ids, tensor sizes, constants,
/// arithmetic) into the new kernel, the block id along x being `tile`.
class IndexCloner {
public:
  IndexCloner(OpBuilder &b, const GemmMatch &m, LLVM::LLVMFuncOp kernel,
              Value tile)
      : b(b), m(m), tile(tile) {
    auto size = [&](unsigned arg) {
      return arith::IndexCastOp::create(b, kernel.getLoc(), b.getIndexType(),
                                        kernel.getArgument(arg))
          .getResult();
    };
    sizeM = size(3);
    sizeN = size(4);
    sizeK = size(5);
  }

  FailureOr<Value> clone(Value v) {
    if (Value done = mapping.lookupOrNull(v))
      return done;
    Operation *op = v.getDefiningOp();
    if (!op) {
      emitError(v.getLoc()) << "cannot lower to TMA + WGMMA: the tile origin "
                               "and step count may use only block ids, "
                               "tensor sizes and constants";
      return failure();
    }
    Value result;
    if (auto id = dyn_cast<BlockIdOp>(op)) {
      static constexpr gpu::Dimension dims[] = {
          gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z};
      result = id.getDim() == 0
                   ? tile
                   : gpu::BlockIdOp::create(b, op->getLoc(), dims[id.getDim()])
                         .getResult();
    } else if (auto dim = dyn_cast<memref::DimOp>(op)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      Value src = dim.getSource();
      if (index && src == m.a)
        result = *index == 0 ? sizeM : sizeK;
      else if (index && src == m.b)
        result = *index == 0 ? sizeN : sizeK;
      else if (index && src == m.c)
        result = *index == 0 ? sizeM : sizeN;
      if (!result) {
        op->emitOpError() << "cannot lower to TMA + WGMMA: only the sizes of "
                             "the gemm's tensors are known in the kernel";
        return failure();
      }
    } else if (isa<arith::ArithDialect>(op->getDialect())) {
      for (Value operand : op->getOperands())
        if (failed(clone(operand)))
          return failure();
      result = b.clone(*op, mapping)->getResult(0);
    } else {
      op->emitOpError() << "cannot lower to TMA + WGMMA: the tile origin and "
                           "step count may use only block ids, tensor sizes "
                           "and constants";
      return failure();
    }
    mapping.map(v, result);
    return result;
  }

private:
  OpBuilder &b;
  const GemmMatch &m;
  Value tile;
  IRMapping mapping;
  Value sizeM, sizeN, sizeK;
};

LogicalResult lower(func::FuncOp func, GemmMatch &m, ModuleOp module) {
  MLIRContext *ctx = func.getContext();
  gpu::GPUModuleOp gpuModule = getOrCreateKernelModule(module);
  OpBuilder b = OpBuilder::atBlockEnd(gpuModule.getBody());
  // The author's epilogue, unless it only converts the accumulator: its
  // scalars and vectors become parameters after the kernel's eight.
  const bool fused = !m.epilogue.isPlain();
  SmallVector<Type> extra;
  if (fused)
    extra = m.epilogue.params(ctx, 8);
  LLVM::LLVMFuncOp built;
  llvm::DenseMap<Value, Value> indices;
  GemmEpilogueFn epilogue;
  if (fused)
    epilogue = makeGemmEpilogue(m.epilogue, built, indices);
  FailureOr<LLVM::LLVMFuncOp> kernel = buildGemmKernel(
      b, func.getLoc(), m.config, extra,
      [&](OpBuilder &kb, LLVM::LLVMFuncOp k, Value tile,
          bool forEpilogue) -> FailureOr<GemmOrigin> {
        built = k;
        IndexCloner cloner(kb, m, k, tile);
        FailureOr<Value> m0 = cloner.clone(m.m0);
        if (failed(m0))
          return failure();
        FailureOr<Value> n0 = cloner.clone(m.n0);
        if (failed(n0))
          return failure();
        FailureOr<Value> count = cloner.clone(m.count);
        if (failed(count))
          return failure();
        for (const EpilogueLeaf &leaf : m.epilogue.leaves) {
          if (!forEpilogue || !leaf.index)
            continue;
          FailureOr<Value> index = cloner.clone(leaf.index);
          if (failed(index))
            return failure();
          indices[leaf.index] = *index;
        }
        return GemmOrigin{*m0, *n0, *count};
      },
      epilogue);
  if (failed(kernel))
    return failure();
  (*kernel)->setAttr(
      "tilejit.shared_bytes",
      IntegerAttr::get(IntegerType::get(ctx, 64), gemmSharedBytes(m.config)));
  // The launch arguments the kernel takes, by the author's tensor names
  // (KernelAbi's text form): the host binds them without knowing this
  // lowering.
  auto name = [&](BlockArgument arg) {
    auto attr =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tile.name");
    return attr ? attr.str() : std::string("?");
  };
  const std::string nameA = name(m.a), nameB = name(m.b), nameC = name(m.c);
  const std::string &in = m.config.inputType, &out = m.config.outputType;
  SmallVector<Attribute> abi;
  for (const std::string &line :
       {fmt::format("arg tensor_map {} {} 2 128 {}", nameA, in, m.config.bk),
        fmt::format("arg tensor_map {} {} 2 {} {}", nameB, in, m.config.bn,
                    m.config.bk),
        m.config.tmaStore
            ? fmt::format("arg tensor_map {} {} 2 64 64", nameC, out)
            : fmt::format("arg pointer {} {} 2", nameC, out),
        fmt::format("arg size {} {} 2 0", nameA, in),
        fmt::format("arg size {} {} 2 0", nameB, in),
        fmt::format("arg size {} {} 2 1", nameA, in),
        fmt::format("arg row_stride {} {} 2", nameC, out),
        std::string("arg blocks grid i64 0 0"), std::string("persistent")})
    abi.push_back(StringAttr::get(ctx, line));
  if (fused)
    for (const std::string &line : m.epilogue.abiLines(func))
      abi.push_back(StringAttr::get(ctx, line));
  (*kernel)->setAttr("tilejit.abi", ArrayAttr::get(ctx, abi));
  func.erase();
  return success();
}

struct ConvertGemmToNVGPUPass
    : mlir::tile::impl::ConvertGemmToNVGPUBase<ConvertGemmToNVGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<func::FuncOp, PipelinedOp>> work;
    // The main loops with a gemm of 384-thread kernels (a producer and two
    // consumer warpgroups); tile-lower-pipelined takes the others.
    for (auto func : module.getOps<func::FuncOp>()) {
      auto threads =
          func->getAttrOfType<IntegerAttr>(TileDialect::getThreadsAttrName());
      if (!threads || threads.getInt() != 384)
        continue;
      func.walk([&](PipelinedOp loop) {
        bool hasGemm = false;
        loop.getBody().walk([&](GemmOp) { hasGemm = true; });
        if (hasGemm)
          work.push_back({func, loop});
      });
    }
    for (auto [func, loop] : work) {
      FailureOr<GemmMatch> m = match(func, loop);
      if (failed(m) || failed(lower(func, *m, module)))
        return signalPassFailure();
    }
  }
};

} // namespace
