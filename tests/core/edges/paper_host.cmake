# The paper's multi-pass CUDA variant (cuda/edges/edges_paper.cuh) checked on the host
# against the reference variant, through Thrust's CPP backend: needs the CCCL
# headers (Thrust, libcu++) but neither nvcc nor a GPU. Included from
# tests/core/edges/CMakeLists.txt; the test is added only where the headers are found.
set(TR_CCCL_HINTS)
if(CUDAToolkit_INCLUDE_DIRS)
  list(APPEND TR_CCCL_HINTS ${CUDAToolkit_INCLUDE_DIRS})
endif()
list(APPEND TR_CCCL_HINTS /usr/local/cuda/include)
find_path(TR_CCCL_INCLUDE_DIR thrust/version.h
          HINTS ${TR_CCCL_HINTS}
          PATH_SUFFIXES cccl
          DOC "Directory holding thrust/ and cuda/std/ (the CCCL headers)")

if(TR_CCCL_INCLUDE_DIR)
  add_executable(test_edges_paper_host test_edges_paper_host.cpp)
  # -isystem: the library headers' own warnings are not ours.
  target_include_directories(test_edges_paper_host SYSTEM PRIVATE ${TR_CCCL_INCLUDE_DIR})
  tr_c_test_includes(test_edges_paper_host)
  target_compile_definitions(test_edges_paper_host
    PRIVATE THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP)
  # Same floating-point rules as libtransient: no contraction into FMA.
  target_compile_options(test_edges_paper_host
    PRIVATE -Wall -Wextra -ffp-contract=off ${TR_SANITIZE_FLAGS})
  target_link_options(test_edges_paper_host PRIVATE ${TR_SANITIZE_FLAGS})
  target_link_libraries(test_edges_paper_host PRIVATE transient)
  # Argument: number of random streams (default 20000, about a second);
  # fewer under the sanitizers, which make it some twenty times slower.
  if(ENABLE_SANITIZERS)
    add_test(NAME c_edges_paper_host COMMAND test_edges_paper_host 3000)
  else()
    add_test(NAME c_edges_paper_host COMMAND test_edges_paper_host)
  endif()
else()
  message(STATUS "gr-transient: CCCL headers not found, test_edges_paper_host skipped")
endif()

# The same checks through tr_cuda_edges_paper_launch on the GPU (label gpu,
# exit 77 = skipped without a GPU).
if(TR_WITH_CUDA)
  add_executable(test_edges_paper_gpu test_edges_paper_gpu.cu)
  tr_c_test_includes(test_edges_paper_gpu)
  target_link_libraries(test_edges_paper_gpu PRIVATE transient CUDA::cudart)
  add_test(NAME gpu_edges_paper COMMAND test_edges_paper_gpu)
  set_tests_properties(gpu_edges_paper PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endif()
