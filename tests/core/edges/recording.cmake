# Edge localizer on the real recording examples/data/i2c_sda_analog_8MHz.sr,
# checked against its logic channel. Included from tests/core/edges/CMakeLists.txt
# (after tr_c_test is defined). A fixture first extracts the analog channel
# and the logic probe into the build tree with tests/tools/sr_extract.py
# (standard library only, so any Python 3 interpreter does).
# When the Python bindings are configured, GNU Radio's interpreter
# (PYTHON_EXECUTABLE) is known: hand it to FindPython3, which otherwise finds
# nothing once the GNU Radio/pybind11 Python modules have run.
if(PYTHON_EXECUTABLE AND NOT Python3_EXECUTABLE)
  set(Python3_EXECUTABLE ${PYTHON_EXECUTABLE})
endif()
find_package(Python3 COMPONENTS Interpreter)
set(TR_RECORDING_SR ${PROJECT_SOURCE_DIR}/examples/data/i2c_sda_analog_8MHz.sr)

if(NOT Python3_Interpreter_FOUND)
  message(STATUS "gr-transient: no Python 3 interpreter, edges_recording test disabled")
elseif(NOT EXISTS ${TR_RECORDING_SR})
  message(STATUS "gr-transient: ${TR_RECORDING_SR} missing, edges_recording test disabled")
else()
  if(COMMAND tr_c_test)
    tr_c_test(test_edges_recording)
  else()
    add_executable(test_edges_recording ${CMAKE_CURRENT_LIST_DIR}/test_edges_recording.c)
    target_compile_options(test_edges_recording PRIVATE -Wall -Wextra ${TR_SANITIZE_FLAGS})
    target_link_options(test_edges_recording PRIVATE ${TR_SANITIZE_FLAGS})
    target_link_libraries(test_edges_recording PRIVATE transient m)
  endif()

  set(TR_RECORDING_PREFIX ${CMAKE_CURRENT_BINARY_DIR}/recording/i2c_sda)
  add_test(NAME edges_recording_extract
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/tools/sr_extract.py
                   --analog "SDA analog" --probe SDA
                   ${TR_RECORDING_SR} ${TR_RECORDING_PREFIX})
  set_tests_properties(edges_recording_extract PROPERTIES
                       FIXTURES_SETUP tr_recording TIMEOUT 60)
  add_test(NAME edges_recording
           COMMAND test_edges_recording ${TR_RECORDING_PREFIX}_analog.f32
                   ${TR_RECORDING_PREFIX}_logic.u8)
  set_tests_properties(edges_recording PROPERTIES
                       FIXTURES_REQUIRED tr_recording TIMEOUT 300)
endif()
