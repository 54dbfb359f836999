// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu -split-input-file -verify-diagnostics | FileCheck %s
// A masked store of 1 x 128 i32 zeros over 128 threads where a loaded i32
// fragment is -1: one scalar store a thread, under its mask element and
// its bounds check.

// CHECK-LABEL: gpu.func @masked
// CHECK: %[[M:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : vector<1xi32>
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: %[[ME:.*]] = vector.extract %[[M]][0] : i1 from vector<1xi1>
// CHECK: %[[W:.*]] = arith.andi %[[ME]], %{{.*}} : i1
// CHECK: scf.if %[[W]] {
// CHECK-NEXT: memref.store %{{.*}}, %arg1
func.func @masked(%pos: memref<?x?xi32, strided<[?, 1], offset: ?>>,
                  %out: memref<?x?xi32, strided<[?, 1], offset: ?>>)
    attributes {tile.threads = 128 : i32} {
  %r0 = tile.block_id 0
  %c0 = arith.constant 0 : index
  %p = tile.load %pos[%r0, %c0] : memref<?x?xi32, strided<[?, 1], offset: ?>> -> tensor<1x128xi32>
  %minus1 = arith.constant -1 : i32
  %m1 = tile.splat %minus1 : i32 -> tensor<1x128xi32>
  %pad = arith.cmpi eq, %p, %m1 : tensor<1x128xi32>
  %zero = arith.constant 0 : i32
  %z = tile.splat %zero : i32 -> tensor<1x128xi32>
  tile.store %z, %out[%r0, %c0] mask(%pad : tensor<1x128xi1>) : tensor<1x128xi32>, memref<?x?xi32, strided<[?, 1], offset: ?>>
  return
}

// -----

func.func @bad_mask(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<1x32xf32>
  %m = arith.cmpf olt, %t, %t : tensor<1x32xf32>
  %n = tile.reshape %m : tensor<1x32xi1> -> tensor<32x1xi1>
  // expected-error @+1 {{'tile.store' op mask 'tensor<32x1xi1>' must be an i1 fragment of the value's shape 'tensor<1x32xf32>'}}
  tile.store %t, %x[%c0, %c0] mask(%n : tensor<32x1xi1>) : tensor<1x32xf32>, memref<?x?xf32>
  return
}

// -----

func.func @masked_reduction(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x32xf32>
  %s = tile.reduce sum %t dim 1 : tensor<32x32xf32> -> tensor<32x1xf32>
  %m = arith.cmpf olt, %s, %s : tensor<32x1xf32>
  // expected-error @+1 {{'tile.store' op with a mask is not supported for a reduction result; broadcast the value first}}
  tile.store %s, %x[%c0, %c0] mask(%m : tensor<32x1xi1>) : tensor<32x1xf32>, memref<?x?xf32>
  return
}

// -----

// Chunks of 4 (16-byte rows): where a thread's 4 mask elements all hold,
// one vector store (bounds checked); else element by element.
// CHECK-LABEL: gpu.func @masked_rows
// CHECK: vector.extract %[[M:.*]][0] : i1 from vector<4xi1>
// CHECK: vector.extract %[[M]][3] : i1 from vector<4xi1>
// CHECK: %[[ALL:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: scf.if %[[ALL]] {
// CHECK: vector.store %{{.*}}, %arg1[{{.*}}] {alignment = 16 : i64} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<4xf32>
// CHECK: } else {
// CHECK: memref.store
func.func @masked_rows(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                       %out: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64})
    attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<4x32xf32>
  %z = arith.constant 0.0 : f32
  %zs = tile.splat %z : f32 -> tensor<4x32xf32>
  %m = arith.cmpf olt, %t, %zs : tensor<4x32xf32>
  tile.store %t, %out[%c0, %c0] mask(%m : tensor<4x32xi1>) : tensor<4x32xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// The same into a destination without a unit inner stride: no vector
// store (vector.store needs one), element by element.
// CHECK-LABEL: gpu.func @masked_strided
// CHECK-NOT: vector.store
// CHECK: memref.store
// CHECK-NOT: vector.store
// CHECK: gpu.return
func.func @masked_strided(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                          %out: memref<?x?xf32, strided<[?, ?], offset: ?>>)
    attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<4x32xf32>
  %z = arith.constant 0.0 : f32
  %zs = tile.splat %z : f32 -> tensor<4x32xf32>
  %m = arith.cmpf olt, %t, %zs : tensor<4x32xf32>
  tile.store %t, %out[%c0, %c0] mask(%m : tensor<4x32xi1>) : tensor<4x32xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}
