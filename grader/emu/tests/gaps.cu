/* Self-test of the CUDA emulator: kernel bugs that a GPU shows and that the
 * emulator once let through (issue #32).  Each must be reported, with the
 * kernel's file and line where the emulator can know it, in the plain, the
 * sanitizer and the instrumented builds. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <vector>

#include "check.h"

/* 1. a read of __shared__ slots that no thread wrote (garbage on a GPU) */
[[maybe_unused]] static const int kLineUninit = __LINE__ + 6;
__global__ void uninit_shared(float *out)
{
    __shared__ float s[64];
    if (threadIdx.x < 32) s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = s[threadIdx.x]; /* slots 32..63: never written */
}

/* 2. a float4 load from an address that is not a multiple of 16 */
static const int kLineMisaligned = __LINE__ + 3;
__global__ void misaligned_float4(const float *in, float *out)
{
    float4 v = *reinterpret_cast<const float4 *>(in + 1);
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
}

/* 3. the same shuffle issued on both sides of a branch */
static const int kLineDownA = __LINE__ + 6;
static const int kLineDownB = __LINE__ + 7;
__global__ void shfl_down_two_sides(int *out)
{
    int v = (int)threadIdx.x;
    if (threadIdx.x % 2)
        v += __shfl_down_sync(0xffffffffu, v, 1);
    else
        v += __shfl_down_sync(0xffffffffu, v, 1);
    out[threadIdx.x] = v;
}

static const int kLineUpA = __LINE__ + 6;
static const int kLineUpB = __LINE__ + 7;
__global__ void shfl_up_two_sides(int *out)
{
    int v = (int)threadIdx.x;
    if (threadIdx.x < 16) {
        v += __shfl_up_sync(0xffffffffu, v, 1);
    } else {
        v += __shfl_up_sync(0xffffffffu, v, 1);
    }
    out[threadIdx.x] = v;
}

/* 4. races between blocks: the last block (by index) sums the partials,
 * with no fence or atomic: on a GPU, blocks run in any order (the
 * instrumented build's racecheck names both lines) */
[[maybe_unused]] static const int kLinePartialW = __LINE__ + 7;
[[maybe_unused]] static const int kLinePartialR = __LINE__ + 9;
__global__ void last_block_sums(const float *in, float *partial, float *out)
{
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = 0; i < 32; i++) s += in[blockIdx.x * 32 + i];
        partial[blockIdx.x] = s;
        if (blockIdx.x == gridDim.x - 1) {
            float t = 0.0f;
            for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
            *out = t;
        }
    }
}

/* ... and block 0 stores, the others add (no atomic) */
[[maybe_unused]] static const int kLineAdd = __LINE__ + 7;
__global__ void first_block_stores(const float *in, float *out)
{
    if (threadIdx.x == 0) {
        if (blockIdx.x == 0)
            *out = in[0];
        else
            *out += in[blockIdx.x];
    }
}

/* 5. __launch_bounds__(128), launched with 256 threads */
[[maybe_unused]] static const int kLineBounds = __LINE__ + 1;
__global__ void __launch_bounds__(128) bounded(int *out)
{
    out[threadIdx.x] = (int)threadIdx.x;
}

/* The line of a fault, as the emulator's message names it. */
[[maybe_unused]] static bool names_line(const char *msg, int line)
{
    char want[32];
    snprintf(want, sizeof want, "gaps.cu:%d", line);
    return strstr(msg, want) != NULL;
}

/* A fault: sticky, and the message names what it should; then reset. */
static void expect_fault(const char *name, cudaError_t want, int line1, int line2, const char *phrase)
{
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    char buf[200];
    snprintf(buf, sizeof buf, "%s: the launch fails with %s", name, cudaGetErrorName(want));
    CHECK(buf, launch == want && sync == want, "got %s then %s", cudaGetErrorName(launch),
          cudaGetErrorName(sync));
#ifdef NDEMU
    const char *msg = emu_message();
    snprintf(buf, sizeof buf, "%s: the message names gaps.cu:%d%s%s and says '%s'", name, line1,
             line2 ? " and line " : "", line2 ? "2" : "", phrase);
    CHECK(buf, names_line(msg, line1) && (!line2 || names_line(msg, line2)) && strstr(msg, phrase),
          "message: %s", msg);
    printf("   message: %s\n", msg);
#else
    (void)line1, (void)line2, (void)phrase;
#endif
    cudaDeviceReset();
}

int main(void)
{
    { /* 1 */
        float *d;
        std::vector<float> h(128);
        CUDA_OK(cudaMalloc(&d, h.size() * sizeof(float)));
        uninit_shared<<<2, 64>>>(d);
#ifdef NDEMU_INSTRUMENTED
        /* the instrumented build's initcheck reports the read, with its line */
        expect_fault("uninitialised __shared__ read (initcheck)", cudaErrorLaunchFailure, kLineUninit, 0,
                     "no thread of its block has written it");
#else
        CUDA_OK(cudaMemcpy(h.data(), d, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
        int nan = 0, one = 0;
        for (int b = 0; b < 2; b++)
            for (int t = 0; t < 64; t++) {
                float v = h[(size_t)(b * 64 + t)];
                if (t < 32) one += v == 1.0f;
                else nan += isnan(v);
            }
        CHECK("written __shared__ slots read back", one == 64, "%d of 64", one);
#ifdef NDEMU
        CHECK("unwritten __shared__ slots read as poison (NaN) in every block", nan == 64, "%d of 64", nan);
#endif
        cudaFree(d);
#endif
    }
    { /* 2 */
        float *in, *out;
        CUDA_OK(cudaMalloc(&in, 64 * sizeof(float)));
        CUDA_OK(cudaMalloc(&out, 32 * sizeof(float)));
        CUDA_OK(cudaMemset(in, 0, 64 * sizeof(float)));
        misaligned_float4<<<1, 32>>>(in, out);
        expect_fault("misaligned float4 load", cudaErrorMisalignedAddress, kLineMisaligned, 0,
                     "needs 16-byte alignment");
    }
    { /* 3 */
        int *d;
        CUDA_OK(cudaMalloc(&d, 32 * sizeof(int)));
        shfl_down_two_sides<<<1, 32>>>(d);
        expect_fault("__shfl_down_sync on both sides of a branch", cudaErrorLaunchFailure, kLineDownA,
                     kLineDownB, "divergent warp operation");
        CUDA_OK(cudaMalloc(&d, 32 * sizeof(int)));
        shfl_up_two_sides<<<1, 32>>>(d);
        expect_fault("__shfl_up_sync on both sides of a branch", cudaErrorLaunchFailure, kLineUpA, kLineUpB,
                     "divergent warp operation");
    }
    { /* 4 */
        const int nb = 8;
        std::vector<float> h(nb * 32, 1.0f);
        float *in, *partial, *out;
        [[maybe_unused]] float got = 0.0f;
        CUDA_OK(cudaMalloc(&in, h.size() * sizeof(float)));
        CUDA_OK(cudaMalloc(&partial, nb * sizeof(float)));
        CUDA_OK(cudaMalloc(&out, sizeof(float)));
        CUDA_OK(cudaMemcpy(in, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(partial, 0, nb * sizeof(float)));
        last_block_sums<<<nb, 32>>>(in, partial, out);
#ifdef NDEMU_INSTRUMENTED
        /* the instrumented build's racecheck between blocks reports it */
        expect_fault("the last block summing the partials without a fence or atomic (racecheck)",
                     cudaErrorLaunchFailure, kLinePartialW, kLinePartialR, "global-memory race between blocks");
        CUDA_OK(cudaMalloc(&in, h.size() * sizeof(float)));
        CUDA_OK(cudaMalloc(&out, sizeof(float)));
        CUDA_OK(cudaMemset(out, 0, sizeof(float)));
#else
        CUDA_OK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
#ifdef NDEMU
        CHECK("the last block summing the partials without a fence or atomic gets a wrong sum",
              got != (float)(nb * 32), "sum %g", (double)got);
#endif
#endif
        for (int i = 0; i < nb; i++) h[(size_t)i] = (float)(i + 1);
        CUDA_OK(cudaMemcpy(in, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
        first_block_stores<<<nb, 32>>>(in, out);
#ifdef NDEMU_INSTRUMENTED
        expect_fault("block 0 storing while the other blocks add, no atomic (racecheck)", cudaErrorLaunchFailure,
                     kLineAdd, 0, "global-memory race between blocks");
#else
        CUDA_OK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
#ifdef NDEMU
        CHECK("block 0 storing while the other blocks add (no atomic) gets a wrong sum",
              got != (float)(nb * (nb + 1) / 2), "sum %g", (double)got);
#endif
        cudaFree(in);
        cudaFree(partial);
        cudaFree(out);
#endif
    }
    { /* 5 */
        int *d;
        CUDA_OK(cudaMalloc(&d, 256 * sizeof(int)));
        bounded<<<1, 128>>>(d);
        CHECK("__launch_bounds__(128): 128 threads run", cudaGetLastError() == cudaSuccess, "%s", emu_message());
        bounded<<<1, 256>>>(d);
        cudaError_t e = cudaGetLastError();
        CHECK("__launch_bounds__(128): 256 threads are refused (cudaErrorLaunchOutOfResources)",
              e == cudaErrorLaunchOutOfResources, "got %s", cudaGetErrorName(e));
#ifdef NDEMU
        CHECK("__launch_bounds__: the message names the declaration's line and the launch's",
              names_line(emu_message(), kLineBounds) && strstr(emu_message(), "__launch_bounds__(128)"),
              "message: %s", emu_message());
        printf("   message: %s\n", emu_message());
#endif
        CHECK("__launch_bounds__: not sticky", cudaDeviceSynchronize() == cudaSuccess, "sticky");
        cudaFree(d);
    }
    return g_failed ? 1 : 0;
}
