// tensor_map.cpp - cuTensorMapEncodeTiled for tiles of a strided view.
#include "tilejit/runtime/tensor_map.h"

#include "tilejit/error.h"
#include "tilejit/runtime/driver.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tilejit::rt {

static CUtensorMapDataType tma_dtype(DType dtype, const char *name) {
  switch (dtype) {
  case DType::bf16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case DType::f16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case DType::f32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case DType::i32:
    return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case DType::u32:
    return CU_TENSOR_MAP_DATA_TYPE_UINT32;
  case DType::e4m3:
  case DType::e5m2:
  case DType::u8:
  case DType::i8:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  default:
    throw UserError(fmt::format("tensor map for '{}': dtype {} is not "
                                "supported by TMA here",
                                name, name_of(dtype)));
  }
}

CUtensorMap encode_tensor_map(const TensorView &t, const char *name,
                              std::span<const int64_t> box,
                              int64_t swizzle_bytes) {
  const int rank = t.rank;
  const int64_t elt = static_cast<int64_t>(size_of(t.dtype));
  const CUtensorMapDataType type = tma_dtype(t.dtype, name);
  const bool empty = t.numel() == 0;
  if (rank < 1 || rank > 5 ||
      (!empty && t.shape[rank - 1] > 1 && t.strides[rank - 1] != 1))
    throw UserError(fmt::format("tensor map for '{}': {} must have rank 1 "
                                "to 5 and unit inner stride",
                                name, t.to_string()));
  if (t.data % 16 != 0)
    throw UserError(fmt::format("tensor map for '{}': base {:#x} must be a "
                                "multiple of 16",
                                name, t.data));
  const bool swizzled = swizzle_bytes == 128;
  bool box_ok = static_cast<int>(box.size()) == rank &&
                (swizzle_bytes == 0 || swizzled) &&
                (box.back() * elt) % 16 == 0 &&
                (!swizzled || box.back() * elt <= 128);
  for (int64_t side : box)
    box_ok = box_ok && side >= 1 && side <= 256;
  if (!box_ok)
    throw UserError(fmt::format("tensor map for '{}': box [{}] of {} is not "
                                "encodable (swizzle {})",
                                name, fmt::join(box, ", "), name_of(t.dtype),
                                swizzle_bytes));
  // TMA's order: innermost dimension first. A dimension of one element
  // takes the dense stride (its own may be anything). TMA takes no size 0:
  // a view without elements is mapped as one element at its base, which a
  // kernel's copies never reach (they run over the tensor's extent).
  cuuint64_t dims[5], strides[4];
  cuuint32_t box_dims[5], element_strides[5];
  int64_t dense = (empty ? 1 : t.shape[rank - 1]) * elt;
  for (int i = 0; i < rank; ++i) {
    const int d = rank - 1 - i;
    if (t.shape[d] >= (int64_t{1} << 31))
      throw UserError(fmt::format("tensor map for '{}': {} has a dimension "
                                  "of 2^31 or more elements",
                                  name, t.to_string()));
    const int64_t size = empty ? 1 : t.shape[d];
    dims[i] = static_cast<cuuint64_t>(size);
    box_dims[i] = static_cast<cuuint32_t>(box[d]);
    element_strides[i] = 1;
    if (i == 0)
      continue;
    int64_t bytes = size > 1 ? t.strides[d] * elt : (dense + 15) / 16 * 16;
    if (bytes % 16 != 0 || bytes <= 0 || bytes >= (int64_t{1} << 40))
      throw UserError(fmt::format("tensor map for '{}': {} has stride[{}] of "
                                  "{} bytes; requires a positive multiple of "
                                  "16 below 2^40",
                                  name, t.to_string(), d, bytes));
    strides[i - 1] = static_cast<cuuint64_t>(bytes);
    dense = bytes * size;
  }
  CUtensorMap map;
  CUresult r = driver().cuTensorMapEncodeTiled(
      &map, type, static_cast<cuuint32_t>(rank),
      reinterpret_cast<void *>(t.data), dims, strides, box_dims,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzled ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw DriverError(fmt::format("cuTensorMapEncodeTiled for '{}' ({}, box "
                                  "[{}]) failed with CUresult {}",
                                  name, t.to_string(), fmt::join(box, ", "),
                                  static_cast<int>(r)));
  return map;
}

} // namespace tilejit::rt
