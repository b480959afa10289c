/*
 * The paper variant's launcher (tr_cuda_edges_paper_launch) on the GPU against
 * the reference variant: the checks of test_edges_paper_host.cpp, with every
 * launch going through device memory. Exit 77 (skipped) without a GPU.
 */
#define TR_PAPER_ON_GPU 1
#include "test_edges_paper_host.cpp"
