# Exports every built-in template with hetsched-topo --json, reads the file back with
# hetsched-topo and checks that both print the same report.
foreach(name dgx1-v100 dgx2 dgx-a100 hgx-h100 pcie-8gpu workstation-4gpu)
  execute_process(COMMAND ${TOPO} --json ${name} OUTPUT_FILE ${WORK}/${name}.json RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hetsched-topo --json ${name} failed")
  endif()
  execute_process(COMMAND ${TOPO} ${name} OUTPUT_VARIABLE direct RESULT_VARIABLE rc1)
  execute_process(COMMAND ${TOPO} ${WORK}/${name}.json OUTPUT_VARIABLE reread RESULT_VARIABLE rc2)
  if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT direct STREQUAL reread)
    message(FATAL_ERROR "${name}: the JSON read back prints a different report")
  endif()
endforeach()
