# Every variant of an example compiles for ARCH and ptxas accepts it, in two forms:
#  - div16: every pointer and integer parameter divisible by 16 (16-byte aligned buffers,
#    sizes that are multiples of 16), the specialization the runtime launches for the
#    common case, like Triton;
#  - generic: no facts about the arguments (what a misaligned launch runs).
# No variant may spill in either form.
separate_arguments(defs UNIX_COMMAND "${DEFS}")
foreach(form div16 generic)
  set(flag "")
  if(form STREQUAL "div16")
    set(flag --div16)
  endif()
  execute_process(COMMAND ${TB_COMPILE} --arch=${ARCH} --emit=cubin --report ${flag} ${defs} ${EXAMPLE}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tb_compile (${form}) failed (${rc}):\n${err}\n${out}")
  endif()
  if(NOT out MATCHES "variants=[1-9]")
    message(FATAL_ERROR "no variant compiled (${form}):\n${out}")
  endif()
  string(REGEX MATCHALL "[^\n]*regs=[^\n]*" lines "${out}")
  string(REGEX MATCHALL "variants=[0-9]+" nv "${out}")
  list(LENGTH lines nlines)
  string(REGEX REPLACE "variants=" "" nv "${nv}")
  if(NOT nlines EQUAL nv)
    message(FATAL_ERROR "${nv} variants but ${nlines} ptxas reports (${form}):\n${out}")
  endif()
  foreach(l ${lines})
    if(NOT l MATCHES "spill_stores=0 spill_loads=0")
      message(FATAL_ERROR "spills in the ${form} form: ${l}")
    endif()
  endforeach()
  message(STATUS "${form}:\n${out}")
endforeach()
