// tilejit-opt.cpp - mlir-opt with the tile dialect and tilejit's passes.
#include "tilejit/InitTilejit.h"

int main(int argc, char **argv) {
  return tilejit::runTilejitOptMain(argc, argv);
}
