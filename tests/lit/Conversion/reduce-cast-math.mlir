// RUN: %tilejit-opt %s -tile-assign-layouts -convert-tile-to-gpu -split-input-file -verify-diagnostics | FileCheck %s
// Lowering of reductions (in-thread, warp shuffles, shared memory across
// warps), explicit lane shuffles, fp8 casts, exp and iota.

// A row of 128 f32 over 32 threads with 4-element vectors: 4 slots a
// thread combined in registers, then xor shuffles over lanes 1..16.
// CHECK-LABEL: gpu.func @in_warp
// CHECK-NOT: gpu.barrier
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c8_i32, %c32_i32 : f32
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @in_warp(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %o: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<2x64xf32>
  %m = tile.reduce sum %t dim 1 : tensor<2x64xf32> -> tensor<2x1xf32>
  tile.store %m, %o[%c0, %c0] : tensor<2x1xf32>, memref<?x?xf32>
  return
}

// -----

// A row over 4 warps: shuffles over all 5 lane bits, then the warps meet
// in the op's shared buffer (one row per representative slot).
// CHECK-LABEL: gpu.func @across_warps
// CHECK-SAME: workgroup(%[[BUF:.*]] : memref<1x128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load %[[BUF]]
func.func @across_warps(%x: memref<?x?xf32>, %o: memref<?x?xf32>) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<1x128xf32>
  %m = tile.reduce max %t dim 1 : tensor<1x128xf32> -> tensor<1x1xf32>
  tile.store %m, %o[%c0, %c0] : tensor<1x1xf32>, memref<?x?xf32>
  return
}

// -----

// Columns over 8 warps, 4 results a thread: rather than 4 x 8 loads each,
// member g of a warp group combines row min(g, 3) into row 4 of its own
// column, and after a second barrier each thread reads the 4 totals.
// CHECK-LABEL: gpu.func @across_warps_split
// CHECK-SAME: workgroup(%[[BUF:.*]] : memref<5x256xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-COUNT-4: memref.store %{{.*}}, %[[BUF]][%{{.*}}, %thread_id_x]
// CHECK-NEXT: gpu.barrier
// CHECK: %[[ROW:.*]] = arith.minui %{{.*}}, %c3
// CHECK-COUNT-8: memref.load %[[BUF]][%[[ROW]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[BUF]][%c4{{.*}}, %thread_id_x]
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: memref.load %[[BUF]][%c4{{.*}}, %{{.*}}]
// CHECK-NOT: memref.load %[[BUF]]
// CHECK: gpu.return
func.func @across_warps_split(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %o: memref<?x?xf32>) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<128x32xf32>
  %m = tile.reduce max %t dim 0 : tensor<128x32xf32> -> tensor<1x32xf32>
  tile.store %m, %o[%c0, %c0] : tensor<1x32xf32>, memref<?x?xf32>
  return
}

// -----

// Only the slot holding a reduced element's first coordinate stores it.
// CHECK-LABEL: gpu.func @store_once
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK: arith.andi %[[FIRST]]
// CHECK: scf.if
// CHECK: memref.store
func.func @store_once(%x: memref<?x?xf32>, %o: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<1x32xf32>
  %m = tile.reduce min %t dim 1 : tensor<1x32xf32> -> tensor<1x1xf32>
  tile.store %m, %o[%c0, %c0] : tensor<1x1xf32>, memref<?x?xf32>
  return
}

// -----

// A thread's 4 slots are one 4-element vector along the reduced dimension,
// so only the first of them can be its element's representative: one
// guarded store, not four.
// CHECK-LABEL: gpu.func @store_vector_slots
// CHECK: gpu.shuffle xor
// CHECK: memref.store
// CHECK-NOT: memref.store
// CHECK: gpu.return
func.func @store_vector_slots(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %o: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x128xf32>
  %m = tile.reduce max %t dim 1 : tensor<1x128xf32> -> tensor<1x1xf32>
  tile.store %m, %o[%c0, %c0] : tensor<1x1xf32>, memref<?x?xf32>
  return
}

// -----

// A dimension of 3 (not a power of two) whose elements lie in one thread:
// the dimension after it is 4 rounds of 32 threads x 4-element vectors, so
// element d of a row is 4 chunks (16 slots) after element 0. Slots 0..15
// combine slots +16 and +32 in registers; no shuffles.
// CHECK-LABEL: gpu.func @in_thread_any_size
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-32: arith.maxnumf
// CHECK-NOT: arith.maxnumf
// CHECK: gpu.return
func.func @in_thread_any_size(%x: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>> {tile.align = 16 : i64}, %o: memref<?x?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0, %c0] : memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>> -> tensor<1x3x512xf32>
  %m = tile.reduce max %t dim 1 : tensor<1x3x512xf32> -> tensor<1x1x512xf32>
  tile.store %m, %o[%c0, %c0, %c0] : tensor<1x1x512xf32>, memref<?x?x?xf32>
  return
}

// -----

// After the reduction over the dimension of 3, slots of chunks 4..11 hold
// copies of chunks 0..3; the reduction over 512 leaves them out: one set of
// 5 shuffles, not three.
// CHECK-LABEL: gpu.func @copies_left_out
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @copies_left_out(%x: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>> {tile.align = 16 : i64}, %o: memref<?x?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0, %c0] : memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>> -> tensor<1x3x512xf32>
  %m = tile.reduce max %t dim 1 : tensor<1x3x512xf32> -> tensor<1x1x512xf32>
  %n = tile.reduce max %m dim 2 : tensor<1x1x512xf32> -> tensor<1x1x1xf32>
  tile.store %n, %o[%c0, %c0, %c0] : tensor<1x1x1xf32>, memref<?x?x?xf32>
  return
}

// -----

// After the reduction over each thread's vector (dim 2, 4 lanes), the 4
// lanes of a chunk hold copies; the reduction over the 32 threads leaves
// them out: 4 rows x 5 shuffles, not 16 x 5.
// CHECK-LABEL: gpu.func @lanes_left_out
// CHECK-COUNT-20: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @lanes_left_out(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %o: memref<?x?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<4x128xf32>
  %v = tile.reshape %t : tensor<4x128xf32> -> tensor<4x32x4xf32>
  %m = tile.reduce max %v dim 2 : tensor<4x32x4xf32> -> tensor<4x32x1xf32>
  %n = tile.reduce max %m dim 1 : tensor<4x32x1xf32> -> tensor<4x1x1xf32>
  tile.store %n, %o[%c0, %c0, %c0] : tensor<4x1x1xf32>, memref<?x?x?xf32>
  return
}

// -----

func.func @narrow(%x: memref<?x?xbf16>, %o: memref<?x?xbf16>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xbf16> -> tensor<1x32xbf16>
  // expected-error @+1 {{'tile.reduce' op across threads requires 32-bit elements, got 'bf16'; cast to f32 or i32 first}}
  %m = tile.reduce max %t dim 1 : tensor<1x32xbf16> -> tensor<1x1xbf16>
  tile.store %m, %o[%c0, %c0] : tensor<1x1xbf16>, memref<?x?xbf16>
  return
}

// -----

// f32 -> e4m3 in pairs, round to nearest even, saturating. Whole pairs
// stay 16-bit words, so that their bytes are not taken apart and put back
// together (which cost ~5 instructions a pair in SASS).
// CHECK-LABEL: gpu.func @to_fp8
// CHECK: %[[PAIR:.*]] = nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16{{ ?}}(f8E4M3FN)
// CHECK: %[[WORDS:.*]] = vector.from_elements %[[PAIR]] : vector<1xi16>
// CHECK: %[[BYTES:.*]] = vector.bitcast %[[WORDS]] : vector<1xi16> to vector<2xi8>
// CHECK: arith.bitcast %[[BYTES]] : vector<2xi8> to vector<2xf8E4M3FN>
func.func @to_fp8(%x: memref<?xf32>, %o: memref<?xf8E4M3FN>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : memref<?xf32> -> tensor<64xf32>
  %q = arith.truncf %t : tensor<64xf32> to tensor<64xf8E4M3FN>
  tile.store %q, %o[%c0] : tensor<64xf8E4M3FN>, memref<?xf8E4M3FN>
  return
}

// -----

// An odd number of elements a thread: the last pair's high byte is dropped.
// CHECK-LABEL: gpu.func @to_fp8_odd
// CHECK-COUNT-2: nvvm.convert.f32x2.to.f8x2 {{.*}} : vector<2xi8>{{ ?}}(f8E4M3FN)
// CHECK: vector.from_elements %{{.*}}, %{{.*}}, %{{.*}} : vector<3xi8>
// CHECK: arith.bitcast %{{.*}} : vector<3xi8> to vector<3xf8E4M3FN>
func.func @to_fp8_odd(%x: memref<?xf32>, %o: memref<?xf8E4M3FN>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : memref<?xf32> -> tensor<96xf32>
  %q = arith.truncf %t : tensor<96xf32> to tensor<96xf8E4M3FN>
  tile.store %q, %o[%c0] : tensor<96xf8E4M3FN>, memref<?xf8E4M3FN>
  return
}

// -----

// exp without libdevice, as libdevice's __nv_expf: a saturated fma, the
// exponent rounded down (fma.rm), the reduced argument in two fmas,
// ex2.approx.ftz and the power of two from the rounded bits.
// CHECK-LABEL: gpu.func @exp
// CHECK: llvm.intr.fma
// CHECK: arith.maxnumf
// CHECK: arith.minnumf
// CHECK: llvm.call_intrinsic "llvm.nvvm.fma.rm.f"
// CHECK: llvm.intr.fma
// CHECK: llvm.intr.fma
// CHECK: arith.shli
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: math.exp
func.func @exp(%x: memref<?xf32>, %o: memref<?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : memref<?xf32> -> tensor<32xf32>
  %e = math.exp %t : tensor<32xf32>
  tile.store %e, %o[%c0] : tensor<32xf32>, memref<?xf32>
  return
}

// -----

// iota: each slot's coordinate, as the element type.
// CHECK-LABEL: gpu.func @iota
// CHECK: gpu.thread_id x
// CHECK: arith.remui %{{.*}}, %c8
// CHECK: arith.index_cast %{{.*}} : index to i32
func.func @iota(%o: memref<?x?xi32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %i = tile.iota dim 1 : tensor<4x8xi32>
  tile.store %i, %o[%c0, %c0] : tensor<4x8xi32>, memref<?x?xi32>
  return
}

// -----

// sqrt is IEEE (sqrt.rn), rsqrt approximate (as CUDA's rsqrtf), fma one
// rounding; none goes to libdevice.
// CHECK-LABEL: gpu.func @roots
// CHECK: llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"
// CHECK: llvm.intr.fma
// CHECK-NOT: math.
func.func @roots(%x: memref<?xf32>, %o: memref<?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : memref<?xf32> -> tensor<32xf32>
  %s = math.sqrt %t : tensor<32xf32>
  %r = math.rsqrt %s : tensor<32xf32>
  %f = math.fma %s, %r, %t : tensor<32xf32>
  tile.store %f, %o[%c0] : tensor<32xf32>, memref<?xf32>
  return
}

// -----

// An atomic add of a reduction result: one memref.atomic_rmw per element,
// from the slot that represents it, inside the tensor.
// CHECK-LABEL: gpu.func @atomic_rowsum
// CHECK: scf.if
// CHECK: memref.atomic_rmw addf
// CHECK-NOT: tile.atomic
func.func @atomic_rowsum(%x: memref<?x?xf32>, %out: memref<?x?xf32>) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<4x128xf32>
  %s = tile.reduce sum %t dim 1 : tensor<4x128xf32> -> tensor<4x1xf32>
  tile.atomic add %s, %out[%c0, %c0] : tensor<4x1xf32>, memref<?x?xf32>
  return
}

// -----

// Math functions are f32 only (the DSL casts first).
func.func @exp_f16(%x: memref<?x?xf16>) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf16> -> tensor<4x128xf16>
  // expected-error @+2 {{'math.exp' op is supported on f32 only}}
  // expected-error @+1 {{failed to legalize operation 'math.exp' that was explicitly marked illegal}}
  %e = math.exp %t : tensor<4x128xf16>
  tile.store %e, %x[%c0, %c0] : tensor<4x128xf16>, memref<?x?xf16>
  return
}

// -----

// tile.shuffle_xor: one xor shuffle a slot (2 x 4 slots a thread), the
// result assembled slot by slot; no barrier, no shared memory.
// CHECK-LABEL: gpu.func @shuffle_slots
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-8: gpu.shuffle xor %{{.*}}, %c6_i32, %c32_i32 : f32
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @shuffle_slots(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<2x256xf32>
  %r = tile.reshape %t : tensor<2x256xf32> -> tensor<2x64x4xf32>
  %s = tile.shuffle_xor %r dim 1 mask 6 : tensor<2x64x4xf32>
  %b = tile.reshape %s : tensor<2x64x4xf32> -> tensor<2x256xf32>
  tile.store %b, %x[%c0, %c0] : tensor<2x256xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// tile.convert_layout: a barrier, a store of each element's first copy to
// the op's shared buffer at its row-major index, a barrier, the loads of
// the result layout. A (32, 1) column loaded one element a thread meets a
// row max (sliced over 64 columns, every thread holding its row's). The
// buffer is a view of the kernel's scratch, which conversions and gemms
// share (each starts with a barrier and is done with it at its end).
// CHECK-LABEL: gpu.func @convert_column
// CHECK-SAME: workgroup(%[[SCRATCH:.*]] : memref<128xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: %[[BUF:.*]] = memref.view %[[SCRATCH]][%{{.*}}][] : memref<128xi8, #gpu.address_space<workgroup>> to memref<32xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[BUF]][%{{.*}}]
// CHECK: gpu.barrier
// CHECK: memref.load %[[BUF]][%{{.*}}]
// CHECK: arith.addf
func.func @convert_column(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf32>
  %m = tile.reduce max %t dim 1 : tensor<32x64xf32> -> tensor<32x1xf32>
  %u = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x1xf32>
  %a = arith.addf %m, %u : tensor<32x1xf32>
  tile.store %a, %x[%c0, %c0] : tensor<32x1xf32>, memref<?x?xf32>
  return
}

// -----

// After k.relayout to 8 f32 a thread, a sum over groups of 8 is in registers:
// no shuffle, no shared memory past the conversion's own buffer.
// CHECK-LABEL: gpu.func @relayout_in_thread
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @relayout_in_thread(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %o: memref<?x?x?xf32>) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<16x64xf32>
  %r = tile.convert_layout %t {vector = 8 : i64} : tensor<16x64xf32> -> tensor<16x64xf32>
  %g = tile.reshape %r : tensor<16x64xf32> -> tensor<16x8x8xf32>
  %s = tile.reduce sum %g dim 2 : tensor<16x8x8xf32> -> tensor<16x8x1xf32>
  tile.store %s, %o[%c0, %c0, %c0] : tensor<16x8x1xf32>, memref<?x?x?xf32>
  return
}

// -----

// tile.shuffle_idx over a dimension of 16: one idx shuffle a slot, from
// lane (laneid & 16) | 5, over the whole warp (a gpu.shuffle of width 16
// would leave lanes 16..31 out of its member mask).
// CHECK-LABEL: gpu.func @shuffle_lane_slots
// CHECK: %[[TID:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK: %[[FIRST:.*]] = arith.andi %[[TID]], %c16_i32 : i32
// CHECK: %[[SRC:.*]] = arith.ori %[[FIRST]], %c5_i32 : i32
// CHECK-COUNT-8: gpu.shuffle idx %{{.*}}, %[[SRC]], %c32_i32 : f32
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
func.func @shuffle_lane_slots(%x: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.threads = 64 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<2x256xf32>
  %r = tile.reshape %t : tensor<2x256xf32> -> tensor<8x16x4xf32>
  %s = tile.shuffle_idx %r dim 1 lane 5 : tensor<8x16x4xf32>
  %b = tile.reshape %s : tensor<8x16x4xf32> -> tensor<2x256xf32>
  tile.store %b, %x[%c0, %c0] : tensor<2x256xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

// Two conversions (a 32-float and a 64-float buffer) share one scratch of
// 256 bytes.
// CHECK-LABEL: gpu.func @two_conversions
// CHECK-SAME: workgroup(%[[SCRATCH:.*]] : memref<256xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-NOT: workgroup
// CHECK-DAG: memref.view %[[SCRATCH]][%{{.*}}][] : memref<256xi8, #gpu.address_space<workgroup>> to memref<32xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.view %[[SCRATCH]][%{{.*}}][] : memref<256xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
func.func @two_conversions(%x: memref<?x?xf32>) attributes {tile.threads = 32 : i32} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf32>
  %m = tile.reduce max %t dim 1 : tensor<32x64xf32> -> tensor<32x1xf32>
  %u = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x1xf32>
  %a = arith.addf %m, %u : tensor<32x1xf32>
  tile.store %a, %x[%c0, %c0] : tensor<32x1xf32>, memref<?x?xf32>
  %t2 = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<64x32xf32>
  %c = tile.reduce max %t2 dim 1 : tensor<64x32xf32> -> tensor<64x1xf32>
  %v = tile.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<64x1xf32>
  %d = arith.addf %c, %v : tensor<64x1xf32>
  tile.store %d, %x[%c0, %c0] : tensor<64x1xf32>, memref<?x?xf32>
  return
}

// -----

// A reduction across warps in a loop writes its buffer again in the next
// step: alone in the loop, it first waits for the last step's readers; with
// another barrier in the loop (the author's), it need not. (One row: with
// many, see reduce_in_loop_split.)
// CHECK-LABEL: gpu.func @reduce_in_loop
// CHECK: scf.for
// CHECK: gpu.shuffle
// CHECK-NOT: memref.store
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %thread_id_x]
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK-LABEL: gpu.func @reduce_in_loop_with_barrier
// CHECK: scf.for
// CHECK: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %thread_id_x]
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: scf.yield
!lx = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @reduce_in_loop(%x: !lx, %n: index) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tile.load %x[%c0, %c0] : !lx -> tensor<1x1024xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %t) -> (tensor<1x1024xf32>) {
    %s = tile.reduce sum %acc dim 1 : tensor<1x1024xf32> -> tensor<1x1xf32>
    %b = tile.broadcast %s : tensor<1x1xf32> -> tensor<1x1024xf32>
    %d = arith.divf %acc, %b : tensor<1x1024xf32>
    scf.yield %d : tensor<1x1024xf32>
  }
  tile.store %r, %x[%c0, %c0] : tensor<1x1024xf32>, !lx
  return
}
func.func @reduce_in_loop_with_barrier(%x: !lx, %n: index) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tile.load %x[%c0, %c0] : !lx -> tensor<1x1024xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %t) -> (tensor<1x1024xf32>) {
    %s = tile.reduce sum %acc dim 1 : tensor<1x1024xf32> -> tensor<1x1xf32>
    %b = tile.broadcast %s : tensor<1x1xf32> -> tensor<1x1024xf32>
    %d = arith.divf %acc, %b : tensor<1x1024xf32>
    gpu.barrier
    scf.yield %d : tensor<1x1024xf32>
  }
  tile.store %r, %x[%c0, %c0] : tensor<1x1024xf32>, !lx
  return
}

// -----

// Split across the warps (4 rows a thread), a reduction in a loop needs no
// barrier first: its second barrier already orders the last step's reads
// of every row before the next step's writes.
// CHECK-LABEL: gpu.func @reduce_in_loop_split
// CHECK: scf.for
// CHECK: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %thread_id_x]
// CHECK: gpu.barrier
// CHECK: arith.minui
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
!lx = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @reduce_in_loop_split(%x: !lx, %n: index) attributes {tile.threads = 256 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tile.load %x[%c0, %c0] : !lx -> tensor<4x256xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %t) -> (tensor<4x256xf32>) {
    %s = tile.reduce sum %acc dim 1 : tensor<4x256xf32> -> tensor<4x1xf32>
    %b = tile.broadcast %s : tensor<4x1xf32> -> tensor<4x256xf32>
    %d = arith.divf %acc, %b : tensor<4x256xf32>
    scf.yield %d : tensor<4x256xf32>
  }
  tile.store %r, %x[%c0, %c0] : tensor<4x256xf32>, !lx
  return
}
