// RUN: %tilejit-opt %s -convert-tile-gemm-to-nvgpu -split-input-file -verify-diagnostics
// Every shape of program the TMA + WGMMA lowering does not handle is
// reported at the op that is wrong (the lowering itself: gemm-to-nvgpu.mlir).

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @init(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %one = arith.constant 1.0 : f32
  %init = tile.splat %one : f32 -> !acc
  // expected-error @+1 {{'tile.pipelined' op cannot lower to TMA + WGMMA: the loop must carry one accumulator starting at zero}}
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @extra(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    // expected-error @+1 {{'arith.addf' op cannot lower to TMA + WGMMA: the loop may hold only tile.copy, tile.gemm and index arithmetic}}
    %q = arith.addf %p, %acc : !acc
    tile.yield %q : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x32xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x32xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @tiles(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c32 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    // expected-error @+1 {{'tile.gemm' op cannot lower to TMA + WGMMA: tiles must be a: 128 x K and b: N x K with rows of 128 bytes (K = 32 for f32, 64 for bf16 and f16, 128 for fp8) and N a multiple of 16 up to 256}}
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @origin(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    // expected-error @+1 {{'tile.copy' op cannot lower to TMA + WGMMA: the tile origin must be [row, step * 64]}}
    tile.copy %a[%c0, %s], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @store_at(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  // expected-error @+1 {{'tile.store' op cannot lower to TMA + WGMMA: the accumulator must be stored at [m0, n0], the origins of the a and b tiles}}
  tile.store %r, %c[%c1, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
// expected-error @+1 {{cannot lower to TMA + WGMMA: the tile origin and step count may use only block ids, tensor sizes and constants}}
func.func @origin_from_arg(%a: !g, %b: !g, %c: !gf, %n: index, %row: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%row, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%row, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @two_gemms(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    // expected-error @+1 {{'tile.gemm' op cannot lower to TMA + WGMMA: the loop holds more than one gemm}}
    %q = tile.gemm %sa, %sb, %p : !sa, !sb, !acc
    tile.yield %q : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @one_copy(%a: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  // expected-error @+1 {{'tile.pipelined' op cannot lower to TMA + WGMMA: the loop must copy two tiles and multiply them}}
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @yield_other(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    // expected-error @+1 {{'tile.gemm' op cannot lower to TMA + WGMMA: the loop must yield acc = gemm(a, b, acc)}}
    %p = tile.gemm %sa, %sb, %init : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @other_tiles(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %sx = tile.alloc_shared : !sa
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sx : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    // expected-error @+1 {{'tile.gemm' op cannot lower to TMA + WGMMA: its operands must be the tiles the loop copies}}
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @row_in_loop(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    %row = arith.muli %s, %c0 : index
    // expected-error @+1 {{'tile.copy' op cannot lower to TMA + WGMMA: the row of the tile must not change in the loop}}
    tile.copy %a[%row, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @stored_twice(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  // expected-error @+1 {{'tile.store' op cannot lower to TMA + WGMMA: its accumulator must be stored once}}
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gi = memref<?x?xi32, strided<[?, 1], offset: ?>>
func.func @int_output(%a: !g, %b: !g, %c: !gi, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  %o = arith.fptosi %r : !acc to tensor<128x256xi32>
  // expected-error @+1 {{'tile.store' op cannot lower to TMA + WGMMA: the output must be bf16, f16 or f32}}
  tile.store %o, %c[%c0, %c0] : tensor<128x256xi32>, !gi
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @extra_top(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  // expected-error @+1 {{'tile.load' op cannot lower to TMA + WGMMA: a gemm kernel may hold only its main loop, the index arithmetic of the tile origin and the final store}}
  %x = tile.load %c[%c0, %c0] : !gf -> tensor<128x3xf32>
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!g8 = memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
func.func @fp8_output(%a: !g, %b: !g, %c: !g8, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  %o = arith.truncf %r : !acc to tensor<128x256xf8E4M3FN>
  // expected-error @+1 {{'tile.store' op cannot lower to TMA + WGMMA: the output must be bf16, f16 or f32}}
  tile.store %o, %c[%c0, %c0] : tensor<128x256xf8E4M3FN>, !g8
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @copy_from_view(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %v = memref.subview %a[0, 0] [%n, %n] [1, 1] : !g to !g
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    // expected-error @+1 {{'tile.copy' op cannot lower to TMA + WGMMA: the source must be a tensor argument of the kernel}}
    tile.copy %v[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @store_to_view(%a: !g, %b: !g, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  %v = memref.subview %c[0, 0] [%n, %n] [1, 1] : !gf to !gf
  // expected-error @+1 {{'tile.store' op cannot lower to TMA + WGMMA: the destination must be a tensor argument}}
  tile.store %r, %v[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @count_from_other_tensor(%a: !g, %b: !g, %c: !gf, %d: !gf) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  // expected-error @+1 {{'memref.dim' op cannot lower to TMA + WGMMA: only the sizes of the gemm's tensors are known in the kernel}}
  %n = memref.dim %d, %c0 : !gf
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!sa = memref<128x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
!out = tensor<128x256xbf16>
func.func @converted_twice(%a: !g, %b: !g, %c: !g, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !g, !sb
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  %o = arith.truncf %r : !acc to !out
  tile.store %o, %c[%c0, %c0] : !out, !g
  // expected-error @+1 {{'tile.store' op cannot lower to TMA + WGMMA: its accumulator must be stored once}}
  tile.store %o, %c[%c64, %c0] : !out, !g
  return
}

// -----

// WGMMA multiplies operands of one type, and tf32 as the raw f32 bits.
!g = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
!sa = memref<128x32xbf16, #gpu.address_space<workgroup>>
!sb = memref<256x32xf32, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
func.func @mixed(%a: !g, %b: !gf, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !acc -> !acc {
  ^bb0(%s: index, %acc: !acc):
    %k0 = arith.muli %s, %c32 : index
    tile.copy %a[%c0, %k0], %sa : !g, !sa
    tile.copy %b[%c0, %k0], %sb : !gf, !sb
    // expected-error @+1 {{'tile.gemm' op cannot lower to TMA + WGMMA: the operands must be of one type}}
    %p = tile.gemm %sa, %sb, %acc : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}

// -----

!gf = memref<?x?xf32, strided<[?, 1], offset: ?>>
!sa = memref<128x32xf32, #gpu.address_space<workgroup>>
!sb = memref<256x32xf32, #gpu.address_space<workgroup>>
!acc = tensor<128x256xf32>
func.func @rounded(%a: !gf, %b: !gf, %c: !gf, %n: index) attributes {tile.threads = 384 : i32} {
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
    tile.copy %b[%c0, %k0], %sb : !gf, !sb
    // expected-error @+1 {{'tile.gemm' op cannot lower to TMA + WGMMA: round_tf32 is for mma.sync (WGMMA reads tf32 as the bits of its f32 operands)}}
    %p = tile.gemm %sa, %sb, %acc {round_tf32} : !sa, !sb, !acc
    tile.yield %p : !acc
  }
  tile.store %r, %c[%c0, %c0] : !acc, !gf
  return
}
