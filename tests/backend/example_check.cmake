# Every variant of an example compiles for ARCH and ptxas accepts it, in two forms:
#  - div16: every pointer and integer parameter divisible by 16 (16-byte aligned buffers,
#    sizes that are multiples of 16), the specialization the runtime launches for the
#    common case, like Triton;
#  - generic: no facts about the arguments (what a misaligned launch runs).
# FORMS (default: both) may name just one, for the architectures checked in one form only
# (TILEC_GPU_ARCHS_ONE_FORM in tests/CMakeLists.txt).
# No variant may spill in any form, unless SPILL_LIST (a file, tests/backend/spills_allowed.txt)
# names it: lines `EXAMPLE ARCH FORM VARIANT` (VARIANT the report's bracket without spaces),
# the variants measured to spill today, each listed for the LLVM it spills with.  A spill
# not on the list fails; a listed variant that no longer spills is reported, so that the
# list can shrink.  Every spilling variant prints as such a line (`spills: ...`).
# With TILEC and UNIT (a comma list of stride parameters), a third form, div16+unit, runs
# `tilec --report --div16 --assume-one=UNIT`: the row-major layout the runtime launches for
# the common case (it specializes integers equal to 1; the div16 form above is then the
# transposed-operand specialization); every variant must compile, with the same spill rule.
# With DIV8 (and UNIT) a fourth form, div8+unit: pointers 16-byte aligned, integers multiples
# of 8 (not of 16), UNIT strides 1 (`--assume-div8=* --assume-div16=POINTERS
# --assume-one=UNIT`): what the runtime launches for a row-major GEMM whose sizes are
# multiples of 8 only, 4000x3000x5000 say; same spill rule.  With DIV8 also a fifth form,
# ptrs+unit: pointers 16-byte aligned and UNIT strides 1, nothing about the other integers
# (`--assume-div16=POINTERS --assume-one=UNIT`): a row-major GEMM whose sizes are not
# multiples of 8 (4095^3), and a bundle's pointers-only records; same spill rule.
# UNIT_XFAIL: that form is known not to compile yet (TILEC_DOT_UNIT_FORM_BROKEN): it must
# still fail, so that the fix shows as a failure asking to empty the list.
# With EXPECT_ERROR (a regex), the example must not compile for ARCH: tb_compile fails
# with that message for every variant, and no variant reaches ptxas (f8 dot below sm_89).
separate_arguments(defs UNIX_COMMAND "${DEFS}")
set(spill_errors "")
get_filename_component(ex_name ${EXAMPLE} NAME_WE)
set(allowed "")
if(DEFINED SPILL_LIST AND EXISTS "${SPILL_LIST}")
  file(STRINGS "${SPILL_LIST}" listed REGEX "^${ex_name} ${ARCH} ")
  # a line ending in " llvmN" holds for LLVM N only (LLVM_MAJOR)
  foreach(l ${listed})
    if(l MATCHES "^(.*) llvm([0-9]+)$")
      if(DEFINED LLVM_MAJOR AND CMAKE_MATCH_2 STREQUAL "${LLVM_MAJOR}")
        list(APPEND allowed "${CMAKE_MATCH_1}")
      endif()
    else()
      list(APPEND allowed "${l}")
    endif()
  endforeach()
endif()
# check_spills(FORM LINES): every report line of LINES that spills is on the list.
function(check_spills form lines)
  set(bad "")
  set(listed 0)
  foreach(l ${lines})
    string(REGEX MATCH "\\[[^]]*\\]" var "${l}")
    string(REPLACE " " "" var "${var}")
    string(REGEX REPLACE "^\\[|\\]$" "" var "${var}")
    set(key "${ex_name} ${ARCH} ${form} ${var}")
    if(NOT l MATCHES "spill_stores=0 spill_loads=0")
      string(REGEX MATCH "spill_stores=[0-9]+ spill_loads=[0-9]+" sp "${l}")
      message(STATUS "spills: ${key}   (${sp})")
      list(FIND allowed "${key}" at)
      if(at LESS 0)
        string(APPEND bad "\n  ${key}   (${sp})")
      else()
        math(EXPR listed "${listed} + 1")
      endif()
    else()
      list(FIND allowed "${key}" at)
      if(at GREATER -1)
        message(STATUS "no longer spills (remove it from ${SPILL_LIST}): ${key}")
      endif()
    endif()
  endforeach()
  if(bad)
    set(spill_errors "${spill_errors}\n${form}:${bad}" PARENT_SCOPE)
  endif()
  if(listed GREATER 0)
    message(STATUS "${form}: ${listed} variants spill as listed in ${SPILL_LIST}")
  endif()
endfunction()
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
  message(STATUS "${form}:\n${out}")
  check_spills(${form} "${lines}")
endforeach()
# tilec_form_run(FLAGS...): tilec --report of every variant under FLAGS, into rc/out/err;
# tilec_form_check(FORM LABEL): it compiled every variant, and its spills are listed (macros:
# check_spills sets spill_errors in the caller's scope).
macro(tilec_form_run)
  execute_process(COMMAND ${TILEC} ${EXAMPLE} --arch=${ARCH} --emit=cubin --report ${ARGN}
                          ${defs} -o /dev/null
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endmacro()
macro(tilec_form_check form label)
  string(REGEX MATCHALL "[^\n]*regs=[^\n]*" lines "${out}")
  list(LENGTH lines nlines)
  if(NOT rc EQUAL 0 OR NOT nlines EQUAL nv)
    message(FATAL_ERROR "tilec (${label}) failed (${rc}) or reported ${nlines} of ${nv} "
                        "variants:\n${err}\n${out}")
  endif()
  message(STATUS "${label}:\n${out}")
  check_spills(${form} "${lines}")
endmacro()
if(DEFINED UNIT AND NOT UNIT STREQUAL "")
  tilec_form_run(--div16 --assume-one=${UNIT})
  if(UNIT_XFAIL)
    if(rc EQUAL 0)
      message(FATAL_ERROR "div16+unit now compiles: remove this example from "
                          "TILEC_DOT_UNIT_FORM_BROKEN (tests/CMakeLists.txt):\n${out}")
    endif()
    message(STATUS "div16+unit: fails as known (TILEC_DOT_UNIT_FORM_BROKEN):\n${err}")
    return()
  endif()
  tilec_form_check(unit "div16+unit, --assume-one=${UNIT}")
  if(DIV8)
    file(READ ${EXAMPLE} src)
    string(REGEX MATCHALL "[a-z_0-9]+: \\*[a-z0-9]+" ptrs "${src}")
    list(TRANSFORM ptrs REPLACE ":.*" "")
    list(JOIN ptrs "," ptrs)
    tilec_form_run("--assume-div8=*" --assume-div16=${ptrs} --assume-one=${UNIT})
    tilec_form_check(div8 "div8+unit, pointers ${ptrs} div16")
    tilec_form_run(--assume-div16=${ptrs} --assume-one=${UNIT})
    tilec_form_check(ptrs "ptrs+unit, pointers ${ptrs} div16")
  endif()
endif()
if(spill_errors)
  message(FATAL_ERROR "spills not in ${SPILL_LIST}:${spill_errors}")
endif()
