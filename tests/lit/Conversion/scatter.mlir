// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu -split-input-file -verify-diagnostics | FileCheck %s
// A scatter (tile.store with rows) of 8 rows x 128 f32 columns over 128
// threads: 4-element vectors, two chunks a thread. As for a gather, each
// chunk's row comes from %p at %r0 + its tile row (-1 past %p's end) and is
// checked against %out's rows even in the fast path, whose tile check
// covers only the columns; a reduction result's slots scatter one by one,
// each from its representative.

// CHECK-LABEL: gpu.func @scatter(%arg0: {{.*}}, %arg1: memref<?xi32, {{.*}}>, %arg2: {{.*}}, %arg3:
// The tile check covers the columns only.
// CHECK: memref.dim %arg2, %c1
// CHECK-NOT: arith.constant 8 : index
// CHECK: %[[WHOLE:.*]] = arith.andi
// CHECK: scf.if %[[WHOLE]] {
// Fast path, chunk 0: its row from %p (-1 past %p's end) ...
// CHECK: %[[PN:.*]] = memref.dim %arg1, %c0
// CHECK: %[[PIN:.*]] = arith.cmpi ult, %{{.*}}, %[[PN]]
// CHECK: %[[ROW:.*]] = scf.if %[[PIN]] -> (i32) {
// CHECK:   memref.load %arg1
// CHECK: } else {
// CHECK:   arith.constant -1 : i32
// CHECK: %[[RI:.*]] = arith.index_cast %[[ROW]] : i32 to index
// ... checked against %out's rows: one vector store inside, nothing else.
// CHECK: %[[ON:.*]] = memref.dim %arg2, %c0
// CHECK: %[[RIN:.*]] = arith.cmpi ult, %[[RI]], %[[ON]]
// CHECK: scf.if %[[RIN]] {
// CHECK-NEXT: vector.store %{{.*}}, %arg2[%[[RI]], %{{.*}}] {alignment = 16 : i64}
// CHECK-NEXT: } else {
// CHECK-NEXT: }
// Chunk 1 reads its own row index.
// CHECK: memref.load %arg1
// CHECK: vector.store %{{.*}}, %arg2
// The row sums: a slot stores where it represents its row and its row is
// inside %sums.
// CHECK: %[[REP:.*]] = arith.cmpi eq
// CHECK: %[[SROW:.*]] = scf.if %{{.*}} -> (i32) {
// CHECK:   memref.load %arg1
// CHECK: %[[SRI:.*]] = arith.index_cast %[[SROW]] : i32 to index
// CHECK: %[[SN:.*]] = memref.dim %arg3, %c0
// CHECK: %[[SIN:.*]] = arith.cmpi ult, %[[SRI]], %[[SN]]
// CHECK: arith.andi %[[REP]], %[[SIN]]
// CHECK: memref.store %{{.*}}, %arg3[%[[SRI]], %{{.*}}]
func.func @scatter(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                   %p: memref<?xi32, strided<[1], offset: ?>>,
                   %out: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                   %sums: memref<?x?xf32, strided<[?, 1], offset: ?>>)
    attributes {tile.threads = 128 : i32} {
  %r0 = tile.block_id 0
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%r0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<8x128xf32>
  tile.store %t, %out[%r0, %c0] rows(%p : memref<?xi32, strided<[1], offset: ?>>) : tensor<8x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  %s = tile.reduce sum %t dim 1 : tensor<8x128xf32> -> tensor<8x1xf32>
  tile.store %s, %sums[%r0, %c0] rows(%p : memref<?xi32, strided<[1], offset: ?>>) : tensor<8x1xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

func.func @bad_rows(%x: memref<?x?xf32>, %p: memref<?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<1x32xf32>
  // expected-error @+1 {{'tile.store' op rows must be a rank-1 tensor of i32 or i64 row indices, got 'memref<?xf32>'}}
  tile.store %t, %x[%c0, %c0] rows(%p : memref<?xf32>) : tensor<1x32xf32>, memref<?x?xf32>
  return
}

// -----

func.func @rank1_rows(%x: memref<?xf32>, %p: memref<?xi32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.load' op with rows requires a tensor of rank 2 or more (rows of elements), got 'memref<?xf32>'}}
  %t = tile.load %x[%c0] rows(%p : memref<?xi32>) : memref<?xf32> -> tensor<32xf32>
  return
}

// -----

func.func @rank1_scatter(%x: memref<?xf32>, %p: memref<?xi32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : memref<?xf32> -> tensor<32xf32>
  // expected-error @+1 {{'tile.store' op with rows requires a tensor of rank 2 or more (rows of elements), got 'memref<?xf32>'}}
  tile.store %t, %x[%c0] rows(%p : memref<?xi32>) : tensor<32xf32>, memref<?xf32>
  return
}
