/* Self-test of the CUDA emulator's instrumented build: racecheck between
 * the blocks of one launch, on global memory (issue #32).  Blocks run one
 * after another on the emulator, so these races give the right answer
 * there and a wrong one on a GPU; the instrumented build must report the
 * broken kernels, naming both lines, and must not report the correct ones
 * (an atomicAdd from every block, the last block summing the partials
 * after __threadfence() and an atomic counter, disjoint writes, reads of
 * a shared input, a second launch reading the first's output, a block
 * reading its own writes, blocks writing neighbouring bytes of one word). */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <vector>

#include "check.h"

#define NB 8   /* blocks */
#define NT 32  /* threads per block */

/* ---- broken ---------------------------------------------------------------- */
/* 1. every block adds its partial to one word with a plain += */
static const int kLinePlus = __LINE__ + 4;
__global__ void plus_equals(const float *in, float *sum)
{
    if (threadIdx.x == 0)
        *sum += in[blockIdx.x];
}

/* 2. the last block (by an atomic counter) sums the partials, but nothing
 * fences the partial stores before the counter */
static const int kLineNoFenceW = __LINE__ + 6;
static const int kLineNoFenceR = __LINE__ + 11;
__global__ void last_block_no_fence(const float *in, float *partial, unsigned *count, float *out)
{
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = in[blockIdx.x];
        last = atomicAdd(count, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float t = 0.0f;
        for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
        *out = t;
    }
}

/* 3. a fence, but no atomic counter: the last block by index sums */
static const int kLineNoAtomicW = __LINE__ + 5;
static const int kLineNoAtomicR = __LINE__ + 8;
__global__ void last_block_no_atomic(const float *in, float *partial, float *out)
{
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = in[blockIdx.x];
        __threadfence();
        if (blockIdx.x == gridDim.x - 1) {
            float t = 0.0f;
            for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
            *out = t;
        }
    }
}

/* 4. a fence, and a counter incremented with a plain ++ (no atomic) */
static const int kLinePlainCount = __LINE__ + 7;
__global__ void last_block_plain_counter(const float *in, float *partial, unsigned *count, float *out)
{
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = in[blockIdx.x];
        __threadfence();
        last = (*count)++ == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float t = 0.0f;
        for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
        *out = t;
    }
}

/* 5. blocks read a word that another block overwrites (write after read) */
static const int kLineWarR = __LINE__ + 4;
static const int kLineWarW = __LINE__ + 4;
__global__ void read_then_overwrite(float *data, float *out)
{
    out[blockIdx.x * NT + threadIdx.x] = data[threadIdx.x];
    if (blockIdx.x == 3) data[threadIdx.x] = 0.0f;
}

/* ---- correct --------------------------------------------------------------- */
__global__ void add_atomic(const float *in, float *sum)
{
    if (threadIdx.x == 0) atomicAdd(sum, in[blockIdx.x]);
}

/* The CUDA samples' threadFenceReduction: store, fence, atomic counter;
 * the block that sees the count reach gridDim.x - 1 sums and resets it. */
__global__ void last_block_fenced(const float *in, float *partial, unsigned *count, float *out)
{
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = in[blockIdx.x];
        __threadfence();
        last = atomicInc(count, gridDim.x) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float t = 0.0f;
        for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
        *out = t;
        *count = 0;
    }
}

/* Every thread stores its partial; the block's barrier, then one fence
 * and one atomic by thread 0 release them all. */
__global__ void all_threads_then_fence(const float *in, float *partial, unsigned *count, float *out)
{
    __shared__ bool last;
    partial[blockIdx.x * NT + threadIdx.x] = in[blockIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(count, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last) {
        float t = 0.0f;
        for (unsigned b = 0; b < gridDim.x; b++) t += partial[b * NT + threadIdx.x];
        out[threadIdx.x] = t;
    }
}

__global__ void disjoint(const float *in, float *out) /* also: every block reads in[0..NT) */
{
    out[blockIdx.x * NT + threadIdx.x] = in[threadIdx.x] + (float)blockIdx.x;
}

__global__ void read_all(const float *in, float *out) /* every block reads all of in */
{
    float t = 0.0f;
    for (int i = 0; i < NB * NT; i++) t += in[i];
    out[blockIdx.x * NT + threadIdx.x] = t;
}

__global__ void own_writes(float *data) /* a block reads back what it wrote */
{
    float *mine = data + blockIdx.x * NT;
    mine[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    float v = mine[(threadIdx.x + 1) % NT];
    __syncthreads();
    mine[threadIdx.x] += v;
}

__global__ void neighbour_bytes(unsigned char *out) /* block b writes byte b of each word */
{
    out[threadIdx.x * 4 + blockIdx.x % 4] = (unsigned char)blockIdx.x;
}

#ifdef NDEMU
static bool names_line(const char *msg, int l)
{
    char want[40];
    snprintf(want, sizeof want, "global_race.cu:%d", l);
    return strstr(msg, want) != NULL;
}

/* The launch fails with racecheck's report between blocks naming both
 * lines and the kernel; sticky until cudaDeviceReset. */
static void expect_race(const char *name, const char *kernel, int l1, int l2)
{
    cudaError_t e = cudaDeviceSynchronize();
    const char *msg = emu_message();
    char buf[300];
    snprintf(buf, sizeof buf, "%s: the launch fails with cudaErrorLaunchFailure", name);
    CHECK(buf, e == cudaErrorLaunchFailure, "got %s", cudaGetErrorName(e));
    snprintf(buf, sizeof buf, "%s: racecheck names the race between blocks, kernel '%s', lines %d and %d", name,
             kernel, l1, l2);
    char k[80];
    snprintf(k, sizeof k, "kernel '%s'", kernel);
    CHECK(buf,
          strstr(msg, "racecheck: a global-memory race between blocks") && strstr(msg, k) && names_line(msg, l1) &&
              names_line(msg, l2) && strstr(msg, "__threadfence()+atomic"),
          "message: %s", msg);
    printf("   message: %s\n", msg);
    cudaDeviceReset();
}

static void expect_clean(const char *name)
{
    cudaError_t e = cudaDeviceSynchronize();
    CHECK(name, e == cudaSuccess, "%s: %s", cudaGetErrorName(e), emu_message());
    if (e != cudaSuccess) cudaDeviceReset();
}
#endif

int main(void)
{
#ifdef NDEMU
    CHECK("the instrumented build records", ndemu_profile_enabled() == 1, "ndemu_profile_enabled() is 0");
    std::vector<float> h(NB * NT);
    for (size_t i = 0; i < h.size(); i++) h[i] = (float)(i % 7 + 1);
    float *in, *partial, *out, *sum;
    unsigned *count;
    unsigned char *bytes;
    /* fresh buffers for each kernel: a fault resets the device */
    auto setup = [&]() {
        CUDA_OK(cudaMalloc(&in, h.size() * sizeof(float)));
        CUDA_OK(cudaMalloc(&partial, h.size() * sizeof(float)));
        CUDA_OK(cudaMalloc(&out, h.size() * sizeof(float)));
        CUDA_OK(cudaMalloc(&sum, sizeof(float)));
        CUDA_OK(cudaMalloc(&count, sizeof(unsigned)));
        CUDA_OK(cudaMalloc(&bytes, NT * 4));
        CUDA_OK(cudaMemcpy(in, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(sum, 0, sizeof(float)));
        CUDA_OK(cudaMemset(count, 0, sizeof(unsigned)));
    };
    float want = 0.0f, got = 0.0f;
    for (int b = 0; b < NB; b++) want += h[(size_t)b];

    /* broken */
    setup();
    plus_equals<<<NB, NT>>>(in, sum);
    expect_race("every block adds to one word with a plain +=", "plus_equals", kLinePlus, kLinePlus);
    setup();
    last_block_no_fence<<<NB, NT>>>(in, partial, count, out);
    expect_race("the last block sums the partials, no __threadfence() before the counter", "last_block_no_fence",
                kLineNoFenceW, kLineNoFenceR);
    setup();
    last_block_no_atomic<<<NB, NT>>>(in, partial, out);
    expect_race("the last block by index sums the partials, a fence but no atomic counter", "last_block_no_atomic",
                kLineNoAtomicW, kLineNoAtomicR);
    setup();
    last_block_plain_counter<<<NB, NT>>>(in, partial, count, out);
    expect_race("a fence, then a counter incremented with a plain ++", "last_block_plain_counter", kLinePlainCount,
                kLinePlainCount);
    setup();
    CUDA_OK(cudaMemcpy(partial, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    read_then_overwrite<<<NB, NT>>>(partial, out);
    expect_race("blocks read a word that another block overwrites", "read_then_overwrite", kLineWarR, kLineWarW);

    /* correct */
    setup();
    add_atomic<<<NB, NT>>>(in, sum);
    expect_clean("atomicAdd from every block: no report");
    CUDA_OK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
    CHECK("atomicAdd from every block: the sum", got == want, "%g, not %g", (double)got, (double)want);
    last_block_fenced<<<NB, NT>>>(in, partial, count, out);
    expect_clean("store, __threadfence(), atomicInc; the last block sums and resets the counter: no report");
    CUDA_OK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    CHECK("the fenced last block: the sum", got == want, "%g, not %g", (double)got, (double)want);
    last_block_fenced<<<NB, NT>>>(in, partial, count, out);
    expect_clean("the fenced last block, launched again (the counter reset): no report");
    all_threads_then_fence<<<NB, NT>>>(in, partial, count, out);
    expect_clean("every thread stores, a barrier, one fence and one atomic: no report");
    disjoint<<<NB, NT>>>(in, out);
    expect_clean("blocks write disjoint parts, all read one input: no report");
    read_all<<<NB, NT>>>(out, partial);
    expect_clean("a second launch reads what every block of the first wrote: no report");
    read_all<<<NB, NT>>>(in, out);
    expect_clean("every block reads the whole input: no report");
    own_writes<<<NB, NT>>>(partial);
    expect_clean("a block reads back its own writes: no report");
    neighbour_bytes<<<4, NT>>>(bytes);
    expect_clean("blocks write neighbouring bytes of one word: no report");
#else
    (void)kLinePlus, (void)kLineNoFenceW, (void)kLineNoFenceR, (void)kLineNoAtomicW, (void)kLineNoAtomicR;
    (void)kLinePlainCount, (void)kLineWarR, (void)kLineWarW;
    printf("ok nothing to check on a GPU (racecheck between blocks is the instrumented emulator's)\n");
#endif
    return g_failed ? 1 : 0;
}
