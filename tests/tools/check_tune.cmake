# tilec check, tilec tune --replay and tilec report --roofline (included from
# CMakeLists.txt, whose tilec_test/tilec_script helpers these use).
set(CHECKF ${CMAKE_CURRENT_SOURCE_DIR}/check_variants.tile)
set(CHECK_ARGS --device=interp x=randn:200:1 out=zeros:200 n=200)

# ---- tilec check ---------------------------------------------------------------------
# variants that agree pass, exit 0
tilec_test(check_pass 0 --out "check: 2 passed, 0 failed" --out "reference variant: .BLOCK=64"
           --count-out "out: ok max abs 0, max rel 0, max ulp 0" 3
           -- ${TILEC} check ${CHECKF} --kernel twice ${CHECK_ARGS})
# a deliberately wrong variant fails, naming it, the first differing index and the errors
tilec_test(check_wrong_variant 1 --out "check: 1 passed, 1 failed"
           --out "interpreter against the reference variant: out: FAIL max abs 2\\.6.*max rel 1, max ulp 8388608. 200 of 200 elements differ, first at \\[0\\]"
           -- ${TILEC} check ${CHECKF} --kernel wrong ${CHECK_ARGS})
# a looser tolerance lets the same variant pass (rel error 1 <= 1.5)
tilec_test(check_rtol 0 --out "check: 2 passed, 0 failed"
           -- ${TILEC} check ${CHECKF} --kernel wrong --rtol=1.5 ${CHECK_ARGS})
# an out-of-bounds access of one variant is that variant's failure
tilec_test(check_out_of_bounds 1 --out "BLOCK=128, warps=4, stages=2.: FAIL on the interpreter: .*out-of-bounds load"
           --out "check: 1 passed, 1 failed"
           -- ${TILEC} check ${CHECKF} --kernel overrun ${CHECK_ARGS})
# variants whose where clauses refuse the arguments are skipped, as the tuner skips them
tilec_test(check_where_skips 0 --out "BLOCK=256, warps=4, stages=2.: skipped"
           --out "check: 15 passed, 0 failed, 6 skipped"
           -- ${TILEC} check ${PROJECT_SOURCE_DIR}/examples/softmax.tile --kernel softmax --device=interp
              x=randn:3000:1 out=zeros:3000 rows=3 cols=1000)
tilec_test(check_no_kernel_option 2 --err "tilec check needs --kernel NAME" -- ${TILEC} check ${CHECKF} n=1)
tilec_test(check_bad_rtol 2 --err "bad --rtol" -- ${TILEC} check ${CHECKF} --kernel twice --rtol=x)
tilec_test(check_help 0 --out "usage: tilec check" --out "--variants=WHICH" -- ${TILEC} check --help)
