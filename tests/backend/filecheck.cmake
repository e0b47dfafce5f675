# Runs tb_compile with the options in the file's "// RUN-ARGS: ..." line and FileCheck.
file(STRINGS ${INPUT} args_line REGEX "^// RUN-ARGS:")
string(REGEX REPLACE "^// RUN-ARGS:[ ]*" "" args "${args_line}")
separate_arguments(args UNIX_COMMAND "${args}")
execute_process(COMMAND ${TB_COMPILE} ${args} ${INPUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tb_compile failed (${rc}):\n${err}")
endif()
get_filename_component(name ${INPUT} NAME_WE)
set(tmp ${CMAKE_CURRENT_BINARY_DIR}/${name}.out)
file(WRITE ${tmp} "${out}")
# CHECK lines hold for every supported LLVM (19 and up): they accept both spellings of
# what LLVM 19 and LLVM 20+ print alike (typed ld.global.f32 / ld.global.b32, %f / %r
# registers).  Where the instructions themselves differ (the .maxntid of a launch bound,
# which LLVM 19 does not emit; another but equal owner test), lines with the prefix LLVM20
# pin LLVM 20 and newer, lines with LLVM19 pin LLVM 19.
set(prefixes CHECK,LLVM19)
if(LLVM_MAJOR GREATER_EQUAL 20)
  set(prefixes CHECK,LLVM20)
endif()
execute_process(COMMAND ${FILECHECK} --allow-unused-prefixes --check-prefixes=${prefixes} ${INPUT} --input-file=${tmp}
                RESULT_VARIABLE fc
                OUTPUT_VARIABLE fo ERROR_VARIABLE fe)
if(NOT fc EQUAL 0)
  message(FATAL_ERROR "FileCheck failed:\n${fe}${fo}")
endif()
