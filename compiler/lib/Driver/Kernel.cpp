//===- Kernel.cpp - tilejit::Kernel: a verified module with one kernel ---===//
#include "KernelImpl.h"

#include "Diagnostics.h"

#include "tilejit/Dialect/Tile/IR/Tile.h"
#include "tilejit/InitTilejit.h"
#include "tilejit/compiler/abi.h"
#include "tilejit/error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>

using namespace mlir;

namespace tilejit {

std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  registerTilejitDialects(registry);
  auto ctx =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  ctx->loadAllAvailableDialects();
  return ctx;
}

static std::vector<KernelParam> paramsOf(func::FuncOp func) {
  std::vector<KernelParam> params;
  for (auto [i, argType] : llvm::enumerate(func.getArgumentTypes())) {
    Type type = argType;
    KernelParam p;
    auto nameAttr = func.getArgAttrOfType<StringAttr>(i, "tile.name");
    p.name = nameAttr ? nameAttr.str() : fmt::format("arg{}", i);
    if (auto memref = dyn_cast<MemRefType>(type)) {
      p.kind = KernelParam::Kind::tensor;
      p.rank = static_cast<int>(memref.getRank());
      if (auto strided = dyn_cast<StridedLayoutAttr>(memref.getLayout()))
        p.unit_inner =
            !strided.getStrides().empty() && strided.getStrides().back() == 1;
      if (auto align = func.getArgAttrOfType<IntegerAttr>(i, "tile.align"))
        p.align_bytes = align.getInt();
      type = memref.getElementType();
    } else {
      p.kind = KernelParam::Kind::scalar;
    }
    std::optional<DType> dtype = fromMLIRType(type);
    if (!dtype) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << type;
      throw UserError(fmt::format(
          "kernel '{}': parameter {} has type {}, which no tilejit dtype "
          "names",
          func.getName().str(), i, text));
    }
    p.dtype = *dtype;
    params.push_back(std::move(p));
  }
  return params;
}

/// The `tile.grid` rule; every factor names a tensor argument and one of
/// its dimensions.
static std::array<GridExtent, 3>
gridOf(func::FuncOp func, ArrayAttr dims,
       const std::vector<KernelParam> &params) {
  std::array<GridExtent, 3> grid;
  for (auto [d, attr] : llvm::enumerate(dims)) {
    std::string text = cast<StringAttr>(attr).str(), why;
    std::optional<GridExtent> extent = GridExtent::parse(text, why);
    if (!extent)
      throw UserError(fmt::format("kernel '{}': tile.grid[{}]: {}",
                                  func.getName().str(), d, why));
    for (const GridFactor &f : extent->factors) {
      if (f.tensor.empty())
        continue;
      auto p = std::find_if(params.begin(), params.end(), [&](auto &p) {
        return p.name == f.tensor && p.kind == KernelParam::Kind::tensor;
      });
      if (p == params.end() || f.dim >= p->rank)
        throw UserError(fmt::format(
            "kernel '{}': tile.grid[{}] = '{}' names {}[{}]; requires a "
            "dimension of a tensor argument",
            func.getName().str(), d, text, f.tensor, f.dim));
    }
    grid[d] = std::move(*extent);
  }
  return grid;
}

Kernel makeKernel(std::unique_ptr<MLIRContext> &&context,
                  OwningOpRef<ModuleOp> &&module) {
  SmallVector<func::FuncOp> kernels;
  for (auto func : module->getOps<func::FuncOp>())
    if (func->hasAttr(tile::TileDialect::getThreadsAttrName()))
      kernels.push_back(func);
  if (kernels.size() != 1)
    throw UserError(fmt::format(
        "tile IR holds {} kernels (func.func with 'tile.threads'); requires "
        "exactly one",
        kernels.size()));
  auto impl = std::make_unique<Kernel::Impl>();
  func::FuncOp func = kernels.front();
  impl->name = func.getName().str();
  // Parsed IR gets the builder's check: a name LLVM and ptxas take as a
  // symbol.
  if (!is_identifier(impl->name))
    throw UserError(fmt::format("kernel name '{}' is not an identifier; "
                                "requires an ASCII letter or '_', then "
                                "letters, digits or '_'",
                                impl->name));
  impl->threads = static_cast<int>( // its range: the dialect's verifier
      cast<IntegerAttr>(func->getAttr(tile::TileDialect::getThreadsAttrName()))
          .getInt());
  impl->params = paramsOf(func);
  impl->programmatic =
      func->hasAttr(tile::TileDialect::getProgrammaticAttrName());
  if (auto dims =
          func->getAttrOfType<ArrayAttr>(tile::TileDialect::getGridAttrName()))
    impl->grid = gridOf(func, dims, impl->params);
  impl->context = std::move(context);
  impl->module = std::move(module);
  return Kernel(std::move(impl));
}

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kernel::Kernel(Kernel &&) noexcept = default;
Kernel &Kernel::operator=(Kernel &&) noexcept = default;
Kernel::~Kernel() {
  // The module must die before the context that owns its storage.
  if (impl_)
    impl_->module = nullptr;
}

const std::string &Kernel::name() const { return impl_->name; }
int Kernel::threads() const { return impl_->threads; }
const std::vector<KernelParam> &Kernel::params() const { return impl_->params; }
const std::optional<std::array<GridExtent, 3>> &Kernel::grid() const {
  return impl_->grid;
}

std::string Kernel::tile_ir() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  impl_->module->print(os);
  return text;
}

Kernel Kernel::parse(std::string_view tile_ir, std::string_view buffer_name) {
  auto ctx = makeContext();
  OwningOpRef<ModuleOp> module; // declared after ctx: destroyed before it
  {
    DiagnosticCollector diags(ctx.get());
    ParserConfig config(ctx.get());
    module = parseSourceString<ModuleOp>(
        StringRef(tile_ir.data(), tile_ir.size()), config,
        StringRef(buffer_name.data(), buffer_name.size()));
    if (!module || failed(verify(*module)))
      throw UserError(diags.text().empty() ? "tile IR failed to parse"
                                           : diags.text());
  }
  return makeKernel(std::move(ctx), std::move(module));
}

} // namespace tilejit
