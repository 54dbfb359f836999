// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu -canonicalize -split-input-file | FileCheck %s
// Stores of reduction results whose chunks hold whole reduced groups (as
// pack_nibbles' pairs): the representatives of a chunk are consecutive
// elements and go as one narrower vector where the tile is inside and its
// start aligned to them; slot by slot elsewhere.

// 4 x 64 i32 over 32 threads in chunks of 4 (16-byte rows), summed in
// pairs: lanes 0 and 2 of each chunk hold 2 consecutive bytes of the
// 4 x 32 result. The fast path asks that the column start be even.
// CHECK-LABEL: gpu.func @pairs
// CHECK: %[[V:.*]] = arith.trunci %{{.*}} : vector<8xi32> to vector<8xi8>
// CHECK: %[[E0:.*]] = vector.extract %[[V]][0] : i8 from vector<8xi8>
// CHECK: %[[E2:.*]] = vector.extract %[[V]][2] : i8 from vector<8xi8>
// CHECK: %[[R:.*]] = arith.remui %[[C:.*]], %c2 : index
// CHECK: %[[A:.*]] = arith.cmpi eq, %[[R]], %c0 : index
// CHECK: %[[IN:.*]] = arith.andi %{{.*}}, %[[A]] : i1
// CHECK: scf.if %[[IN]] {
// CHECK: %[[P:.*]] = vector.from_elements %[[E0]], %[[E2]] : vector<2xi8>
// CHECK: vector.store %[[P]], %arg1[%{{.*}}, %{{.*}}] {alignment = 2 : i64} : memref<?x?xi8, strided<[?, 1], offset: ?>>, vector<2xi8>
// CHECK: vector.store %{{.*}} : memref<?x?xi8, strided<[?, 1], offset: ?>>, vector<2xi8>
// CHECK-NOT: vector.store
// CHECK: } else {
// CHECK: memref.store %{{.*}}, %arg1
// CHECK-NOT: vector.store
// CHECK: gpu.return
func.func @pairs(%x: memref<?x?xi32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                 %o: memref<?x?xi8, strided<[?, 1], offset: ?>> {tile.align = 16 : i64})
    attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %b = tile.block_id 0
  %c = arith.muli %b, %c32 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xi32, strided<[?, 1], offset: ?>> -> tensor<4x64xi32>
  %p = tile.reshape %t : tensor<4x64xi32> -> tensor<4x32x2xi32>
  %s = tile.reduce sum %p dim 2 : tensor<4x32x2xi32> -> tensor<4x32x1xi32>
  %r = tile.reshape %s : tensor<4x32x1xi32> -> tensor<4x32xi32>
  %n = arith.trunci %r : tensor<4x32xi32> to tensor<4x32xi8>
  tile.store %n, %o[%c0, %c] : tensor<4x32xi8>, memref<?x?xi8, strided<[?, 1], offset: ?>>
  return
}

// -----

// Groups of 8 over chunks of 4: a group spans two chunks (two threads), so
// its result goes slot by slot from its representative.
// CHECK-LABEL: gpu.func @split_groups
// CHECK-NOT: vector.store
// CHECK: memref.store
// CHECK-NOT: vector.store
// CHECK: gpu.return
func.func @split_groups(%x: memref<?x?xi32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                        %o: memref<?x?xi32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64})
    attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xi32, strided<[?, 1], offset: ?>> -> tensor<4x64xi32>
  %p = tile.reshape %t : tensor<4x64xi32> -> tensor<4x8x8xi32>
  %s = tile.reduce sum %p dim 2 : tensor<4x8x8xi32> -> tensor<4x8x1xi32>
  %r = tile.reshape %s : tensor<4x8x1xi32> -> tensor<4x8xi32>
  tile.store %r, %o[%c0, %c0] : tensor<4x8xi32>, memref<?x?xi32, strided<[?, 1], offset: ?>>
  return
}
