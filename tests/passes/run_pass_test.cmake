# Runs one pass test (see CMakeLists.txt): cmake -DTILE_OPT= -DFILECHECK= -DINPUT= -DOUTDIR= -P this
file(STRINGS ${INPUT} header LIMIT_COUNT 1)
if(NOT header MATCHES "^// PASS:(.*)$")
  message(FATAL_ERROR "${INPUT}: the first line must be '// PASS: NAME...'")
endif()
string(STRIP "${CMAKE_MATCH_1}" passes)
separate_arguments(passes UNIX_COMMAND "${passes}")
file(STRINGS ${INPUT} expect_error REGEX "^// EXPECT-ERROR")
# An analysis prints its facts to stderr (tile-opt --pass=analysis_axisinfo): `// STDERR`
# checks them there, the IR on stdout still has to parse back.
file(STRINGS ${INPUT} check_stderr REGEX "^// STDERR")
# Error tests check the pass's own message, so the input is not verified first (the
# verifier would report some of the same problems before the pass sees them).
if(expect_error)
  set(args)
else()
  set(args --verify)
endif()
foreach(p ${passes})
  list(APPEND args --pass=${p})
endforeach()

get_filename_component(name ${INPUT} NAME_WE)
set(out ${OUTDIR}/${name}.out.tir)
set(err ${OUTDIR}/${name}.err.txt)
execute_process(COMMAND ${TILE_OPT} ${args} ${INPUT} OUTPUT_FILE ${out} ERROR_FILE ${err} RESULT_VARIABLE rc)
file(READ ${err} err_text)

if(expect_error)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "tile-opt ${args} ${INPUT}: expected exit 1, got ${rc}\n${err_text}")
  endif()
  set(checked ${err})
else()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tile-opt ${args} ${INPUT}: exit ${rc}\n${err_text}")
  endif()
  # What a pass prints must parse and verify again.
  execute_process(COMMAND ${TILE_OPT} --verify ${out} OUTPUT_QUIET ERROR_VARIABLE rt_err RESULT_VARIABLE rt_rc)
  if(NOT rt_rc EQUAL 0)
    message(FATAL_ERROR "the output of tile-opt ${args} does not parse back:\n${rt_err}")
  endif()
  set(checked ${out})
  if(check_stderr)
    set(checked ${err})
  endif()
endif()

execute_process(COMMAND ${FILECHECK} ${INPUT} --input-file=${checked} --dump-input=fail
                RESULT_VARIABLE fc_rc OUTPUT_VARIABLE fc_out ERROR_VARIABLE fc_err)
if(NOT fc_rc EQUAL 0)
  message(FATAL_ERROR "FileCheck ${INPUT} failed:\n${fc_out}${fc_err}")
endif()
