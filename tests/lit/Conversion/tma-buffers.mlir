// RUN: %tilejit-opt %s -tile-lower-pipelined -tile-assign-shared-layouts -tile-assign-layouts -convert-tile-to-gpu -split-input-file | FileCheck %s
// The stage buffers of a loop on TMA are 128-byte aligned: a static
// buffer by its attribution's alignment; in dynamic shared memory (only
// 16-byte aligned) at a multiple of 128 past the base realigned at run
// time, the kernel asking for the slack. The kernel keeps the tensor map
// argument and the attributes that give its ABI.

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<32x64xf32, #gpu.address_space<workgroup>>
!f = tensor<32x64xf32>

// CHECK-LABEL: gpu.func @static_buffers
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr)
// CHECK-SAME: workgroup(%{{.*}} : memref<4x32x64xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
// CHECK-SAME: tilejit.abi_extra = ["arg tensor_map a f32 2 32 64 swizzle 0"]
// CHECK-SAME: tilejit.tensor_maps = 1 : i64
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK: nvgpu.tma.async.load
func.func @static_buffers(%a: !g {tile.align = 16 : i64, tile.name = "a"}, %c: !g {tile.name = "c"}, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !f
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !f -> !f {
  ^bb0(%s: index, %acc: !f):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !s
    %x = tile.load %sa[%c0, %c0] : !s -> !f
    %y = arith.addf %acc, %x : !f
    tile.yield %y : !f
  }
  tile.store %r, %c[%c0, %c0] : !f, !g
  return
}

// -----

!g = memref<?x?xf32, strided<[?, 1], offset: ?>>
!s = memref<64x64xf32, #gpu.address_space<workgroup>>
!f = tensor<64x64xf32>

// 64 KB of stages after a cross-warp reduction's 2560 bytes: the stages
// start 2560 bytes (a multiple of 128) past the realigned base, and the
// kernel asks for 112 bytes of slack: 2560 + 65536 + 112.
// CHECK-LABEL: gpu.func @dynamic_buffers
// CHECK-SAME: tilejit.shared_bytes = 68208 : i64
// CHECK: %[[DYN:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[DYN]]
// CHECK: %[[UP:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK: %[[ALIGNED:.*]] = arith.andi %[[UP]], %c-128 : index
// CHECK: %[[SHIFT:.*]] = arith.subi %[[ALIGNED]], %[[BASE]] : index
// CHECK: %[[AT0:.*]] = arith.addi %c0, %[[SHIFT]] : index
// CHECK: memref.view %[[DYN]][%[[AT0]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<5x128xf32
// CHECK: %[[AT:.*]] = arith.addi %c2560, %[[SHIFT]] : index
// CHECK: memref.view %[[DYN]][%[[AT]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x64x64xf32, #gpu.address_space<workgroup>>
func.func @dynamic_buffers(%a: !g {tile.align = 16 : i64, tile.name = "a"}, %c: !g {tile.name = "c"}, %n: index) attributes {tile.threads = 128 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %sa = tile.alloc_shared : !s
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> !f
  %r = tile.pipelined %n, %init {stages = 4 : i64} : !f -> !f {
  ^bb0(%s: index, %acc: !f):
    %k0 = arith.muli %s, %c64 : index
    tile.copy %a[%c0, %k0], %sa : !g, !s
    %x = tile.load %sa[%c0, %c0] : !s -> !f
    %y = arith.addf %acc, %x : !f
    tile.yield %y : !f
  }
  %t = tile.reduce sum %r dim 0 : !f -> tensor<1x64xf32>
  tile.store %t, %c[%c0, %c0] : tensor<1x64xf32>, !g
  return
}
