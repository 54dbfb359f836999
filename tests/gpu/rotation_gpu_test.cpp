// rotation_gpu_test.cpp - Rotation: how many sets, copies equal to the
// originals, addresses moved into the right copy, and a stray address named.
#include "rotation.h"

#include "tilejit/error.h"
#include "tilejit/runtime/driver.h"
#include "tilejit/runtime/stream.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <vector>

using namespace tilejit;
using harness::Rotation;
using rt::DeviceBuffer;

TEST_CASE("Rotation copies the buffers and moves views into a set",
          "[rotation][gpu]") {
  std::vector<int32_t> host(1000);
  std::iota(host.begin(), host.end(), 7);
  DeviceBuffer a(host.size() * 4), b(64);
  a.upload(host.data(), host.size() * 4);
  b.fill_zero();

  // 100 MB a call: three sets cover the 256 MB between two uses of one.
  Rotation rotation({&a, &b}, 100e6);
  REQUIRE(rotation.sets() == 3);
  CHECK(Rotation({&a}, 1e9).sets() == 1);
  CHECK(Rotation({&a}, 1e3).sets() == Rotation::kMaxSets);

  const CUdeviceptr inside = a.ptr() + 40;
  CHECK(rotation.at(inside, 0) == inside);
  CHECK(rotation.at(inside, 3) == inside); // set 3 is set 0 again
  const CUdeviceptr moved = rotation.at(inside, 2);
  CHECK(moved != inside);
  CHECK(rotation.at(b.ptr(), 2) != b.ptr());
  CHECK(rotation.at(b.ptr(), 2) != moved - 40);
  rt::synchronize(rt::kDefaultStream);

  // The copy of `a` in set 2 holds what `a` holds.
  std::vector<int32_t> got(host.size(), -1);
  const int64_t shape[1] = {static_cast<int64_t>(host.size())};
  rt::TensorView v = rt::TensorView::contiguous(a.ptr(), DType::i32, shape);
  rt::TensorView w = rotation.at(v, 2);
  CHECK(w.data == moved - 40);
  CHECK(w.shape[0] == v.shape[0]);
  TILEJIT_CU_CHECK(cuMemcpyDtoH(got.data(), w.data, host.size() * 4));
  CHECK(got == host);

  DeviceBuffer other(16);
  CHECK_THROWS_WITH(rotation.at(other.ptr(), 1),
                    "Rotation::at: the address points into none of the "
                    "rotated buffers");
}
