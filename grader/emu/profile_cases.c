/*
 * profile_cases.c -- the profiling cases of lessons 6 and 7: each runs one
 * operation of the tree's library on the CUDA device (the emulator's
 * instrumented build) and prints the profile of every kernel it launched,
 * as Nsight Compute would, with the model's estimate per GPU (`make
 * profile`; grader/emu/README.md, "Profiling").
 *
 *   profile_cases [-l LESSON] [-c CASE] [-t FILE.tsv] [--list]
 *
 * -l runs one lesson's cases, -c one case; -t also writes one row per
 * launch: the counts, and the model's percentage of nameplate DRAM
 * bandwidth on each GPU for the same kernel on a problem 1024 times larger
 * (32768 x 32768 floats for the 1024 x 1024 cases), which is what the
 * lesson's figures plot.  Exits 1 if a case fails or records nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd.h"
#include "ndemu_profile.h"

#define N 1024 /* rows and columns of the 2-D cases */

/* A new (d0, d1[, d2, d3]) array on the CUDA device with known values. */
static nd_status make(int ndim, const int64_t *shape, nd_array *out)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    float *h = malloc((size_t)n * sizeof *h);
    if (!h)
        return ND_ERR_NOMEM;
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)(i % 97) - 48.0f;
    nd_status s = nd_from_host(ND_CUDA, ndim, shape, h, out);
    free(h);
    return s;
}

/* ---- lesson 6 ---------------------------------------------------------- */
static nd_status compact_transpose(void)
{
    nd_array a, t, c;
    int64_t shape[2] = { N, N };
    nd_status s = make(2, shape, &a);
    if (s != ND_OK)
        return s;
    s = nd_permute(&a, (int[]){ 1, 0 }, &t);
    if (s == ND_OK) {
        ndemu_profile_reset();
        s = nd_compact(&t, &c);
        if (s == ND_OK)
            nd_release(&c);
        nd_release(&t);
    }
    nd_release(&a);
    return s;
}

static nd_status binary(int ndim_b)
{
    nd_array a, b, c;
    int64_t shape[2] = { N, N };
    nd_status s = make(2, shape, &a);
    if (s != ND_OK)
        return s;
    s = make(ndim_b, shape + 2 - ndim_b, &b);
    if (s == ND_OK) {
        ndemu_profile_reset();
        s = nd_binary(ND_ADD, &a, &b, &c);
        if (s == ND_OK)
            nd_release(&c);
        nd_release(&b);
    }
    nd_release(&a);
    return s;
}
static nd_status ewise_add(void) { return binary(2); }
static nd_status ewise_broadcast(void) { return binary(1); }

static nd_status reduce(int axis)
{
    nd_array a, r;
    int64_t shape[2] = { N, N };
    nd_status s = make(2, shape, &a);
    if (s != ND_OK)
        return s;
    ndemu_profile_reset();
    s = nd_reduce(ND_SUM, &a, 1, &axis, false, &r);
    if (s == ND_OK)
        nd_release(&r);
    nd_release(&a);
    return s;
}
static nd_status reduce_rows(void) { return reduce(1); }
static nd_status reduce_columns(void) { return reduce(0); }

static nd_status matmul(bool naive)
{
    nd_array a, b, c;
    int64_t shape[2] = { 256, 256 };
    nd_status s = make(2, shape, &a);
    if (s != ND_OK)
        return s;
    s = make(2, shape, &b);
    if (s == ND_OK) {
        ndemu_profile_reset();
        s = naive ? nd_matmul_naive(&a, &b, &c) : nd_matmul(&a, &b, &c);
        if (s == ND_OK)
            nd_release(&c);
        nd_release(&b);
    }
    nd_release(&a);
    return s;
}
static nd_status matmul_naive(void) { return matmul(true); }
static nd_status matmul_tiled(void) { return matmul(false); }

/* ---- lesson 7 ---------------------------------------------------------- */
/* nd_permute_bytes_version on device buffers: elem-byte elements. */
static nd_status permute(int version, size_t elem, int ndim, const int64_t *shape, const int *perm)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    int64_t floats[1] = { (n * (int64_t)elem + 3) / 4 };
    nd_array src, dst;
    nd_status s = make(1, floats, &src);
    if (s != ND_OK)
        return s;
    s = nd_empty(ND_CUDA, 1, floats, &dst);
    if (s == ND_OK) {
        int ran = -1;
        ndemu_profile_reset();
        s = nd_permute_bytes_version(ND_CUDA, src.buf->ptr, dst.buf->ptr, elem, ndim, shape, perm,
                                     version, &ran);
        if (s == ND_OK && version != 0 && ran != version) {
            fprintf(stderr, "profile_cases: version %d was asked for, %d ran\n", version, ran);
            s = ND_ERR_ARG;
        }
        nd_release(&dst);
    }
    nd_release(&src);
    return s;
}
static const int64_t square[2] = { N, N };
static const int swap[2] = { 1, 0 };
static nd_status permute_naive(void) { return permute(1, 4, 2, square, swap); }
static nd_status permute_generic(void) { return permute(2, 4, 2, square, swap); }
static nd_status permute_transpose(void) { return permute(3, 4, 2, square, swap); }
static nd_status permute_transpose_fp16(void) { return permute(3, 2, 2, square, swap); }
static nd_status permute_transpose2(void) { return permute(4, 2, 2, square, swap); }
static nd_status permute_generic_16B(void)
{
    /* (0,2,1,3) keeps the last axis of 8 floats: 32 bytes that move
     * together, 16 bytes per thread */
    static const int64_t shape[4] = { 16, 64, 128, 8 };
    static const int perm[4] = { 0, 2, 1, 3 };
    return permute(2, 4, 4, shape, perm);
}

static const struct pcase {
    const char *name;
    int lesson;
    const char *what;
    nd_status (*run)(void);
} cases[] = {
    { "compact_transpose", 6, "nd_compact of a transposed (1024,1024) view", compact_transpose },
    { "ewise_add", 6, "nd_binary ND_ADD of two compact (1024,1024) arrays", ewise_add },
    { "ewise_broadcast", 6, "nd_binary ND_ADD of (1024,1024) and a broadcast (1024,) row", ewise_broadcast },
    { "reduce_rows", 6, "nd_reduce ND_SUM over the last axis of (1024,1024)", reduce_rows },
    { "reduce_columns", 6, "nd_reduce ND_SUM over the first axis of (1024,1024)", reduce_columns },
    { "matmul_naive", 6, "nd_matmul_naive of two (256,256) matrices", matmul_naive },
    { "matmul_tiled", 6, "nd_matmul of two (256,256) matrices", matmul_tiled },
    { "permute_naive", 7, "version 1 (naive), fp32 (1024,1024) transpose", permute_naive },
    { "permute_generic", 7, "version 2 (generic), fp32 (1024,1024) transpose", permute_generic },
    { "permute_transpose", 7, "version 3 (tiled transpose), fp32 (1024,1024)", permute_transpose },
    { "permute_transpose_fp16", 7, "version 3 (tiled transpose), fp16 (1024,1024)",
      permute_transpose_fp16 },
    { "permute_transpose2", 7, "version 4 (fp16 in pairs), fp16 (1024,1024)", permute_transpose2 },
    { "permute_generic_16B", 7, "version 2, (0,2,1,3) of (16,64,128,8) fp32: 16 bytes per thread",
      permute_generic_16B },
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

/* One row per launch: counts, and the model at 1024 times the size. */
static void tsv_row(FILE *t, const struct pcase *c, const ndemu_launch_stats *s)
{
    const ndemu_access_stats *a = s->access;
    double r = a[NDEMU_GLOBAL_LOAD].requests ? (double)a[NDEMU_GLOBAL_LOAD].sectors / (double)a[NDEMU_GLOBAL_LOAD].requests : 0;
    double w = a[NDEMU_GLOBAL_STORE].requests ? (double)a[NDEMU_GLOBAL_STORE].sectors / (double)a[NDEMU_GLOBAL_STORE].requests : 0;
    double lb = a[NDEMU_GLOBAL_LOAD].requests ? (double)a[NDEMU_GLOBAL_LOAD].bytes / (double)a[NDEMU_GLOBAL_LOAD].requests : 0;
    uint64_t conflicts = a[NDEMU_SHARED_LOAD].wavefronts - a[NDEMU_SHARED_LOAD].ideal +
                         a[NDEMU_SHARED_STORE].wavefronts - a[NDEMU_SHARED_STORE].ideal;
    fprintf(t, "%s\t%d\t%s\t%.2f\t%.2f\t%.1f\t%llu\t%.1f", c->name, c->lesson, s->kernel, r, w, lb,
            (unsigned long long)conflicts, s->load_bytes_in_flight);
    for (int g = 0; ndemu_gpu_get(g); g++) {
        ndemu_estimate e;
        if (ndemu_model(s, ndemu_gpu_get(g), 1024.0, &e) == 0)
            fprintf(t, "\t%.1f", e.percent_of_dram);
        else
            fprintf(t, "\tNaN");
    }
    fprintf(t, "\n");
}

int main(int argc, char **argv)
{
    int lesson = 0;
    const char *only = NULL, *tsv = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-l") && i + 1 < argc)
            lesson = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-c") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            tsv = argv[++i];
        else if (!strcmp(argv[i], "--list")) {
            for (int k = 0; k < NCASES; k++)
                printf("%s\t%d\t%s\n", cases[k].name, cases[k].lesson, cases[k].what);
            return 0;
        } else {
            fprintf(stderr, "usage: profile_cases [-l LESSON] [-c CASE] [-t FILE.tsv] [--list]\n");
            return 2;
        }
    }
    if (!ndemu_profile_enabled()) {
        fprintf(stderr, "profile_cases: this is not the emulator's instrumented build (make profile builds it)\n");
        return 1;
    }
    FILE *t = NULL;
    if (tsv) {
        t = fopen(tsv, "w");
        if (!t) {
            perror(tsv);
            return 1;
        }
        fprintf(t, "# Profiles of lessons 6 and 7's kernels by the CUDA emulator (make profile-data; "
                   "grader/emu/profile_cases.c).\n# Counts are the emulator's, of the run; the "
                   "percentages are modelled (grader/emu/README.md, \"The model\"), of nameplate DRAM\n"
                   "# bandwidth, for the same kernel on a problem 1024 times larger.\n");
        fprintf(t, "case\tlesson\tkernel\tload_sectors_per_request\tstore_sectors_per_request\t"
                   "load_bytes_per_request\tbank_conflict_wavefronts\tload_bytes_in_flight");
        for (int g = 0; ndemu_gpu_get(g); g++)
            fprintf(t, "\tmodelled_percent_%s", ndemu_gpu_get(g)->name);
        fprintf(t, "\n");
    }
    int ran = 0, failed = 0;
    for (int k = 0; k < NCASES; k++) {
        const struct pcase *c = &cases[k];
        if ((lesson && c->lesson != lesson) || (only && strcmp(only, c->name) != 0))
            continue;
        ran++;
        printf("\n######## %s (lesson %d): %s\n", c->name, c->lesson, c->what);
        fflush(stdout);
        nd_status s = c->run();
        if (s != ND_OK) {
            printf("FAILED: %s\n", nd_last_error());
            failed++;
            continue;
        }
        int n = ndemu_launch_count();
        if (n == 0) {
            printf("FAILED: no kernel launch was recorded\n");
            failed++;
        }
        for (int i = 0; i < n; i++) {
            ndemu_profile_print(i, stdout);
            ndemu_launch_stats st;
            if (t && ndemu_launch_get(i, &st) == 0)
                tsv_row(t, c, &st);
        }
        fflush(stdout);
    }
    if (t)
        fclose(t);
    if (!ran) {
        fprintf(stderr, "profile_cases: no case matches (--list names them)\n");
        return 2;
    }
    return failed ? 1 : 0;
}
