# GNU Radio Companion examples (examples/*.grc). Included from
# tests/python/CMakeLists.txt (GNU Radio's interpreter: PYTHON_EXECUTABLE).
#
# For each flow graph:
#   grc_compile_<name>  grcc compiles it against the block definitions of this
#                       source tree (grc/, loaded after GNU Radio's own, so an
#                       installed copy of ours cannot stand in for it); fixture
#                       setup of the tests below.
#   grc_run_<name>      the generated Python runs headless with GNU Radio's
#                       interpreter against the package in the build tree
#                       (${PROJECT_BINARY_DIR}/test_modules first on PYTHONPATH,
#                       as GR_ADD_TEST does) and must print the expected count.
# Skipped, with a message, when grcc or GNU Radio's block definitions are missing.

find_program(TR_GRCC_EXECUTABLE grcc)
set(_tr_grc_gr_blocks "")
if(TR_GRCC_EXECUTABLE)
  if(NOT GRC_BLOCKS_DIR)
    set(GRC_BLOCKS_DIR share/gnuradio/grc/blocks)
  endif()
  execute_process(COMMAND ${PYTHON_EXECUTABLE} -c "from gnuradio import gr; print(gr.prefix())"
                  OUTPUT_VARIABLE _tr_gr_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _tr_rc ERROR_QUIET)
  if(_tr_rc EQUAL 0 AND EXISTS ${_tr_gr_prefix}/${GRC_BLOCKS_DIR}/blocks_head.block.yml)
    cmake_path(SET _tr_grc_gr_blocks NORMALIZE ${_tr_gr_prefix}/${GRC_BLOCKS_DIR})
  endif()
endif()

if(NOT TR_GRCC_EXECUTABLE)
  message(STATUS "gr-transient: grcc not found, GRC example tests skipped")
elseif(NOT _tr_grc_gr_blocks)
  message(STATUS "gr-transient: GNU Radio's GRC block definitions not found, "
                 "GRC example tests skipped")
else()
  set(_tr_grc_out ${CMAKE_CURRENT_BINARY_DIR}/grc_examples)
  set(_tr_grc_env
      GR_DONT_LOAD_PREFS=1
      GR_CONF_CONTROLPORT_ON=False
      # GNU Radio's blocks, then ours from the source tree (the later one wins).
      GR_CONF_GRC_GLOBAL_BLOCKS_PATH=${_tr_grc_gr_blocks}:${PROJECT_SOURCE_DIR}/grc
      GRC_BLOCKS_PATH=)
  set(_tr_grc_pythonpath "PYTHONPATH=path_list_prepend:${PROJECT_BINARY_DIR}/test_modules")

  # name: examples/<name>.grc, generating <name>.py; the remaining arguments are
  # the generated script's options.
  # grc_compile_<name>: grcc compiles examples/<name>.grc into the output
  # folder; setup of the fixture `fixture` that the tests running it require.
  function(tr_grc_compile name fixture labels)
    add_test(NAME grc_compile_${name}
             COMMAND ${TR_GRCC_EXECUTABLE} -o ${_tr_grc_out}
                     ${PROJECT_SOURCE_DIR}/examples/${name}.grc)
    # HOME of its own: GRC's block cache and hier block directory stay out of
    # the user's, and parallel compiles do not share a cache file.
    set_tests_properties(grc_compile_${name} PROPERTIES
        ENVIRONMENT "${_tr_grc_env};HOME=${_tr_grc_out}/home-${name}"
        ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
        FAIL_REGULAR_EXPRESSION "Traceback|Load Error|Generate Error"
        FIXTURES_SETUP ${fixture}
        LABELS "${labels}" TIMEOUT 120)
  endfunction()

  # var: TRUE when GNU Radio's Python runs `statement` (an import), else FALSE
  # and a note that `what` is skipped.
  function(tr_python_can var statement what)
    execute_process(COMMAND ${PYTHON_EXECUTABLE} -c "${statement}"
                    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(${var} TRUE PARENT_SCOPE)
    else()
      set(${var} FALSE PARENT_SCOPE)
      message(STATUS "gr-transient: '${statement}' fails, ${what} skipped")
    endif()
  endfunction()

  function(tr_grc_example name pass_regex)
    tr_grc_compile(${name} grc_${name} "python;gnuradio;grc")
    add_test(NAME grc_run_${name}
             COMMAND ${PYTHON_EXECUTABLE} -B ${_tr_grc_out}/${name}.py ${ARGN})
    set_tests_properties(grc_run_${name} PROPERTIES
        ENVIRONMENT "${_tr_grc_env}"
        ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
        PASS_REGULAR_EXPRESSION "${pass_regex}"
        FAIL_REGULAR_EXPRESSION "Traceback"
        FIXTURES_REQUIRED grc_${name}
        LABELS "python;gnuradio;grc" TIMEOUT 120)
  endfunction()

  # The real I2C recording, automatic levels: the 18,403 SDA transitions of
  # examples/data/README.md.
  tr_grc_example(edge_localizer_recording
                 "edges: 18403 \\(rising 9202, falling 9201\\)"
                 --recording ${PROJECT_SOURCE_DIR}/examples/data/i2c_sda_analog_8MHz.sr)
  # 4000 samples of a 5 kHz square wave at 1 MS/s: a transition every 100 samples.
  tr_grc_example(edge_localizer_synthetic
                 "edges: 39 \\(rising 20, falling 19\\)")

  # A chirp injected into white noise so that it ends at sample 11193 (8193
  # samples of chirp + 3000), found by a SPIIR bank designed in the flow graph.
  tr_grc_example(spiir_chirp
                 "triggers: 1, best: template 0 at sample 11193 ")

  # GW150914 in the Hanford strain: Whiten, then a SPIIR bank without SNR
  # output (vector messages, chi-square) designed from the whitened waveform;
  # one trigger, SNR about 19, a small chi-square, the merger within 0.1 s.
  tr_grc_example(spiir_gw150914
                 "triggers: 1, best: SNR (1[89]|2[0-3])\\.[0-9], chisq [0-2]\\.[0-9]+, merger GPS 1126259462\\.(3[2-9]|4[0-9]|5[0-2])"
                 --strain-file ${PROJECT_SOURCE_DIR}/examples/data/H-H1_LOSC_4_V2-1126259446-32.hdf5
                 --waveform-file ${PROJECT_SOURCE_DIR}/examples/data/GW150914_4_NR_waveform.txt)
  # GRC evaluates the variables (the bank design reads the files) when it
  # compiles: from examples/, where the default paths (data/...) lie.
  set_tests_properties(grc_compile_spiir_gw150914 PROPERTIES
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/examples)

  # The threshold variable's callback reaches the block: a negative threshold
  # is refused (ValueError), one above the chirp's SNR leaves no trigger.
  file(WRITE ${_tr_grc_out}/check_spiir_setters.py [=[
import sys
import unittest

sys.path.insert(0, sys.argv[1])
from gnuradio import transient  # noqa: E402
import spiir_chirp  # noqa: E402

if not transient.__file__.startswith(sys.argv[2]):
    raise RuntimeError("gnuradio.transient from %s, not from %s" %
                       (transient.__file__, sys.argv[2]))
tb = spiir_chirp.spiir_chirp()
unittest.TestCase().assertRaises(ValueError, tb.set_threshold, -1.0)
tb.set_threshold(100.0)
tb.run()
]=])
  add_test(NAME grc_setters_spiir_chirp
           COMMAND ${PYTHON_EXECUTABLE} -B ${_tr_grc_out}/check_spiir_setters.py
                   ${_tr_grc_out} ${PROJECT_BINARY_DIR}/test_modules/)
  set_tests_properties(grc_setters_spiir_chirp PROPERTIES
      ENVIRONMENT "${_tr_grc_env}"
      ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
      PASS_REGULAR_EXPRESSION "triggers: 0"
      FAIL_REGULAR_EXPRESSION "Traceback"
      FIXTURES_REQUIRED grc_spiir_chirp
      LABELS "python;gnuradio;grc" TIMEOUT 120)
  # Gaussian bursts in coloured noise (seeded): every one of the 20 bursts is
  # detected, none elsewhere.
  tr_grc_example(kalman_bursts "bursts: [0-9]+ \\(hits 20 of 20, false alarms 0\\)")

  # The pulsar recording (PRESTO .dat, drifting baseline): one pulse per period
  # of PSR J1807-0847, the first statistics window included (it uses its own
  # statistics), every one on the period, tags and messages alike.
  tr_grc_example(boxcar_search_pulsar
                 "pulses: 1(29|3[01]) \\(tags 1(29|3[01])\\), on the period: 1(29|3[01]), off: [0-2], period 0\\.1637[0-4]"
                 --recording ${PROJECT_SOURCE_DIR}/examples/data/GBT_J1807-0847.dat)

  # Complex input (the power of a synthetic SDR capture): the 21 tone bursts,
  # one every 9100 samples, and nothing else.
  tr_grc_example(boxcar_search_sdr_synthetic
                 "pulses: 21 \\(tags 21\\), on the period: 21, off: 0, period 0\\.0091")

  # The threshold parameter's callback reaches the block: a threshold above
  # every pulse leaves none; a NaN threshold is refused (ValueError).
  file(WRITE ${_tr_grc_out}/check_pulsar_setters.py [=[
import os
import sys
import unittest

sys.path.insert(0, sys.argv[1])
from gnuradio import transient  # noqa: E402
import boxcar_search_pulsar  # noqa: E402

if not transient.__file__.startswith(sys.argv[2]):
    raise RuntimeError("gnuradio.transient from %s, not from %s" %
                       (transient.__file__, sys.argv[2]))
tb = boxcar_search_pulsar.boxcar_search_pulsar(recording=sys.argv[3])
unittest.TestCase().assertRaises(ValueError, tb.set_threshold, float("nan"))
tb.set_threshold(1000.0)
tb.run()
]=])
  add_test(NAME grc_setters_boxcar_search_pulsar
           COMMAND ${PYTHON_EXECUTABLE} -B ${_tr_grc_out}/check_pulsar_setters.py
                   ${_tr_grc_out} ${PROJECT_BINARY_DIR}/test_modules/
                   ${PROJECT_SOURCE_DIR}/examples/data/GBT_J1807-0847.dat)
  set_tests_properties(grc_setters_boxcar_search_pulsar PROPERTIES
      ENVIRONMENT "${_tr_grc_env}"
      ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
      PASS_REGULAR_EXPRESSION "pulses: 0 \\(tags 0\\)"
      FAIL_REGULAR_EXPRESSION "Traceback"
      FIXTURES_REQUIRED grc_boxcar_search_pulsar
      LABELS "python;gnuradio;grc" TIMEOUT 120)

  # The real fast radio burst of examples/data/29.fil from a Filterbank Source
  # through the FRB Search: the one burst near DM 475 at 2.029 s, nothing else.
  tr_grc_example(frb_search_filterbank
                 "candidates: 1, best: DM 47[0-9]\\.[0-9]+ at 2\\.02[89][0-9] s"
                 --recording ${PROJECT_SOURCE_DIR}/examples/data/29.fil)
  # The live chain on 4 s of a simulated SDR (dispersed pulse source -> FFT
  # channeliser -> power -> integration -> FRB Search): the pulses at 1, 2
  # and 3 s at their DM, nothing else.
  tr_grc_example(frb_search_live
                 "candidates: 3, at DM 60 \\+- 12: 3, on the period: 3, off: 0"
                 --samples 4096000)
  # The threshold parameter's callback reaches the FRB Search: a NaN is
  # refused (ValueError), a threshold above every pulse leaves none.
  file(WRITE ${_tr_grc_out}/check_frb_live_setters.py [=[
import sys
import unittest

sys.path.insert(0, sys.argv[1])
from gnuradio import transient  # noqa: E402
import frb_search_live  # noqa: E402

if not transient.__file__.startswith(sys.argv[2]):
    raise RuntimeError("gnuradio.transient from %s, not from %s" %
                       (transient.__file__, sys.argv[2]))
tb = frb_search_live.frb_search_live(samples=4096000)
unittest.TestCase().assertRaises(ValueError, tb.set_threshold, float("nan"))
tb.set_threshold(1000.0)
tb.run()
]=])
  add_test(NAME grc_setters_frb_search_live
           COMMAND ${PYTHON_EXECUTABLE} -B ${_tr_grc_out}/check_frb_live_setters.py
                   ${_tr_grc_out} ${PROJECT_BINARY_DIR}/test_modules/)
  set_tests_properties(grc_setters_frb_search_live PROPERTIES
      ENVIRONMENT "${_tr_grc_env}"
      ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
      PASS_REGULAR_EXPRESSION "candidates: 0"
      FAIL_REGULAR_EXPRESSION "Traceback"
      FIXTURES_REQUIRED grc_frb_search_live
      LABELS "python;gnuradio;grc" TIMEOUT 120)

  # The demo's flow graphs (examples/demo_*.grc, scored by
  # gnuradio.transient.demo_score after they stop: hits, misses and false
  # alarms against the injected truth and the recordings' references).
  tr_grc_example(demo_edges "demo edges: PASS")
  tr_grc_example(demo_boxcar "demo boxcar: PASS")
  tr_grc_example(demo_spiir "demo spiir: PASS")
  tr_grc_example(demo_kalman "demo kalman: PASS")
  # The four detectors on a raw float32 file: the pulsar recording's samples
  # (a PRESTO .dat is raw float32), the boxcar search on its pulses.
  tr_grc_example(demo_file "boxcar +[a-z]+ +1(29|3[01])  "
                 --file ${PROJECT_SOURCE_DIR}/examples/data/GBT_J1807-0847.dat)
  foreach(_tr_demo edges boxcar spiir kalman file)
    set_tests_properties(grc_run_demo_${_tr_demo} PROPERTIES
        FAIL_REGULAR_EXPRESSION "Traceback|FAIL")
  endforeach()
  # The SDR flow graph needs gr-osmosdr's block definitions to compile (and a
  # device to run): compiled only where gr-osmosdr is installed.
  if(EXISTS ${_tr_grc_gr_blocks}/osmosdr_source.block.yml)
    tr_grc_compile(demo_sdr grc_demo_sdr "python;gnuradio;grc")
    # Run with a stand-in for the radio (tests/python/fake_osmosdr): the 20
    # tone bursts of its first 1,000,000 samples give 40 edges of |z|.
    add_test(NAME grc_run_demo_sdr
             COMMAND ${PYTHON_EXECUTABLE} -B ${_tr_grc_out}/demo_sdr.py --samples 1000000)
    set_tests_properties(grc_run_demo_sdr PROPERTIES
        ENVIRONMENT "${_tr_grc_env}"
        ENVIRONMENT_MODIFICATION
          "${_tr_grc_pythonpath};PYTHONPATH=path_list_prepend:${CMAKE_CURRENT_SOURCE_DIR}/fake_osmosdr"
        PASS_REGULAR_EXPRESSION "edges +[a-z]+ +4[0-9]  "
        FAIL_REGULAR_EXPRESSION "Traceback"
        FIXTURES_REQUIRED grc_demo_sdr
        LABELS "python;gnuradio;grc" TIMEOUT 120)
  endif()

  # The same live flow graph through gr-soapy (part of GNU Radio 3.10), run with
  # a stand-in for gnuradio.soapy that gives the gr-osmosdr stand-in's signal
  # (tests/python/fake_soapy): the same 40 edges.
  if(EXISTS ${_tr_grc_gr_blocks}/soapy_custom_source.block.yml)
    tr_grc_compile(demo_sdr_soapy grc_demo_sdr_soapy "python;gnuradio;grc")
    add_test(NAME grc_run_demo_sdr_soapy
             COMMAND ${PYTHON_EXECUTABLE} -B
                     ${CMAKE_CURRENT_SOURCE_DIR}/fake_soapy/run_with_fake_soapy.py
                     ${_tr_grc_out}/demo_sdr_soapy.py --driver rtlsdr --samples 1000000)
    set_tests_properties(grc_run_demo_sdr_soapy PROPERTIES
        ENVIRONMENT "${_tr_grc_env}"
        ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
        PASS_REGULAR_EXPRESSION "edges +[a-z]+ +4[0-9]  "
        FAIL_REGULAR_EXPRESSION "Traceback"
        FIXTURES_REQUIRED grc_demo_sdr_soapy
        LABELS "python;gnuradio;grc" TIMEOUT 120)
  endif()

  # The demo itself (apps/transient_demo.py, the first README command): it
  # compiles examples/demo_*.grc with grcc and prints one table; every
  # detector must find the injected events (exit status 0, "demo: PASS").
  add_test(NAME transient_demo
           COMMAND ${PYTHON_EXECUTABLE} -B ${PROJECT_SOURCE_DIR}/apps/transient_demo.py
                   --keep ${_tr_grc_out}/transient_demo)
  set_tests_properties(transient_demo PROPERTIES
      ENVIRONMENT "${_tr_grc_env};HOME=${_tr_grc_out}/home-transient_demo"
      ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
      PASS_REGULAR_EXPRESSION "demo: PASS"
      FAIL_REGULAR_EXPRESSION "Traceback|FAIL"
      LABELS "python;gnuradio;grc" TIMEOUT 300)
  # Without gr-osmosdr, --source sdr stops with a clear message (status 2).
  execute_process(COMMAND ${PYTHON_EXECUTABLE} -c "import osmosdr"
                  RESULT_VARIABLE _tr_no_osmosdr OUTPUT_QUIET ERROR_QUIET)
  if(_tr_no_osmosdr)
    add_test(NAME transient_demo_sdr_missing
             COMMAND ${PYTHON_EXECUTABLE} -B ${PROJECT_SOURCE_DIR}/apps/transient_demo.py
                     --source sdr)
    set_tests_properties(transient_demo_sdr_missing PROPERTIES
        ENVIRONMENT "${_tr_grc_env};HOME=${_tr_grc_out}/home-transient_demo"
        ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
        PASS_REGULAR_EXPRESSION "--source sdr needs gr-osmosdr"
        FAIL_REGULAR_EXPRESSION "Traceback"
        LABELS "python;gnuradio;grc" TIMEOUT 120)
  endif()

  # QT GUI examples (examples/gui_*.grc), headless: QT's offscreen platform,
  # tests/python/run_qt_flowgraph.py runs each for a few seconds, saves a
  # screenshot (the ones in docs/img/ were made so) and counts the detections.
  tr_python_can(_tr_have_qt "from gnuradio import qtgui; from PyQt5 import Qt"
                "GUI example tests")
  if(_tr_have_qt)
    foreach(_tr_gui gui_edge_tags gui_boxcar_candidates gui_sdr_waterfall)
      tr_grc_compile(${_tr_gui} grc_${_tr_gui} "python;gnuradio;grc;gui")
      add_test(NAME grc_run_${_tr_gui}
               COMMAND ${PYTHON_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/run_qt_flowgraph.py
                       ${_tr_grc_out} ${_tr_gui} 4 ${_tr_grc_out}/${_tr_gui}.png)
      set_tests_properties(grc_run_${_tr_gui} PROPERTIES
          ENVIRONMENT "${_tr_grc_env};QT_QPA_PLATFORM=offscreen;XDG_RUNTIME_DIR=${_tr_grc_out}/home-${_tr_gui}"
          ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
          PASS_REGULAR_EXPRESSION "detections: [1-9][0-9]*\nscreenshot: "
          FAIL_REGULAR_EXPRESSION "Traceback"
          FIXTURES_REQUIRED grc_${_tr_gui}
          LABELS "python;gnuradio;grc;gui" TIMEOUT 120)
    endforeach()
  endif()

  # Several hosts (docs/scaling.md): the gr-zeromq flow graph pair on localhost,
  # samples from zmq_sender to zmq_detector (a process of its own), the edge
  # localizer's "detects" messages back; every transition must come back.
  tr_python_can(_tr_have_zmq "from gnuradio import zeromq" "ZMQ example test")
  if(_tr_have_zmq)
    foreach(_tr_zmq zmq_sender zmq_detector)
      tr_grc_compile(${_tr_zmq} grc_zmq_pair "python;gnuradio;grc")
    endforeach()
    add_test(NAME grc_run_zmq_pair
             COMMAND ${PYTHON_EXECUTABLE} -B ${CMAKE_CURRENT_SOURCE_DIR}/run_zmq_pair.py
                     ${_tr_grc_out})
    set_tests_properties(grc_run_zmq_pair PROPERTIES
        ENVIRONMENT "${_tr_grc_env}"
        ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
        PASS_REGULAR_EXPRESSION "edges over ZMQ: 40 of 40"
        FAIL_REGULAR_EXPRESSION "Traceback"
        FIXTURES_REQUIRED grc_zmq_pair
        LABELS "python;gnuradio;grc" TIMEOUT 180)
  endif()

  # The level variables' callbacks reach the block: High above the signal's
  # high state leaves no transition, Low above Mid is refused (ValueError).
  file(WRITE ${_tr_grc_out}/check_synthetic_setters.py [=[
import sys
import unittest

sys.path.insert(0, sys.argv[1])
from gnuradio import transient  # noqa: E402
import edge_localizer_synthetic  # noqa: E402

if not transient.__file__.startswith(sys.argv[2]):
    raise RuntimeError("gnuradio.transient from %s, not from %s" %
                       (transient.__file__, sys.argv[2]))
tb = edge_localizer_synthetic.edge_localizer_synthetic()
unittest.TestCase().assertRaises(ValueError, tb.set_low, 0.6)
tb.set_low(0.2)
tb.set_high(1.5)
tb.run()
]=])
  add_test(NAME grc_setters_edge_localizer_synthetic
           COMMAND ${PYTHON_EXECUTABLE} -B ${_tr_grc_out}/check_synthetic_setters.py
                   ${_tr_grc_out} ${PROJECT_BINARY_DIR}/test_modules/)
  set_tests_properties(grc_setters_edge_localizer_synthetic PROPERTIES
      ENVIRONMENT "${_tr_grc_env}"
      ENVIRONMENT_MODIFICATION "${_tr_grc_pythonpath}"
      PASS_REGULAR_EXPRESSION "edges: 0 \\(rising 0, falling 0\\)"
      FAIL_REGULAR_EXPRESSION "Traceback"
      FIXTURES_REQUIRED grc_edge_localizer_synthetic
      LABELS "python;gnuradio;grc" TIMEOUT 120)
endif()
