/*
 * bench_gpu.cu -- GPU benchmarks for lesson 6, laid out like bench_cpu.c
 * (and llm.c's dev/cuda files).  It needs a real GPU: on the emulator the
 * figures would mean nothing, so a build for the emulator refuses to run.
 * `make bench` and `make gpu-report` run it on a GPU; `make cuda-check`
 * builds it everywhere.
 *
 *   bench_gpu [-o results.tsv] [-f FILTER] [-q]
 *
 * Every case is first checked against a reference computed on the host
 * (or by cuBLAS), then timed as bench_gpu.h says: the median of REPEATS
 * calls, the L2 flushed before each, with its ratio to a baseline measured
 * in the same run:
 *   copy      the 16-byte-per-thread copy kernel of bench_gpu.h, the
 *             bandwidth every memory-bound case is held against
 *   compact   nd_compact's device work (nd_cuda_compact, into an output
 *             allocated beforehand) on a transposed (S,S): for a
 *             permutation it takes lesson 7's kernels; and nd_setitem from
 *             the transpose and from a (0,2,1,3) permute of (S/64,64,S/16,
 *             16)... into a compact array: lesson 6's strided gather
 *   ewise     nd_binary_into(ND_ADD) of two compact (S,S) arrays
 *   reduce    nd_reduce's device work (nd_cuda_reduce, into an output
 *             allocated beforehand): the sum over the last axis of (S,S)
 *             (S outputs, one block each) and the sum of all S*S elements
 *             (one output, split over many blocks and a second pass)
 *   matmul    nd_matmul's and nd_matmul_naive's device work
 *             (nd_cuda_matmul, into an allocated c) at 4096^3 against
 *             cuBLAS's cublasSgemm (GFLOP/s)
 * No call that is timed allocates.  S is 16384 (arrays of 1 GiB, each
 * call long enough that the fixed cost of a launch is under 1% of it) on
 * a GPU with 24 GiB or more, else 8192; either way at least four times
 * the L2 cache.  Bandwidth counts bytes read plus bytes written, in
 * decimal GB/s (1e9 bytes per second).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "bench_gpu.h"
#include "internal.h"   /* nd_cuda_compact, nd_cuda_reduce, nd_cuda_matmul */
#include "nd.h"

#define REPEATS 10

static const char *filter;
static int64_t side;         /* S */
static double copy_gbps;     /* set by bench_copy */

static void must(nd_status s, const char *what)
{
    if (s != ND_OK)
        die("%s: %s", what, nd_last_error());
}

static bool wanted(const char *group)
{
    return filter == NULL || strstr(group, filter) != NULL;
}

/* "(a,b,...)", written into buf */
static const char *shape_str(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    int len = snprintf(buf, cap, "(");
    for (int k = 0; k < ndim; k++)
        len += snprintf(buf + len, cap - (size_t)len, "%s%lld", k ? "," : "", (long long)shape[k]);
    snprintf(buf + len, cap - (size_t)len, ")");
    return buf;
}

/* ---------------------------------------------------------------------- */
/* The baseline                                                           */
/* ---------------------------------------------------------------------- */

static void bench_copy(size_t bytes)
{
    void *src, *dst;
    cuda_must(cudaMalloc(&src, bytes), "cudaMalloc");
    cuda_must(cudaMalloc(&dst, bytes), "cudaMalloc");
    cuda_must(cudaMemset(src, 7, bytes), "cudaMemset");
    cuda_must(cudaMemset(dst, 0, bytes), "cudaMemset");
    time_copy(src, dst, bytes, 1);
    std::vector<unsigned char> h(bytes);
    cuda_must(cudaMemcpy(h.data(), dst, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (size_t i = 0; i < bytes; i++)
        if (h[i] != 7)
            die("the copy kernel: byte %zu is %d, want 7", i, h[i]);
    double ms = time_copy(src, dst, bytes, REPEATS);
    copy_gbps = 2.0 * (double)bytes / (ms * 1e6);
    char shape[40];
    snprintf(shape, sizeof shape, "%zu MiB", bytes >> 20);
    report("copy", "copy kernel, 16 B per thread", shape, ms, copy_gbps, "GB/s", 1.0, "itself", 0);
    cudaFree(src);
    cudaFree(dst);
}

/* ---------------------------------------------------------------------- */
/* Memory-bound cases, against the copy kernel                            */
/* ---------------------------------------------------------------------- */

/* A random array of `shape` on the GPU, and its host copy. */
static nd_array random_array(int ndim, const int64_t *shape, std::vector<float> &host,
                             uint64_t seed)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    host.resize((size_t)n);
    uint64_t s = seed;
    for (auto &x : host) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        x = (float)((s >> 40) & 0xffff) / 65536.0f - 0.5f;
    }
    nd_array a;
    must(nd_from_host(ND_CUDA, ndim, shape, host.data(), &a), "nd_from_host");
    return a;
}

/* The output, poisoned (all bytes 0xff: NaN) so that an unwritten element
 * shows. */
static nd_array poisoned(int ndim, const int64_t *shape)
{
    nd_array out;
    must(nd_empty(ND_CUDA, ndim, shape, &out), "nd_empty");
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    cuda_must(cudaMemset(out.buf->ptr, 0xff, (size_t)n * sizeof(float)), "cudaMemset");
    return out;
}

/* Every element within atol + rtol |want| (NaN never is); else stop. */
static void check_close(const nd_array *got, const std::vector<float> &want, double rtol,
                        double atol, const char *what)
{
    std::vector<float> h(want.size());
    must(nd_to_host(got, h.data(), h.size()), "nd_to_host");
    for (size_t i = 0; i < want.size(); i++)
        if (!(fabs((double)h[i] - want[i]) <= atol + rtol * fabs((double)want[i])))
            die("%s: element %zu is %g, want %g; not timed", what, i, (double)h[i],
                (double)want[i]);
}

/* The error a careful float sum of terms with sum |x| = abs may have:
 * 32 roundings of that size (u = 2^-24), as lesson 4's tests allow. */
static double sum_tolerance(double abs) { return 32 * abs / 16777216.0; }

static void report_gbps(const char *group, const char *name, const char *shape, double ms,
                        double bytes, double target)
{
    double gbps = bytes / (ms * 1e6);
    report(group, name, shape, ms, gbps, "GB/s", gbps / copy_gbps, "copy kernel", target);
}

static void bench_compact(void)
{
    int64_t shape[2] = { side, side }, n = side * side;
    char s[64];
    std::vector<float> host;
    nd_array a = random_array(2, shape, host, 1), t, out = poisoned(2, shape);
    int perm[2] = { 1, 0 };
    must(nd_permute(&a, perm, &t), "nd_permute");
    std::vector<float> want((size_t)n);
    for (int64_t i = 0; i < side; i++)
        for (int64_t j = 0; j < side; j++)
            want[(size_t)(i * side + j)] = host[(size_t)(j * side + i)];
    double bytes = 2.0 * (double)n * sizeof(float);
    shape_str(s, sizeof s, 2, shape);

    must(nd_cuda_compact(&t, &out), "nd_cuda_compact");
    check_close(&out, want, 0, 0, "nd_compact of a transpose");
    double ms = time_ms(REPEATS, [&] { must(nd_cuda_compact(&t, &out), "nd_cuda_compact"); });
    report_gbps("compact", "nd_compact, transpose (1,0)", s, ms, bytes, 0);

    nd_release(&out);
    out = poisoned(2, shape);
    must(nd_setitem(&out, &t), "nd_setitem");
    check_close(&out, want, 0, 0, "nd_setitem from a transpose");
    ms = time_ms(REPEATS, [&] { must(nd_setitem(&out, &t), "nd_setitem"); });
    report_gbps("compact", "nd_setitem from a transpose (1,0)", s, ms, bytes, 0);

    /* (0,2,1,3) of (S/64, 64, S/16, 16): the same n elements */
    int64_t shape4[4] = { side / 64, 64, side / 16, 16 }, pshape[4];
    int perm4[4] = { 0, 2, 1, 3 };
    nd_array p;
    must(nd_reshape(&a, 4, shape4, &p), "nd_reshape");
    nd_array q;
    must(nd_permute(&p, perm4, &q), "nd_permute");
    for (int k = 0; k < 4; k++)
        pshape[k] = shape4[perm4[k]];
    int64_t st[4] = { shape4[1] * shape4[2] * shape4[3], shape4[2] * shape4[3], shape4[3], 1 };
    int64_t idx = 0;
    for (int64_t i0 = 0; i0 < pshape[0]; i0++)
        for (int64_t i1 = 0; i1 < pshape[1]; i1++)
            for (int64_t i2 = 0; i2 < pshape[2]; i2++)
                for (int64_t i3 = 0; i3 < pshape[3]; i3++)
                    want[(size_t)idx++] = host[(size_t)(i0 * st[0] + i1 * st[2] + i2 * st[1] +
                                                        i3 * st[3])];
    nd_release(&out);
    out = poisoned(4, pshape);
    must(nd_setitem(&out, &q), "nd_setitem");
    check_close(&out, want, 0, 0, "nd_setitem from a (0,2,1,3) permute");
    ms = time_ms(REPEATS, [&] { must(nd_setitem(&out, &q), "nd_setitem"); });
    char name[80];
    snprintf(name, sizeof name, "nd_setitem from (0,2,1,3) of %s",
             shape_str(s, sizeof s, 4, shape4));
    report_gbps("compact", name, shape_str(s, sizeof s, 4, pshape), ms, bytes, 0);
    nd_release(&out);
    nd_release(&q);
    nd_release(&p);
    nd_release(&t);
    nd_release(&a);
}

static void bench_ewise(void)
{
    int64_t shape[2] = { side, side }, n = side * side;
    char s[64];
    std::vector<float> ha, hb;
    nd_array a = random_array(2, shape, ha, 2), b = random_array(2, shape, hb, 3),
             c = poisoned(2, shape);
    must(nd_binary_into(ND_ADD, &a, &b, &c), "nd_binary_into");
    std::vector<float> want((size_t)n);
    for (size_t i = 0; i < want.size(); i++)
        want[i] = ha[i] + hb[i];
    check_close(&c, want, 0, 0, "nd_binary_into(ND_ADD)");
    double ms = time_ms(REPEATS, [&] { must(nd_binary_into(ND_ADD, &a, &b, &c), "add"); });
    report_gbps("ewise", "add, compact", shape_str(s, sizeof s, 2, shape), ms,
                3.0 * (double)n * sizeof(float), 0.80);
    nd_release(&a);
    nd_release(&b);
    nd_release(&c);
}

static void bench_reduce(void)
{
    int64_t shape[2] = { side, side }, n = side * side, one = 1;
    char s[64];
    std::vector<float> ha;
    nd_array a = random_array(2, shape, ha, 4), rows = poisoned(1, &side), all = poisoned(1, &one);
    /* the sum over the last axis: side outputs */
    must(nd_cuda_reduce(ND_SUM, &a, 1, &rows), "nd_cuda_reduce");
    std::vector<float> want((size_t)side);
    double total = 0, abs_row = 0, abs_all = 0;
    for (int64_t i = 0; i < side; i++) {
        double t = 0, m = 0;
        for (int64_t j = 0; j < side; j++) {
            t += ha[(size_t)(i * side + j)];
            m += fabs(ha[(size_t)(i * side + j)]);
        }
        want[(size_t)i] = (float)t;
        total += t;
        abs_row = std::max(abs_row, m);
        abs_all += m;
    }
    check_close(&rows, want, 0, sum_tolerance(abs_row), "nd_reduce(ND_SUM) over the last axis");
    double ms = time_ms(REPEATS, [&] { must(nd_cuda_reduce(ND_SUM, &a, 1, &rows), "reduce"); });
    report_gbps("reduce", "sum over the last axis", shape_str(s, sizeof s, 2, shape), ms,
                (double)(n + side) * sizeof(float), 0.80);
    /* the sum of everything: one output */
    must(nd_cuda_reduce(ND_SUM, &a, 0, &all), "nd_cuda_reduce");
    std::vector<float> want1(1, (float)total);
    check_close(&all, want1, 0, sum_tolerance(abs_all), "nd_reduce(ND_SUM) over every axis");
    ms = time_ms(REPEATS, [&] { must(nd_cuda_reduce(ND_SUM, &a, 0, &all), "reduce"); });
    report_gbps("reduce", "sum of all elements", shape_str(s, sizeof s, 2, shape), ms,
                (double)(n + 1) * sizeof(float), 0.80);
    nd_release(&a);
    nd_release(&rows);
    nd_release(&all);
}

/* ---------------------------------------------------------------------- */
/* Matmul, against cuBLAS                                                 */
/* ---------------------------------------------------------------------- */

static void bench_matmul(int64_t n)
{
    int64_t shape[2] = { n, n };
    std::vector<float> ha, hb;
    nd_array a = random_array(2, shape, ha, 5), b = random_array(2, shape, hb, 6),
             c = poisoned(2, shape);
    float *pa = (float *)a.buf->ptr, *pb = (float *)b.buf->ptr, *pc;
    cuda_must(cudaMalloc(&pc, (size_t)(n * n) * sizeof(float)), "cudaMalloc");
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        die("cublasCreate failed");
    /* Plain fp32 arithmetic, as the kernels do (no TF32 tensor cores). */
    if (cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS)
        die("cublasSetMathMode failed");
    /* Row-major C = A B is column-major C^T = B^T A^T: swap the operands. */
    const float one = 1.0f, zero = 0.0f;
    auto sgemm = [&] {
        if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, pb, (int)n,
                        pa, (int)n, &zero, pc, (int)n) != CUBLAS_STATUS_SUCCESS)
            die("cublasSgemm failed");
        cuda_must(cudaDeviceSynchronize(), "cublasSgemm");
    };
    sgemm();
    std::vector<float> want((size_t)(n * n));
    cuda_must(cudaMemcpy(want.data(), pc, want.size() * sizeof(float), cudaMemcpyDeviceToHost),
              "cudaMemcpy");
    /* cuBLAS itself, at a sample of positions, against the host in double */
    for (int64_t i = 0; i < n; i += n / 16 + 1)
        for (int64_t j = 0; j < n; j += n / 16 + 3) {
            double t = 0;
            for (int64_t p = 0; p < n; p++)
                t += (double)ha[(size_t)(i * n + p)] * hb[(size_t)(p * n + j)];
            if (fabs(t - want[(size_t)(i * n + j)]) > 1e-3 * (fabs(t) + 1))
                die("cublasSgemm: c[%lld][%lld] is %g, want %g", (long long)i, (long long)j,
                    (double)want[(size_t)(i * n + j)], t);
        }
    double flop = 2.0 * (double)n * (double)n * (double)n;
    double ms_blas = time_ms(REPEATS, sgemm);
    double blas = flop / (ms_blas * 1e6);
    char shape_s[40];
    snprintf(shape_s, sizeof shape_s, "%lld^3", (long long)n);
    report("matmul", "cublasSgemm (fp32, no TF32)", shape_s, ms_blas, blas, "GFLOP/s", 1.0,
           "itself", 0);
    for (int tiled = 1; tiled >= 0; tiled--) {
        const char *what = tiled ? "nd_matmul (tiled)" : "nd_matmul_naive";
        cuda_must(cudaMemset(c.buf->ptr, 0xff, (size_t)(n * n) * sizeof(float)), "cudaMemset");
        must(nd_cuda_matmul(&a, &b, &c, tiled), what);
        check_close(&c, want, 0, sum_tolerance(0.25 * (double)n), what);
        double ms = time_ms(REPEATS, [&] { must(nd_cuda_matmul(&a, &b, &c, tiled), what); });
        double rate = flop / (ms * 1e6);
        report("matmul", what, shape_s, ms, rate, "GFLOP/s", rate / blas, "cublasSgemm",
               tiled ? 0.50 : 0);
    }
    cublasDestroy(h);
    cudaFree(pc);
    nd_release(&a);
    nd_release(&b);
    nd_release(&c);
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
    gpu_init(name);
    side = gpu.memory >= ((size_t)24 << 30) ? 16384 : 8192;
    while ((double)side * side * sizeof(float) < 4.0 * gpu.l2)
        side += 1024;
    write_header();
    if (!quiet)
        printf("S = %lld: arrays of %.2f GiB, %.1f times the L2\n", (long long)side,
               side * side * 4.0 / (1 << 30), side * side * 4.0 / gpu.l2);
    bench_copy((size_t)(side * side) * sizeof(float));
    if (wanted("compact"))
        bench_compact();
    if (wanted("ewise"))
        bench_ewise();
    if (wanted("reduce"))
        bench_reduce();
    if (wanted("matmul"))
        bench_matmul(4096);
    if (tsv)
        fclose(tsv);
    return 0;
}
