# Runs tile-opt ARGS and checks its exit status and that stderr mentions EXPECT_STDERR.
execute_process(COMMAND ${TILE_OPT} ${ARGS} OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "tile-opt ${ARGS}: expected exit ${EXPECT_RC}, got ${rc}\n${err}")
endif()
string(FIND "${err}" "${EXPECT_STDERR}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "tile-opt ${ARGS}: stderr does not mention '${EXPECT_STDERR}':\n${err}")
endif()
