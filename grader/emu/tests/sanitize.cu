/* Self-test of the emulator's instrumented build: the counters of small
 * kernels whose profile is known by hand, and the sanitizer's three
 * checks on broken kernels (racecheck, a host pointer in a kernel,
 * initcheck), each reported with its line.  Built by test_emu.sh with the
 * instrumentation (-fsanitize=thread -fno-tree-sra -DNDEMU_INSTRUMENTED).
 * It is real CUDA too (nvcc compiles it), but only means something on the
 * emulator. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "check.h"

/* ---- kernels whose counts are known ------------------------------------- */
__global__ void copy4(const float *in, float *out) /* coalesced, 4 bytes */
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

__global__ void gather32(const float *in, float *out) /* each lane its own sector */
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[(size_t)i * 32 % (1024 * 32) + i * 32 / (1024 * 32)];
}

__global__ void stride_loop(const float *in, float *out, int n) /* a grid-stride loop */
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i];
}

__global__ void dot_loop(const float *a, const float *b, float *out, int n) /* loads, no store */
{
    float acc = 0;
    for (int p = 0; p < n; p++) acc += a[p] * b[p];
    out[threadIdx.x] = acc;
}

__global__ void read_columns(const float *in, float *out) /* a 32x32 block reads columns */
{
    int x = threadIdx.x, y = threadIdx.y;
    out[y * 32 + x] = in[x * 32 + y];
}

__global__ void copy16(const float4 *in, float4 *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

/* 16 bytes copied as a struct: nvcc moves a 4-byte aligned one as four
 * 4-byte loads and stores, an __align__(16) one as one 16-byte each. */
struct four_floats {
    float a, b, c, d;
};
struct __align__(16) four_floats16 {
    float a, b, c, d;
};
__global__ void copy16_struct(const four_floats *in, four_floats *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}
__global__ void copy16_aligned_struct(const four_floats16 *in, four_floats16 *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

__global__ void broadcast(const float *in, float *out) /* every lane reads in[0] */
{
    __shared__ float s[32];
    if (threadIdx.x == 0) s[0] = in[0];
    __syncthreads();
    out[threadIdx.x] = s[0];
}

template <int PAD>
__global__ void column(const float *in, float *out) /* write rows, read columns */
{
    __shared__ float tile[32][32 + PAD];
    int x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = in[y * 32 + x];
    __syncthreads();
    out[y * 32 + x] = tile[x][y];
}

__global__ void doubles(const double *in, double *out) /* 8-byte shared: two phases */
{
    __shared__ double s[32];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[31 - threadIdx.x];
}

__global__ void four_loads(const float *in, float *out) /* 4 loads between barriers */
{
    __shared__ float s[4][64];
#pragma unroll
    for (int k = 0; k < 4; k++) s[k][threadIdx.x] = in[k * 64 + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = s[0][threadIdx.x] + s[1][threadIdx.x] + s[2][threadIdx.x] + s[3][threadIdx.x];
}

__global__ void add_atomic(float *sum, const float *in)
{
    atomicAdd(sum, in[threadIdx.x]);
}

/* ---- broken kernels ------------------------------------------------------ */
static const int kLineRaceW = __LINE__ + 5;
static const int kLineRaceR = __LINE__ + 5;
__global__ void shift_no_sync(const float *in, float *out) /* RACE */
{
    __shared__ float s[64];
    s[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64]; /* reads a neighbour's write, no barrier */
}

__global__ void shift_sync(const float *in, float *out)
{
    __shared__ float s[64];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}

__global__ void warp_sync_ok(const float *in, float *out) /* one warp, __syncwarp between */
{
    __shared__ float s[32];
    s[threadIdx.x] = in[threadIdx.x];
    __syncwarp();
    out[threadIdx.x] = s[31 - threadIdx.x];
}

/* A host pointer inside a struct: the launch checks only pointer
 * parameters, so here the access is what the sanitizer catches. */
struct host_ref {
    const int *p;
};
static const int kLineHost = __LINE__ + 3;
__global__ void read_through(host_ref r, int *out)
{
    out[threadIdx.x] = r.p[threadIdx.x]; /* r.p is a host pointer */
}

static const int kLineInit = __LINE__ + 4;
__global__ void sum_all(const float *in, float *out, int n)
{
    float s = 0;
    for (int i = 0; i < n; i++) s += in[i];
    out[0] = s;
}

#ifdef NDEMU
static bool contains(const char *s, const char *what) { return strstr(s, what) != NULL; }

static ndemu_launch_stats last(void)
{
    ndemu_launch_stats s;
    memset(&s, 0, sizeof s);
    if (ndemu_launch_get(-1, &s) != 0) printf("not ok no launch recorded (%s:%d)\n", __FILE__, __LINE__);
    return s;
}

/* A fault from the sanitizer: the launch fails, the message names what it
 * should, the error is sticky until cudaDeviceReset. */
static void expect_report(const char *name, cudaError_t want, const char *w1, const char *w2, const char *w3)
{
    cudaError_t e = cudaDeviceSynchronize();
    const char *msg = emu_message();
    char buf[200];
    snprintf(buf, sizeof buf, "%s: the launch fails with %s", name, cudaGetErrorName(want));
    CHECK(buf, e == want, "got %s", cudaGetErrorName(e));
    snprintf(buf, sizeof buf, "%s: the message names %s, %s and %s", name, w1, w2, w3);
    CHECK(buf, contains(msg, w1) && contains(msg, w2) && contains(msg, w3), "message: %s", msg);
    printf("   message: %s\n", msg);
    cudaDeviceReset();
}

static void line(char *buf, size_t n, int l) { snprintf(buf, n, "sanitize.cu:%d", l); }
#endif

int main(void)
{
#ifdef NDEMU
    CHECK("the instrumented build records", ndemu_profile_enabled() == 1, "ndemu_profile_enabled() is 0");
    float *a, *b;
    CUDA_OK(cudaMalloc(&a, 1024 * 32 * sizeof(float)));
    CUDA_OK(cudaMalloc(&b, 1024 * 32 * sizeof(float)));
    std::vector<float> h(1024 * 32, 1.0f);
    CUDA_OK(cudaMemcpy(a, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(b, 0, h.size() * sizeof(float)));

    copy4<<<4, 256>>>(a, b);
    CUDA_OK(cudaDeviceSynchronize());
    ndemu_launch_stats s = last();
    const ndemu_access_stats *ld = &s.access[NDEMU_GLOBAL_LOAD], *st = &s.access[NDEMU_GLOBAL_STORE];
    CHECK("copy4: 32 load and 32 store requests of 4 sectors, 128 bytes each",
          ld->requests == 32 && ld->sectors == 128 && ld->bytes == 4096 && st->requests == 32 && st->sectors == 128 &&
              ld->by_width[2] == 32,
          "loads %llu req %llu sectors %llu bytes, stores %llu req %llu sectors", (unsigned long long)ld->requests,
          (unsigned long long)ld->sectors, (unsigned long long)ld->bytes, (unsigned long long)st->requests,
          (unsigned long long)st->sectors);
    CHECK("copy4: 128 DRAM sectors read and 128 written, 4 bytes in flight per thread, kernel and line",
          s.dram_sectors_read == 128 && s.dram_sectors_written == 128 && s.load_bytes_in_flight == 4.0 &&
              !strcmp(s.kernel, "copy4") && !strcmp(s.file, "sanitize.cu") && s.threads == 1024,
          "%llu %llu %g %s %s", (unsigned long long)s.dram_sectors_read, (unsigned long long)s.dram_sectors_written,
          s.load_bytes_in_flight, s.kernel, s.file);

    gather32<<<1, 1024>>>(a, b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("gather32: a 32-float stride gives 32 sectors per load request (12.5% efficiency)",
          s.access[NDEMU_GLOBAL_LOAD].sectors == 32 * 32 && s.access[NDEMU_GLOBAL_LOAD].ideal == 4 * 32 &&
              s.access[NDEMU_GLOBAL_STORE].sectors == 4 * 32,
          "%llu sectors, ideal %llu", (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].sectors,
          (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].ideal);

    CHECK("gather32: 32 lanes in 32 lines take 32 L1 lines per load request, 1 per coalesced store",
          s.l1_lines == 32 * 32 + 32 && s.l2_load_sectors == 32 * 32, "%llu lines, %llu load sectors to L2",
          (unsigned long long)s.l1_lines, (unsigned long long)s.l2_load_sectors);

    read_columns<<<1, dim3(32, 32)>>>(a, b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("read_columns: 1024 load sectors requested, 128 reach L2 (L1 keeps what the block loaded)",
          s.access[NDEMU_GLOBAL_LOAD].sectors == 1024 && s.l2_load_sectors == 128 && s.dram_sectors_read == 128 &&
              s.l1_lines == 32 * 32 + 32,
          "%llu sectors, %llu to L2, %llu from DRAM, %llu lines",
          (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].sectors, (unsigned long long)s.l2_load_sectors,
          (unsigned long long)s.dram_sectors_read, (unsigned long long)s.l1_lines);

    stride_loop<<<2, 64>>>(a, b, 512);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("stride_loop: a grid-stride loop keeps one load (4 bytes) in flight per thread, 16 between barriers",
          s.load_bytes_in_flight == 4.0 && s.load_bytes_per_interval == 16.0, "%g in flight, %g per interval",
          s.load_bytes_in_flight, s.load_bytes_per_interval);

    dot_loop<<<1, 32>>>(a, a + 1024, b, 64);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("dot_loop: a loop that stores nothing issues four iterations' loads together (32 bytes in flight)",
          s.load_bytes_in_flight == 32.0, "%g in flight", s.load_bytes_in_flight);

    copy16<<<1, 256>>>((const float4 *)a, (float4 *)b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("copy16: float4 moves as 16-byte requests, 16 sectors each",
          s.access[NDEMU_GLOBAL_LOAD].by_width[4] == 8 && s.access[NDEMU_GLOBAL_LOAD].requests == 8 &&
              s.access[NDEMU_GLOBAL_LOAD].sectors == 128 && s.access[NDEMU_GLOBAL_STORE].by_width[4] == 8,
          "%llu 16-byte of %llu requests, %llu sectors", (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].by_width[4],
          (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].requests,
          (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].sectors);

    copy16_struct<<<1, 256>>>((const four_floats *)a, (four_floats *)b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("copy16_struct: a 4-byte aligned struct of four floats moves as four 4-byte requests a warp",
          s.access[NDEMU_GLOBAL_LOAD].by_width[2] == 32 && s.access[NDEMU_GLOBAL_LOAD].requests == 32 &&
              s.access[NDEMU_GLOBAL_STORE].by_width[2] == 32 && s.access[NDEMU_GLOBAL_STORE].requests == 32 &&
              s.access[NDEMU_GLOBAL_LOAD].bytes == 256 * 16,
          "%llu 4-byte of %llu load requests, %llu 4-byte of %llu store requests, %llu bytes",
          (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].by_width[2],
          (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].requests,
          (unsigned long long)s.access[NDEMU_GLOBAL_STORE].by_width[2],
          (unsigned long long)s.access[NDEMU_GLOBAL_STORE].requests,
          (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].bytes);

    copy16_aligned_struct<<<1, 256>>>((const four_floats16 *)a, (four_floats16 *)b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("copy16_aligned_struct: the same struct declared __align__(16) moves as 16-byte requests",
          s.access[NDEMU_GLOBAL_LOAD].by_width[4] == 8 && s.access[NDEMU_GLOBAL_LOAD].requests == 8 &&
              s.access[NDEMU_GLOBAL_STORE].by_width[4] == 8,
          "%llu 16-byte of %llu requests", (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].by_width[4],
          (unsigned long long)s.access[NDEMU_GLOBAL_LOAD].requests);

    broadcast<<<1, 64>>>(a, b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("broadcast: lanes reading one word share a wavefront; one barrier",
          s.access[NDEMU_SHARED_LOAD].requests == 2 && s.access[NDEMU_SHARED_LOAD].wavefronts == 2 &&
              s.barriers == 1 && s.shared_static == 32 * sizeof(float),
          "%llu requests %llu wavefronts, %llu barriers, %llu shared bytes",
          (unsigned long long)s.access[NDEMU_SHARED_LOAD].requests,
          (unsigned long long)s.access[NDEMU_SHARED_LOAD].wavefronts, (unsigned long long)s.barriers,
          (unsigned long long)s.shared_static);

    column<0><<<1, dim3(32, 32)>>>(a, b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("tile[32][32]: a column read is a 32-way bank conflict",
          s.access[NDEMU_SHARED_LOAD].requests == 32 && s.access[NDEMU_SHARED_LOAD].wavefronts == 32 * 32 &&
              s.access[NDEMU_SHARED_STORE].wavefronts == 32,
          "%llu requests, %llu wavefronts", (unsigned long long)s.access[NDEMU_SHARED_LOAD].requests,
          (unsigned long long)s.access[NDEMU_SHARED_LOAD].wavefronts);
    column<1><<<1, dim3(32, 32)>>>(a, b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("tile[32][33]: padding removes it",
          s.access[NDEMU_SHARED_LOAD].wavefronts == 32 && s.access[NDEMU_SHARED_LOAD].ideal == 32,
          "%llu wavefronts", (unsigned long long)s.access[NDEMU_SHARED_LOAD].wavefronts);

    doubles<<<1, 32>>>((const double *)a, (double *)b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("doubles: 8-byte shared accesses take two wavefronts (two half-warps), no conflict",
          s.access[NDEMU_SHARED_STORE].wavefronts == 2 && s.access[NDEMU_SHARED_STORE].ideal == 2 &&
              s.access[NDEMU_SHARED_LOAD].wavefronts == 2 && s.access[NDEMU_SHARED_LOAD].by_width[3] == 1,
          "%llu and %llu wavefronts", (unsigned long long)s.access[NDEMU_SHARED_STORE].wavefronts,
          (unsigned long long)s.access[NDEMU_SHARED_LOAD].wavefronts);

    four_loads<<<2, 64>>>(a, b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("four_loads: an unrolled loop keeps its 4 loads (16 bytes) in flight per thread",
          s.load_bytes_in_flight == 16.0 && s.barriers == 2, "%g bytes, %llu barriers", s.load_bytes_in_flight,
          (unsigned long long)s.barriers);

    add_atomic<<<1, 32>>>(b, a);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    CHECK("atomics are counted as atomics, not as loads and stores (nor races)",
          s.atomics == 32 && s.access[NDEMU_GLOBAL_STORE].requests == 0, "%llu atomics, %llu stores",
          (unsigned long long)s.atomics, (unsigned long long)s.access[NDEMU_GLOBAL_STORE].requests);

    int before = ndemu_launch_count();
    ndemu_profile_reset();
    CHECK("ndemu_launch_count counts launches; ndemu_profile_reset forgets them",
          before == 14 && ndemu_launch_count() == 0 && ndemu_launch_get(0, &s) == -1, "%d, then %d", before,
          ndemu_launch_count());

    ndemu_estimate e;
    copy4<<<4, 256>>>(a, b);
    CUDA_OK(cudaDeviceSynchronize());
    s = last();
    /* 4 bytes in flight per thread: latency-bound, well below the DRAM's 90% */
    CHECK("the model: a coalesced 4-byte copy, scaled up, is modelled at 40-80% of an H100 SXM's nameplate",
          ndemu_model(&s, ndemu_gpu_get(0), 1 << 20, &e) == 0 && e.percent_of_dram > 40 && e.percent_of_dram < 80,
          "%.1f%%", e.percent_of_dram);

    /* ---- the sanitizer ---- */
    char l1[64], l2[64];
    shift_sync<<<1, 64>>>(a, b);
    CHECK("racecheck: a barrier between the write and the neighbour's read: no report",
          cudaDeviceSynchronize() == cudaSuccess, "%s", emu_message());
    warp_sync_ok<<<1, 32>>>(a, b);
    CHECK("racecheck: one warp with __syncwarp() between: no report", cudaDeviceSynchronize() == cudaSuccess, "%s",
          emu_message());
    shift_no_sync<<<1, 64>>>(a, b);
    line(l1, sizeof l1, kLineRaceW);
    line(l2, sizeof l2, kLineRaceR);
    expect_report("racecheck: no barrier between a write and a neighbour's read", cudaErrorLaunchFailure, "racecheck",
                  l1, l2);

    CUDA_OK(cudaMalloc(&b, 64 * sizeof(int)));
    std::vector<int> host(64, 7);
    host_ref heap_ref = {host.data()};
    read_through<<<1, 32>>>(heap_ref, (int *)b);
    line(l1, sizeof l1, kLineHost);
    expect_report("a heap pointer inside a struct passed to a kernel", cudaErrorIllegalAddress, l1, "neither device memory",
                  "thread (0,0,0)");
    int on_stack[32] = {0};
    CUDA_OK(cudaMalloc(&b, 64 * sizeof(int)));
    host_ref stack_ref = {on_stack};
    read_through<<<1, 32>>>(stack_ref, (int *)b);
    expect_report("a host stack array inside a struct passed to a kernel", cudaErrorIllegalAddress, l1, "host's stack",
                  "cudaErrorIllegalAddress");

    CUDA_OK(cudaMalloc(&a, 64 * sizeof(float)));
    CUDA_OK(cudaMalloc(&b, sizeof(float)));
    CUDA_OK(cudaMemcpy(a, h.data(), 32 * sizeof(float), cudaMemcpyHostToDevice)); /* half of it */
    sum_all<<<1, 1>>>(a, b, 32);
    CHECK("initcheck: reading what cudaMemcpy wrote: no report", cudaDeviceSynchronize() == cudaSuccess, "%s",
          emu_message());
    sum_all<<<1, 1>>>(a, b, 64);
    line(l1, sizeof l1, kLineInit);
    expect_report("initcheck: reading past what was written", cudaErrorLaunchFailure, "initcheck", l1,
                  "byte 128");
    CUDA_OK(cudaMalloc(&a, 64 * sizeof(float)));
    CUDA_OK(cudaMalloc(&b, 64 * sizeof(float)));
    CUDA_OK(cudaMemset(a, 0, 64 * sizeof(float)));
    CUDA_OK(cudaMemcpy(b, a, 64 * sizeof(float), cudaMemcpyDeviceToDevice));
    sum_all<<<1, 1>>>(b, a, 64);
    CHECK("initcheck: cudaMemset, then a device-to-device copy, initialise", cudaDeviceSynchronize() == cudaSuccess,
          "%s", emu_message());
    copy4<<<1, 64>>>(a, b);
    sum_all<<<1, 1>>>(b, a, 64);
    CHECK("initcheck: a kernel's writes initialise", cudaDeviceSynchronize() == cudaSuccess, "%s", emu_message());
    printf("profile of the last launch, as make profile prints it:\n");
    fflush(stdout);
    ndemu_profile_print(-1, stdout);
#else
    (void)kLineRaceW, (void)kLineRaceR, (void)kLineHost, (void)kLineInit;
    printf("ok nothing to check on a GPU (the counters are the emulator's)\n");
#endif
    return g_failed ? 1 : 0;
}
