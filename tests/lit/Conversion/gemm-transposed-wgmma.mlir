// RUN: %tilejit-opt %s -convert-tile-gemm-to-nvgpu -split-input-file -verify-diagnostics
// A gemm of transposed operands (transpose_a/b) is for mma.sync: the TMA +
// WGMMA lowering of a 384-thread pipelined loop refuses it at the op.

!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
!sa = memref<128x32xf32, #gpu.address_space<workgroup>>
!sb = memref<32x256xf32, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
func.func @transposed(%a: !gf, %b: !gf, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c32 : index
    tile.copy %a[%c0, %k0], %sa : !gf, !sa
    tile.copy %b[%k0, %c0], %sb : !gf, !sb
    // expected-error @+1 {{'tile.gemm' op cannot lower to TMA + WGMMA: transposed operands are for mma.sync (a 128-thread kernel); the WGMMA kernel reads a as M x K and b as N x K}}
    %p = tile.gemm %sa, %sb, %acc {transpose_b} : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}
