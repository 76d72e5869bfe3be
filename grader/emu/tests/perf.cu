/* Self-test of the CUDA emulator: how fast a big launch runs (printed, not asserted). */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <time.h>
#include <vector>

#include "check.h"

__global__ void add_one(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1.0f;
}

__global__ void block_sum(const float *in, float *out, int n)
{
    __shared__ float s[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * 256 + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void warp_sum(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1 << 24;
    int nb = (n + 255) / 256;
    std::vector<float> h(n, 1.0f);
    float *din, *dout, *dpart;
    CUDA_OK(cudaMalloc(&din, (size_t)n * sizeof(float)));
    CUDA_OK(cudaMalloc(&dout, (size_t)n * sizeof(float)));
    CUDA_OK(cudaMalloc(&dpart, (size_t)nb * sizeof(float)));
    CUDA_OK(cudaMemcpy(din, h.data(), (size_t)n * sizeof(float), cudaMemcpyHostToDevice));

    double t0 = now();
    add_one<<<nb, 256>>>(din, dout, n);
    CUDA_OK(cudaDeviceSynchronize());
    double t1 = now();
    CUDA_OK(cudaMemcpy(h.data(), dout, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (h[i] != 2.0f) bad++;
    CHECK("trivial kernel, one element per thread", bad == 0, "%d wrong", bad);
    printf("time: trivial kernel, %d threads: %.3f s\n", n, t1 - t0);

    t0 = now();
    block_sum<<<nb, 256>>>(din, dpart, n);
    CUDA_OK(cudaDeviceSynchronize());
    t1 = now();
    std::vector<float> part(nb);
    CUDA_OK(cudaMemcpy(part.data(), dpart, (size_t)nb * sizeof(float), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int b = 0; b < nb; b++)
        if (part[b] != (float)(n - b * 256 < 256 ? n - b * 256 : 256)) bad++;
    CHECK("256-thread __syncthreads reduction", bad == 0, "%d wrong blocks", bad);
    printf("time: __syncthreads reduction, %d threads: %.3f s\n", n, t1 - t0);

    CUDA_OK(cudaMemset(dpart, 0, sizeof(float)));
    t0 = now();
    warp_sum<<<nb, 256>>>(din, dpart, n);
    CUDA_OK(cudaDeviceSynchronize());
    t1 = now();
    float total = 0;
    CUDA_OK(cudaMemcpy(&total, dpart, sizeof(float), cudaMemcpyDeviceToHost));
    CHECK("__shfl_down_sync reduction", total == (float)n, "got %g want %d", (double)total, n);
    printf("time: __shfl_down_sync reduction, %d threads: %.3f s\n", n, t1 - t0);
    cudaFree(din);
    cudaFree(dout);
    cudaFree(dpart);
    return g_failed ? 1 : 0;
}
