# ptxas accepts the kernel for ARCH and reports no spills.
execute_process(COMMAND ${TB_COMPILE} --arch=${ARCH} --emit=cubin --report ${KERNEL}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tb_compile failed (${rc}):\n${err}\n${out}")
endif()
if(NOT out MATCHES "regs=[0-9]+")
  message(FATAL_ERROR "no ptxas report:\n${out}")
endif()
if(NOT out MATCHES "spill_stores=0 spill_loads=0")
  message(FATAL_ERROR "spills:\n${out}")
endif()
message(STATUS "${out}")
