// RUN: %tilejit-opt %s -pass-pipeline='builtin.module(gpu.module(tile-tensor-map-params))' -split-input-file -verify-diagnostics | FileCheck %s
// The last tilejit.tensor_maps arguments of a kernel become 128-byte
// by-value parameters aligned to 64, grid constants; the attribute goes.

// CHECK-LABEL: llvm.func @kernel
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant})
// CHECK-NOT: tilejit.tensor_maps
// CHECK-SAME: nvvm.kernel
// CHECK-LABEL: llvm.func @plain
// CHECK-SAME: (%{{.*}}: !llvm.ptr)
gpu.module @k {
  llvm.func @kernel(%p: !llvm.ptr, %n: i64, %m0: !llvm.ptr, %m1: !llvm.ptr) attributes {nvvm.kernel, tilejit.tensor_maps = 2 : i64} {
    llvm.return
  }
  llvm.func @plain(%p: !llvm.ptr) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @k {
  // expected-error @+1 {{'llvm.func' op argument 1 should be a tensor map (!llvm.ptr)}}
  llvm.func @wrong(%p: !llvm.ptr, %n: i64) attributes {nvvm.kernel, tilejit.tensor_maps = 1 : i64} {
    llvm.return
  }
}

// -----

gpu.module @k {
  // expected-error @+1 {{'llvm.func' op has tilejit.tensor_maps = 3 but 1 arguments}}
  llvm.func @too_many(%p: !llvm.ptr) attributes {nvvm.kernel, tilejit.tensor_maps = 3 : i64} {
    llvm.return
  }
}
