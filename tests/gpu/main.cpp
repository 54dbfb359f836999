// main.cpp - Catch2 runner for the GPU tests; exit 77 without a driver.
#define CATCH_CONFIG_RUNNER
#include "tilejit/runtime/device.h"
#include "tilejit/runtime/driver.h"

#include <catch2/catch.hpp>

#include <exception>
#include <iostream>
#include <string>

int main(int argc, char **argv) {
  std::string reason;
  if (!tilejit::rt::try_driver()) {
    reason = tilejit::rt::no_driver_reason();
  } else {
    try {
      if (tilejit::rt::device_count() == 0)
        reason = "the driver reports 0 CUDA devices";
    } catch (const std::exception &e) {
      reason = e.what();
    }
  }
  if (!reason.empty()) {
    std::cout << "no CUDA driver: GPU tests skipped (" << reason << ")"
              << std::endl;
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
