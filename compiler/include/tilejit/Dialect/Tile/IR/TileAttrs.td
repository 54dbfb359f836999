//===- TileAttrs.td - Attributes of the tile dialect ---------------------===//
//
// The layout of a fragment (which thread holds which element) and the kinds
// of reduction.
//
//===----------------------------------------------------------------------===//

#ifndef TILEJIT_DIALECT_TILE_IR_TILEATTRS_TD
#define TILEJIT_DIALECT_TILE_IR_TILEATTRS_TD

include "tilejit/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "how tile.reduce combines elements", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"absmax", 3>]> {
  let cppNamespace = "::mlir::tile";
}

def Tile_AtomicKind : I32EnumAttr<"AtomicKind", "how tile.atomic combines a fragment into memory", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"umax", 2>]> {
  let cppNamespace = "::mlir::tile";
}

def Tile_LayoutAttr : AttrDef<Tile_Dialect, "Layout"> {
  let mnemonic = "layout";
  let summary = "Which thread of the block holds which element of a fragment.";
  let description = [{
    A blocked layout over a *distribution shape* `shape` for a block of
    `threads` threads and vectors of `vector` elements. Number the elements
    of `shape` row-major; element `l` is element `l mod vector` of chunk
    `l div vector`, and chunk `q` is chunk `q div threads` of thread
    `q mod threads`. So thread `t` holds `product(shape) / threads` slots,
    slot `s` being element `((s div vector) * threads + t) * vector +
    s mod vector`. A 16-byte `vector` gives each thread one vector load or
    store per chunk, coalesced across the warp.

    `sliced` dimensions of `shape` are collapsed: the elements that differ
    only in them are one element of the fragment, held (equal) in every
    slot that maps to it. That is the layout of a reduction's result, which
    makes broadcasting it back to the reduced shape free. The fragment's
    elements are `shape` without the sliced dimensions, row-major; the
    fragment may have any shape with that many elements (a reshape keeps
    the layout).

    Example: `#tile.layout<shape = [32, 128], threads = 256, vector = 8, sliced = [1]>`
    is the layout of `tensor<32x1xf32>` from a max over the rows of a
    `tensor<32x128xf32>` whose 16 threads per row each hold 8 elements.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "int64_t":$threads, "int64_t":$vector,
                        OptionalArrayRefParameter<"int64_t">:$sliced);
  let assemblyFormat = [{
    `<` `shape` `=` `[` $shape `]` `,` `threads` `=` $threads `,` `vector` `=`
    $vector (`,` `sliced` `=` `[` $sliced^ `]`)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Elements of the distribution shape each thread holds.
    int64_t getSlots() const;
    /// Elements of the fragment: `shape` without its sliced dimensions.
    int64_t getNumElements() const;
    /// The row-major index, in the fragment, of the element that `thread`
    /// holds in `slot`.
    int64_t getElement(int64_t thread, int64_t slot) const;
    bool isSliced(int64_t dim) const;
    /// The same layout with `dim` sliced too.
    LayoutAttr slice(int64_t dim) const;
    /// The same layout with `dims` no longer sliced.
    LayoutAttr unslice(::llvm::ArrayRef<int64_t> dims) const;
    /// `shape` with 1 for each sliced dimension: the fragment shape whose
    /// coordinates are those of the distribution shape.
    ::llvm::SmallVector<int64_t> getCanonicalShape() const;
  }];
}

#endif // TILEJIT_DIALECT_TILE_IR_TILEATTRS_TD
