/* model_validation.cu -- the performance model (grader/emu/model.cpp)
 * against published measurements, each row marked in sample (a parameter
 * was fitted to it) or out of sample (nothing was; grader/emu/README.md,
 * "Validation").
 *
 * The kernels are those the publications measured, with their block
 * shapes, tiles and index arithmetic (what the model sees: the accesses):
 *
 *   S1  transposes of 32768 x 32768 floats on an H100 SXM: naive, a shared
 *       tile with and without padding, 1 to 8 rows per thread, float2 and
 *       float4 moves, 32 x 32 and 64 x 64 tiles (20 kernels);
 *   S2  a copy of 2^27 bytes on an H100 SXM, one element of 1, 2, 4, 8 or
 *       16 bytes per thread, blocks of 1024;
 *   S3  STREAM-like kernels on an H100 PCIe, one double per thread, two
 *       blocks per SM, blocks of 32 to 1024 threads (occupancy 3-100%).
 *
 * usage: model_validation [-o DIR] [-v]
 *
 * Each kernel runs at a small size and is checked against the host.  On
 * the emulator's instrumented build its profile goes through the model for
 * the publication's GPU, every count scaled to the published size (the
 * counts per element, the bytes in flight per thread and the launch shape
 * do not change with the size); the program prints the table (-v: and the
 * model's terms), writes DIR/model-validation.tsv and .md with -o, and
 * fails unless every out-of-sample row is within 10 points of its
 * published figure and the model orders each source's out-of-sample rows
 * as the measurements do (pairs more than 5 points apart).  Built by nvcc
 * for a GPU it times the same kernels at the same sizes instead and prints
 * the measured figures beside the published ones.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

/* ---- S1: transposes (yencal/gpu-matrix-transpose, transpose_kernels.cuh) */

/* Reads a row, writes a column: each lane of a warp writes its own sector. */
static __global__ void naive(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    out[(size_t)x * n + y] = in[(size_t)y * n + x];
}

/* A TILE x TILE shared tile padded by PAD, blocks of TILE x ROWS threads:
 * each thread moves TILE / ROWS floats each way. */
template <int TILE, int ROWS, int PAD>
static __global__ void tiled(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

/* The same with a float2 per thread and row: blocks of TILE/2 x ROWS. */
template <int TILE, int ROWS>
static __global__ void tiled2(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * (TILE / 2) + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y, w = n / 2;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) {
        float2 v = ((const float2 *)in)[(size_t)(y + j) * w + x];
        tile[threadIdx.y + j][threadIdx.x * 2] = v.x;
        tile[threadIdx.y + j][threadIdx.x * 2 + 1] = v.y;
    }
    __syncthreads();
    x = blockIdx.y * (TILE / 2) + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) {
        float2 v = make_float2(tile[threadIdx.x * 2][threadIdx.y + j], tile[threadIdx.x * 2 + 1][threadIdx.y + j]);
        ((float2 *)out)[(size_t)(y + j) * w + x] = v;
    }
}

/* ... and with a float4: blocks of TILE/4 x ROWS. */
template <int TILE, int ROWS>
static __global__ void tiled4(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * (TILE / 4) + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y, w = n / 4;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) {
        float4 v = ((const float4 *)in)[(size_t)(y + j) * w + x];
        tile[threadIdx.y + j][threadIdx.x * 4] = v.x;
        tile[threadIdx.y + j][threadIdx.x * 4 + 1] = v.y;
        tile[threadIdx.y + j][threadIdx.x * 4 + 2] = v.z;
        tile[threadIdx.y + j][threadIdx.x * 4 + 3] = v.w;
    }
    __syncthreads();
    x = blockIdx.y * (TILE / 4) + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) {
        float4 v = make_float4(tile[threadIdx.x * 4][threadIdx.y + j], tile[threadIdx.x * 4 + 1][threadIdx.y + j],
                               tile[threadIdx.x * 4 + 2][threadIdx.y + j], tile[threadIdx.x * 4 + 3][threadIdx.y + j]);
        ((float4 *)out)[(size_t)(y + j) * w + x] = v;
    }
}

/* ---- S2: a copy, V wide (yencal/gpu-bandwidth-benchmark, memcpy_kernel):
 * a grid-stride loop whose grid covers the array, one V per thread ---- */
template <typename V>
static __global__ void copy_wide(const V *__restrict__ src, V *__restrict__ dst, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
        dst[i] = src[i];
}

/* ---- S3: STREAM-like kernels (te42kyfo/gpu-benches, cuda-stream), one
 * double per thread; the benchmark's shared "spoiler" array, never
 * touched, limits a GPU to two blocks per SM (given to the model below) */
static __global__ void stream_scale(double *a, const double *__restrict__ b, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = b[i] * 1.2;
}

static __global__ void stream_read(double *a, const double *__restrict__ b, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double t = b[i];
    if (t == 123.33) a[i] = t; /* never: the store only keeps the load */
}

/* ---- the publications ---------------------------------------------------- */
struct source {
    const char *key, *gpu, *citation;
    int gpu_index; /* ndemu_gpu_get */
};
static const source sources[] = {
    {"S1", "H100 SXM",
     "yencal, \"Optimizing GPU Matrix Transpose: From 14% to 88% of Peak Bandwidth\" (2025-12-24), "
     "https://yencal.github.io/gpu-matrix-transpose-optimization/ ; the same table and the code in "
     "https://github.com/yencal/gpu-matrix-transpose (README.md, main.cu, transpose_kernels.cuh): "
     "H100 80GB HBM3, 32768 x 32768 floats, % of 3352.3 GB/s",
     0},
    {"S2", "H100 SXM",
     "yencal, \"How Data Type Width Affects GPU Memory Throughput\" (2025-11-29), "
     "https://yencal.github.io/gpu-memory-throughput-optimization/ ; code "
     "https://github.com/yencal/gpu-bandwidth-benchmark (memcpy_benchmark.cu): H100 (SXM, \"~3.35 TB/s\"), "
     "blocks of 1024, the plateau beyond L2 given as ranges of GB/s, as % of 3352 GB/s",
     0},
    {"S3", "H100 PCIe",
     "te42kyfo (Dominik Ernst), gpu-benches, gpu-stream, https://github.com/te42kyfo/gpu-benches "
     "(README.md \"gpu-stream\", results from an NVIDIA H100 PCIe / CUDA 11.7; cuda-stream/h100_pcie.txt, "
     "cuda-stream/main.cu): 128 Mi doubles per array, two blocks per SM, % of 2039 GB/s",
     1},
};
enum { NSOURCES = sizeof sources / sizeof sources[0] };

enum kernel_id { K_TRANSPOSE, K_COPY, K_SCALE, K_READ };

/* The sizes run here, and the published ones. */
static const int kN = 1024;                        /* S1: kN x kN here, 32768 x 32768 published */
static const size_t kCopyBytes = (size_t)1 << 20;  /* S2: 2^27 bytes published */
static const size_t kStream = (size_t)1 << 18;     /* S3: doubles; 128 Mi published */

/* ---- launchers: each row's kernel with the publication's grid and block */
typedef void (*launcher)(const void *in, void *out);

static void run_naive(const void *in, void *out)
{
    naive<<<dim3(kN / 32, kN / 32), dim3(32, 32)>>>((const float *)in, (float *)out, kN);
}

template <int TILE, int ROWS, int PAD>
static void run_tiled(const void *in, void *out)
{
    tiled<TILE, ROWS, PAD><<<dim3(kN / TILE, kN / TILE), dim3(TILE, ROWS)>>>((const float *)in, (float *)out, kN);
}

template <int TILE, int ROWS>
static void run_tiled2(const void *in, void *out)
{
    tiled2<TILE, ROWS><<<dim3(kN / TILE, kN / TILE), dim3(TILE / 2, ROWS)>>>((const float *)in, (float *)out, kN);
}

template <int TILE, int ROWS>
static void run_tiled4(const void *in, void *out)
{
    tiled4<TILE, ROWS><<<dim3(kN / TILE, kN / TILE), dim3(TILE / 4, ROWS)>>>((const float *)in, (float *)out, kN);
}

template <typename V>
static void run_copy(const void *in, void *out)
{
    size_t n = kCopyBytes / sizeof(V);
    copy_wide<V><<<(unsigned)((n + 1023) / 1024), 1024>>>((const V *)in, (V *)out, n);
}

template <int BLOCK>
static void run_scale(const void *in, void *out)
{
    stream_scale<<<(unsigned)(kStream / BLOCK + 1), BLOCK>>>((double *)out, (const double *)in, kStream);
}

template <int BLOCK>
static void run_read(const void *in, void *out)
{
    stream_read<<<(unsigned)(kStream / BLOCK + 1), BLOCK>>>((double *)out, (const double *)in, kStream);
}

/* The model's fitted parameters (ndemu_model_params), each fitted to one
 * row; on the emulator, where each lives and the range it is searched in. */
enum { P_LATENCY, P_QUEUE_LOADS, P_QUEUE_STORES, P_BARRIER, P_ONE_WAY, P_COPY, P_L2, NPARAMS, TEST = -1 };
static const char *const param_names[NPARAMS] = {"latency_s", "queue_loads", "queue_stores", "barrier_s",
                                                 "dram_one_way", "dram_copy", "l2_scattered"};
#ifdef NDEMU
struct param {
    double ndemu_model_params::*field;
    double lo, hi;
};
static const param params[NPARAMS] = {
    {&ndemu_model_params::latency_s, 50e-9, 5e-6},    {&ndemu_model_params::queue_loads, 0, 5},
    {&ndemu_model_params::queue_stores, 0, 5},        {&ndemu_model_params::barrier_s, 0, 5e-6},
    {&ndemu_model_params::dram_one_way, 0.3, 1.0},    {&ndemu_model_params::dram_copy, 0.3, 1.0},
    {&ndemu_model_params::l2_scattered, 0.01, 10},
};
#endif

struct row {
    const char *name;
    int source;
    const char *what;
    double lo, hi;    /* published, % of the GPU's nameplate DRAM bandwidth */
    int fit;          /* the parameter fitted to it (in sample), or TEST (out of sample) */
    kernel_id k;
    launcher run;
};

/* The published figures (% of nameplate): S1 as printed; S2's GB/s
 * ranges / 3352; S3's GB/s / 2039. */
static const row rows[] = {
    {"naive", 0, "one thread per element: reads coalesced, writes strided",
     14.2, 14.2, P_L2, K_TRANSPOSE, run_naive},
    {"tiled", 0, "32x32 shared tile, no padding (32-way bank conflicts)",
     29.7, 29.7, TEST, K_TRANSPOSE, run_tiled<32, 32, 0>},
    {"tiled_pad", 0, "padded [32][33], one element per thread",
     50.5, 50.5, P_BARRIER, K_TRANSPOSE, run_tiled<32, 32, 1>},
    {"coarsen2", 0, "padded, 32x16 blocks, 2 rows per thread",
     71.1, 71.1, TEST, K_TRANSPOSE, run_tiled<32, 16, 1>},
    {"coarsen4", 0, "padded, 32x8 blocks, 4 rows per thread (lesson 7's shape)",
     82.7, 82.7, TEST, K_TRANSPOSE, run_tiled<32, 8, 1>},
    {"coarsen8", 0, "padded, 32x4 blocks, 8 rows per thread",
     82.8, 82.8, TEST, K_TRANSPOSE, run_tiled<32, 4, 1>},
    {"vec2", 0, "float2 per thread, 16x32 blocks", 71.1, 71.1, TEST, K_TRANSPOSE, run_tiled2<32, 32>},
    {"vec2_coarsen2", 0, "float2, 16x16 blocks, 2 rows per thread",
     82.7, 82.7, TEST, K_TRANSPOSE, run_tiled2<32, 16>},
    {"vec2_coarsen4", 0, "float2, 16x8 blocks, 4 rows per thread",
     82.8, 82.8, TEST, K_TRANSPOSE, run_tiled2<32, 8>},
    {"vec2_coarsen8", 0, "float2, 16x4 blocks, 8 rows per thread",
     82.8, 82.8, TEST, K_TRANSPOSE, run_tiled2<32, 4>},
    {"vec4", 0, "float4 per thread, 8x32 blocks", 82.7, 82.7, TEST, K_TRANSPOSE, run_tiled4<32, 32>},
    {"vec4_coarsen2", 0, "float4, 8x16 blocks, 2 rows per thread",
     82.7, 82.7, TEST, K_TRANSPOSE, run_tiled4<32, 16>},
    {"vec4_coarsen4", 0, "float4, 8x8 blocks, 4 rows per thread",
     82.8, 82.8, TEST, K_TRANSPOSE, run_tiled4<32, 8>},
    {"vec4_coarsen8", 0, "float4, 8x4 blocks, 8 rows per thread",
     82.7, 82.7, TEST, K_TRANSPOSE, run_tiled4<32, 4>},
    {"vec2_t64", 0, "64x64 tile, float2, 32x32 blocks", 85.7, 85.7, TEST, K_TRANSPOSE, run_tiled2<64, 32>},
    {"vec2_t64_coarsen2", 0, "64x64 tile, float2, 32x16 blocks",
     87.7, 87.7, TEST, K_TRANSPOSE, run_tiled2<64, 16>},
    {"vec2_t64_coarsen4", 0, "64x64 tile, float2, 32x8 blocks",
     87.3, 87.3, TEST, K_TRANSPOSE, run_tiled2<64, 8>},
    {"vec4_t64", 0, "64x64 tile, float4, 16x32 blocks", 87.7, 87.7, TEST, K_TRANSPOSE, run_tiled4<64, 32>},
    {"vec4_t64_coarsen2", 0, "64x64 tile, float4, 16x16 blocks",
     87.3, 87.3, TEST, K_TRANSPOSE, run_tiled4<64, 16>},
    {"vec4_t64_coarsen4", 0, "64x64 tile, float4, 16x8 blocks",
     87.7, 87.7, TEST, K_TRANSPOSE, run_tiled4<64, 8>},
    {"copy1", 1, "copy, 1 byte per thread (650-700 GB/s)", 19.4, 20.9, TEST, K_COPY, run_copy<uint8_t>},
    {"copy2", 1, "copy, 2 bytes per thread (1150-1200 GB/s)", 34.3, 35.8, TEST, K_COPY, run_copy<uint16_t>},
    {"copy4", 1, "copy, 4 bytes per thread (1950-2050 GB/s)", 58.2, 61.2, TEST, K_COPY, run_copy<uint32_t>},
    {"copy8", 1, "copy, 8 bytes per thread (2550-2700 GB/s)", 76.1, 80.5, TEST, K_COPY, run_copy<uint64_t>},
    {"copy16", 1, "copy, 16 bytes per thread (3000-3100 GB/s)", 89.5, 92.5, TEST, K_COPY, run_copy<uint4>},
    {"scale_b32", 2, "a[i] = b[i] * c, blocks of 32 (3% occupancy; 183 GB/s)",
     9.0, 9.0, TEST, K_SCALE, run_scale<32>},
    {"scale_b128", 2, "scale, blocks of 128 (12.5%; 607 GB/s)", 29.8, 29.8, TEST, K_SCALE, run_scale<128>},
    {"scale_b256", 2, "scale, blocks of 256 (25%; 1037 GB/s)",
     50.9, 50.9, P_QUEUE_STORES, K_SCALE, run_scale<256>},
    {"scale_b512", 2, "scale, blocks of 512 (50%; 1583 GB/s)", 77.6, 77.6, TEST, K_SCALE, run_scale<512>},
    {"scale_b768", 2, "scale, blocks of 768 (75%; 1666 GB/s)", 81.7, 81.7, TEST, K_SCALE, run_scale<768>},
    {"scale_b1024", 2, "scale, blocks of 1024 (100%; 1704 GB/s)",
     83.6, 83.6, P_COPY, K_SCALE, run_scale<1024>},
    {"read_b32", 2, "s += b[i], blocks of 32 (3%; 96 GB/s)", 4.7, 4.7, P_LATENCY, K_READ, run_read<32>},
    {"read_b128", 2, "read, blocks of 128 (12.5%; 368 GB/s)", 18.0, 18.0, TEST, K_READ, run_read<128>},
    {"read_b256", 2, "read, blocks of 256 (25%; 702 GB/s)", 34.4, 34.4, P_QUEUE_LOADS, K_READ, run_read<256>},
    {"read_b512", 2, "read, blocks of 512 (50%; 1261 GB/s)", 61.8, 61.8, TEST, K_READ, run_read<512>},
    {"read_b768", 2, "read, blocks of 768 (75%; 1680 GB/s)", 82.4, 82.4, TEST, K_READ, run_read<768>},
    {"read_b1024", 2, "read, blocks of 1024 (100%; 1942 GB/s)",
     95.2, 95.2, P_ONE_WAY, K_READ, run_read<1024>},
};
enum { NROWS = sizeof rows / sizeof rows[0] };

#ifdef NDEMU
#define NDEMU_OR(emulator, gpu) emulator
#else
#define NDEMU_OR(emulator, gpu) gpu
#endif

#ifdef NDEMU
static double published_scale(const row &r)
{
    switch (r.k) {
    case K_COPY: return (double)((size_t)1 << 27) / kCopyBytes;
    case K_SCALE:
    case K_READ: return (double)(128ull << 20) / kStream;
    default: return 32768.0 / kN * (32768.0 / kN);
    }
}
#endif

/* Bytes of the input and output buffers row r uses here. */
static size_t row_bytes(const row &r)
{
    if (r.k == K_COPY) return kCopyBytes;
    if (r.k == K_SCALE || r.k == K_READ) return kStream * sizeof(double);
    return (size_t)kN * kN * sizeof(float);
}

/* Elements of out that differ from what row r must write. */
static size_t wrong(const row &r, const std::vector<unsigned char> &in, const std::vector<unsigned char> &out)
{
    size_t bad = 0;
    if (r.k == K_COPY) return (size_t)(memcmp(in.data(), out.data(), kCopyBytes) != 0);
    if (r.k == K_SCALE || r.k == K_READ) {
        const double *a = (const double *)out.data(), *b = (const double *)in.data();
        for (size_t i = 0; i < kStream; i++) bad += a[i] != (r.k == K_SCALE ? b[i] * 1.2 : 0.0);
        return bad;
    }
    const float *a = (const float *)out.data(), *b = (const float *)in.data();
    for (size_t y = 0; y < (size_t)kN; y++)
        for (size_t x = 0; x < (size_t)kN; x++) bad += a[y * kN + x] != b[x * kN + y];
    return bad;
}

/* Distance from v to the published range, in points (0 inside it). */
static double error(const row &r, double v) { return v < r.lo ? v - r.lo : v > r.hi ? v - r.hi : 0.0; }

static void published_text(const row &r, char *buf, size_t cap)
{
    if (r.lo == r.hi) snprintf(buf, cap, "%.1f", r.lo);
    else snprintf(buf, cap, "%.1f-%.1f", r.lo, r.hi);
}

#ifndef NDEMU
/* This GPU's nameplate DRAM bandwidth, GB/s: the measured figures are % of
 * it (the published ones, of the publication's GPU). */
static double nameplate_gbs(void)
{
    int dev = 0, bus = 0, clock = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev);
    cudaDeviceGetAttribute(&clock, cudaDevAttrMemoryClockRate, dev);
    return 2.0 * clock * 1e3 * (bus / 8) / 1e9;
}
#endif

static int fail(const char *what)
{
    fprintf(stderr, "model_validation: %s\n", what);
    return 1;
}

#ifdef NDEMU
/* Row i's profile, scaled to the published size by the model. */
static ndemu_launch_stats g_stats[NROWS];

static double model_row(int i, const ndemu_model_params &p, ndemu_estimate *est)
{
    const row &r = rows[i];
    ndemu_estimate e;
    if (!est) est = &e;
    if (ndemu_model_with(&g_stats[i], ndemu_gpu_get(sources[r.source].gpu_index), published_scale(r), &p, est) != 0)
        return NAN;
    return est->percent_of_dram;
}

/* Fit each parameter to its row (the middle of the published figure), the
 * others held, until none moves: the parameters model.cpp must hold. */
static ndemu_model_params fit(void)
{
    ndemu_model_params p = *ndemu_model_defaults();
    for (int sweep = 0; sweep < 50; sweep++) {
        double moved = 0;
        for (int i = 0; i < NROWS; i++) {
            if (rows[i].fit == TEST) continue;
            const param &q = params[rows[i].fit];
            double target = (rows[i].lo + rows[i].hi) / 2, lo = q.lo, hi = q.hi, was = p.*q.field;
            /* the figure rises with the efficiencies and L2's rate, falls
             * with the latency terms */
            bool rises = rows[i].fit == P_ONE_WAY || rows[i].fit == P_COPY || rows[i].fit == P_L2;
            for (int k = 0; k < 60; k++) {
                p.*q.field = (lo + hi) / 2;
                if ((model_row(i, p, nullptr) < target) == rises) lo = p.*q.field;
                else hi = p.*q.field;
            }
            moved = fmax(moved, fabs(p.*q.field - was) / fabs(was));
        }
        if (moved < 1e-6) break;
    }
    return p;
}

struct summary {
    int n[2];
    double max_abs[2], sum_abs[2];
    int pairs, misordered, tied;
};

/* The criteria on the out-of-sample rows: within 10 points, and for each
 * source, every pair of rows published more than 5 points apart modelled
 * in the same order.  Prints each failure; returns their number. */
static int judge(const double *modelled, summary *sum)
{
    int failed = 0;
    memset(sum, 0, sizeof *sum);
    for (int i = 0; i < NROWS; i++) {
        const row &r = rows[i];
        int set = r.fit == TEST ? 1 : 0;
        double e = fabs(error(r, modelled[i]));
        sum->n[set]++;
        sum->sum_abs[set] += e;
        if (e > sum->max_abs[set]) sum->max_abs[set] = e;
        if (r.fit != TEST) continue;
        if (e > 10) {
            fprintf(stderr, "%s (%s): modelled %.1f%% is %.1f points from the published %.1f-%.1f%%\n", r.name,
                    sources[r.source].key, modelled[i], e, r.lo, r.hi);
            failed++;
        }
        for (int j = 0; j < i; j++) {
            const row &q = rows[j];
            if (q.fit != TEST || q.source != r.source) continue;
            bool above = r.lo > q.hi + 5, below = r.hi < q.lo - 5;
            if (!above && !below) continue;
            sum->pairs++;
            double d = modelled[i] - modelled[j];
            if (fabs(d) < 0.05) {
                sum->tied++; /* the same figure: not reversed, reported */
            } else if ((above && d < 0) || (below && d > 0)) {
                fprintf(stderr, "%s and %s (%s): published %.1f%% and %.1f%%, modelled %.1f%% and %.1f%%: "
                                "the order is reversed\n",
                        q.name, r.name, sources[r.source].key, q.lo, r.lo, modelled[j], modelled[i]);
                sum->misordered++;
                failed++;
            }
        }
    }
    return failed;
}

static int write_tables(const char *dir, const double *modelled, const summary &s, const ndemu_model_params &p)
{
    std::string tsv = std::string(dir) + "/model-validation.tsv", md = std::string(dir) + "/model-validation.md";
    FILE *t = fopen(tsv.c_str(), "w"), *m = fopen(md.c_str(), "w");
    if (!t || !m) return fail("cannot write the tables in the -o folder");
    fprintf(t, "# The performance model (grader/emu/model.cpp) against published measurements, written by\n"
               "# grader/emu/tests/model_validation.cu (make model-validation).  Percentages of the GPU's\n"
               "# nameplate DRAM bandwidth (H100 SXM: nameplate 3352 GB/s; H100 PCIe: 2039 GB/s),\n"
               "# (bytes read + written) / time.\n"
               "# set: the parameter fitted to the row (in sample), or test (out of sample: no parameter was).\n"
               "# error: modelled minus published, in points (0 inside a published range).  Sources:\n");
    for (const source &x : sources) fprintf(t, "# %s: %s\n", x.key, x.citation);
    fprintf(t, "row\tsource\tgpu\twhat\tpublished_percent\tmodelled_percent\terror_points\tset\n");
    fprintf(m, "The performance model (`grader/emu/model.cpp`) against published measurements, as %% of the "
               "GPU's nameplate DRAM bandwidth. Written by `make model-validation` "
               "(`grader/emu/tests/model_validation.cu`). A row marked with a parameter is in sample: that "
               "parameter was fitted to it, and `make model-validation` fits it again and requires "
               "`model.cpp` to hold the result. Rows marked **test** are out of sample: no parameter was fitted "
               "to them, and each must be within 10 points.\n\n");
    fprintf(m, "| | rows | largest error | mean error |\n|---|---|---|---|\n");
    const char *names[2] = {"in sample (fitted)", "out of sample (test)"};
    for (int k = 0; k < 2; k++)
        fprintf(m, "| %s | %d | %.1f points | %.1f points |\n", names[k], s.n[k], s.max_abs[k],
                s.n[k] ? s.sum_abs[k] / s.n[k] : 0.0);
    fprintf(m, "\nOrder: of %d pairs of out-of-sample rows of one source published more than 5 points apart, "
               "%d are modelled in the reverse order and %d at the same figure.\n\n",
            s.pairs, s.misordered, s.tied);
    fprintf(m, "The fitted parameters: ");
    for (int k = 0; k < NPARAMS; k++)
        fprintf(m, "%s`%s` %.4g", k ? ", " : "", param_names[k], p.*params[k].field);
    fprintf(m, ".\n\n| row | source | GPU | what | published | modelled | error | set |\n"
               "|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < NROWS; i++) {
        const row &r = rows[i];
        char pub[32];
        published_text(r, pub, sizeof pub);
        const char *set = r.fit == TEST ? "test" : param_names[r.fit];
        double e = error(r, modelled[i]);
        fprintf(t, "%s\t%s\t%s\t%s\t%s\t%.1f\t%+.1f\t%s\n", r.name, sources[r.source].key, sources[r.source].gpu,
                r.what, pub, modelled[i], e, set);
        fprintf(m, "| %s | %s | %s | %s | %s%% | %.1f%% | %+.1f | %s%s%s |\n", r.name, sources[r.source].key,
                sources[r.source].gpu, r.what, pub, modelled[i], e, r.fit == TEST ? "**" : "fit: `", set,
                r.fit == TEST ? "**" : "`");
    }
    fprintf(m, "\nSources:\n\n");
    for (const source &x : sources) fprintf(m, "- %s: %s\n", x.key, x.citation);
    fclose(t);
    fclose(m);
    printf("wrote %s and %s\n", tsv.c_str(), md.c_str());
    return 0;
}
#endif

int main(int argc, char **argv)
{
    const char *dir = nullptr;
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "-v")) verbose = true;
        else return fail("usage: model_validation [-o DIR] [-v]");
    }
    size_t most = 0;
    for (const row &r : rows) most = row_bytes(r) > most ? row_bytes(r) : most;
    std::vector<unsigned char> h(most), back(most);
    for (size_t i = 0; i < most / sizeof(float); i++) ((float *)h.data())[i] = (float)(i % 65521) + 0.25f;
    void *din, *dout;
    if (cudaMalloc(&din, most) != cudaSuccess || cudaMalloc(&dout, most) != cudaSuccess)
        return fail("cudaMalloc failed");
    if (cudaMemcpy(din, h.data(), most, cudaMemcpyHostToDevice) != cudaSuccess) return fail("cudaMemcpy failed");
    double figure[NROWS] = {0}; /* modelled, or measured on a GPU */
    int bad = 0;
#ifdef NDEMU
    bool model = ndemu_profile_enabled();
    if (!model) fprintf(stderr, "note: not the instrumented build: correctness only, no model\n");
#else
    if (verbose) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
            printf("measured on %s, nameplate %.0f GB/s\n", prop.name, nameplate_gbs());
    }
    if (dir) fprintf(stderr, "note: -o writes the model's tables; on a GPU this prints measured figures only\n");
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
#endif
    for (int v = 0; v < NROWS; v++) {
        const row &r = rows[v];
        size_t bytes = row_bytes(r);
        cudaMemset(dout, 0, bytes); /* a stale result cannot pass */
        r.run(din, dout);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            fprintf(stderr, "%s: %s\n", r.name, cudaGetErrorString(e));
            return 1;
        }
        cudaMemcpy(back.data(), dout, bytes, cudaMemcpyDeviceToHost);
        size_t w = wrong(r, h, back);
        if (w) {
            fprintf(stderr, "%s: %zu elements wrong\n", r.name, w);
            bad++;
        }
#ifdef NDEMU
        const ndemu_gpu *gpu = ndemu_gpu_get(sources[r.source].gpu_index);
        if (model) {
            ndemu_launch_stats &s = g_stats[v];
            if (ndemu_launch_get(-1, &s) != 0) return fail("no profile recorded");
            if (r.k == K_SCALE || r.k == K_READ) /* the benchmark's two blocks per SM */
                s.shared_dynamic = (uint64_t)gpu->shared_kb_sm * 1024 / 2 - 1024 - s.shared_static;
        }
#else
        /* on a GPU: the same kernel, timed; the published sizes are larger,
         * so these figures include more launch cost */
        cudaEventRecord(e0);
        const int reps = 20;
        for (int k = 0; k < reps; k++) r.run(din, dout);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        double moved = (r.k == K_READ ? 1.0 : 2.0) * (double)bytes * reps;
        figure[v] = 100.0 * moved / (ms * 1e-3) / 1e9 / nameplate_gbs();
#endif
    }
    cudaFree(din);
    cudaFree(dout);
    if (bad) return fail("a kernel gave a wrong result");
    int failed = 0;
#ifdef NDEMU
    if (!model) return 0;
    /* the parameters again, from the fit rows: model.cpp must hold them */
    ndemu_model_params fitted = fit();
    const ndemu_model_params &used = *ndemu_model_defaults();
    for (int k = 0; k < NPARAMS; k++) {
        double a = used.*params[k].field, b = fitted.*params[k].field;
        if (fabs(a - b) > 0.005 * fabs(b)) {
            fprintf(stderr, "model.cpp's %s is %.4g; its fit row gives %.4g: update model.cpp\n", param_names[k], a,
                    b);
            failed++;
        }
    }
    for (int v = 0; v < NROWS; v++) {
        ndemu_estimate est;
        figure[v] = model_row(v, used, &est);
        if (verbose) {
            const ndemu_launch_stats &s = g_stats[v];
            printf("    %s: %d threads/SM (%s), %.1f B in flight per thread, bound by %s: dram %.3f ms, "
                   "latency %.3f + banks %.3f ms, l1 %.3f ms, l2 %.3f ms\n",
                   rows[v].name, est.resident_threads_sm, est.limited_by, s.load_bytes_in_flight, est.bound_by,
                   est.t_dram * 1e3, est.t_latency * 1e3, est.t_bank_conflicts * 1e3, est.t_l1 * 1e3,
                   est.t_l2_extra * 1e3);
        }
    }
#endif
    printf("%-18s %-3s %-9s %12s %9s %6s %s\n", "row", "src", "gpu", "published", NDEMU_OR("modelled", "measured"),
           "error", "set");
    for (int v = 0; v < NROWS; v++) {
        const row &r = rows[v];
        char pub[32];
        published_text(r, pub, sizeof pub);
        printf("%-18s %-3s %-9s %11s%% %8.1f%% %+6.1f %s\n", r.name, sources[r.source].key, sources[r.source].gpu,
               pub, figure[v], error(r, figure[v]), r.fit == TEST ? "test" : param_names[r.fit]);
    }
#ifdef NDEMU
    summary s;
    failed += judge(figure, &s);
    printf("in sample: %d rows, largest error %.1f points; out of sample: %d rows, largest error %.1f points, "
           "mean %.1f; of %d pairs, %d reversed, %d tied\n",
           s.n[0], s.max_abs[0], s.n[1], s.max_abs[1], s.n[1] ? s.sum_abs[1] / s.n[1] : 0.0, s.pairs,
           s.misordered, s.tied);
    if (dir && write_tables(dir, figure, s, fitted) != 0) return 1;
    if (failed) return fail("the model does not meet the validation criteria");
    printf("model.cpp holds the fitted parameters; every out-of-sample row is within 10 points, none reversed\n");
#endif
    return failed ? 1 : 0;
}
