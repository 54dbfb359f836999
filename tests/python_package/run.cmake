# run.cmake - The Python package as a user gets it: install the build into
# a fresh prefix, build the wheel from python/ against it (pip wheel,
# scikit-build-core, CMAKE_PREFIX_PATH; no build isolation, so no network:
# dev.sh installs the build requirements), install the wheel into a fresh
# venv, and run test_package.py (the op functions), test_tile_kernels.py
# (TileKernels' API), test_cache.py (tilejit.cache) and test_bench.py (the
# benchmark chart) with the venv's
# Python, nothing else on its paths; then,
# where the Python has torch, test_torch.py (custom ops, torch.compile on
# meta tensors) in a venv that sees it.
# The Python is $TILEJIT_PYTHON, >= 3.12 with the wheel's build requirements
# (dev.sh finds one and installs them); without one the test is skipped,
# saying why.
set(PYTHON "$ENV{TILEJIT_PYTHON}")
if(NOT PYTHON)
  message("python_package: skipped: no Python >= 3.12 found (dev.sh looks "
          "for python3.12 / python3.13 and pyenv's)")
  return()
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
macro(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "${what} failed: ${rc}")
  endif()
endmacro()
run("installing tilejit"
    ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
run("building the wheel"
    ${CMAKE_COMMAND} -E env CMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    ${PYTHON} -m pip wheel "${PACKAGE_SOURCE}" -w "${WORK_DIR}/dist"
    --no-build-isolation --no-deps -q)
file(GLOB wheel "${WORK_DIR}/dist/tilejit-*-cp312-abi3-*.whl")
if(NOT wheel)
  message(FATAL_ERROR "no cp312-abi3 wheel in ${WORK_DIR}/dist")
endif()
run("making a venv" ${PYTHON} -m venv "${WORK_DIR}/venv")
run("installing the wheel"
    "${WORK_DIR}/venv/bin/python" -m pip install -q --no-index --no-deps
    ${wheel})
foreach(script test_package.py test_tile_kernels.py test_cache.py
               test_bench.py)
  run("${script}" "${WORK_DIR}/venv/bin/python" ${TEST_DIR}/${script})
endforeach()
# With torch (the Python's own, seen through --system-site-packages): the
# custom ops' fake implementations and torch.compile on meta tensors.
execute_process(COMMAND ${PYTHON} -c "import torch" RESULT_VARIABLE no_torch
                OUTPUT_QUIET ERROR_QUIET)
if(no_torch)
  message("test_torch.py: skipped: no torch in ${PYTHON} (dev.sh installs "
          "it unless TILEJIT_TEST_TORCH=0)")
else()
  run("making a venv with torch"
      ${PYTHON} -m venv --system-site-packages "${WORK_DIR}/venv-torch")
  run("installing the wheel beside torch"
      "${WORK_DIR}/venv-torch/bin/python" -m pip install -q --no-index
      --no-deps ${wheel})
  run("test_torch.py"
      "${WORK_DIR}/venv-torch/bin/python" ${TEST_DIR}/test_torch.py)
endif()
