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

#include "bench_gpu.h"
#include "nd.h"

#define REPEATS 10

static const char *filter;

static void must(nd_status s, const char *what)
{
    if (s != ND_OK)
        die("%s: %s", what, nd_last_error());
}

static bool wanted(const char *group)
{
    return filter == NULL || strstr(group, filter) != NULL;
}

/* ---------------------------------------------------------------------- */
/* The baseline: the copy kernel of bench_gpu.h, 16 bytes per thread      */
/* ---------------------------------------------------------------------- */

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
    double ms = time_ms(REPEATS, [&] {
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
    double ms = time_ms(REPEATS, [&] {
        must(nd_compact(&t, &out), "nd_compact");
        nd_release(&out);
    });
    report("compact", "nd_compact, transpose (1,0)", "(8192,8192)", ms, bytes / (ms * 1e6),
           "GB/s", bytes / (ms * 1e6) / copy_gbps, "copy kernel", 0);
    nd_array dst;
    must(nd_empty(ND_CUDA, 2, shape, &dst), "nd_empty");
    must(nd_setitem(&dst, &t), "nd_setitem");
    check_equal(&dst, want, 0, "nd_setitem of a transpose");
    ms = time_ms(REPEATS, [&] { must(nd_setitem(&dst, &t), "nd_setitem"); });
    report("compact", "nd_setitem from a transpose", "(8192,8192)", ms, bytes / (ms * 1e6),
           "GB/s", bytes / (ms * 1e6) / copy_gbps, "copy kernel", 0);
    nd_release(&dst);
    nd_release(&t);
    nd_release(&a);

    int64_t shape4[4] = { 64, 64, 128, 128 };
    nd_array b = random_array(4, shape4, host), p;
    int perm4[4] = { 0, 2, 1, 3 };
    must(nd_permute(&b, perm4, &p), "nd_permute");
    ms = time_ms(REPEATS, [&] {
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
        double ms = time_ms(REPEATS, [&] { must(nd_binary_into(ND_ADD, &a, &b, &c), "add"); });
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
        double ms = time_ms(REPEATS, [&] {
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
    double ms_blas = time_ms(REPEATS, sgemm);
    double blas = flop / (ms_blas * 1e6);
    char shape_s[40];
    snprintf(shape_s, sizeof shape_s, "%lld^3", (long long)n);
    report("matmul", "cublasSgemm", shape_s, ms_blas, blas, "GFLOP/s", 1.0, "itself", 0);
    for (int tiled = 1; tiled >= 0; tiled--) {
        must(tiled ? nd_matmul(&a, &b, &c) : nd_matmul_naive(&a, &b, &c), "nd_matmul");
        check_equal(&c, want, 1e-3, tiled ? "nd_matmul" : "nd_matmul_naive");
        nd_release(&c);
        double ms = time_ms(REPEATS, [&] {
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
    bench_name = "bench_gpu";
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
    write_header(name);
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
