// runtime.h - Umbrella header: the whole tilejit runtime API.
#pragma once

#include "tilejit/runtime/buffer.h"
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"
#include "tilejit/runtime/launch.h"
#include "tilejit/runtime/module.h"
#include "tilejit/runtime/stream.h"
#include "tilejit/runtime/tensor.h"
#include "tilejit/runtime/timer.h"
