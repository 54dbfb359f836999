// RUN: %tilejit-opt %s -convert-tile-gemm-to-nvgpu -tile-assign-shared-layouts -tile-assign-layouts -convert-tile-to-gpu -split-input-file -verify-diagnostics | FileCheck %s
// A gemm outside a pipelined loop becomes warp-level mma.sync: 16 x 8 tiles
// of the accumulator over a grid of warps, operands from the shared tiles,
// the accumulator through a shared buffer of its own.

!sa = memref<32x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<32x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<32x32xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>

// 2 x 4 tiles over 4 warps: each warp 2 tiles (one column of tiles), two
// mma.sync a K step of 16. From zeros: no way in; after the loop a barrier
// (the buffer may still be read), the stores, a barrier, the slots' loads.
// The operand tiles' rows are padded by 16 bytes (72 bf16 apart), so the 8
// rows of a fragment load start in different banks.
// CHECK-LABEL: gpu.func @from_zero
// CHECK-SAME: workgroup(%[[SCRATCH:.*]] : memref<4096xi8, #gpu.address_space<workgroup>>
// CHECK-SAME: memref<32x72xbf16, #gpu.address_space<workgroup>>
// CHECK-SAME: memref<32x72xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[BUF:.*]] = memref.view %[[SCRATCH]][%{{.*}}][] : memref<4096xi8, #gpu.address_space<workgroup>> to memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK: memref.subview %{{.*}}[0, 0] [32, 64] [1, 1] : memref<32x72xbf16, #gpu.address_space<workgroup>> to memref<32x64xbf16, strided<[72, 1]>, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// CHECK-COUNT-10: vector.load %{{.*}} : memref<32x64xbf16, strided<[72, 1]>, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: nvvm.mma.sync
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK-COUNT-4: vector.store %{{.*}}, %[[BUF]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[BUF]]
func.func @from_zero(%c: !g) attributes {tile.threads = 128 : i32} {
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %p = tile.gemm %sa, %sb, %init : !sa, !sb, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

// -----

!sa = memref<32x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<32x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<32x32xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>

// From a loaded accumulator: its slots are written to the buffer between
// two barriers, then each warp reads its tiles' pairs.
// CHECK-LABEL: gpu.func @from_c
// CHECK: %[[BUF:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<4096xi8, #gpu.address_space<workgroup>> to memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: vector.load %[[BUF]]
// CHECK: scf.for
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: scf.yield
// CHECK-NOT: gpu.barrier
// CHECK: vector.store %{{.*}}, %[[BUF]]
// CHECK: gpu.barrier
func.func @from_c(%c: !g) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %init = tile.load %c[%c0, %c0] : !g -> !acc
  %p = tile.gemm %sa, %sb, %init : !sa, !sb, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

// -----

!s = memref<16x32xf32, #gpu.address_space<workgroup>>
!sb = memref<24x32xf32, #gpu.address_space<workgroup>>
!acc = tensor<16x24xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>

// f32 operands multiply as tf32, K steps of 8. Three tiles for four warps:
// the fourth warp computes nothing, but meets every barrier.
// CHECK-LABEL: gpu.func @idle_warp
// CHECK: %[[ACTIVE:.*]] = arith.cmpi ult, %{{.*}}, %c3
// CHECK: scf.if %[[ACTIVE]] -> (vector<4xf32>)
// CHECK: scf.for %{{.*}} = %{{.*}} to %c32{{.*}} step %c8
// CHECK: nvvm.mma.sync
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<tf32>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK: } else {
// CHECK: gpu.barrier
// CHECK: scf.if %[[ACTIVE]] {
// CHECK: vector.store
// CHECK: gpu.barrier
func.func @idle_warp(%c: !g) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %p = tile.gemm %sa, %sb, %init : !s, !sb, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

// -----

!s = memref<32x64xf8E4M3FN, #gpu.address_space<workgroup>>
!acc = tensor<32x32xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>

func.func @fp8(%c: !g) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  // expected-error @+1 {{'tile.gemm' op cannot lower to mma.sync: operands must be bf16, f16 or f32 (tf32) outside a pipelined TMA + WGMMA loop, got f8E4M3FN}}
  %p = tile.gemm %sa, %sa, %init : !s, !s, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

// -----

!sa = memref<24x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<32x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<24x32xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>

func.func @rows(%c: !g) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  // expected-error @+1 {{'tile.gemm' op cannot lower to mma.sync: M, N and K must be multiples of 16, 8 and 16, got 24 x 32 x 64}}
  %p = tile.gemm %sa, %sb, %init : !sa, !sb, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

// -----

!s = memref<128x32xf32, #gpu.address_space<workgroup>>
!acc = tensor<128x128xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>

// 2 x 128 x 40 x 4 bytes of padded operands (f32 rows 32 bytes longer) and
// a 64 KB accumulator buffer:
// more than 48 KB, so views of the block's dynamic shared memory, whose
// bytes the kernel reports for the launch.
// CHECK-LABEL: gpu.func @dynamic
// CHECK-NOT: workgroup(
// CHECK-SAME: tilejit.shared_bytes = 106496 : i64
// CHECK: %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[DYN]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<65536xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[DYN]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x40xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[DYN]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x40xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.mma.sync
func.func @dynamic(%c: !g) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  %sb = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %p = tile.gemm %sa, %sb, %init : !s, !s, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

// -----

!s = memref<256x32xf32, #gpu.address_space<workgroup>>
!acc = tensor<256x256xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>

// 2 x 256 x 40 x 4 bytes of padded operands and a 256 KB accumulator buffer.
// expected-error @+1 {{kernel needs 344064 bytes of shared memory (its shared tiles and the buffers of its transposes, cross-warp reductions, layout conversions and mma.sync accumulators); a block of sm_90 has at most 232448 bytes}}
func.func @too_big(%c: !g) attributes {tile.threads = 512 : i32} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc_shared : !s
  %sb = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %p = tile.gemm %sa, %sb, %init : !s, !s, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

// -----

// A bf16 tile with an f32 one: tf32 m16n8k8, each bf16 element widened
// (exact), each f32 element rounded to the nearest tf32 (round_tf32). K
// slots i and i + 4 of a step come from columns 2 i and 2 i + 1: one pair
// load each (a 4-byte bf16 pair, an 8-byte f32 pair, whose rows are padded
// by 32 bytes).
!sa = memref<32x64xbf16, #gpu.address_space<workgroup>>
!sb = memref<32x64xf32, #gpu.address_space<workgroup>>
!acc = tensor<32x32xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: gpu.func @mixed_rounded
// CHECK: scf.for
// CHECK: vector.load %{{.*}} {alignment = 4 : i64} : memref<32x64xbf16, strided<[72, 1]>, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-NEXT: vector.extract %{{.*}}[0]
// CHECK-NEXT: arith.extf %{{.*}} : bf16 to f32
// CHECK-NEXT: arith.bitcast %{{.*}} : f32 to i32
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<32x64xf32, strided<[72, 1]>, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NEXT: vector.extract %{{.*}}[0]
// CHECK-NEXT: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: nvvm.mma.sync
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<tf32>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 8>
func.func @mixed_rounded(%c: !g) attributes {tile.threads = 128 : i32} {
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %p = tile.gemm %sa, %sb, %init {round_tf32} : !sa, !sb, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

// -----

// An f32 tile with an f16 one, the other way round: a's f32 pairs (8-byte
// loads) rounded, b's f16 pairs widened.
!sa = memref<32x32xf32, #gpu.address_space<workgroup>>
!sb = memref<16x32xf16, #gpu.address_space<workgroup>>
!acc = tensor<32x16xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-LABEL: gpu.func @f32_f16
// CHECK: scf.for
// CHECK: vector.load %{{.*}} {alignment = 8 : i64} : memref<32x32xf32, strided<[40, 1]>, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: nvvm.convert.float.to.tf32
// CHECK: vector.load %{{.*}} {alignment = 4 : i64} : memref<16x32xf16, strided<[40, 1]>, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: nvvm.mma.sync
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 8>
func.func @f32_f16(%c: !g) attributes {tile.threads = 128 : i32} {
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %p = tile.gemm %sa, %sb, %init {round_tf32} : !sa, !sb, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

// -----

!sa = memref<64x32xf32, #gpu.address_space<workgroup>>
!sb = memref<64x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<32x64xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>

// Both operands transposed (a: K x M = 64 x 32 f32, b: K x N = 64 x 64
// bf16; tf32): each pair's elements loaded one by one from rows 2 i and
// 2 i + 1 of a step (index [k, m]), the rows padded to 36 f32 and 72 bf16
// (4 mod 16 words: the lanes' loads on distinct banks), f32 rounded.
// CHECK-LABEL: gpu.func @transposed
// CHECK-SAME: memref<64x36xf32, #gpu.address_space<workgroup>>
// CHECK-SAME: memref<64x72xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[A:.*]] = memref.subview %{{.*}}[0, 0] [64, 32] [1, 1] : memref<64x36xf32, #gpu.address_space<workgroup>> to memref<64x32xf32, strided<[36, 1]>, #gpu.address_space<workgroup>>
// CHECK: %[[B:.*]] = memref.subview %{{.*}}[0, 0] [64, 64] [1, 1] : memref<64x72xbf16, #gpu.address_space<workgroup>> to memref<64x64xbf16, strided<[72, 1]>, #gpu.address_space<workgroup>>
// CHECK: scf.for %[[K0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: %[[KCOL:.*]] = arith.addi %[[K0]], %{{.*}} : index
// CHECK: %[[M:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: memref.load %[[A]][%[[KCOL]], %[[M]]]
// CHECK: %[[KCOL1:.*]] = arith.addi %[[KCOL]], %{{.*}} : index
// CHECK: memref.load %[[A]][%[[KCOL1]], %[[M]]]
// CHECK: nvvm.convert.float.to.tf32
// CHECK-NOT: vector.load
// CHECK: memref.load %[[B]][%[[KCOL]], %{{.*}}]
// CHECK: nvvm.mma.sync
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 8>
func.func @transposed(%c: !g) attributes {tile.threads = 128 : i32} {
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %p = tile.gemm %sa, %sb, %init {round_tf32, transpose_a, transpose_b} : !sa, !sb, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

// -----

!sa = memref<64x128xbf16, #gpu.address_space<workgroup>>
!sb = memref<64x64xbf16, #gpu.address_space<workgroup>>
!acc = tensor<128x64xf32>
!g = memref<?x?xf32, strided<[?, 1], offset: ?>>

// a transposed (64 x 128 bf16: rows of 64 words, padded by 8 to 68 words
// = 4 mod 16), b as given (padded as before): m16n8k16, a's pairs from two
// rows, b's pairs one 4-byte load each.
// CHECK-LABEL: gpu.func @transposed_a
// CHECK: to memref<64x136xbf16, #gpu.address_space<workgroup>>
// CHECK: to memref<64x72xbf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: memref.load %{{.*}} : memref<64x128xbf16, strided<[136, 1]>, #gpu.address_space<workgroup>>
// CHECK: vector.load %{{.*}} : memref<64x64xbf16, strided<[72, 1]>, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: nvvm.mma.sync
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
func.func @transposed_a(%c: !g) attributes {tile.threads = 128 : i32} {
  %sa = tile.alloc_shared : !sa
  %sb = tile.alloc_shared : !sb
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !acc
  %p = tile.gemm %sa, %sb, %init {transpose_a} : !sa, !sb, !acc
  tile.store %p, %c[%c0, %c0] : !acc, !g
  return
}

