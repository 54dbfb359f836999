// main.cpp - Uses installed tilejit: builds a kernel with the DSL, compiles it
// to PTX, and names an op entry point (linked, not run: no GPU needed).
#include "elementwise/scale_copy.h"
#include "tilejit/compiler/compile.h"
#include "tilejit/compiler/dsl.h"

#include <cstdio>

int main() {
  using namespace tilejit;
  tilejit::CompiledKernel c =
      compile(elementwise::scale_copy_kernel(elementwise::ScaleCopySpec{}));
  auto entry = &elementwise::scale_copy;
  std::printf("consumer: compiled %s to %zu bytes of PTX; entry %s\n",
              c.name.c_str(), c.ptx.size(), entry ? "linked" : "missing");
  return c.ptx.find(".entry scale_copy") == std::string::npos;
}
