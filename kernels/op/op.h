// op.h - What an op's declaration file includes: the declaration types,
// make_op and its kernel table, the argument checks, the error types and
// fmt for the messages an op's own checks write.
#pragma once

#include "common/check.h"
#include "op/typed_op.h"

#include "tilejit/error.h"

#include <fmt/format.h>
