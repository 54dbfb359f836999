// RUN: %tilejit-opt %s | %tilejit-opt | FileCheck %s
// The printed form of every tile op parses back to itself.

// CHECK-LABEL: func.func @scale_copy
// CHECK-SAME: attributes {tile.threads = 256 : i32}
func.func @scale_copy(%x: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                      %out: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                      %scale: f32) attributes {tile.threads = 256 : i32} {
  // CHECK: %[[BX:.*]] = tile.block_id 0
  %bx = tile.block_id 0
  // CHECK: tile.block_id 2
  %bz = tile.block_id 2
  %c0 = arith.constant 0 : index
  // CHECK: %[[T:.*]] = tile.load %{{.*}}[%[[BX]], %{{.*}}] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<32x64xf32>
  %t = tile.load %x[%bx, %c0] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<32x64xf32>
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] {in_bounds} : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<32x64xf32>
  %u = tile.load %x[%bz, %c0] {in_bounds} : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<32x64xf32>
  // CHECK: %[[S:.*]] = tile.splat %{{.*}} : f32 -> tensor<32x64xf32>
  %s = tile.splat %scale : f32 -> tensor<32x64xf32>
  %r = arith.mulf %t, %s : tensor<32x64xf32>
  // CHECK: tile.store %{{.*}}, %{{.*}}[%[[BX]], %{{.*}}] : tensor<32x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  tile.store %r, %out[%bx, %c0] : tensor<32x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  // CHECK: tile.store %{{.*}} {in_bounds}
  tile.store %u, %out[%bz, %c0] {in_bounds} : tensor<32x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  // CHECK: tile.transpose %{{.*}} : tensor<32x64xf32> -> tensor<64x32xf32>
  %v = tile.transpose %r : tensor<32x64xf32> -> tensor<64x32xf32>
  return
}
