// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu -split-input-file -verify-diagnostics | FileCheck %s
// A gather of 8 rows x 128 f32 columns over 128 threads, 16-byte rows:
// 4-element vectors, two chunks a thread. The chunk's row is read from %p at
// %r0 + its tile row (-1 past %p's end) and checked against %x's rows even
// in the fast path; the tile check covers only the columns.

// CHECK-LABEL: gpu.func @gather
// The tile check covers the columns only.
// CHECK: %[[XC:.*]] = memref.dim %[[X:.*]], %c1
// CHECK-NOT: arith.constant 8 : index
// CHECK: %[[WHOLE:.*]] = arith.andi
// CHECK: scf.if %[[WHOLE]] -> (vector<8xf32>)
// Fast path, chunk 0: its row index from %p (-1 past %p's end) ...
// CHECK: %[[PN:.*]] = memref.dim %[[P:.*]], %c0
// CHECK: %[[PIN:.*]] = arith.cmpi ult, %{{.*}}, %[[PN]]
// CHECK: %[[ROW:.*]] = scf.if %[[PIN]] -> (i32) {
// CHECK:   memref.load %[[P]]
// CHECK: } else {
// CHECK:   arith.constant -1 : i32
// CHECK: %[[RI:.*]] = arith.index_cast %[[ROW]] : i32 to index
// ... checked against %x's rows: one vector load inside, zeros outside.
// CHECK: %[[XN:.*]] = memref.dim %[[X]], %c0
// CHECK: %[[RIN:.*]] = arith.cmpi ult, %[[RI]], %[[XN]]
// CHECK: scf.if %[[RIN]] -> (vector<4xf32>) {
// CHECK:   vector.load %[[X]][%[[RI]], %{{.*}}] {alignment = 16 : i64}
// CHECK: } else {
// CHECK:   vector.broadcast %{{.*}} : f32 to vector<4xf32>
// Chunk 1 reads its own row index.
// CHECK: memref.load %[[P]]
// CHECK: vector.load %[[X]]
func.func @gather(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                  %p: memref<?xi32, strided<[1], offset: ?>>,
                  %out: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64})
    attributes {tile.threads = 128 : i32} {
  %r0 = tile.block_id 0
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%r0, %c0] rows(%p : memref<?xi32, strided<[1], offset: ?>>) : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<8x128xf32>
  tile.store %t, %out[%r0, %c0] : tensor<8x128xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

func.func @bad_rows(%x: memref<?x?xf32>, %p: memref<?x?xi32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.load' op rows must be a rank-1 tensor of i32 or i64 row indices, got 'memref<?x?xi32>'}}
  %t = tile.load %x[%c0, %c0] rows(%p : memref<?x?xi32>) : memref<?x?xf32> -> tensor<1x32xf32>
  return
}
