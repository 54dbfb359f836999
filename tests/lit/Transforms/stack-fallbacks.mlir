// RUN: %tilejit-opt %s -tile-assign-layouts -split-input-file | FileCheck %s
// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu -split-input-file | FileCheck %s --check-prefix=GPU
// Where a stack's chunks of 3 (a vector that is not a power of two) cannot
// go as they are, they are converted first: a store whose access does not
// take them gets a vector dividing its rows (no chunk runs past a row), and
// a reduction that exchanges elements between threads gets a power-of-two
// vector.

!g = memref<?x?xi32, strided<[?, 1], offset: ?>>
// Rows promised 4-byte aligned only: single elements.
// CHECK-LABEL: func.func @store_unaligned
// CHECK: tile.stack {{.*}} -> tensor<128x3xi32, #tile.layout<shape = [128, 3], threads = 32, vector = 3>>
// CHECK: tile.convert_layout {{.*}} -> tensor<128x3xi32, #tile.layout<shape = [128, 3], threads = 32, vector = 1>>
// CHECK-NEXT: tile.store
// GPU-LABEL: gpu.func @store_unaligned
// GPU-NOT: vector.store
// GPU: gpu.return
func.func @store_unaligned(%codes: !g {tile.align = 16 : i64}, %words: !g {tile.align = 4 : i64}) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %codes[%c0, %c0] : !g -> tensor<128x8xi32>
  %r = tile.convert_layout %t {vector = 8 : i64} : tensor<128x8xi32> -> tensor<128x8xi32>
  %a = tile.reduce sum %r dim 1 : tensor<128x8xi32> -> tensor<128x1xi32>
  %b = tile.reduce max %r dim 1 : tensor<128x8xi32> -> tensor<128x1xi32>
  %c = tile.reduce min %r dim 1 : tensor<128x8xi32> -> tensor<128x1xi32>
  %s = tile.stack %a, %b, %c : tensor<128x1xi32>, tensor<128x1xi32>, tensor<128x1xi32> -> tensor<128x3xi32>
  tile.store %s, %words[%c0, %c0] : tensor<128x3xi32>, !g
  return
}

// -----

!g = memref<?x?xi32, strided<[?, 1], offset: ?>>
// Chunks of 3 in rows of 4 would cross rows: converted.
// CHECK-LABEL: func.func @store_rows_of_four
// CHECK: tile.reshape {{.*}} -> tensor<96x4xi32, #tile.layout<shape = [96, 4], threads = 128, vector = 3>>
// CHECK: tile.convert_layout {{.*}} -> tensor<96x4xi32, #tile.layout<shape = [96, 4], threads = 128, vector = 1>>
// CHECK-NEXT: tile.store
// GPU-LABEL: gpu.func @store_rows_of_four
// GPU-NOT: vector.store {{.*}}vector<3xi32>
// GPU: gpu.return
func.func @store_rows_of_four(%x: !g {tile.align = 16 : i64}, %words: !g {tile.align = 16 : i64}) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%c0, %c0] : !g -> tensor<128x1xi32>
  %b = arith.addi %a, %a : tensor<128x1xi32>
  %c = arith.muli %a, %a : tensor<128x1xi32>
  %s = tile.stack %a, %b, %c : tensor<128x1xi32>, tensor<128x1xi32>, tensor<128x1xi32> -> tensor<128x3xi32>
  %r = tile.reshape %s : tensor<128x3xi32> -> tensor<96x4xi32>
  tile.store %r, %words[%c0, %c0] : tensor<96x4xi32>, !g
  return
}

// -----

!g = memref<?x?xi32, strided<[?, 1], offset: ?>>
// Pairs that straddle threads' chunks of 3: the reduction's source is
// converted to a power-of-two vector first.
// CHECK-LABEL: func.func @reduce_pairs
// CHECK: tile.convert_layout {{.*}} : tensor<96x2xi32, #tile.layout<shape = [96, 2], threads = 64, vector = 3>> -> tensor<96x2xi32, #tile.layout<shape = [96, 2], threads = 64, vector = 1>>
// CHECK-NEXT: tile.reduce sum
func.func @reduce_pairs(%x: !g {tile.align = 16 : i64}, %o: !g {tile.align = 16 : i64}) attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%c0, %c0] : !g -> tensor<64x1xi32>
  %b = arith.addi %a, %a : tensor<64x1xi32>
  %c = arith.muli %a, %a : tensor<64x1xi32>
  %s = tile.stack %a, %b, %c : tensor<64x1xi32>, tensor<64x1xi32>, tensor<64x1xi32> -> tensor<64x3xi32>
  %r = tile.reshape %s : tensor<64x3xi32> -> tensor<96x2xi32>
  %m = tile.reduce sum %r dim 1 : tensor<96x2xi32> -> tensor<96x1xi32>
  tile.store %m, %o[%c0, %c0] : tensor<96x1xi32>, !g
  return
}
