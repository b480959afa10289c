# Device-resident buffers in a flow graph (docs/device-buffers.md): a C++
# program, no Python needed, so that it runs on a GPU host through a bundle of
# the GNU Radio libraries. Label gpu; exits 77 (skipped) without a usable GPU.
add_executable(test_device_buffers ${CMAKE_CURRENT_LIST_DIR}/test_device_buffers.cc)
target_link_libraries(test_device_buffers PRIVATE gnuradio-transient transient
                                                  gnuradio::gnuradio-blocks)
add_test(NAME device_buffers_gpu COMMAND test_device_buffers)
set_tests_properties(device_buffers_gpu PROPERTIES LABELS "gpu;gnuradio"
                     SKIP_RETURN_CODE 77 TIMEOUT 300)
# No GPU needed: boxcar_search_ff on GNU Radio's single-mapped host_buffer (the
# buffer kind of the device buffers) gives what it gives on a host buffer.
add_test(NAME device_buffers_single_mapped COMMAND test_device_buffers single_mapped)
set_tests_properties(device_buffers_single_mapped PROPERTIES LABELS "gnuradio"
                     TIMEOUT 120)
