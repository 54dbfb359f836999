// tuning_test.cpp - TILEJIT_TUNE: its text parsed per op, the overrides
// applied to a spec, and each mistake's message.
#include "op/spec_fields.h"
#include "op/tuning.h"

#include "tilejit/error.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>

using namespace tilejit;

namespace {

struct TuneSpec {
  DType dtype = DType::f32;
  int32_t block = 128;
  int32_t unroll = 1;
};
TILEJIT_SPEC_FIELDS(TuneSpec, dtype, block, unroll)

std::string error_of(const ops::SpecTuning &t) {
  try {
    (void)ops::tuned(TuneSpec{}, t, "toy");
  } catch (const UserError &e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST_CASE("TILEJIT_TUNE sets the named op's integer fields", "[tuning]") {
  const ops::SpecTuning t =
      ops::parse_spec_tuning("other:block=64; toy:block=256, unroll=4", "toy");
  REQUIRE(t.error.empty());
  REQUIRE(t.fields.size() == 2);
  const TuneSpec s = ops::tuned(TuneSpec{}, t, "toy");
  CHECK(s.block == 256);
  CHECK(s.unroll == 4);
  CHECK(s.dtype == DType::f32);
  CHECK(ops::tuned(TuneSpec{}, ops::parse_spec_tuning("toy:unroll=-3", "toy"),
                   "toy")
            .unroll == -3);
  // Another op's entry leaves this one's spec as it is.
  const TuneSpec u = ops::tuned(
      TuneSpec{}, ops::parse_spec_tuning("other:block=64", "toy"), "toy");
  CHECK(u.block == 128);
  CHECK(ops::parse_spec_tuning("", "toy").empty());
}

TEST_CASE("TILEJIT_TUNE's mistakes are named errors", "[tuning]") {
  const std::string form = "; requires op:field=value[,field=value][;op:...]";
  const std::string fields = "; its fields: dtype, block, unroll";
  // (TILEJIT_TUNE's text, the message of a toy call under it)
  const std::pair<const char *, std::string> mistakes[] = {
      {"toy:block=2x",
       "TILEJIT_TUNE is 'toy:block=2x': 'block=2x' is not field=integer" +
           form},
      {"block=2", "TILEJIT_TUNE is 'block=2': 'block=2' names no op" + form},
      {"toy:", "TILEJIT_TUNE is 'toy:': 'toy:' sets no field" + form},
      // A malformed entry for another op fails this op's calls too.
      {"other:x", "TILEJIT_TUNE is 'other:x': 'x' is not field=integer" + form},
      {"toy:blocks=2",
       "TILEJIT_TUNE: op toy has no integer spec field 'blocks' that holds 2" +
           fields},
      {"toy:dtype=1",
       "TILEJIT_TUNE: op toy has no integer spec field 'dtype' that holds 1" +
           fields},
      {"toy:block=4294967296",
       "TILEJIT_TUNE: op toy has no integer spec field 'block' that holds "
       "4294967296" +
           fields},
  };
  for (const auto &[text, message] : mistakes) {
    INFO(text);
    CHECK(error_of(ops::parse_spec_tuning(text, "toy")) == message);
  }
}
