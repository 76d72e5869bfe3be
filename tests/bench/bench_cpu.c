/*
 * bench_cpu.c -- CPU benchmarks for lessons 2 to 5, laid out like llm.c's
 * dev/cuda files.  Every case is first checked against a reference, then
 * warmed up and timed several times; the median is reported (a case that
 * runs longer than 5 s is timed once).  Each figure
 * is also given as a ratio to a baseline measured in the same run, so the
 * ratios still mean something on a machine busy with other work.
 *
 *   bench_cpu [-o results.tsv] [-f FILTER] [-q]
 *
 * FILTER keeps the cases whose group contains it (compact, ewise, reduce,
 * matmul).  The TSV file starts with '#' lines naming the machine.
 *
 * Cases, and the baseline each ratio is taken against:
 *   compact   2-D transpose (n,n) -> permute (1,0), n = 4096 and 4100,
 *             and 4-D permute (0,2,1,3): memcpy of the same bytes; and,
 *             for reference, a plain C copy loop against memcpy
 *   ewise     add of two compact (4096,4096) arrays: memcpy bandwidth
 *   reduce    sum over the last axis of (4096,4096): memcpy bandwidth
 *   matmul    naive, tiled and OpenBLAS cblas_sgemm on one thread,
 *             n = 256, 512, 1024, 2048: GFLOP/s against OpenBLAS
 *
 * Bandwidth counts bytes read plus bytes written, in decimal GB/s (1e9).
 *
 * Functions like nd_compact allocate their output.  glibc would map every
 * large block fresh from the kernel, and the kernel zeroes each new page,
 * so every call would also pay for 64 MB of page faults that memcpy into
 * a reused buffer does not.  mallopt makes malloc take every block from the heap and keep freed
 * ones there for reuse, so both sides measure data movement only.
 */
#include "nd.h"

#include <cblas.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* Timing, results, the machine                                           */
/* ---------------------------------------------------------------------- */

#define WARMUP 1
#define MIN_REPEATS 3
#define MAX_REPEATS 15
#define MIN_SECONDS 1.0    /* keep repeating until this much time is spent */

static FILE *tsv;
static bool quiet;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A run this long is timed once: its warm-up is the measurement. */
#define LONG_RUN 5.0

/* Median seconds of fn(ctx) over repeated runs, after a warm-up. */
static double time_median(void (*fn)(void *), void *ctx)
{
    double t[MAX_REPEATS], spent = 0;
    int n = 0;
    for (int i = 0; i < WARMUP; i++) {
        double t0 = now();
        fn(ctx);
        if (now() - t0 > LONG_RUN)   /* the naive matmul at 2048: ~40 s */
            return now() - t0;
    }
    while (n < MAX_REPEATS && (n < MIN_REPEATS || spent < MIN_SECONDS)) {
        double t0 = now();
        fn(ctx);
        t[n] = now() - t0;
        spent += t[n++];
    }
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_cpu: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void must(nd_status s, const char *what)
{
    if (s != ND_OK)
        die("%s failed: %s: %s", what, nd_status_name(s), nd_last_error());
}

static float *floats(size_t n)
{
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    if (p == NULL)
        die("out of memory for %zu floats", n);
    return p;
}

/* "AMD EPYC (2 cores)", from /proc/cpuinfo. */
static void machine_name(char *dst, size_t cap)
{
    char line[256], model[200] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            snprintf(model, sizeof model, "%s", colon + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    if (f != NULL)
        fclose(f);
    snprintf(dst, cap, "%s (%ld cores)", model, sysconf(_SC_NPROCESSORS_ONLN));
}

/* One result row: the table for people and the TSV for plots. */
static void report(const char *group, const char *name, const char *shape, double seconds,
                   double rate, const char *unit, double ratio, const char *baseline,
                   double target)
{
    const char *verdict = target <= 0 ? "" : ratio >= target ? "met" : "MISSED";
    if (!quiet) {
        printf("%-8s %-26s %-18s %9.3f ms %8.2f %-7s", group, name, shape, seconds * 1e3,
               rate, unit);
        if (ratio > 0)
            printf(" %6.1f%% of %-14s", 100 * ratio, baseline);
        if (target > 0)
            printf(" target %3.0f%%: %s", 100 * target, verdict);
        printf("\n");
    }
    if (tsv != NULL)
        fprintf(tsv, "%s\t%s\t%s\t%.6g\t%.6g\t%s\t%.4f\t%s\t%.2f\t%s\n", group, name, shape,
                seconds, rate, unit, ratio, baseline, target, verdict);
}

/* ---------------------------------------------------------------------- */
/* memcpy: the bandwidth baseline                                          */
/* ---------------------------------------------------------------------- */

typedef struct {
    float *dst;
    const float *src;
    size_t n;
} copy_ctx;

static void run_memcpy(void *p)
{
    copy_ctx *c = p;
    memcpy(c->dst, c->src, c->n * sizeof(float));
}

/* Seconds to memcpy n floats (n*4 bytes read, n*4 written). */
static double memcpy_seconds(size_t n)
{
    float *src = floats(n), *dst = floats(n);
    for (size_t i = 0; i < n; i++)
        src[i] = (float)i;
    copy_ctx c = { dst, src, n };
    double t = time_median(run_memcpy, &c);
    free(src);
    free(dst);
    return t;
}

/* ---------------------------------------------------------------------- */
/* compact: permuted views, against memcpy of the same bytes               */
/* ---------------------------------------------------------------------- */

typedef struct {
    const nd_array *view;
} compact_ctx;

static void run_compact(void *p)
{
    compact_ctx *c = p;
    nd_array out;
    must(nd_compact(c->view, &out), "nd_compact");
    nd_release(&out);
}

/* The reference: index-by-index gather of a view of a host buffer. */
static bool compact_matches(const nd_array *v, const float *base)
{
    nd_array out;
    must(nd_compact(v, &out), "nd_compact");
    const float *got = (const float *)out.buf->ptr;
    int64_t n = nd_numel(v), idx[ND_MAX_DIMS] = { 0 };
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) {
        int64_t off = v->offset, rest = i;
        for (int k = v->ndim - 1; k >= 0; k--) {
            idx[k] = rest % v->shape[k];
            rest /= v->shape[k];
            off += idx[k] * v->strides[k];
        }
        ok = got[i] == base[off];
    }
    nd_release(&out);
    return ok;
}

static void bench_compact_case(const char *name, int ndim, const int64_t *shape,
                               const int *perm)
{
    nd_array a, v;
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    must(nd_arange(ND_CPU, n, &a), "nd_arange");
    must(nd_reshape(&a, ndim, shape, &a), "nd_reshape");
    must(nd_permute(&a, perm, &v), "nd_permute");
    if (!compact_matches(&v, (const float *)a.buf->ptr))
        die("compact %s: wrong result; fix the tests first", name);
    compact_ctx c = { &v };
    double t = time_median(run_compact, &c), base = memcpy_seconds((size_t)n);
    char sh[200];
    nd_shape_str(ndim, shape, sh, sizeof sh);
    double bytes = 2.0 * (double)n * sizeof(float);
    report("compact", name, sh, t, bytes / t / 1e9, "GB/s", base / t, "memcpy", 0.5);
    nd_release(&v);
    nd_release(&a);
}

/* A plain C copy loop: ordinary stores, as any gather must use.  The
 * "+ 0.0f" keeps GCC from turning it into a call to memcpy, which streams
 * large copies past the cache (no read of the destination first). */
static void run_copy_loop(void *p)
{
    copy_ctx *c = p;
    for (size_t i = 0; i < c->n; i++)
        c->dst[i] = c->src[i] + 0.0f;
}

/* How close ordinary stores get to memcpy: the ceiling for a gather. */
static void bench_copy_loop(size_t n)
{
    float *src = floats(n), *dst = floats(n);
    for (size_t i = 0; i < n; i++)
        src[i] = (float)i;
    copy_ctx c = { dst, src, n };
    double t = time_median(run_copy_loop, &c), base = memcpy_seconds(n);
    report("compact", "C copy loop (reference)", "(16777216,)", t,
           2.0 * (double)n * sizeof(float) / t / 1e9, "GB/s", base / t, "memcpy", 0);
    free(src);
    free(dst);
}

static void bench_compact(void)
{
    bench_copy_loop((size_t)1 << 24);
    static const int t2[2] = { 1, 0 }, p4[4] = { 0, 2, 1, 3 };
    int64_t s4096[2] = { 4096, 4096 }, s4100[2] = { 4100, 4100 };
    int64_t q2[4] = { 16, 256, 64, 64 }, q2odd[4] = { 16, 257, 65, 63 };
    bench_compact_case("transpose (1,0)", 2, s4096, t2);
    bench_compact_case("transpose (1,0)", 2, s4100, t2);
    bench_compact_case("permute (0,2,1,3)", 4, q2, p4);
    bench_compact_case("permute (0,2,1,3)", 4, q2odd, p4);
}

/* ---------------------------------------------------------------------- */
/* ewise add and sum over the last axis, against memcpy bandwidth          */
/* ---------------------------------------------------------------------- */

typedef struct {
    const nd_array *a, *b;
} pair_ctx;

static void run_add(void *p)
{
    pair_ctx *c = p;
    nd_array out;
    must(nd_binary(ND_ADD, c->a, c->b, &out), "nd_binary(ND_ADD)");
    nd_release(&out);
}

static void run_sum_last(void *p)
{
    pair_ctx *c = p;
    nd_array out;
    int axis = -1;
    must(nd_reduce(ND_SUM, c->a, 1, &axis, false, &out), "nd_reduce(ND_SUM)");
    nd_release(&out);
}

static void bench_ewise_reduce(bool ewise, bool reduce)
{
    const int64_t rows = 4096, cols = 4096, n = rows * cols;
    int64_t shape[2] = { rows, cols };
    float *x = floats((size_t)n), *y = floats((size_t)n), *got = floats((size_t)n);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)(i % 1000) * 0.001f;
        y[i] = (float)(i % 7);
    }
    nd_array a, b, out;
    must(nd_from_host(ND_CPU, 2, shape, x, &a), "nd_from_host");
    must(nd_from_host(ND_CPU, 2, shape, y, &b), "nd_from_host");
    double copy = memcpy_seconds((size_t)n);
    double copy_rate = 2.0 * (double)n * sizeof(float) / copy / 1e9;
    pair_ctx c = { &a, &b };
    char sh[64];
    nd_shape_str(2, shape, sh, sizeof sh);
    if (ewise) {
        must(nd_binary(ND_ADD, &a, &b, &out), "nd_binary");
        must(nd_to_host(&out, got, (size_t)n), "nd_to_host");
        for (int64_t i = 0; i < n; i++)
            if (got[i] != x[i] + y[i])
                die("ewise add: wrong result at %lld", (long long)i);
        nd_release(&out);
        double t = time_median(run_add, &c), rate = 3.0 * (double)n * sizeof(float) / t / 1e9;
        report("ewise", "add", sh, t, rate, "GB/s", rate / copy_rate, "memcpy GB/s", 0.7);
    }
    if (reduce) {
        int axis = -1;
        must(nd_reduce(ND_SUM, &a, 1, &axis, false, &out), "nd_reduce");
        must(nd_to_host(&out, got, (size_t)rows), "nd_to_host");
        for (int64_t r = 0; r < rows; r++) {
            double want = 0, mag = 0;
            for (int64_t j = 0; j < cols; j++) {
                want += x[r * cols + j];
                mag += fabs(x[r * cols + j]);
            }
            if (fabs(got[r] - want) > 1e-5 * mag + 1e-6)
                die("sum over the last axis: row %lld is %g, expected %g", (long long)r,
                    (double)got[r], want);
        }
        nd_release(&out);
        double t = time_median(run_sum_last, &c);
        double rate = ((double)n + (double)rows) * sizeof(float) / t / 1e9;
        report("reduce", "sum over last axis", sh, t, rate, "GB/s", rate / copy_rate,
               "memcpy GB/s", 0.7);
    }
    nd_release(&a);
    nd_release(&b);
    free(x);
    free(y);
    free(got);
}

/* ---------------------------------------------------------------------- */
/* matmul: naive, tiled, OpenBLAS                                          */
/* ---------------------------------------------------------------------- */

typedef struct {
    const nd_array *a, *b;
    nd_status (*fn)(const nd_array *, const nd_array *, nd_array *);
    const float *pa, *pb;
    float *pc;
    int n;
} mm_ctx;

static void run_mm(void *p)
{
    mm_ctx *c = p;
    nd_array out;
    must(c->fn(c->a, c->b, &out), "matmul");
    nd_release(&out);
}

static void run_sgemm(void *p)
{
    mm_ctx *c = p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->n, c->n, c->n, 1.0f, c->pa,
                c->n, c->pb, c->n, 0.0f, c->pc, c->n);
}

/* Largest relative difference of got from want, scaled by the row's size. */
static double max_rel_diff(const float *got, const float *want, int n)
{
    double worst = 0;
    for (int64_t i = 0; i < (int64_t)n * n; i++) {
        double d = fabs((double)got[i] - (double)want[i]) / (fabs((double)want[i]) + 1.0);
        worst = d > worst ? d : worst;
    }
    return worst;
}

static void bench_matmul_size(int n)
{
    int64_t shape[2] = { n, n };
    size_t nn = (size_t)n * (size_t)n;
    float *x = floats(nn), *y = floats(nn), *ref = floats(nn), *got = floats(nn);
    for (size_t i = 0; i < nn; i++) {
        x[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        y[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    }
    nd_array a, b, out;
    must(nd_from_host(ND_CPU, 2, shape, x, &a), "nd_from_host");
    must(nd_from_host(ND_CPU, 2, shape, y, &b), "nd_from_host");
    mm_ctx c = { &a, &b, NULL, x, y, ref, n };
    run_sgemm(&c);
    char sh[64];
    snprintf(sh, sizeof sh, "%dx%dx%d", n, n, n);
    double flops = 2.0 * n * (double)n * n;
    double t_blas = time_median(run_sgemm, &c), blas = flops / t_blas / 1e9;
    report("matmul", "OpenBLAS sgemm, 1 thread", sh, t_blas, blas, "GFLOP/s", 1.0,
           "OpenBLAS", 0);
    struct {
        const char *name;
        nd_status (*fn)(const nd_array *, const nd_array *, nd_array *);
        double target;
    } versions[] = {
        { "naive (nd_matmul_naive)", nd_matmul_naive, 0 },
        { "tiled (nd_matmul)", nd_matmul, n == 1024 ? 0.5 : 0 },
    };
    double naive_t = 0;
    for (size_t v = 0; v < 2; v++) {
        must(versions[v].fn(&a, &b, &out), versions[v].name);
        must(nd_to_host(&out, got, nn), "nd_to_host");
        nd_release(&out);
        /* float sums of n terms of size <= 0.25: allow n * eps relative */
        if (max_rel_diff(got, ref, n) > n * 1.2e-7 + 1e-5)
            die("matmul %s at %d: differs from OpenBLAS by %g", versions[v].name, n,
                max_rel_diff(got, ref, n));
        c.fn = versions[v].fn;
        double t = time_median(run_mm, &c);
        report("matmul", versions[v].name, sh, t, flops / t / 1e9, "GFLOP/s",
               t_blas / t, "OpenBLAS", versions[v].target);
        if (v == 0)
            naive_t = t;
        else
            report("matmul", "tiled vs naive", sh, t, naive_t / t, "x", 0, "", 0);
    }
    nd_release(&a);
    nd_release(&b);
    free(x);
    free(y);
    free(ref);
    free(got);
}

static void bench_matmul(void)
{
    openblas_set_num_threads(1);
    static const int sizes[] = { 256, 512, 1024, 2048 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        bench_matmul_size(sizes[i]);
}

int main(int argc, char **argv)
{
    const char *tsv_path = NULL, *filter = "";
    int opt;
    while ((opt = getopt(argc, argv, "o:f:q")) != -1) {
        switch (opt) {
        case 'o': tsv_path = optarg; break;
        case 'f': filter = optarg; break;
        case 'q': quiet = true; break;
        default:
            fprintf(stderr, "usage: bench_cpu [-o results.tsv] [-f FILTER] [-q]\n");
            return 2;
        }
    }
    /* see the top of this file: no fresh mappings, no trimming */
    if (mallopt(M_MMAP_MAX, 0) != 1 || mallopt(M_TRIM_THRESHOLD, INT32_MAX) != 1)
        die("mallopt failed");
    char machine[300];
    machine_name(machine, sizeof machine);
    if (tsv_path != NULL && (tsv = fopen(tsv_path, "w")) == NULL)
        die("cannot write %s", tsv_path);
    time_t t = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
    /* Which OpenBLAS kernels run matters: 0.3.21 takes some AVX-512 CPUs
     * for Haswell (AVX2) unless OPENBLAS_CORETYPE says otherwise. */
    const char *coretype = getenv("OPENBLAS_CORETYPE");
    char blas[300];
    snprintf(blas, sizeof blas, "%s; kernels for %s%s%s", openblas_get_config(),
             openblas_get_corename(), coretype ? ", OPENBLAS_CORETYPE=" : "",
             coretype ? coretype : "");
    if (tsv != NULL)
        fprintf(tsv, "# machine: %s\n# date: %s\n# compiler: gcc %s\n# openblas: %s\n"
                "group\tcase\tshape\tseconds\trate\tunit\tratio\tbaseline\ttarget\tverdict\n",
                machine, date, __VERSION__, blas);
    printf("CPU benchmarks on %s, %s; median of %d-%d runs after %d warm-up\n", machine,
           date, MIN_REPEATS, MAX_REPEATS, WARMUP);
    printf("OpenBLAS: %s\n\n", blas);
    if (strstr("compact", filter))
        bench_compact();
    if (strstr("ewise", filter) || strstr("reduce", filter))
        bench_ewise_reduce(strstr("ewise", filter) != NULL, strstr("reduce", filter) != NULL);
    if (strstr("matmul", filter))
        bench_matmul();
    if (tsv != NULL)
        fclose(tsv);
    return 0;
}
