/* Self-test of the CUDA emulator: deliberately broken kernels it must catch,
 * and the runtime's errors. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <vector>

#include "check.h"

/* (a) the tree reduction with its __syncthreads() removed: a race */
__global__ void reduce_no_sync(const float *in, float *out)
{
    __shared__ float s[256];
    int tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    for (int stride = 128; stride > 0; stride >>= 1)
        if (tid < stride) s[tid] += s[tid + stride];
    if (tid == 0) out[blockIdx.x] = s[0];
}

/* (a') a block reduction over several rows that reuses its shared slots
 * without the barrier after the final fold: warps that run ahead into the
 * next row overwrite slots that warp 0 has not read yet */
__global__ void rows_no_second_sync(const float *in, float *out, int rows)
{
    __shared__ float part[8];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int r = 0; r < rows; r++) {
        float v = in[r * 256 + threadIdx.x];
        for (int d = 16; d > 0; d /= 2)
            v += __shfl_down_sync(0xffffffffu, v, d);
        if (lane == 0)
            part[warp] = v;
        __syncthreads();
        if (warp == 0) {
            v = lane < 8 ? part[lane] : 0.0f;
            for (int d = 16; d > 0; d /= 2)
                v += __shfl_down_sync(0xffffffffu, v, d);
            if (lane == 0)
                out[r] = v;
        }
        /* missing: __syncthreads(); */
    }
}

/* (d) a barrier that only half of the warp reaches */
static const int kLineHalf = __LINE__ + 4;
__global__ void half_barrier(int *out)
{
    if (threadIdx.x < 16)
        __syncthreads();
    out[threadIdx.x] = 1;
}

/* (d) an early return before a barrier */
static const int kLineEarly = __LINE__ + 7;
__global__ void early_return(const int *in, int *out, int n)
{
    __shared__ int s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    s[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = s[(threadIdx.x + 1) % blockDim.x];
}

/* (d) threads waiting at two different barriers */
static const int kLineOdd = __LINE__ + 5;
static const int kLineEven = __LINE__ + 6;
__global__ void two_barriers(int *out)
{
    if (threadIdx.x % 2)
        __syncthreads();
    else
        __syncthreads();
    out[threadIdx.x] = 1;
}

/* a shuffle that a lane of its mask never reaches */
static const int kLineShfl = __LINE__ + 5;
__global__ void shfl_exited(int *out)
{
    int v = threadIdx.x;
    if (threadIdx.x == 7) return;
    v += __shfl_down_sync(0xffffffff, v, 1);
    out[threadIdx.x] = v;
}

/* a warp operation and a block barrier waiting for each other */
__global__ void warp_block_deadlock(int *out)
{
    int v = threadIdx.x;
    if (threadIdx.x == 3)
        __syncthreads();
    else
        v = __shfl_sync(0xffffffff, v, 3);
    out[threadIdx.x] = v;
}

__global__ void ok_kernel(int *out) { out[threadIdx.x] = (int)threadIdx.x; }

/* what a GPU refuses too (issue #14) */
static const int kLinePartial = __LINE__ + 4;
__global__ void partial_warp_full_mask(int *out)
{
    int v = (int)threadIdx.x;
    v += __shfl_down_sync(0xffffffff, v, 1); /* 48 threads: lanes 16..31 of warp 1 do not exist */
    out[threadIdx.x] = v;
}

static const int kLineOutside = __LINE__ + 5;
__global__ void shfl_outside_mask(int *out)
{
    int v = (int)threadIdx.x;
    if (threadIdx.x < 16)
        v = __shfl_sync(0x0000ffffu, v, 20); /* lane 20 is not in the mask */
    out[threadIdx.x] = v;
}

__global__ void big_dynamic(int *out)
{
    extern __shared__ int dyn[];
    dyn[threadIdx.x] = (int)threadIdx.x;
    out[threadIdx.x] = dyn[threadIdx.x];
}

#ifdef NDEMU
static bool contains(const char *s, const char *what) { return strstr(s, what) != NULL; }
#endif

/* After a fault: the error is sticky until cudaDeviceReset. */
static void expect_fault(const char *name, const char *want1, const char *want2)
{
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    const char *msg = emu_message();
    char buf[160];
    snprintf(buf, sizeof buf, "%s: launch fails with cudaErrorLaunchFailure", name);
    CHECK(buf, launch == cudaErrorLaunchFailure && sync == cudaErrorLaunchFailure, "got %s then %s",
          cudaGetErrorName(launch), cudaGetErrorName(sync));
#ifdef NDEMU
    snprintf(buf, sizeof buf, "%s: the message names %s and %s", name, want1, want2);
    CHECK(buf, contains(msg, want1) && contains(msg, want2), "message: %s", msg);
    printf("   message: %s\n", msg);
#else
    (void)msg;
    (void)want1;
    (void)want2;
#endif
    void *p = NULL;
    cudaError_t later = cudaMalloc(&p, 16);
    cudaError_t again = cudaGetLastError();
    snprintf(buf, sizeof buf, "%s: the error is sticky", name);
    CHECK(buf, later == cudaErrorLaunchFailure && again == cudaErrorLaunchFailure, "cudaMalloc gave %s, then %s",
          cudaGetErrorName(later), cudaGetErrorName(again));
    cudaDeviceReset();
    snprintf(buf, sizeof buf, "%s: cudaDeviceReset clears it", name);
    CHECK(buf, cudaGetLastError() == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess, "still failing");
}

static void line_names(char *buf, size_t len, int line)
{
    snprintf(buf, len, "broken.cu:%d", line);
}

int main(void)
{
    { /* (a) */
        const int nb = 4;
        std::vector<float> h(nb * 256, 1.0f);
        float *din, *dout;
        CUDA_OK(cudaMalloc(&din, h.size() * sizeof(float)));
        CUDA_OK(cudaMalloc(&dout, nb * sizeof(float)));
        CUDA_OK(cudaMemcpy(din, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
        float first[nb], second[nb];
        reduce_no_sync<<<nb, 256>>>(din, dout);
        CUDA_OK(cudaMemcpy(first, dout, sizeof first, cudaMemcpyDeviceToHost));
        reduce_no_sync<<<nb, 256>>>(din, dout);
        CUDA_OK(cudaMemcpy(second, dout, sizeof second, cudaMemcpyDeviceToHost));
        int wrong = 0;
        for (int b = 0; b < nb; b++) wrong += (first[b] != 256.0f) + (second[b] != 256.0f);
#ifdef NDEMU
        /* Thread 0 runs the whole loop before thread 1 has stored its value. */
        CHECK("reduction without __syncthreads gives a wrong answer in every block", wrong == 2 * nb,
              "block sums %g %g %g %g, then %g", (double)first[0], (double)first[1], (double)first[2],
              (double)first[3], (double)second[0]);
#endif
        cudaFree(din);
        cudaFree(dout);
    }

    { /* (a') */
        const int rows = 4;
        std::vector<float> h(rows * 256);
        for (size_t i = 0; i < h.size(); i++) h[i] = (float)(i / 256 + 1);   /* row r sums to 256 (r+1) */
        float *din, *dout, got[rows];
        CUDA_OK(cudaMalloc(&din, h.size() * sizeof(float)));
        CUDA_OK(cudaMalloc(&dout, rows * sizeof(float)));
        CUDA_OK(cudaMemcpy(din, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
        rows_no_second_sync<<<1, 256>>>(din, dout, rows);
        CUDA_OK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
        int wrong = 0;
        for (int r = 0; r < rows; r++) wrong += got[r] != 256.0f * (float)(r + 1);
#ifdef NDEMU
        /* After the barrier the threads resume in reverse order: warps 7..1
         * store the next row's values before warp 0 reads this row's. */
        CHECK("a reused shared array without its second __syncthreads gives a wrong answer",
              wrong > 0, "row sums %g %g %g %g", (double)got[0], (double)got[1], (double)got[2],
              (double)got[3]);
#endif
        cudaFree(din);
        cudaFree(dout);
    }

    char l1[64], l2[64];
    int *d;
    CUDA_OK(cudaMalloc(&d, 1024 * sizeof(int)));
    half_barrier<<<1, 64>>>(d);
    line_names(l1, sizeof l1, kLineHalf);
    expect_fault("__syncthreads() under if (threadIdx.x < 16)", l1, "thread (16,0,0) of block (0,0,0) returned");

    CUDA_OK(cudaMalloc(&d, 1024 * sizeof(int)));
    early_return<<<2, 64>>>(d, d + 512, 100);
    line_names(l1, sizeof l1, kLineEarly);
    expect_fault("early return before __syncthreads()", l1, "thread (36,0,0) of block (1,0,0) returned");

    CUDA_OK(cudaMalloc(&d, 1024 * sizeof(int)));
    two_barriers<<<1, 32>>>(d);
    line_names(l1, sizeof l1, kLineEven);
    line_names(l2, sizeof l2, kLineOdd);
    expect_fault("threads at two different __syncthreads()", l1, l2);

    CUDA_OK(cudaMalloc(&d, 1024 * sizeof(int)));
    shfl_exited<<<1, 32>>>(d);
    line_names(l1, sizeof l1, kLineShfl);
    expect_fault("__shfl_down_sync with an exited lane", l1, "lane 7");

    CUDA_OK(cudaMalloc(&d, 1024 * sizeof(int)));
    warp_block_deadlock<<<1, 32>>>(d);
    expect_fault("__shfl_sync and __syncthreads waiting for each other", "deadlock", "__syncthreads");

    CUDA_OK(cudaMalloc(&d, 1024 * sizeof(int)));
    partial_warp_full_mask<<<1, 48>>>(d);
    line_names(l1, sizeof l1, kLinePartial);
    expect_fault("a full mask in a partial warp", l1, "lanes that do not exist");

    CUDA_OK(cudaMalloc(&d, 1024 * sizeof(int)));
    shfl_outside_mask<<<1, 32>>>(d);
    line_names(l1, sizeof l1, kLineOutside);
    expect_fault("__shfl_sync from a lane outside the mask", l1, "lane 20, which is not in the mask");

    {
        CUDA_OK(cudaMalloc(&d, 1024 * sizeof(int)));
        big_dynamic<<<1, 32, 64 * 1024>>>(d);
        cudaError_t big = cudaGetLastError();
        CHECK("64 KiB of dynamic shared memory without cudaFuncSetAttribute: cudaErrorInvalidValue, not sticky",
              big == cudaErrorInvalidValue && cudaDeviceSynchronize() == cudaSuccess, "got %s",
              cudaGetErrorName(big));
#ifdef NDEMU
        CHECK("... the message names the launch and the call that allows it",
              contains(emu_message(), "broken.cu:") && contains(emu_message(), "cudaFuncSetAttribute(big_dynamic"),
              "message: %s", emu_message());
#endif
        CUDA_OK(cudaFuncSetAttribute(big_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
        big_dynamic<<<1, 32, 64 * 1024>>>(d);
        CHECK("... and with the attribute set, the launch runs", cudaGetLastError() == cudaSuccess &&
                                                                     cudaDeviceSynchronize() == cudaSuccess,
              "failed: %s", emu_message());
        cudaFree(d);
    }

    /* Runtime errors: the right codes, not sticky. */
    CUDA_OK(cudaMalloc(&d, 1024 * sizeof(int)));
    std::vector<int> host(2048, 0);
    cudaError_t e = cudaMemcpy(host.data(), host.data() + 1024, 1024 * sizeof(int), cudaMemcpyDeviceToHost);
    CHECK("cudaMemcpy with a host pointer as the device source: cudaErrorInvalidValue", e == cudaErrorInvalidValue,
          "got %s", cudaGetErrorName(e));
    CHECK("... cudaGetLastError reports it once", cudaGetLastError() == cudaErrorInvalidValue && cudaGetLastError() == cudaSuccess,
          "not reported once");
    e = cudaMemcpy(d, host.data(), 1025 * sizeof(int), cudaMemcpyHostToDevice);
    CHECK("cudaMemcpy running past the end of the allocation: cudaErrorInvalidValue", e == cudaErrorInvalidValue,
          "got %s", cudaGetErrorName(e));
#ifdef NDEMU
    CHECK("... the message says by how much", contains(emu_message(), "runs 4 bytes past the end of the 4096-byte allocation"),
          "message: %s", emu_message());
#endif
    e = cudaMemset(host.data(), 0, 16);
    CHECK("cudaMemset of host memory: cudaErrorInvalidValue", e == cudaErrorInvalidValue, "got %s", cudaGetErrorName(e));
    e = cudaFree(host.data());
    CHECK("cudaFree of a pointer cudaMalloc did not return: cudaErrorInvalidValue", e == cudaErrorInvalidValue,
          "got %s", cudaGetErrorName(e));
    e = cudaMemcpy(d, host.data(), 16, (cudaMemcpyKind)7);
    CHECK("cudaMemcpy with a bad kind: cudaErrorInvalidMemcpyDirection", e == cudaErrorInvalidMemcpyDirection,
          "got %s", cudaGetErrorName(e));
    int *d2;
    CUDA_OK(cudaMalloc(&d2, 64));
    CUDA_OK(cudaFree(d2));
    e = cudaFree(d2);
    CHECK("cudaFree twice: cudaErrorInvalidValue", e == cudaErrorInvalidValue, "got %s", cudaGetErrorName(e));
    e = cudaMemcpy(host.data(), d2, 16, cudaMemcpyDeviceToHost);
    CHECK("cudaMemcpy from freed memory: cudaErrorInvalidValue", e == cudaErrorInvalidValue, "got %s",
          cudaGetErrorName(e));
    host[0] = 42;
    e = cudaMemcpyAsync(d + 5, host.data(), sizeof(int), cudaMemcpyDefault, 0);
    host[1] = 0;
    cudaError_t e2 = cudaMemcpy(host.data() + 1, d + 5, sizeof(int), cudaMemcpyDefault);
    CHECK("cudaMemcpyDefault both ways", e == cudaSuccess && e2 == cudaSuccess && host[1] == 42, "%s %s %d",
          cudaGetErrorName(e), cudaGetErrorName(e2), host[1]);
    cudaGetLastError();
    CHECK("these errors are not sticky", cudaMemset(d, 0, 16) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess,
          "still failing");

    /* Invalid launch configurations. */
    struct {
        const char *name;
        dim3 grid, block;
    } bad[] = {
        {"1025 threads per block", dim3(1), dim3(1025)},
        {"a block of 32 x 33 = 1056 threads", dim3(1), dim3(32, 33)},
        {"blockDim.z = 65", dim3(1), dim3(1, 1, 65)},
        {"a 0 block dimension", dim3(1), dim3(32, 0)},
        {"a 0 grid dimension", dim3(0), dim3(32)},
        {"gridDim.y = 65536", dim3(1, 65536), dim3(32)},
        {"gridDim.z = 65536", dim3(1, 1, 65536), dim3(32)},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ok_kernel<<<bad[k].grid, bad[k].block>>>(d);
        e = cudaGetLastError();
        char buf[160];
        snprintf(buf, sizeof buf, "launch with %s: cudaErrorInvalidConfiguration, not sticky", bad[k].name);
        CHECK(buf, e == cudaErrorInvalidConfiguration && cudaGetLastError() == cudaSuccess &&
                       cudaDeviceSynchronize() == cudaSuccess,
              "got %s", cudaGetErrorName(e));
    }
    CHECK("cudaGetErrorString(cudaErrorInvalidConfiguration)",
          strcmp(cudaGetErrorString(cudaErrorInvalidConfiguration), "invalid configuration argument") == 0, "%s",
          cudaGetErrorString(cudaErrorInvalidConfiguration));
    CHECK("cudaGetErrorName(cudaErrorLaunchFailure)",
          strcmp(cudaGetErrorName(cudaErrorLaunchFailure), "cudaErrorLaunchFailure") == 0, "%s",
          cudaGetErrorName(cudaErrorLaunchFailure));
    CHECK("error codes have CUDA's values",
          cudaErrorInvalidValue == 1 && cudaErrorMemoryAllocation == 2 && cudaErrorInvalidConfiguration == 9 &&
              cudaErrorInvalidDevicePointer == 17 && cudaErrorInvalidMemcpyDirection == 21 && cudaErrorNoDevice == 100 &&
              cudaErrorIllegalAddress == 700 && cudaErrorLaunchFailure == 719,
          "wrong values");
    ok_kernel<<<1, 1024>>>(d);
    CHECK("a 1024-thread launch after them runs", cudaGetLastError() == cudaSuccess, "failed");

    /* Device queries and events. */
    int count = 0, dev = -1, v = 0;
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceCount(&count));
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    CUDA_OK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, 0));
    CHECK("device queries", count >= 1 && dev == 0 && prop.maxThreadsPerBlock == 1024 && prop.warpSize == 32 &&
                                prop.maxThreadsDim[2] == 64 && prop.maxGridSize[1] == 65535 && v == 1024,
          "count %d dev %d", count, dev);
#ifdef NDEMU
    CHECK("cudaSetDevice(1): cudaErrorInvalidDevice", cudaSetDevice(1) == cudaErrorInvalidDevice, "accepted");
    cudaGetLastError();
#endif
    cudaEvent_t start, stop;
    CUDA_OK(cudaEventCreate(&start));
    CUDA_OK(cudaEventCreate(&stop));
    CUDA_OK(cudaEventRecord(start));
    for (int k = 0; k < 100; k++) ok_kernel<<<64, 1024>>>(d);
    CUDA_OK(cudaEventRecord(stop, 0));
    CUDA_OK(cudaEventSynchronize(stop));
    float ms = -1;
    CUDA_OK(cudaEventElapsedTime(&ms, start, stop));
    CHECK("cudaEventElapsedTime gives a time", ms > 0.0f && ms < 60000.0f, "%g ms", (double)ms);
    CUDA_OK(cudaEventDestroy(start));
    CUDA_OK(cudaEventDestroy(stop));
    CUDA_OK(cudaFree(d));
    return g_failed ? 1 : 0;
}
