/*
 * bench_gpu.cu -- GPU benchmarks for lesson 6, laid out like bench_cpu.c
 * (and llm.c's dev/cuda files).  It needs a real GPU: on the emulator the
 * figures would mean nothing, and `make bench` runs it only with one.
 *
 *   bench_gpu [-o results.tsv] [-f FILTER] [-q]
 *
 * Every case is checked against a reference first, then warmed up and
 * timed with CUDA events; the median of the repeats is reported, with its
 * ratio to a baseline measured in the same run:
 *   copy      a 16-byte-per-thread copy kernel (uint4 loads and stores),
 *             the bandwidth every memory-bound case is held against
 *   compact   nd_compact of a transposed (8192,8192) and of a (0,2,1,3)
 *             permute of (64,64,128,128) -- with the output's cudaMalloc,
 *             as a user pays it -- and nd_setitem of the transposed view
 *             into an existing array (the gather kernel alone)
 *   ewise     nd_binary_into(ND_ADD) of two compact (8192,8192) arrays
 *   reduce    sum over the last axis of (8192,8192)
 *   matmul    nd_matmul and nd_matmul_naive at 4096^3 against cuBLAS's
 *             cublasSgemm (GFLOP/s)
 * Arrays are 256 MB, so that the GPU's L2 cache (50 MB on an H100) does
 * not flatter any of them.  Bandwidth counts bytes read plus bytes
 * written, in decimal GB/s.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>
#include <algorithm>

#include "nd.h"

#define WARMUP 2
#define REPEATS 10

static FILE *tsv;
static bool quiet;
static const char *filter;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench_gpu: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void must(nd_status s, const char *what)
{
    if (s != ND_OK)
        die("%s: %s", what, nd_last_error());
}

static void cuda_must(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        die("%s: %s", what, cudaGetErrorString(e));
}

/* Median milliseconds of fn(ctx) over REPEATS runs, after WARMUP runs. */
template <typename F>
static double time_ms(F fn)
{
    cudaEvent_t start, stop;
    cuda_must(cudaEventCreate(&start), "cudaEventCreate");
    cuda_must(cudaEventCreate(&stop), "cudaEventCreate");
    for (int i = 0; i < WARMUP; i++)
        fn();
    std::vector<float> ms(REPEATS);
    for (int i = 0; i < REPEATS; i++) {
        cuda_must(cudaEventRecord(start), "cudaEventRecord");
        fn();
        cuda_must(cudaEventRecord(stop), "cudaEventRecord");
        cuda_must(cudaEventSynchronize(stop), "cudaEventSynchronize");
        cuda_must(cudaEventElapsedTime(&ms[i], start, stop), "cudaEventElapsedTime");
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return ms[REPEATS / 2];
}

static bool wanted(const char *group)
{
    return filter == NULL || strstr(group, filter) != NULL;
}

/* One line of the table and of the TSV. */
static void report(const char *group, const char *name, const char *shape, double ms,
                   double rate, const char *unit, double ratio, const char *baseline,
                   double target)
{
    const char *verdict = target <= 0 ? "-" : ratio >= target ? "met" : "MISSED";
    if (!quiet)
        printf("%-8s %-34s %-20s %9.3f ms %9.1f %-7s %6.1f%% of %-14s %s\n", group, name,
               shape, ms, rate, unit, 100 * ratio, baseline, verdict);
    if (tsv)
        fprintf(tsv, "%s\t%s\t%s\t%.6g\t%.6g\t%s\t%.4f\t%s\t%.2f\t%s\n", group, name, shape,
                ms / 1e3, rate, unit, ratio, baseline, target, verdict);
}

/* ---------------------------------------------------------------------- */
/* The baseline: a copy kernel moving 16 bytes per thread                 */
/* ---------------------------------------------------------------------- */

static __global__ void copy16(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i];
}

static double copy_gbps;   /* set by bench_copy */

static void bench_copy(size_t bytes)
{
    void *src, *dst;
    cuda_must(cudaMalloc(&src, bytes), "cudaMalloc");
    cuda_must(cudaMalloc(&dst, bytes), "cudaMalloc");
    cuda_must(cudaMemset(src, 1, bytes), "cudaMemset");
    size_t n = bytes / 16;
    int sms = 0;
    cuda_must(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
    double ms = time_ms([&] {
        copy16<<<sms * 8, 256>>>((const uint4 *)src, (uint4 *)dst, n);
        cuda_must(cudaGetLastError(), "copy16");
    });
    copy_gbps = 2.0 * (double)bytes / (ms * 1e6);
    char shape[40];
    snprintf(shape, sizeof shape, "%zu MB", bytes >> 20);
    report("copy", "copy kernel, 16 B per thread", shape, ms, copy_gbps, "GB/s", 1.0,
           "itself", 0);
    cudaFree(src);
    cudaFree(dst);
}

/* ---------------------------------------------------------------------- */
/* Memory-bound cases, against the copy kernel                            */
/* ---------------------------------------------------------------------- */

/* A random array of `shape` on the GPU, and its host copy. */
static nd_array random_array(int ndim, const int64_t *shape, std::vector<float> &host)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    host.resize((size_t)n);
    uint64_t s = 12345;
    for (auto &x : host) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        x = (float)((s >> 40) & 0xffff) / 65536.0f - 0.5f;
    }
    nd_array a;
    must(nd_from_host(ND_CUDA, ndim, shape, host.data(), &a), "nd_from_host");
    return a;
}

static void check_equal(const nd_array *got, const std::vector<float> &want, double rtol,
                        const char *what)
{
    std::vector<float> h(want.size());
    must(nd_to_host(got, h.data(), h.size()), "nd_to_host");
    for (size_t i = 0; i < want.size(); i++)
        if (fabs((double)h[i] - want[i]) > rtol * (fabs((double)want[i]) + 1e-3))
            die("%s: element %zu is %g, want %g", what, i, (double)h[i], (double)want[i]);
}

static void bench_compact(void)
{
    const int64_t n = 8192;
    int64_t shape[2] = { n, n };
    std::vector<float> host;
    nd_array a = random_array(2, shape, host), t, out;
    int perm[2] = { 1, 0 };
    must(nd_permute(&a, perm, &t), "nd_permute");
    std::vector<float> want((size_t)(n * n));
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            want[(size_t)(i * n + j)] = host[(size_t)(j * n + i)];
    must(nd_compact(&t, &out), "nd_compact");
    check_equal(&out, want, 0, "nd_compact of a transpose");
    nd_release(&out);
    double bytes = 2.0 * (double)(n * n) * sizeof(float);
    double ms = time_ms([&] {
        must(nd_compact(&t, &out), "nd_compact");
        nd_release(&out);
    });
    report("compact", "nd_compact, transpose (1,0)", "(8192,8192)", ms, bytes / (ms * 1e6),
           "GB/s", bytes / (ms * 1e6) / copy_gbps, "copy kernel", 0);
    nd_array dst;
    must(nd_empty(ND_CUDA, 2, shape, &dst), "nd_empty");
    must(nd_setitem(&dst, &t), "nd_setitem");
    check_equal(&dst, want, 0, "nd_setitem of a transpose");
    ms = time_ms([&] { must(nd_setitem(&dst, &t), "nd_setitem"); });
    report("compact", "nd_setitem from a transpose", "(8192,8192)", ms, bytes / (ms * 1e6),
           "GB/s", bytes / (ms * 1e6) / copy_gbps, "copy kernel", 0);
    nd_release(&dst);
    nd_release(&t);
    nd_release(&a);

    int64_t shape4[4] = { 64, 64, 128, 128 };
    nd_array b = random_array(4, shape4, host), p;
    int perm4[4] = { 0, 2, 1, 3 };
    must(nd_permute(&b, perm4, &p), "nd_permute");
    ms = time_ms([&] {
        must(nd_compact(&p, &out), "nd_compact");
        nd_release(&out);
    });
    report("compact", "nd_compact, permute (0,2,1,3)", "(64,64,128,128)", ms,
           bytes / (ms * 1e6), "GB/s", bytes / (ms * 1e6) / copy_gbps, "copy kernel", 0);
    nd_release(&p);
    nd_release(&b);
}

static void bench_ewise_reduce(void)
{
    const int64_t n = 8192;
    int64_t shape[2] = { n, n };
    std::vector<float> ha, hb;
    nd_array a = random_array(2, shape, ha), b = random_array(2, shape, hb), c, s;
    for (size_t i = 0; i < hb.size(); i++)
        hb[i] = ha[(i * 7919) % ha.size()];
    nd_release(&b);
    must(nd_from_host(ND_CUDA, 2, shape, hb.data(), &b), "nd_from_host");
    must(nd_empty(ND_CUDA, 2, shape, &c), "nd_empty");
    if (wanted("ewise")) {
        must(nd_binary_into(ND_ADD, &a, &b, &c), "nd_binary_into");
        std::vector<float> want(ha.size());
        for (size_t i = 0; i < want.size(); i++)
            want[i] = ha[i] + hb[i];
        check_equal(&c, want, 0, "nd_binary_into(ND_ADD)");
        double ms = time_ms([&] { must(nd_binary_into(ND_ADD, &a, &b, &c), "add"); });
        double bytes = 3.0 * (double)(n * n) * sizeof(float);
        report("ewise", "add, compact", "(8192,8192)", ms, bytes / (ms * 1e6), "GB/s",
               bytes / (ms * 1e6) / copy_gbps, "copy kernel", 0.80);
    }
    if (wanted("reduce")) {
        int axis = 1;
        must(nd_reduce(ND_SUM, &a, 1, &axis, false, &s), "nd_reduce");
        std::vector<float> want((size_t)n);
        for (int64_t i = 0; i < n; i++) {
            double t = 0;
            for (int64_t j = 0; j < n; j++)
                t += ha[(size_t)(i * n + j)];
            want[(size_t)i] = (float)t;
        }
        check_equal(&s, want, 1e-4, "nd_reduce(ND_SUM) over the last axis");
        nd_release(&s);
        double ms = time_ms([&] {
            must(nd_reduce(ND_SUM, &a, 1, &axis, false, &s), "nd_reduce");
            nd_release(&s);
        });
        double bytes = (double)(n * n + n) * sizeof(float);
        report("reduce", "sum over the last axis", "(8192,8192)", ms, bytes / (ms * 1e6),
               "GB/s", bytes / (ms * 1e6) / copy_gbps, "copy kernel", 0.80);
    }
    nd_release(&a);
    nd_release(&b);
    nd_release(&c);
}

/* ---------------------------------------------------------------------- */
/* Matmul, against cuBLAS                                                 */
/* ---------------------------------------------------------------------- */

static void bench_matmul(int64_t n)
{
    int64_t shape[2] = { n, n };
    std::vector<float> ha, hb;
    nd_array a = random_array(2, shape, ha), b = random_array(2, shape, hb), c;
    float *pa = (float *)a.buf->ptr, *pb = (float *)b.buf->ptr, *pc;
    cuda_must(cudaMalloc(&pc, (size_t)(n * n) * sizeof(float)), "cudaMalloc");
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        die("cublasCreate failed");
    /* Row-major C = A B is column-major C^T = B^T A^T: swap the operands. */
    const float one = 1.0f, zero = 0.0f;
    auto sgemm = [&] {
        if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, pb, (int)n,
                        pa, (int)n, &zero, pc, (int)n) != CUBLAS_STATUS_SUCCESS)
            die("cublasSgemm failed");
    };
    sgemm();
    cuda_must(cudaDeviceSynchronize(), "cublasSgemm");
    std::vector<float> want((size_t)(n * n));
    cuda_must(cudaMemcpy(want.data(), pc, want.size() * sizeof(float), cudaMemcpyDeviceToHost),
              "cudaMemcpy");
    double flop = 2.0 * (double)n * (double)n * (double)n;
    double ms_blas = time_ms(sgemm);
    double blas = flop / (ms_blas * 1e6);
    char shape_s[40];
    snprintf(shape_s, sizeof shape_s, "%lld^3", (long long)n);
    report("matmul", "cublasSgemm", shape_s, ms_blas, blas, "GFLOP/s", 1.0, "itself", 0);
    for (int tiled = 1; tiled >= 0; tiled--) {
        must(tiled ? nd_matmul(&a, &b, &c) : nd_matmul_naive(&a, &b, &c), "nd_matmul");
        check_equal(&c, want, 1e-3, tiled ? "nd_matmul" : "nd_matmul_naive");
        nd_release(&c);
        double ms = time_ms([&] {
            must(tiled ? nd_matmul(&a, &b, &c) : nd_matmul_naive(&a, &b, &c), "nd_matmul");
            nd_release(&c);
        });
        double rate = flop / (ms * 1e6);
        report("matmul", tiled ? "nd_matmul (tiled)" : "nd_matmul_naive", shape_s, ms, rate,
               "GFLOP/s", rate / blas, "cublasSgemm", tiled ? 0.50 : 0);
    }
    cublasDestroy(h);
    cudaFree(pc);
    nd_release(&a);
    nd_release(&b);
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "o:f:q")) != -1) {
        switch (opt) {
        case 'o': out = optarg; break;
        case 'f': filter = optarg; break;
        case 'q': quiet = true; break;
        default:
            fprintf(stderr, "usage: bench_gpu [-o results.tsv] [-f FILTER] [-q]\n");
            return 2;
        }
    }
    const char *name = NULL;
    must(nd_device_available(ND_CUDA, &name), "the CUDA device");
#ifdef NDEMU
    die("built for the emulator: GPU figures need a real GPU (make bench CUDA=gpu)");
#endif
    if (out != NULL && (tsv = fopen(out, "w")) == NULL)
        die("cannot write %s", out);
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    time_t t = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
    if (tsv)
        fprintf(tsv, "# gpu: %s\n# date: %s\n# cuda runtime: %d.%d\n"
                "group\tcase\tshape\tseconds\trate\tunit\tratio\tbaseline\ttarget\tverdict\n",
                name, date, rt / 1000, rt % 1000 / 10);
    if (!quiet)
        printf("GPU: %s, CUDA runtime %d.%d\n", name, rt / 1000, rt % 1000 / 10);
    bench_copy((size_t)256 << 20);
    if (wanted("compact"))
        bench_compact();
    if (wanted("ewise") || wanted("reduce"))
        bench_ewise_reduce();
    if (wanted("matmul"))
        bench_matmul(4096);
    if (tsv)
        fclose(tsv);
    return 0;
}
