# tb_compile must fail with the message in the file's "// ERROR: ..." line.
file(STRINGS ${INPUT} want REGEX "^// ERROR:")
string(REGEX REPLACE "^// ERROR:[ ]*" "" want "${want}")
execute_process(COMMAND ${TB_COMPILE} --emit=ptx ${INPUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "expected an error, tb_compile succeeded")
endif()
string(FIND "${err}" "${want}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "expected '${want}' in:\n${err}")
endif()
