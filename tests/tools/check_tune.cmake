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
# a variant writing where the reference variant does not (into its input x) fails too
tilec_test(check_writes_input 1 --out "interpreter against the reference variant: x: FAIL"
           --out "check: 1 passed, 1 failed"
           -- ${TILEC} check ${CHECKF} --kernel clobber ${CHECK_ARGS})
# variants whose where clauses refuse the arguments are skipped, as the tuner skips them
tilec_test(check_where_skips 0 --out "BLOCK=256, warps=4, stages=2.: skipped"
           --out "check: 15 passed, 0 failed, 6 skipped"
           -- ${TILEC} check ${PROJECT_SOURCE_DIR}/examples/softmax.tile --kernel softmax --device=interp
              x=randn:3000:1 out=zeros:3000 rows=3 cols=1000)
# --variants=chosen: only the variant a launch would take (the interpreter device: the first)
tilec_test(check_chosen 0 --out "kernel 'wrong' on interpreter, 1 variant$" --out "check: 1 passed, 0 failed"
           -- ${TILEC} check ${CHECKF} --kernel wrong --variants=chosen ${CHECK_ARGS})
tilec_test(check_usage_lists_subcommands 0 --out "tilec check.tune.report" -- ${TILEC} --help)
tilec_test(check_no_kernel_option 2 --err "tilec check needs --kernel NAME" -- ${TILEC} check ${CHECKF} n=1)
tilec_test(check_bad_rtol 2 --err "bad --rtol" -- ${TILEC} check ${CHECKF} --kernel twice --rtol=x)
tilec_test(check_help 0 --out "usage: tilec check" --out "--variants=WHICH" -- ${TILEC} check --help)

# ---- the tuning log and its replay --------------------------------------------------------
# Recorded through the stub CUDA driver (deterministic virtual times), then replayed.
if(TARGET tile_backend AND TILEC_CUDA_INCLUDE_DIR)
  add_executable(tune_log_stub tune_log_stub.c)
  target_link_libraries(tune_log_stub PRIVATE tile_runtime stubcuda)
  target_include_directories(tune_log_stub PRIVATE ${PROJECT_SOURCE_DIR}/tests/stubcuda)
  set(TL ${W}/tune_log)
  add_test(NAME tools.tune_log_record
           COMMAND sh -c "rm -rf \"$1\" && \"$2\" \"$1\" \"$3\"" sh ${TL} $<TARGET_FILE:tune_log_stub>
                   ${PROJECT_SOURCE_DIR}/examples/vector_add.tile)
  set_tests_properties(tools.tune_log_record PROPERTIES FIXTURES_SETUP tune_log TIMEOUT 300
                       ENVIRONMENT "TILE_LIBCUDA=$<TARGET_FILE:stubcuda>")
endif()
set(REPLAY_LOG ${CMAKE_CURRENT_SOURCE_DIR}/tune_replay.log)
# the recorded exhaustive search chose B=2 in its final round although B=1 screened
# faster: the replay reproduces it; halving (screening samples only) picks B=1; a record
# cut short (no `end`) is not read
tilec_test(tune_replay_final_round 0 --out "exhaustive +chose B=2 .as recorded."
           --out "halving +chose B=1. quality 0.971. 3 timed, 0.30 s compile"
           --out "summary over 1 run:" --out "exhaustive mean quality 1.000, worst 1.000, 1 of 1 choices as recorded"
           -- ${TILEC} tune --replay ${REPLAY_LOG})
# random-k with k=1 draws B=2 (1.0), B=1 (0.971) or B=3 (0.495) alike: about 0.82, one timed
tilec_test(tune_replay_random 0 --out "random-k \\(k=1\\) +chose .*. quality 0\\.8[0-4][0-9]*. 1 timed"
           -- ${TILEC} tune --replay ${REPLAY_LOG} --policy random-k --k 1)
tilec_test(tune_replay_no_log 2 --err "tilec tune needs --replay LOG" -- ${TILEC} tune)
tilec_test(tune_replay_bad_policy 2 --err "unknown policy 'fast'" -- ${TILEC} tune --replay ${REPLAY_LOG} --policy fast)
tilec_test(tune_replay_missing 1 --err "cannot read the tuning log" -- ${TILEC} tune --replay ${W}/no-such.log)
tilec_test(tune_replay_other_kernel 1 --err "no complete tuning run of kernel 'nope'" -- ${TILEC} tune --replay ${REPLAY_LOG} --kernel nope)
if(TARGET tune_log_stub)
  # the log the stub run recorded: exhaustive replays every recorded choice; the runtime's
  # model:1 and random:2 policies timed fewer candidates (2 and 4 cubins of 5); the joint
  # search's round timed the chosen cubin against its two ptxas option sets
  tilec_test(tune_replay_stub 0 --out "run 1: vector_add .n=8192. on Stub GPU .*5 candidates"
             --out "run 2: .*2 candidates. recorded .policy model:1"
             --out "run 3: .*4 candidates. recorded .policy random:2"
             --out "run 5: .*3 candidates. recorded .policy exhaustive.: .*. ptxas --def-load-cache=cg"
             --out "ptxas --def-load-cache=cg .as recorded."
             --out "exhaustive mean quality 1.000, worst 1.000, 5 of 5 choices as recorded"
             -- ${TILEC} tune --replay ${TL}/tune.log --policy exhaustive)
  set_tests_properties(tools.tune_replay_stub PROPERTIES FIXTURES_REQUIRED tune_log)
endif()

# ---- tilec report --roofline ---------------------------------------------------------------
find_program(PYTHON3 python3)
if(PYTHON3)
  add_test(NAME tools.roofline_svg COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/roofline.sh ${TILEC}
                                           ${CMAKE_CURRENT_SOURCE_DIR}/roofline_points.csv ${W}/roofline)
endif()
tilec_test(roofline_bad_line 1 --err "roofline_points_bad.csv:2: expected LABEL,FLOPS,BYTES,MS"
           -- sh -c "printf 'a,1,2,3\\nb,1,x,3\\n' > ${W}/roofline_points_bad.csv && ${TILEC} report --roofline ${W}/r.svg ${W}/roofline_points_bad.csv")
tilec_test(roofline_no_out 2 --err "tilec report needs --roofline OUT.svg" -- ${TILEC} report x.csv)
tilec_test(roofline_bad_gpu 2 --err "unknown GPU 'a100'" -- ${TILEC} report --roofline x.svg --gpu a100 x.csv)

# ---- the tutorials (docs/tutorials): each kernel, every variant, against the interpreter ---
# On the interpreter here; labelled gpu, the same check on the GPU (exit 77: skipped without).
set(TUT_SH ${CMAKE_CURRENT_SOURCE_DIR}/tutorial.sh)
set(EX ${PROJECT_SOURCE_DIR}/examples)
set(MM_ARGS M=80 N=96 K=60 stride_am=64 stride_ak=1 stride_bk=96 stride_bn=1 stride_cm=96 stride_cn=1)
set(TUT_vector_add ${EX}/vector_add.tile vector_add x=randn:5000:1 y=randn:5000:2 out=zeros:5000 n=5000)
set(TUT_softmax ${EX}/softmax.tile softmax x=randn:3000:1 out=zeros:3000 rows=3 cols=1000)
set(TUT_matmul_naive ${EX}/matmul_naive.tile matmul_naive a=randn:5120:1 b=randn:5760:2 c=zeros:7680 ${MM_ARGS})
set(TUT_matmul ${EX}/matmul.tile matmul -D BM=64 -D BN=64 -D warps=4 a=randn:5120:1 b=randn:5760:2
    c=zeros:7680 ${MM_ARGS})
set(TUT_epilogue ${EX}/matmul_gelu.tile matmul_gelu -D BM=64 -D BN=64 -D warps=4 a=randn:5120:1
    b=randn:5760:2 bias=randn:96:3 c=zeros:7680 ${MM_ARGS})
# int8 GEMM with power-of-two scales: --rtol=0 --atol=0, every variant bit-exact
set(TUT_int8 ${EX}/gemm_i8_scaled.tile gemm_i8_scaled --rtol=0 --atol=0 a=rand:5120:1 b=rand:5760:2
    ea=rand:80:3 eb=rand:96:4 c=zeros:7680 ${MM_ARGS})
set(TUT_attention ${EX}/attention.tile attention D=64 q=randn:25600:1 k=randn:25600:2 v=randn:25600:3
    o=zeros:25600 heads=2 S=200 scale=0.125)
foreach(tut vector_add softmax matmul_naive matmul epilogue int8 attention)
  add_test(NAME tools.tutorial_${tut} COMMAND sh ${TUT_SH} ${TILEC} interp ${TUT_${tut}})
  add_test(NAME gpu_tutorial_${tut} COMMAND sh ${TUT_SH} ${TILEC} cuda ${TUT_${tut}})
  set_tests_properties(gpu_tutorial_${tut} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
endforeach()

# ---- tilec report FILE.tile: one launch counted, loops times their trip counts ------------------
set(COUNTS ${CMAKE_CURRENT_SOURCE_DIR}/counts.tile)
set(MM_FIX -D BM=64 -D BN=64 -D BK=32 -D warps=4 -D stages=3 a=zeros:10240 b=zeros:11520 c=zeros:7680
    M=80 N=96 stride_am=128 stride_ak=1 stride_bk=96 stride_bn=1 stride_cm=96 stride_cn=1)
# a GEMM's flops grow with K: 4 programs x cdiv(K, 32) steps x 2*64*64*32
tilec_test(counts_matmul_k60 0 --out "flops=2097152 global_bytes=98304 per launch" --not-out "note:"
           -- ${TILEC} report ${EX}/matmul.tile --kernel matmul ${MM_FIX} K=60)
tilec_test(counts_matmul_k120 0 --out "flops=4194304 global_bytes=163840 per launch"
           --out "point: matmul,4194304,163840,0.5"
           -- ${TILEC} report ${EX}/matmul.tile --kernel matmul ${MM_FIX} K=120 --ms=0.5)
# 3 rows x cdiv(1000, 64) steps of 64 adds, plus each row's sum
tilec_test(counts_trip_from_argument 0 --out "rows_sum .* on grid .3, 1, 1.: flops=3264 global_bytes=12300 per launch"
           -- ${TILEC} report ${COUNTS} --kernel rows_sum x=zeros:3000 out=zeros:3 rows=3 cols=1000)
# program r walks r + 1 steps: 1 + 2 + 3 + 4 = 10 steps of 64 adds
tilec_test(counts_trip_from_program_id 0 --out "flops=640 global_bytes=3584 per launch"
           -- ${TILEC} report ${COUNTS} --kernel triangle x=zeros:256 out=zeros:256)
tilec_test(counts_unknown_trip 0 --out "flops=64 global_bytes=516 per launch"
           --out "note: 1 loop counted once .per iteration."
           -- ${TILEC} report ${COUNTS} --kernel unknown n=zeros:1 x=zeros:64 out=zeros:64)
tilec_test(counts_missing_arg 1 --err "missing argument 'cols'"
           -- ${TILEC} report ${COUNTS} --kernel rows_sum x=zeros:3000 out=zeros:3 rows=3)
