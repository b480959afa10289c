// Tile-shape sweep of the CUDA edge localizer (bench/results/*/tile_shapes.txt).
//
// Times edges_mask_kernel for several (warps per block, 1024-sample sets per
// warp, loads in flight per lane, blocks per SM) on 2^28 samples already on the
// device (CUDA events, median of 12 launches), next to the library's launcher
// and a device-to-device copy of the same bytes. Not part of the build; on a
// GPU host, from this folder:
//   nvcc -std=c++17 -arch=sm_90 --fmad=false -O3 -DTR_HAVE_CUDA -I../../lib/core/include
//   \
//        -I../../lib/core -I../../cuda edges_tile_shapes.cu
//        ../../cuda/edges/edges_paper.cu \
//        ../../cuda/common/cuda_common.cu ../../lib/core/common/common.c -o
//        edges_tile_shapes
#include "edges/edges_cuda.cu"
#include <cstdio>
#include <vector>
#include <algorithm>

namespace
{
template <int WARPS, int SETS, int CHUNK, int MINB>
float run_striped(const float *dx, int32_t n, tr_edges_lv lv, tr_edges_carry *dc,
                  tr_edge *dout, unsigned long long *dcount, unsigned long long *hcount,
                  void *temp, size_t tb)
{
    constexpr int TILE = WARPS * 1024 * SETS;
    int tiles = (n + TILE - 1) / TILE;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> ts;
    for (int r = 0; r < 12; r++) {
        TileState st;
        st.Init(tiles, temp, tb);
        cudaEventRecord(a);
        init_tiles<<<(tiles + 255) / 256, 256>>>(st, tiles);
        edges_mask_kernel<WARPS, SETS, CHUNK, MINB><<<tiles, 32 * WARPS>>>(
            dx, n, lv, dc, dc + 1, dout, n / 8, nullptr, dcount, st);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        ts.push_back(ms);
    }
    cudaError_t e = cudaGetLastError();
    cudaMemcpy(hcount, dcount, 8, cudaMemcpyDeviceToHost);
    std::sort(ts.begin(), ts.end());
    printf("W=%d S=%d C=%d minB=%d: %.3f ms  %.1f Gs/s  count=%llu %s\n", WARPS, SETS,
           CHUNK, MINB, ts[6], n / ts[6] / 1e6, *hcount, cudaGetErrorString(e));
    if (e != cudaSuccess) exit(1);
    return ts[6];
}
} // namespace

int main()
{
    const int32_t n = 1 << 28;
    std::vector<float> h(n);
    uint32_t s = 1;
    int hi = 0, w = 0;
    for (int32_t i = 0; i < n; i++) {
        if (w == 0) {
            s = s * 1103515245u + 12345u;
            w = 50 + (s >> 8) % 200;
            hi = !hi;
        }
        w--;
        s = s * 1103515245u + 12345u;
        h[i] = (hi ? 1.f : 0.f) + 0.08f * (((s >> 16) & 1023) / 512.f - 1.f);
    }
    float *dx;
    cudaMalloc(&dx, (size_t)n * 4);
    cudaMemcpy(dx, h.data(), (size_t)n * 4, cudaMemcpyHostToDevice);
    tr_edge *dout;
    cudaMalloc(&dout, (size_t)n / 8 * sizeof(tr_edge));
    tr_edges_carry *dc;
    cudaMalloc(&dc, 2 * sizeof(tr_edges_carry));
    cudaMemset(dc, 0, 2 * sizeof(tr_edges_carry));
    unsigned long long *dcount, hcount;
    cudaMalloc(&dcount, 8);
    void *temp;
    size_t tb = 64 << 20;
    cudaMalloc(&temp, tb);
    tr_edges_lv lv = {0.1f, 0.5f, 0.9f};
    // library kernel
    {
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        std::vector<float> ts;
        for (int r = 0; r < 12; r++) {
            size_t t2 = tb;
            cudaEventRecord(a);
            tr_cuda_edges_fast_launch(dx, n, lv, dc, dc + 1, dout, n / 8, nullptr, dcount,
                                      temp, &t2, 0);
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            ts.push_back(ms);
        }
        cudaMemcpy(&hcount, dcount, 8, cudaMemcpyDeviceToHost);
        std::sort(ts.begin(), ts.end());
        printf("library (striped ballot): %.3f ms  %.1f Gs/s count=%llu %s\n", ts[6],
               n / ts[6] / 1e6, hcount, cudaGetErrorString(cudaGetLastError()));
    }
    // plain read for the floor
    {
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        float *dy;
        cudaMalloc(&dy, (size_t)n * 4);
        cudaEventRecord(a);
        cudaMemcpy(dy, dx, (size_t)n * 4, cudaMemcpyDeviceToDevice);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        cudaEventRecord(a);
        cudaMemcpy(dy, dx, (size_t)n * 4, cudaMemcpyDeviceToDevice);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        printf("memcpy d2d 1 GiB: %.3f ms (read+write %.0f GB/s)\n", ms,
               2.0 * n * 4 / ms / 1e6);
        cudaFree(dy);
    }
    run_striped<16, 1, 32, 1>(dx, n, lv, dc, dout, dcount, &hcount, temp, tb);
    run_striped<16, 1, 16, 3>(dx, n, lv, dc, dout, dcount, &hcount, temp, tb);
    run_striped<16, 1, 8, 4>(dx, n, lv, dc, dout, dcount, &hcount, temp, tb);
    run_striped<32, 1, 32, 1>(dx, n, lv, dc, dout, dcount, &hcount, temp, tb);
    run_striped<32, 1, 16, 1>(dx, n, lv, dc, dout, dcount, &hcount, temp, tb);
    run_striped<32, 1, 16, 2>(dx, n, lv, dc, dout, dcount, &hcount, temp, tb);
    run_striped<32, 1, 8, 2>(dx, n, lv, dc, dout, dcount, &hcount, temp, tb);
    run_striped<8, 1, 16, 6>(dx, n, lv, dc, dout, dcount, &hcount, temp, tb);
    run_striped<8, 1, 8, 8>(dx, n, lv, dc, dout, dcount, &hcount, temp, tb);
    run_striped<16, 2, 16, 2>(dx, n, lv, dc, dout, dcount, &hcount, temp, tb);
    return 0;
}
