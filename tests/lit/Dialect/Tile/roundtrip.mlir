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
  // CHECK: tile.atomic add %{{.*}}, %{{.*}}[%[[BX]], %{{.*}}] : tensor<32x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  tile.atomic add %r, %out[%bx, %c0] : tensor<32x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  // CHECK: tile.atomic max
  tile.atomic max %r, %out[%bx, %c0] : tensor<32x64xf32>, memref<?x?xf32, strided<[?, ?], offset: ?>>
  return
}

// Reductions, broadcasts, reshapes and coordinate fragments.
// CHECK-LABEL: func.func @shapes
func.func @shapes(%t: tensor<32x512xf32>) attributes {tile.threads = 256 : i32} {
  // CHECK: tile.reshape %{{.*}} : tensor<32x512xf32> -> tensor<32x4x128xf32>
  %g = tile.reshape %t : tensor<32x512xf32> -> tensor<32x4x128xf32>
  // CHECK: tile.reduce absmax %{{.*}} dim 2 : tensor<32x4x128xf32> -> tensor<32x4x1xf32>
  %m = tile.reduce absmax %g dim 2 : tensor<32x4x128xf32> -> tensor<32x4x1xf32>
  // CHECK: tile.reduce sum
  %s = tile.reduce sum %g dim 1 : tensor<32x4x128xf32> -> tensor<32x1x128xf32>
  // CHECK: tile.reduce max
  %x = tile.reduce max %g dim 0 : tensor<32x4x128xf32> -> tensor<1x4x128xf32>
  // CHECK: tile.reduce min
  %n = tile.reduce min %g dim 2 : tensor<32x4x128xf32> -> tensor<32x4x1xf32>
  // CHECK: tile.scan %{{.*}} dim 1 : tensor<32x4x128xf32> -> tensor<32x4x128xf32>
  %c = tile.scan %g dim 1 : tensor<32x4x128xf32> -> tensor<32x4x128xf32>
  // CHECK: tile.broadcast %{{.*}} : tensor<32x4x1xf32> -> tensor<32x4x128xf32>
  %b = tile.broadcast %m : tensor<32x4x1xf32> -> tensor<32x4x128xf32>
  // CHECK: tile.iota dim 1 : tensor<32x4xi32>
  %i = tile.iota dim 1 : tensor<32x4xi32>
  // CHECK: tile.stack %{{.*}}, %{{.*}} : tensor<32x4x1xf32>, tensor<32x4x1xf32> -> tensor<32x4x2xf32>
  %st = tile.stack %m, %n : tensor<32x4x1xf32>, tensor<32x4x1xf32> -> tensor<32x4x2xf32>
  // CHECK: %{{.*}}:2 = tile.unstack %{{.*}} : tensor<32x4x2xf32> -> tensor<32x4x1xf32>, tensor<32x4x1xf32>
  %u:2 = tile.unstack %st : tensor<32x4x2xf32> -> tensor<32x4x1xf32>, tensor<32x4x1xf32>
  return
}

// Layouts print and parse back.
// CHECK-LABEL: func.func @layouts
// CHECK-SAME: tensor<32x1xf32, #tile.layout<shape = [32, 128], threads = 256, vector = 8, sliced = [1]>>
// CHECK-SAME: tensor<32x128xf32, #tile.layout<shape = [32, 128], threads = 256, vector = 8>>
func.func @layouts(%r: tensor<32x1xf32, #tile.layout<shape = [32, 128], threads = 256, vector = 8, sliced = [1]>>,
                   %t: tensor<32x128xf32, #tile.layout<shape = [32, 128], threads = 256, vector = 8>>) {
  return
}

// Shared tiles, copies, gemm and the pipelined loop.
// CHECK-LABEL: func.func @pipelined_gemm
func.func @pipelined_gemm(%a: memref<?x?xbf16, strided<[?, 1], offset: ?>>,
                          %b: memref<?x?xbf16, strided<[?, 1], offset: ?>>,
                          %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  // CHECK: tile.alloc_shared : memref<128x64xbf16, #gpu.address_space<workgroup>>
  %sa = tile.alloc_shared : memref<128x64xbf16, #gpu.address_space<workgroup>>
  %sb = tile.alloc_shared : memref<256x64xbf16, #gpu.address_space<workgroup>>
  %cst = arith.constant 0.0 : f32
  %zero = tile.splat %cst : f32 -> tensor<128x256xf32>
  // CHECK: tile.pipelined %{{.*}}, %{{.*}} {stages = 4 : i64} : tensor<128x256xf32> -> tensor<128x256xf32>
  // CHECK: ^bb0(%[[K:.*]]: index, %[[ACC:.*]]: tensor<128x256xf32>):
  %r = tile.pipelined %n, %zero {stages = 4 : i64} : tensor<128x256xf32> -> tensor<128x256xf32> {
  ^bb0(%k: index, %acc: tensor<128x256xf32>):
    %k0 = arith.muli %k, %c64 : index
    // CHECK: tile.copy %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<128x64xbf16, #gpu.address_space<workgroup>>
    tile.copy %a[%c0, %k0], %sa : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<128x64xbf16, #gpu.address_space<workgroup>>
    tile.copy %b[%c0, %k0], %sb : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<256x64xbf16, #gpu.address_space<workgroup>>
    // CHECK: tile.gemm %{{.*}}, %{{.*}}, %[[ACC]] : memref<128x64xbf16, #gpu.address_space<workgroup>>, memref<256x64xbf16, #gpu.address_space<workgroup>>, tensor<128x256xf32>
    %p = tile.gemm %sa, %sb, %acc : memref<128x64xbf16, #gpu.address_space<workgroup>>, memref<256x64xbf16, #gpu.address_space<workgroup>>, tensor<128x256xf32>
    // CHECK: tile.yield %{{.*}} : tensor<128x256xf32>
    tile.yield %p : tensor<128x256xf32>
  }
  return
}

// A shared tile with padded rows.
// CHECK-LABEL: func.func @padded_tile
func.func @padded_tile() {
  // CHECK: tile.alloc_shared {row_pad = 8 : i64} : memref<32x64xbf16, #gpu.address_space<workgroup>>
  %a = tile.alloc_shared {row_pad = 8 : i64} : memref<32x64xbf16, #gpu.address_space<workgroup>>
  return
}

// A 16-bit operand with an f32 one, f32 rounded to tf32 (mma.sync).
// CHECK-LABEL: func.func @mixed_gemm
func.func @mixed_gemm(%acc: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = tile.alloc_shared : memref<32x64xbf16, #gpu.address_space<workgroup>>
  %b = tile.alloc_shared : memref<32x64xf32, #gpu.address_space<workgroup>>
  // CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {round_tf32} : memref<32x64xbf16, #gpu.address_space<workgroup>>, memref<32x64xf32, #gpu.address_space<workgroup>>, tensor<32x32xf32>
  %r = tile.gemm %a, %b, %acc {round_tf32} : memref<32x64xbf16, #gpu.address_space<workgroup>>, memref<32x64xf32, #gpu.address_space<workgroup>>, tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

// Operands given as their transposes (K x M, K x N).
// CHECK-LABEL: func.func @transposed_gemm
func.func @transposed_gemm(%acc: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %a = tile.alloc_shared : memref<64x32xf32, #gpu.address_space<workgroup>>
  %b = tile.alloc_shared : memref<64x64xbf16, #gpu.address_space<workgroup>>
  // CHECK: tile.gemm %{{.*}}, %{{.*}}, %{{.*}} {round_tf32, transpose_a, transpose_b} : memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x64xbf16, #gpu.address_space<workgroup>>, tensor<32x64xf32>
  %r = tile.gemm %a, %b, %acc {round_tf32, transpose_a, transpose_b} : memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x64xbf16, #gpu.address_space<workgroup>>, tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}

// CHECK-LABEL: func.func @shuffle
func.func @shuffle(%t: tensor<2x128x4xf32>) -> tensor<2x128x4xf32> {
  // CHECK: tile.shuffle_xor %{{.*}} dim 1 mask 16 : tensor<2x128x4xf32>
  %s = tile.shuffle_xor %t dim 1 mask 16 : tensor<2x128x4xf32>
  return %s : tensor<2x128x4xf32>
}

// CHECK-LABEL: func.func @convert
func.func @convert(%t: tensor<32x1xf32>) -> tensor<32x1xf32> {
  // CHECK: tile.convert_layout %{{.*}} : tensor<32x1xf32> -> tensor<32x1xf32>
  %c = tile.convert_layout %t : tensor<32x1xf32> -> tensor<32x1xf32>
  return %c : tensor<32x1xf32>
}

// CHECK-LABEL: func.func @shuffle_lane
func.func @shuffle_lane(%t: tensor<2x128x4xf32>) -> tensor<2x128x4xf32> {
  // CHECK: tile.shuffle_idx %{{.*}} dim 1 lane 3 : tensor<2x128x4xf32>
  %s = tile.shuffle_idx %t dim 1 lane 3 : tensor<2x128x4xf32>
  return %s : tensor<2x128x4xf32>
}

// CHECK-LABEL: func.func @load_at
func.func @load_at(%m: memref<?x?xi32>, %r: tensor<4x8xi32>, %c: tensor<4x8xi64>) -> tensor<4x8xi32> {
  // CHECK: tile.load_at %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xi32>, tensor<4x8xi32>, tensor<4x8xi64> -> tensor<4x8xi32>
  %v = tile.load_at %m[%r, %c] : memref<?x?xi32>, tensor<4x8xi32>, tensor<4x8xi64> -> tensor<4x8xi32>
  return %v : tensor<4x8xi32>
}

// CHECK-LABEL: func.func @match_any
func.func @match_any(%t: tensor<4x32xi64>) -> tensor<4x32xi32> {
  // CHECK: tile.match_any %{{.*}} dim 1 : tensor<4x32xi64> -> tensor<4x32xi32>
  %m = tile.match_any %t dim 1 : tensor<4x32xi64> -> tensor<4x32xi32>
  return %m : tensor<4x32xi32>
}

// CHECK-LABEL: func.func @store_at
func.func @store_at(%h: memref<8x64xi32, #gpu.address_space<workgroup>>, %v: tensor<4x32xi32>, %r: tensor<4x32xi32>, %c: tensor<4x32xi64>, %m: tensor<4x32xi1>) {
  // CHECK: tile.store_at %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x32xi32>, memref<8x64xi32, #gpu.address_space<workgroup>>, tensor<4x32xi32>, tensor<4x32xi64>
  tile.store_at %v, %h[%r, %c] : tensor<4x32xi32>, memref<8x64xi32, #gpu.address_space<workgroup>>, tensor<4x32xi32>, tensor<4x32xi64>
  // CHECK: tile.store_at %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] mask(%{{.*}} : tensor<4x32xi1>) combine add : tensor<4x32xi32>
  tile.store_at %v, %h[%r, %c] mask(%m : tensor<4x32xi1>) combine add : tensor<4x32xi32>, memref<8x64xi32, #gpu.address_space<workgroup>>, tensor<4x32xi32>, tensor<4x32xi64>
  return
}

// CHECK-LABEL: func.func @grid_wait
// CHECK-SAME: tile.programmatic
func.func @grid_wait() attributes {tile.threads = 32 : i32, tile.programmatic} {
  // CHECK: tile.grid_wait
  tile.grid_wait
  return
}
