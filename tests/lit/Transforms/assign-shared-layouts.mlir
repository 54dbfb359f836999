// RUN: %tilejit-opt %s -tile-lower-pipelined -tile-assign-shared-layouts -split-input-file | FileCheck %s
// Shared tiles get the layout their readers want: mma.sync operands' rows
// padded so that a warp's fragment loads hit distinct banks (rows of 8
// mod 16 elements: 8 more for K a multiple of 16, none for K = 8 mod 16),
// through a pipelined loop's stage buffers too; other tiles as they are.

// CHECK-LABEL: func.func @operands
// CHECK: tile.alloc_shared : memref<32x24xf32
// CHECK: tile.alloc_shared : memref<32x24xbf16
// CHECK: tile.alloc_shared {row_pad = 8 : i64} : memref<32x64xbf16
// CHECK: tile.alloc_shared {row_pad = 8 : i64} : memref<32x64xf32
// CHECK: tile.alloc_shared : memref<32x64xf32
func.func @operands(%acc: tensor<32x32xf32>) -> tensor<32x32xf32> attributes {tile.threads = 128 : i32} {
  %a24 = tile.alloc_shared : memref<32x24xf32, #gpu.address_space<workgroup>>
  %b24 = tile.alloc_shared : memref<32x24xbf16, #gpu.address_space<workgroup>>
  %r24 = tile.gemm %a24, %b24, %acc : memref<32x24xf32, #gpu.address_space<workgroup>>, memref<32x24xbf16, #gpu.address_space<workgroup>>, tensor<32x32xf32>
  %a = tile.alloc_shared : memref<32x64xbf16, #gpu.address_space<workgroup>>
  %b = tile.alloc_shared : memref<32x64xf32, #gpu.address_space<workgroup>>
  %other = tile.alloc_shared : memref<32x64xf32, #gpu.address_space<workgroup>>
  %r = tile.gemm %a, %b, %r24 : memref<32x64xbf16, #gpu.address_space<workgroup>>, memref<32x64xf32, #gpu.address_space<workgroup>>, tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

// -----

// The stage buffers of a pipelined loop (read through their views).
!g = memref<?x?xf16, strided<[?, 1], offset: ?>>
!s = memref<32x64xf16, #gpu.address_space<workgroup>>
!acc = tensor<32x32xf32>
// CHECK-LABEL: func.func @stages
// CHECK-COUNT-2: tile.alloc_shared {row_pad = 8 : i64} : memref<2x32x64xf16
// CHECK: scf.for
func.func @stages(%x: !g {tile.align = 16 : i64}, %n: index) -> !acc attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !s
  %sb = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 2 : i64} : !acc -> !acc {
  ^bb0(%k: index, %acc: !acc):
    %k0 = arith.muli %k, %c64 : index
    tile.copy %x[%c0, %k0], %sa : !g, !s
    tile.copy %x[%c0, %k0], %sb : !g, !s
    %p = tile.gemm %sa, %sb, %acc : !s, !s, !acc
    tile.yield %p : !acc
  }
  return %r : !acc
}
