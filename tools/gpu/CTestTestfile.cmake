# CTestTestfile.cmake - The tests the GPU machine runs from the packed build
# (lit and the find_package test need LLVM's tools and run on the CPU machine).
add_test(unit "bin/tilejit_unit_tests")
add_test(gpu "bin/tilejit_gpu_tests" "~[big]")
set_tests_properties(gpu PROPERTIES SKIP_RETURN_CODE 77)
add_test(gpu_big "bin/tilejit_gpu_tests" "[big]")
set_tests_properties(gpu_big PROPERTIES SKIP_RETURN_CODE 77 LABELS big)
add_test(cli-run "bin/tilejit" "run" "scale_copy" "--shape" "4097x7000")
add_test(cli-run-per_token_cast "bin/tilejit" "run" "per_token_cast" "--shape" "4001x576" "--set" "use_packed_ue8m0=1" "--set" "use_tma_aligned_col_major_sf=1" "--set" "round_sf=1")
