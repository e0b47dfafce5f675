# Every variant of an example compiles for ARCH and ptxas accepts it, in two forms:
#  - div16: every pointer and integer parameter divisible by 16 (16-byte aligned buffers,
#    sizes that are multiples of 16), the specialization the runtime launches for the
#    common case, like Triton;
#  - generic: no facts about the arguments (what a misaligned launch runs).
# FORMS (default: both) may name just one, for the architectures checked in one form only
# (TILEC_GPU_ARCHS_ONE_FORM in tests/CMakeLists.txt).
# No variant may spill in either form, unless SPILL_ALLOWED is set (the dot examples of
# TILEC_DOT_SPILL_ALLOWED in tests/CMakeLists.txt, until the pipelining pass lands): then
# the spilling variants are listed and the check still wants every variant compiled and
# accepted by ptxas.
# With TILEC and UNIT (a comma list of stride parameters), a third form, div16+unit, runs
# `tilec --report --div16 --assume-one=UNIT`: the row-major layout the runtime launches for
# the common case (it specializes integers equal to 1; the div16 form above is then the
# transposed-operand specialization); every variant must compile, with the same spill rule.
# UNIT_XFAIL: that form is known not to compile yet (TILEC_DOT_UNIT_FORM_BROKEN): it must
# still fail, so that the fix shows as a failure asking to empty the list.
# With EXPECT_ERROR (a regex), the example must not compile for ARCH: tb_compile fails
# with that message for every variant, and no variant reaches ptxas (f8 dot below sm_89).
separate_arguments(defs UNIX_COMMAND "${DEFS}")
if(DEFINED EXPECT_ERROR AND NOT EXPECT_ERROR STREQUAL "")
  execute_process(COMMAND ${TB_COMPILE} --arch=${ARCH} --emit=cubin --report --div16 ${defs} ${EXAMPLE}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT rc MATCHES "^[0-9]+$")
    message(FATAL_ERROR "expected a clean failure for ${ARCH}, got rc=${rc}:\n${err}\n${out}")
  endif()
  string(REGEX MATCHALL "variants=[0-9]+" nv "${out}")
  string(REGEX REPLACE "variants=" "" nv "${nv}")
  string(REGEX MATCHALL "[^\n]*: failed" failed "${out}\n${err}")
  string(REGEX MATCHALL "${EXPECT_ERROR}" said "${err}")
  list(LENGTH failed nfailed)
  list(LENGTH said nsaid)
  if(out MATCHES "regs=" OR NOT nv GREATER 0 OR NOT nfailed EQUAL nv OR NOT nsaid EQUAL nv)
    message(FATAL_ERROR "want every one of the ${nv} variants refused with '${EXPECT_ERROR}' "
                        "(${nfailed} failed, ${nsaid} said so):\n${err}\n${out}")
  endif()
  message(STATUS "refused as expected for ${ARCH}:\n${err}")
  return()
endif()
if(NOT DEFINED FORMS OR FORMS STREQUAL "")
  set(FORMS div16 generic)
endif()
separate_arguments(FORMS)
foreach(form ${FORMS})
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
  set(spilling "")
  foreach(l ${lines})
    if(NOT l MATCHES "spill_stores=0 spill_loads=0")
      if(NOT SPILL_ALLOWED)
        message(FATAL_ERROR "spills in the ${form} form: ${l}")
      endif()
      string(REGEX REPLACE ":.*(spill_stores=[0-9]+ spill_loads=[0-9]+).*" ": \\1" l "${l}")
      string(APPEND spilling "\n  ${l}")
    endif()
  endforeach()
  if(spilling)
    message(STATUS "${form}: spills allowed for now (TILEC_DOT_SPILL_ALLOWED) in:${spilling}")
  endif()
  message(STATUS "${form}:\n${out}")
endforeach()
if(DEFINED UNIT AND NOT UNIT STREQUAL "")
  execute_process(COMMAND ${TILEC} ${EXAMPLE} --arch=${ARCH} --emit=cubin --report --div16
                          --assume-one=${UNIT} ${defs} -o /dev/null
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(UNIT_XFAIL)
    if(rc EQUAL 0)
      message(FATAL_ERROR "div16+unit now compiles: remove this example from "
                          "TILEC_DOT_UNIT_FORM_BROKEN (tests/CMakeLists.txt):\n${out}")
    endif()
    message(STATUS "div16+unit: fails as known (TILEC_DOT_UNIT_FORM_BROKEN):\n${err}")
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tilec (div16+unit, --assume-one=${UNIT}) failed (${rc}):\n${err}\n${out}")
  endif()
  string(REGEX MATCHALL "[^\n]*regs=[^\n]*" lines "${out}")
  list(LENGTH lines nlines)
  if(NOT nlines EQUAL nv)
    message(FATAL_ERROR "${nv} variants but ${nlines} reports in the div16+unit form:\n${out}")
  endif()
  foreach(l ${lines})
    if(NOT l MATCHES "spill_stores=0 spill_loads=0" AND NOT SPILL_ALLOWED)
      message(FATAL_ERROR "spills in the div16+unit form: ${l}")
    elseif(NOT l MATCHES "spill_stores=0 spill_loads=0")
      message(STATUS "div16+unit: spills allowed for now (TILEC_DOT_SPILL_ALLOWED): ${l}")
    endif()
  endforeach()
  message(STATUS "div16+unit:\n${out}")
endif()
