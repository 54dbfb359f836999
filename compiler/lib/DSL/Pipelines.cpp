//===- Pipelines.cpp - DSL shared tiles, copies, gemm and pipelined loops -===//
#include "BuilderImpl.h"

#include "../Driver/KernelImpl.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace tilejit::dsl {

Value KernelBuilder::dim(const Tensor &t, int d, Loc loc) {
  impl_->checkOwn(t, loc, "dim");
  if (d < 0 || d >= t.rank())
    impl_->fail(loc, fmt::format("dim: {} is out of range for a tensor of "
                                 "rank {}",
                                 d, t.rank()));
  Location l = impl_->loc(loc);
  return impl_->wrap(
      memref::DimOp::create(impl_->builder, l, unwrap(t.raw()), d), DType::i64);
}

Extent KernelBuilder::blocks(const Tensor &t, int d, int64_t per_block,
                             Loc loc) {
  impl_->checkOwn(t, loc, "blocks");
  if (d < 0 || d >= t.rank())
    impl_->fail(loc, fmt::format("blocks: dimension {} is out of range for a "
                                 "tensor of rank {}",
                                 d, t.rank()));
  if (per_block < 1)
    impl_->fail(loc, fmt::format("blocks: per_block is {}; requires at least "
                                 "1",
                                 per_block));
  auto arg = dyn_cast<BlockArgument>(unwrap(t.raw()));
  if (!arg || arg.getOwner() != &impl_->func.getBody().front())
    impl_->fail(loc, "blocks: the tensor is not an argument of this kernel");
  Extent e;
  e.rule_.factors.push_back(
      {impl_->argNames[arg.getArgNumber()], d, per_block});
  return e;
}

void KernelBuilder::grid(const std::vector<Extent> &dims, Loc loc) {
  if (dims.empty() || dims.size() > 3)
    impl_->fail(
        loc, fmt::format("grid: {} dimensions; requires 1 to 3", dims.size()));
  if (impl_->func->hasAttr(tile::TileDialect::getGridAttrName()))
    impl_->fail(loc, "grid: the kernel's grid is declared already");
  OpBuilder &b = impl_->builder;
  SmallVector<Attribute> texts;
  for (size_t d = 0; d < 3; ++d)
    texts.push_back(b.getStringAttr(d < dims.size() ? dims[d].rule().to_string()
                                                    : std::string("1")));
  impl_->func->setAttr(tile::TileDialect::getGridAttrName(),
                       b.getArrayAttr(texts));
}

void KernelBuilder::min_blocks_per_sm(int64_t blocks, Loc loc) {
  const int64_t threads =
      impl_->func
          ->getAttrOfType<IntegerAttr>(tile::TileDialect::getThreadsAttrName())
          .getInt();
  if (blocks < 1 || blocks > 32 || blocks * threads > 2048)
    impl_->fail(loc, fmt::format("min_blocks_per_sm: {} blocks of {} threads; "
                                 "requires 1 to 32 blocks and at most 2048 "
                                 "threads an SM",
                                 blocks, threads));
  impl_->func->setAttr(
      tile::TileDialect::getMinBlocksAttrName(),
      impl_->builder.getI32IntegerAttr(static_cast<int32_t>(blocks)));
}

void KernelBuilder::programmatic_launch(Loc) {
  impl_->func->setAttr(tile::TileDialect::getProgrammaticAttrName(),
                       impl_->builder.getUnitAttr());
}

void KernelBuilder::grid_wait(Loc loc) {
  mlir::func::FuncOp func = impl_->func;
  if (!func->hasAttr(tile::TileDialect::getProgrammaticAttrName()))
    impl_->fail(loc, "grid_wait: the kernel is not a programmatic launch; "
                     "requires programmatic_launch() before it");
  if (impl_->builder.getInsertionBlock()->getParentOp() != func)
    impl_->fail(loc, "grid_wait: inside a loop or a branch; requires the "
                     "kernel's body, where every thread waits");
  if (!func.getBody().getOps<tile::GridWaitOp>().empty())
    impl_->fail(loc, "grid_wait: the kernel already waits; requires at most "
                     "one wait");
  tile::GridWaitOp::create(impl_->builder, impl_->loc(loc));
}

Value KernelBuilder::full(const std::vector<int64_t> &shape, double value,
                          DType dtype, Loc loc) {
  Value scalar = constant(value, dtype, loc);
  Location l = impl_->loc(loc);
  auto type = RankedTensorType::get(shape, unwrap(scalar).getType());
  return impl_->wrap(
      tile::SplatOp::create(impl_->builder, l, type, unwrap(scalar)), dtype);
}

Value KernelBuilder::alloc_shared(DType dtype,
                                  const std::vector<int64_t> &shape, Loc loc) {
  Location l = impl_->loc(loc);
  for (int64_t s : shape)
    if (s <= 0)
      impl_->fail(loc, fmt::format("alloc_shared: shape [{}] must have "
                                   "positive sizes",
                                   fmt::join(shape, ", ")));
  auto space = gpu::AddressSpaceAttr::get(impl_->context.get(),
                                          gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get(shape, toMLIRType(impl_->context.get(), dtype),
                              MemRefLayoutAttrInterface{}, space);
  return impl_->wrap(
      tile::AllocSharedOp::create(impl_->builder, l, type, IntegerAttr()),
      dtype);
}

/// `shared` as a shared tile, or a UserError naming `what`.
mlir::Value sharedTile(KernelBuilder::Impl &impl, const Value &shared,
                       const char *what, const Loc &loc) {
  impl.checkOwn(shared, loc, what);
  mlir::Value v = shared.valid() ? unwrap(shared) : mlir::Value();
  auto type = v ? dyn_cast<MemRefType>(v.getType()) : MemRefType();
  auto space =
      type ? dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace())
           : gpu::AddressSpaceAttr();
  if (!space || space.getValue() != gpu::AddressSpace::Workgroup)
    impl.fail(loc, fmt::format("{}: the tile has type {}; requires a shared "
                               "tile from alloc_shared",
                               what, v ? typeName(v.getType()) : "none"));
  return v;
}

static SmallVector<mlir::Value> originOf(KernelBuilder::Impl &impl,
                                         const std::vector<Value> &origin,
                                         size_t rank, const char *what,
                                         const Loc &loc) {
  if (origin.size() != rank)
    impl.fail(loc, fmt::format("{}: the origin has {} indices; requires {}, "
                               "one per dimension of the tile",
                               what, origin.size(), rank));
  SmallVector<mlir::Value> indices;
  for (const Value &v : origin) {
    if (!v.valid() || !unwrap(v).getType().isIndex())
      impl.fail(loc, fmt::format("{}: an index of the origin is not an "
                                 "index value",
                                 what));
    indices.push_back(unwrap(v));
  }
  return indices;
}

Value KernelBuilder::load(Value shared, const std::vector<Value> &origin,
                          const std::vector<int64_t> &shape, Loc loc) {
  mlir::Value tile = sharedTile(*impl_, shared, "load", loc);
  auto type = llvm::cast<MemRefType>(tile.getType());
  SmallVector<mlir::Value> indices =
      originOf(*impl_, origin, type.getRank(), "load", loc);
  auto result = RankedTensorType::get(shape, type.getElementType());
  Location l = impl_->loc(loc);
  return impl_->wrap(
      tile::LoadOp::create(impl_->builder, l, result, tile, indices),
      shared.dtype());
}

void KernelBuilder::store(Value fragment, Value shared,
                          const std::vector<Value> &origin, Loc loc) {
  mlir::Value tile = sharedTile(*impl_, shared, "store", loc);
  impl_->checkOwn(fragment, loc, "store");
  mlir::Value v = fragment.valid() ? unwrap(fragment) : mlir::Value();
  if (!v || !isa<RankedTensorType>(v.getType()))
    impl_->fail(loc, fmt::format("store: the value has type {}; requires a "
                                 "fragment",
                                 v ? typeName(v.getType()) : "none"));
  auto type = llvm::cast<MemRefType>(tile.getType());
  SmallVector<mlir::Value> indices =
      originOf(*impl_, origin, type.getRank(), "store", loc);
  tile::StoreOp::create(impl_->builder, impl_->loc(loc), v, tile, indices);
}

void KernelBuilder::barrier(Loc loc) {
  gpu::BarrierOp::create(impl_->builder, impl_->loc(loc));
}

void KernelBuilder::sync_warp(Loc loc) {
  Location l = impl_->loc(loc);
  auto all = arith::ConstantIntOp::create(impl_->builder, l, -1, 32);
  NVVM::SyncWarpOp::create(impl_->builder, l, all);
}

void KernelBuilder::copy(const Tensor &src, const std::vector<Value> &origin,
                         Value shared, Loc loc) {
  Location l = impl_->loc(loc);
  impl_->checkOwn(src, loc, "copy");
  impl_->checkOwn(shared, loc, "copy");
  if (!shared.valid() || !isa<MemRefType>(unwrap(shared).getType()))
    impl_->fail(loc, "copy: the destination must be a tile from alloc_shared");
  SmallVector<mlir::Value> indices;
  for (const Value &v : origin)
    indices.push_back(unwrap(v));
  tile::CopyOp::create(impl_->builder, l, unwrap(src.raw()), indices,
                       unwrap(shared));
}

Value KernelBuilder::gemm(Value a, Value b, Value acc, Loc loc) {
  return gemm(a, b, acc, Tf32::truncated, loc);
}

Value KernelBuilder::gemm(Value a, Value b, Value acc, Tf32 tf32, Loc loc) {
  return gemm(a, b, acc, GemmOptions{.tf32 = tf32}, loc);
}

Value KernelBuilder::gemm(Value a, Value b, Value acc, GemmOptions options,
                          Loc loc) {
  Location l = impl_->loc(loc);
  if (!a.valid() || !b.valid() || !acc.valid())
    impl_->fail(loc, "gemm: an operand is an empty dsl::Value");
  for (const Value &v : {a, b, acc})
    impl_->checkOwn(v, loc, "gemm");
  auto op = tile::GemmOp::create(impl_->builder, l, unwrap(acc).getType(),
                                 unwrap(a), unwrap(b), unwrap(acc),
                                 options.tf32 == Tf32::rounded,
                                 options.transpose_a, options.transpose_b);
  return impl_->wrap(op, acc.dtype());
}

std::vector<Value> KernelBuilder::pipelined(
    Value count, int stages, const std::vector<Value> &init,
    const std::function<std::vector<Value>(Value, std::vector<Value>)> &body,
    Loc loc) {
  Location l = impl_->loc(loc);
  if (stages < 1)
    impl_->fail(loc, fmt::format("pipelined: stages is {}; requires at least "
                                 "1",
                                 stages));
  OpBuilder &b = impl_->builder;
  SmallVector<mlir::Value> inits;
  SmallVector<Type> types;
  for (const Value &v : init) {
    inits.push_back(unwrap(v));
    types.push_back(unwrap(v).getType());
  }
  auto op = tile::PipelinedOp::create(b, l, types, unwrap(count), inits,
                                      b.getI64IntegerAttr(stages));
  Block *block = new Block();
  op.getBody().push_back(block);
  mlir::Value step = block->addArgument(b.getIndexType(), l);
  std::vector<Value> carried;
  for (auto [v, type] : llvm::zip(init, types))
    carried.push_back(impl_->wrap(block->addArgument(type, l), v.dtype()));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(block);
    std::vector<Value> next = body(impl_->wrap(step, DType::i64), carried);
    SmallVector<mlir::Value> yielded;
    for (const Value &v : next)
      yielded.push_back(unwrap(v));
    tile::YieldOp::create(b, impl_->loc(loc), yielded);
  }
  std::vector<Value> results;
  for (auto [r, v] : llvm::zip(op.getResults(), init))
    results.push_back(impl_->wrap(r, v.dtype()));
  return results;
}

} // namespace tilejit::dsl
