# Recomputes the host hash manifest and compares it with the committed golden
# one (ctest: golden_host_manifest). -DTOOL, -DGOLDEN, -DOUT.
execute_process(COMMAND ${TOOL} hash --backend host --cases seed8 --out ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvfp4-harness hash failed (${rc})")
endif()
execute_process(COMMAND ${TOOL} compare ${GOLDEN} ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the recomputed host manifest differs from ${GOLDEN}")
endif()
