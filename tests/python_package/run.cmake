# run.cmake - Install the build into a fresh prefix, build the Python module
# (python/) against it with find_package(tilejit), install it beside the
# package's Python files, and run test_package.py (the op functions) and
# test_tile_kernels.py (TileKernels' API) with that Python.
# The Python is $TILEJIT_PYTHON, >= 3.12 with nanobind (dev.sh finds one and
# installs nanobind); without one the test is skipped, saying why.
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
run("configuring python/"
    ${CMAKE_COMMAND} -S "${PACKAGE_SOURCE}" -B "${WORK_DIR}/build" -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    -DPython_EXECUTABLE=${PYTHON} -DTILEJIT_PYTHON_TESTING=ON)
run("building python/" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("installing python/"
    ${CMAKE_COMMAND} --install "${WORK_DIR}/build" --prefix "${WORK_DIR}/site")
foreach(script test_package.py test_tile_kernels.py)
  run("${script}"
      ${CMAKE_COMMAND} -E env PYTHONPATH=${WORK_DIR}/site
      LD_LIBRARY_PATH=${WORK_DIR}/prefix/lib ${PYTHON} ${TEST_DIR}/${script})
endforeach()
