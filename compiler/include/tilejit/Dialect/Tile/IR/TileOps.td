//===- TileOps.td - Operations of the tile dialect -----------------------===//
//
// Block indices, tile loads and stores between global tensors and fragments,
// and splats of scalars into fragments.
//
//===----------------------------------------------------------------------===//

#ifndef TILEJIT_DIALECT_TILE_IR_TILEOPS_TD
#define TILEJIT_DIALECT_TILE_IR_TILEOPS_TD

include "tilejit/Dialect/Tile/IR/TileDialect.td"
include "tilejit/Dialect/Tile/IR/TileAttrs.td"
include "mlir/IR/BuiltinTypes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

// A fragment: a statically shaped tensor held in the registers of a block.
def Tile_Fragment : Type<And<[AnyRankedTensor.predicate, HasStaticShapePred]>,
                         "statically shaped tensor (a fragment)", "::mlir::RankedTensorType">;

// A global tensor: a memref in global memory.
def Tile_GlobalTensor : MemRefOf<[AnyType]>;

def Tile_BlockIdOp : Tile_Op<"block_id", [Pure]> {
  let summary = "The index of this thread block along one grid dimension.";
  let description = [{
    Returns the block's index along grid dimension `dim` (0 = x, 1 = y,
    2 = z), as `index`.

    Example:

    ```mlir
    %by = tile.block_id 1
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

def Tile_LoadOp : Tile_Op<"load", [MemoryEffects<[MemRead]>,
                                    AttrSizedOperandSegments]> {
  let summary = "Load a tile of a global tensor into a fragment.";
  let description = [{
    Reads the box of the fragment's shape whose first element is
    `source[indices]`. Elements of the box that fall outside the tensor
    (index >= the dimension's size) read as zero, unless `in_bounds` is set,
    in which case the author promises the whole box is inside and no bounds
    checks are emitted.

    With `rows` (a gather), a rank-1 integer tensor, the dimension-0
    coordinate of element `e` is `rows[indices[0] + e[0]]`: `indices[0]`
    indexes `rows`. A row past the end of `rows`, or whose index is outside
    the source (a negative one too: padding), reads zeros, also under
    `in_bounds`, which then promises the other dimensions only.

    Example:

    ```mlir
    %t = tile.load %x[%row, %col] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<32x64xf32>
    %g = tile.load %x[%r0, %col] rows(%pos : memref<?xi32, strided<[?], offset: ?>>) : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Tile_GlobalTensor:$source, Variadic<Index>:$indices,
                       Optional<Tile_GlobalTensor>:$rows, UnitAttr:$in_bounds);
  let results = (outs Tile_Fragment:$result);
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$source, "ValueRange":$indices), [{
      build($_builder, $_state, result, source, indices, /*rows=*/Value(),
            /*in_bounds=*/false);
    }]>
  ];
  let assemblyFormat = [{
    $source `[` $indices `]` (`rows` `(` $rows^ `:` type($rows) `)`)?
    attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_LoadAtOp : Tile_Op<"load_at", [MemoryEffects<[MemRead]>]> {
  let summary = "Load the elements of a global tensor at per-element indices.";
  let description = [{
    Element `e` of the result is `source[indices[0][e], indices[1][e], ...]`:
    one integer fragment (i32 or i64) of the result's shape per dimension of
    the source, so that every element reads its own position (TileLang's
    `A[idx[i]]`, a table looked up at computed positions). An element whose
    position is outside the tensor (a negative index too) reads zero.

    Example:

    ```mlir
    %v = tile.load_at %map[%row, %col] : memref<?x?xi32, strided<[?, ?], offset: ?>>, tensor<4x8xi32>, tensor<4x8xi32> -> tensor<4x8xi32>
    ```
  }];
  let arguments = (ins Tile_GlobalTensor:$source,
                       Variadic<Tile_Fragment>:$indices);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` attr-dict `:` type($source) `,` type($indices)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [MemoryEffects<[MemWrite]>,
                                      AttrSizedOperandSegments]> {
  let summary = "Store a fragment into a tile of a global tensor.";
  let description = [{
    Writes the fragment to the box whose first element is `dest[indices]`.
    Elements that fall outside the tensor are dropped, unless `in_bounds` is
    set (then no bounds checks are emitted).

    With `rows` (a scatter), a rank-1 integer tensor, the dimension-0
    coordinate of element `e` is `rows[indices[0] + e[0]]`, as for a
    gathered `tile.load`. An element whose row is past the end of `rows`,
    or outside the destination (a negative one too: padding), is dropped,
    also under `in_bounds`, which then promises the other dimensions only.
    Two rows naming the same destination row write it in no defined order.

    With `mask`, an i1 fragment of the value's shape, only the elements
    whose mask is true are written: a chunk whose mask holds throughout as
    one vector access (a row's mask), the others element by element.

    Example:

    ```mlir
    tile.store %t, %out[%row, %col] : tensor<32x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
    tile.store %t, %out[%r0, %col] rows(%pos : memref<?xi32, strided<[?], offset: ?>>) : tensor<32x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
    tile.store %t, %out[%row, %col] mask(%m : tensor<32x64xi1>) : tensor<32x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
    ```
  }];
  let arguments = (ins Tile_Fragment:$value, Tile_GlobalTensor:$dest,
                       Variadic<Index>:$indices,
                       Optional<Tile_GlobalTensor>:$rows,
                       Optional<Tile_Fragment>:$mask, UnitAttr:$in_bounds);
  let builders = [
    OpBuilder<(ins "Value":$value, "Value":$dest, "ValueRange":$indices), [{
      build($_builder, $_state, value, dest, indices, /*rows=*/Value(),
            /*mask=*/Value(), /*in_bounds=*/false);
    }]>
  ];
  let assemblyFormat = [{
    $value `,` $dest `[` $indices `]` (`rows` `(` $rows^ `:` type($rows) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($value) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicOp : Tile_Op<"atomic", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Combine a fragment into a tile of a global tensor atomically.";
  let description = [{
    For each element of the fragment, atomically replaces `dest[indices +
    its coordinates]` by the sum (`add`), the maximum (`max`: floats as
    maxNum, integers signed) or the unsigned maximum (`umax`) of it and the
    element. Elements outside the tensor are dropped. Each element of a
    reduction result is combined once.

    Example:

    ```mlir
    tile.atomic add %t, %out[%row, %c0] : tensor<32x1xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
    ```
  }];
  let arguments = (ins Tile_AtomicKind:$kind, Tile_Fragment:$value,
                       Tile_GlobalTensor:$dest, Variadic<Index>:$indices);
  let assemblyFormat = [{
    $kind $value `,` $dest `[` $indices `]` attr-dict `:` type($value) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure,
    TypesMatchWith<"element type of the result matches the scalar",
                   "result", "value",
                   "::llvm::cast<::mlir::RankedTensorType>($_self).getElementType()">]> {
  let summary = "Broadcast a scalar to every element of a fragment.";
  let description = [{
    Example:

    ```mlir
    %s = tile.splat %scale : f32 -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[AnyInteger, AnyFloat, Index]>:$value);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `->` type($result)";
}

def Tile_TransposeOp : Tile_Op<"transpose", [Pure]> {
  let summary = "Swap the last two dimensions of a fragment (through shared memory).";
  let description = [{
    `result[..., j, i] = source[..., i, j]`. Dimensions before the last two
    must be 1. The lowering writes the block's fragment to a padded shared
    memory buffer of its own, synchronises the block, and reads it back in
    the transposed order, so both the global loads before and the global
    stores after keep their coalesced, vectorised form.

    Example:

    ```mlir
    %u = tile.transpose %t : tensor<1x64x128xbf16> -> tensor<1x128x64xbf16>
    ```
  }];
  let arguments = (ins Tile_Fragment:$source);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "Reduce a fragment along one dimension (sum, max, min, absmax).";
  let description = [{
    Combines the elements along dimension `dim`; the result keeps that
    dimension with size 1. `absmax` is the maximum of absolute values. Max
    and min of floats ignore NaN operands (as CUDA's fmaxf/fminf). The
    lowering combines a thread's own elements, then the threads of a warp
    with shuffles, then the warps through shared memory; every thread ends
    up holding the result of each row it holds elements of. Fragment
    dimensions and the thread count must be powers of two.

    Example:

    ```mlir
    %m = tile.reduce absmax %t dim 1 : tensor<32x128xf32> -> tensor<32x1xf32>
    ```
  }];
  let arguments = (ins Tile_ReduceKind:$kind, Tile_Fragment:$source,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = [{
    $kind $source `dim` $dim attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ScanOp : Tile_Op<"scan", [Pure]> {
  let summary = "Inclusive prefix sum of a fragment along one dimension.";
  let description = [{
    `result[..., i, ...] = source[..., 0, ...] + ... + source[..., i, ...]`
    along dimension `dim`, of any size, for i32, i64 and f32 fragments.
    The lowering goes through shared memory (Hillis-Steele: ceil(log2(n))
    steps of one barrier each), so floats are added in a fixed tree
    order, the same in every run.

    Example:

    ```mlir
    %s = tile.scan %t dim 1 : tensor<8x32xi32> -> tensor<8x32xi32>
    ```
  }];
  let arguments = (ins Tile_Fragment:$source,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = [{
    $source `dim` $dim attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_IotaOp : Tile_Op<"iota", [Pure]> {
  let summary = "A fragment of the coordinates along one dimension.";
  let description = [{
    `result[i_0, ..., i_n] = i_dim`, as the result's integer element type.
    With a comparison and a select it masks padding or finds the index of
    an extremum.

    Example:

    ```mlir
    %cols = tile.iota dim 1 : tensor<4x128xi32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = "`dim` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "Repeat a fragment along its dimensions of size 1.";
  let description = [{
    `result[i...] = source[j...]` with `j_d = 0` where the source dimension
    is 1 and `j_d = i_d` elsewhere. Free when the source is the result of
    a reduction of a fragment of the result's shape (its layout is a slice
    of the result's).

    Example:

    ```mlir
    %b = tile.broadcast %m : tensor<32x1xf32> -> tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Tile_Fragment:$source);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure]> {
  let summary = "View a fragment with another shape of the same element count.";
  let description = [{
    Keeps the row-major order of the elements (and their layout: a reshape
    moves no data).

    Example:

    ```mlir
    %r = tile.reshape %t : tensor<32x512xf32> -> tensor<32x4x128xf32>
    ```
  }];
  let arguments = (ins Tile_Fragment:$source);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_StackOp : Tile_Op<"stack", [Pure]> {
  let summary = "Fragments of one shape stacked along their last dimension.";
  let description = [{
    `k` parts of one type with a last dimension of size 1 become one
    fragment whose last dimension has size `k`: part `j` at `[..., j]`
    (e.g. the three words packed from each group of eight codes, or the two
    nibbles of each byte). tile-assign-layouts gives the parts one layout
    without sliced dimensions, of vector `v`, and the result that layout
    with vector `k * v`: slot `k * s + j` of a thread is slot `s` of part
    `j`, so no element moves between threads.

    Example:

    ```mlir
    %w = tile.stack %a, %b, %c : tensor<128x1xi32>, tensor<128x1xi32>, tensor<128x1xi32> -> tensor<128x3xi32>
    ```
  }];
  let arguments = (ins Variadic<Tile_Fragment>:$parts);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = "$parts attr-dict `:` type($parts) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_UnstackOp : Tile_Op<"unstack", [Pure]> {
  let summary = "A fragment split along its last dimension.";
  let description = [{
    The inverse of tile.stack: a fragment whose last dimension has size `k`
    becomes `k` parts with a last dimension of size 1, part `j` being
    `source[..., j]`. tile-assign-layouts gives the source a layout without
    sliced dimensions whose vector `V` is a multiple of `k`, and the parts
    that layout with vector `V / k`: slot `s` of part `j` is slot
    `k * s + j` of the source, in the same thread.

    Example:

    ```mlir
    %a, %b, %c = tile.unstack %w : tensor<128x3xi32> -> tensor<128x1xi32>, tensor<128x1xi32>, tensor<128x1xi32>
    ```
  }];
  let arguments = (ins Tile_Fragment:$source);
  let results = (outs Variadic<Tile_Fragment>:$parts);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($parts)";
  let hasVerifier = 1;
}

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout", [Pure]> {
  let summary = "The same fragment in another layout.";
  let description = [{
    Moves a fragment's elements to the threads and slots another layout
    gives them: through a shared buffer of one element each, written by the
    slots that hold an element's first copy and read back after a barrier.
    tile-assign-layouts inserts it where two layouts meet (operands of an
    element-wise op, a loop's carried value, a broadcast of a fragment that
    is not a reduction of the result's shape); source and result have the
    same shape and element type. With `vector = V` it is the author's
    annotation (`k.relayout`): the result gets the blocked layout of its
    shape with V consecutive elements a thread per chunk.

    Example:

    ```mlir
    %c = tile.convert_layout %t : tensor<32x1xf32, #tile.layout<shape = [32, 1], threads = 32, vector = 1>> -> tensor<32x1xf32, #tile.layout<shape = [32, 64], threads = 32, vector = 4, sliced = [1]>>
    ```
  }];
  let arguments = (ins Tile_Fragment:$source,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$vector);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ShuffleXorOp : Tile_Op<"shuffle_xor", [Pure,
    AllTypesMatch<["source", "result"]>]> {
  let summary = "Exchange a fragment's elements between the lanes of a warp.";
  let description = [{
    `result[..., i, ...] = source[..., i xor mask, ...]` along dimension
    `dim`, whose coordinate must be (the low bits of) the thread index:
    tile-assign-layouts checks that the dimensions after `dim` hold exactly
    one vector of the layout, and that `dim`'s size and the thread count are
    multiples of the smallest power of two above `mask` (then `i xor mask`
    is the coordinate held by thread `t xor mask`, a lane of the same warp).
    Lowers to one `shfl.sync.bfly` per slot. 32-bit elements, 0 < mask < 32.

    Example (128 threads, 4-element vectors: a butterfly step between lanes
    16 apart):

    ```mlir
    %y = tile.shuffle_xor %x dim 1 mask 16 : tensor<2x128x4xf32>
    ```
  }];
  let arguments = (ins Tile_Fragment:$source,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       I64Attr:$mask);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = "$source `dim` $dim `mask` $mask attr-dict `:` type($source)";
  let hasVerifier = 1;
}

def Tile_ShuffleIdxOp : Tile_Op<"shuffle_idx", [Pure,
    AllTypesMatch<["source", "result"]>]> {
  let summary = "Broadcast one lane's elements to its group of lanes.";
  let description = [{
    `result[..., i, ...] = source[..., (i - i mod S) + lane, ...]` along
    `dim`, with S = min(size of `dim`, 32): every group of S consecutive
    coordinates takes the one at `lane`. As for tile.shuffle_xor, `dim` must
    be the thread's dimension (tile-assign-layouts checks; S must divide the
    thread count). Lowers to one `shfl.sync.idx` a slot, from lane
    `(laneid & (32 - S)) | lane`. 32-bit elements, 0 <= lane < S.

    Example (lane 0 of each warp to all its lanes):

    ```mlir
    %y = tile.shuffle_idx %x dim 1 lane 0 : tensor<2x128x4xf32>
    ```
  }];
  let arguments = (ins Tile_Fragment:$source,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       I64Attr:$lane);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = "$source `dim` $dim `lane` $lane attr-dict `:` type($source)";
  let hasVerifier = 1;
}

def Tile_MatchAnyOp : Tile_Op<"match_any", [Pure]> {
  let summary = "Which lanes of each warp hold an equal element.";
  let description = [{
    `result[..., i, ...]` is a 32-bit mask over the group of 32 coordinates
    `i - i mod 32 .. i - i mod 32 + 31` along `dim`: bit j is set where
    `source[..., i - i mod 32 + j, ...] == source[..., i, ...]` (bit `i mod
    32` always). As for tile.shuffle_xor, `dim` must be the thread's
    dimension, its size and the thread count multiples of 32
    (tile-assign-layouts checks): the group is the lanes of one warp.
    Lowers to one `match.any.sync.b32` (or `.b64`) a slot, every lane of
    the warp taking part (not inside control flow that splits a warp).
    i32 or i64 elements; the result is i32.

    Example (each lane's peers among the 32 lanes of its warp):

    ```mlir
    %m = tile.match_any %ids dim 1 : tensor<4x32xi32> -> tensor<4x32xi32>
    ```
  }];
  let arguments = (ins Tile_Fragment:$source,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = "$source `dim` $dim attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_GridWaitOp : Tile_Op<"grid_wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Where a programmatic launch waits for the grid before it.";
  let description = [{
    In a kernel launched as a programmatic dependent launch (the
    `tile.programmatic` attribute), the point where its threads wait until
    the grid before it on the stream has completed and its writes are
    visible (`griddepcontrol.wait`); the kernel then lets the grid after it
    launch (`griddepcontrol.launch_dependents`). Without this op the wait is
    at the kernel's start. What comes before it may write no global memory
    and read only what the grid before it does not write (an op's second
    kernel reading the op's inputs, while its first kernel finishes). At
    most one, directly in the kernel's body (not in a loop or a branch).

    Example:

    ```mlir
    func.func @second(%ids: memref<?xi64>) attributes {
        tile.threads = 256 : i32, tile.programmatic} {
      // ... read %ids, count into shared memory ...
      tile.grid_wait
      // ... read what the first kernel wrote ...
      return
    }
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_StoreAtOp : Tile_Op<"store_at", [MemoryEffects<[MemRead, MemWrite]>,
                                          AttrSizedOperandSegments]> {
  let summary = "Store (or combine) a fragment's elements at per-element positions.";
  let description = [{
    The inverse of tile.load_at: element `e` of `value` goes to
    `dest[indices[0][e], indices[1][e], ...]`, one integer fragment (i32 or
    i64) of the value's shape per dimension of `dest` (global or shared
    memory). With `mask` (an i1 fragment of the value's shape) only the
    elements whose mask is true are written. A position outside `dest` (a
    negative index too) is dropped. Two elements naming one position write
    it in no defined order; with `combine` (`add`, `max`, `umax`, as
    tile.atomic) each is combined into it atomically instead.

    Example (a histogram in shared memory):

    ```mlir
    tile.store_at %ones, %hist[%ids] mask(%first : tensor<4x32xi1>) combine add : tensor<4x32xi32>, memref<64xi32, #gpu.address_space<workgroup>>, tensor<4x32xi32>
    ```
  }];
  let arguments = (ins Tile_Fragment:$value, Tile_GlobalTensor:$dest,
                       Variadic<Tile_Fragment>:$indices,
                       Optional<Tile_Fragment>:$mask,
                       OptionalAttr<Tile_AtomicKind>:$combine);
  let assemblyFormat = [{
    $value `,` $dest `[` $indices `]` (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`combine` $combine^)? attr-dict `:` type($value) `,` type($dest) `,`
    type($indices)
  }];
  let hasVerifier = 1;
}

// A tile in shared (workgroup) memory.
def Tile_SharedTile : MemRefOf<[AnyType]>;

def Tile_AllocSharedOp : Tile_Op<"alloc_shared", [MemoryEffects<[MemAlloc]>]> {
  let summary = "A tile of shared memory for the block.";
  let description = [{
    The result is a statically shaped memref in `#gpu.address_space<workgroup>`.
    Its layout (swizzle, padding) and its place in shared memory are the
    compiler's: a tile that feeds `tile.gemm` gets the 128-byte swizzle
    WGMMA reads and one buffer per pipeline stage. `row_pad` (chosen by
    tile-assign-shared-layouts for the tile's users) is the number of
    elements the buffer adds to each row: an mma.sync operand's rows start
    in different banks.

    Example:

    ```mlir
    %sa = tile.alloc_shared : memref<128x64xbf16, #gpu.address_space<workgroup>>
    %sx = tile.alloc_shared {row_pad = 8 : i64} : memref<32x128xbf16, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$row_pad);
  let results = (outs Tile_SharedTile:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_CopyOp : Tile_Op<"copy", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Copy a tile of a global tensor into a shared tile.";
  let description = [{
    Copies the box of the shared tile's shape whose first element is
    `source[indices]`; elements outside the tensor read as zero. The copy
    is a step of the whole block: when it returns, every thread sees the
    tile (the threads' `cp.async` pieces completed and a barrier passed).
    As with `tile.store` to a shared tile, the author's `gpu.barrier`
    before it keeps it from overwriting what other threads still read.

    Inside `tile.pipelined` the copy is issued stages ahead: in the main
    loop of a 384-thread gemm by the tensor memory accelerator (TMA),
    completing on an mbarrier (convert-tile-gemm-to-nvgpu); elsewhere
    `tile-lower-pipelined` marks it `async`: the threads only issue their
    `cp.async` pieces into the current group, and the loop's
    `nvvm.cp.async.wait.group` and barrier complete it.

    Example:

    ```mlir
    tile.copy %a[%m0, %k0], %sa : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<128x64xbf16, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins Tile_GlobalTensor:$source, Variadic<Index>:$indices,
                       Tile_SharedTile:$dest, UnitAttr:$async);
  let assemblyFormat = [{
    $source `[` $indices `]` `,` $dest attr-dict `:` type($source) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def Tile_GemmOp : Tile_Op<"gemm", [MemoryEffects<[MemRead]>,
    AllTypesMatch<["acc", "result"]>]> {
  let summary = "acc + a * b^T for shared tiles a (M x K) and b (N x K), or their transposes.";
  let description = [{
    Both operands are K-major shared tiles of one type (bf16, f16, f32
    multiplied as tf32, or fp8), or, for mma.sync, one bf16 or f16 and the
    other f32: multiplied as tf32, the 16-bit operand widened exactly; the
    accumulator is an f32 fragment (M x N). The tensor core multiplies an
    f32 operand's bits as tf32, which drops the low 13 mantissa bits;
    `round_tf32` (mma.sync only) rounds each f32 operand to the nearest
    tf32 instead, ties away from zero (`cvt.rna.tf32.f32`).
    `transpose_a` (`transpose_b`), mma.sync only: a is given as its
    transpose, a K x M (b: K x N) tile, the layout of a tensor whose rows
    run along K (a weight gradient's operands), read element by element.
    In the main loop of a pipelined kernel it lowers to
    `wgmma.mma_async` over 64-row slices of the accumulator, one per
    consumer warpgroup; anywhere else to warp-level `mma.sync` m16n8k16
    (bf16, f16) or m16n8k8 (tf32) over 16 x 8 tiles of the accumulator
    (M, N, K multiples of 16, 8 and the K step; no fp8).

    Example:

    ```mlir
    %r = tile.gemm %sa, %sb, %acc : memref<128x64xbf16, #gpu.address_space<workgroup>>, memref<256x64xbf16, #gpu.address_space<workgroup>>, tensor<128x256xf32>
    %t = tile.gemm %sx, %sw, %acc {round_tf32} : memref<32x128xbf16, #gpu.address_space<workgroup>>, memref<32x128xf32, #gpu.address_space<workgroup>>, tensor<32x32xf32>
    %g = tile.gemm %sg, %sx, %acc {transpose_a, transpose_b} : memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x64xbf16, #gpu.address_space<workgroup>>, tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Tile_SharedTile:$a, Tile_SharedTile:$b,
                       Tile_Fragment:$acc, UnitAttr:$round_tf32,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Tile_Fragment:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Tile_PipelinedOp : Tile_Op<"pipelined", [
    SingleBlockImplicitTerminator<"YieldOp">, RecursiveMemoryEffects]> {
  let summary = "A loop over `count` steps whose copies run `stages` ahead.";
  let description = [{
    The body runs for step = 0 .. count - 1 with the loop-carried values
    (`iter_args`); its `tile.copy` ops are issued up to `stages - 1` steps
    ahead of the computation that reads their tiles, each step's shared
    tiles in a buffer of their own.

    Example:

    ```mlir
    %r = tile.pipelined %n, %zero {stages = 4 : i64} : tensor<128x256xf32> -> tensor<128x256xf32> {
    ^bb0(%k: index, %acc: tensor<128x256xf32>):
      ...
      tile.yield %next : tensor<128x256xf32>
    }
    ```
  }];
  let arguments = (ins Index:$count, Variadic<AnyType>:$inits,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$stages);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $count `,` $inits attr-dict `:` type($inits) `->` type($results) $body
  }];
  let hasVerifier = 1;
}

def Tile_YieldOp : Tile_Op<"yield", [Pure, Terminator, ReturnLike,
                                     HasParent<"PipelinedOp">]> {
  let summary = "The loop-carried values of the next step of tile.pipelined.";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
}

#endif // TILEJIT_DIALECT_TILE_IR_TILEOPS_TD
