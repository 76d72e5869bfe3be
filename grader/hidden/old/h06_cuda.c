/*
 * h06_cuda.c -- hidden tests of lesson 6: the index transform and the
 * kernels of lessons 2-5 on the CUDA device (a GPU, or the emulator).
 *
 * What this file covers (the suite at the end lists every test with its
 * points and hint):
 *
 *   nd_index_to_offset  every position of 400 random layouts of 0 to 8 axes
 *                       (negative, zero and huge strides, offsets), and
 *                       positions past 2^32 (64-bit arithmetic throughout)
 *   compact, setitem,   random views of 1 to 8 axes with offsets, negative
 *   setitem_scalar      and zero strides, of sizes around the warp (32),
 *                       the block (256) and 1024; every write checked over
 *                       the WHOLE buffer: nothing outside the view changes
 *   elementwise         every binary and unary op, broadcasting, views,
 *                       special values, against a host loop
 *   reductions          sum and max over every axis subset of random views,
 *                       lengths around 32/256/1024, all-negative blocks,
 *                       NaN, many outputs per launch
 *   matmul              both kernels, sizes around the 64x64 tile and the
 *                       16-deep panel, transposed and offset operands,
 *                       broadcast batches, non-square grids
 *   grids               more elements than 65535 blocks of 256 threads
 *                       cover, more outputs and more matrices than 65535
 *                       blocks (plain build only: slow on the emulator
 *                       under the sanitizers)
 *
 * The [cuda] cases of the hidden tests of lessons 2-5 count for this
 * lesson too (runner.c).  References are host loops over host copies of
 * the buffers (t_gather); no lesson code computes a reference.
 */
#include "grader.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond))                                                       \
            ck_abort_msg(__VA_ARGS__);                                     \
    } while (0)

/* Sizes around the warp, the block of 256 and 1024 threads. */
static const int64_t ODD[] = { 1, 2, 31, 32, 33, 63, 255, 256, 257, 511, 1023, 1024, 1025, 4099 };
#define NODD (int)(sizeof ODD / sizeof ODD[0])

/* A random shape of ndim axes with exactly n elements when possible: n is
 * split into factors; axes past them get size 1 or a small factor. */
static void shape_of_numel(t_rng *r, int ndim, int64_t n, int64_t *shape)
{
    for (int k = 0; k < ndim; k++)
        shape[k] = 1;
    int64_t rest = n;
    for (int k = 0; k < ndim - 1 && rest > 1; k++) {
        int64_t d = t_int(r, 2, 7);
        if (rest % d == 0 && t_int(r, 0, 2) != 0) {
            shape[k] = d;
            rest /= d;
        }
    }
    shape[ndim - 1] = rest;
    /* shuffle the axes */
    for (int k = ndim - 1; k > 0; k--) {
        int j = (int)t_int(r, 0, k);
        int64_t t = shape[k];
        shape[k] = shape[j];
        shape[j] = t;
    }
}

/* Make the next allocation of this shape come back full of NaN: the
 * allocator hands a freed block of one size out again, so an output
 * that a kernel leaves unwritten would otherwise still hold the right
 * values from an earlier call. */
static void poison_next(int ndim, const int64_t *shape)
{
    nd_array junk = t_nan_array(ndim, shape);
    nd_release(&junk);
}

/* ---------------------------------------------------------------------- */
/* The index transform                                                    */
/* ---------------------------------------------------------------------- */

#define INDEX_HINT "peel the index off i from the last axis (index[k] = i % shape[k], " \
    "i /= shape[k]), axis 0 gets what is left; the offset is offset + sum(index[k] * " \
    "strides[k]), all in 64 bits"

static int64_t ref_offset(int64_t i, int ndim, const int64_t *shape, const int64_t *strides,
                          int64_t offset)
{
    for (int k = ndim - 1; k >= 0; k--) {
        offset += (i % shape[k]) * strides[k];
        i /= shape[k];
    }
    return offset;
}

static void require_index_transform(void)
{
    int64_t shape[2] = { 3, 4 }, strides[2] = { 4, 1 };
    CHECK(nd_index_to_offset(5, 2, shape, strides, 0) == 5,
          "nd_index_to_offset(5) of a compact (3,4) is not 5: offset_of is not implemented "
          "(lesson 6)");
}

START_TEST(index_offset_exhaustive)
{
    require_index_transform();
    t_rng r = t_rng_new(6001);
    for (int trial = 0; trial < 400; trial++) {
        int ndim = trial % (ND_MAX_DIMS + 1);
        int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
        t_random_shape(&r, ndim, ndim > 5 ? 3 : 7, false, 5000, shape);
        for (int k = 0; k < ndim; k++) {
            int kind = (int)t_int(&r, 0, 5);
            strides[k] = kind == 0 ? 0 : kind == 1 ? t_int(&r, -(1LL << 40), 1LL << 40)
                                                    : t_int(&r, -60, 60);
        }
        int64_t offset = t_int(&r, 0, 1LL << 41), n = t_numel(ndim, shape);
        for (int64_t i = 0; i < n; i++) {
            int64_t want = ref_offset(i, ndim, shape, strides, offset);
            int64_t got = nd_index_to_offset(i, ndim, shape, strides, offset);
            if (got != want) {
                int64_t idx[ND_MAX_DIMS];
                t_unravel(i, ndim, shape, idx);
                ck_abort_msg("nd_index_to_offset(i=%" PRId64 ", shape=%s, offset=%" PRId64
                             ") gave %" PRId64 ", want %" PRId64 " (index %s)", i,
                             t_index_str(ndim, shape), offset, got, want,
                             t_index_str(ndim, idx));
            }
        }
    }
}
END_TEST

/* Positions and offsets past 2^31 and 2^32: 64-bit everywhere. */
START_TEST(index_offset_64bit)
{
    require_index_transform();
    static const struct {
        int ndim;
        int64_t shape[3], strides[3], offset;
    } cases[] = {
        { 1, { 6000000000LL }, { 1 }, 0 },
        { 2, { 100000, 100000 }, { 1, 100000 }, 7 },
        { 3, { 3, 2000000, 1000 }, { -2000000000LL, 1000, 1 }, 6000000000LL },
        { 2, { 70000, 70000 }, { 70001, -1 }, 69999 },
    };
    t_rng r = t_rng_new(6002);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t n = t_numel(cases[c].ndim, cases[c].shape);
        for (int probe = 0; probe < 2000; probe++) {
            int64_t i = probe < 2 ? (probe == 0 ? n - 1 : (1LL << 32) + 5) : t_int(&r, 0, n - 1);
            int64_t want = ref_offset(i, cases[c].ndim, cases[c].shape, cases[c].strides,
                                      cases[c].offset);
            int64_t got = nd_index_to_offset(i, cases[c].ndim, cases[c].shape,
                                             cases[c].strides, cases[c].offset);
            CHECK(got == want, "nd_index_to_offset(i=%" PRId64 ", shape=%s) gave %" PRId64
                  ", want %" PRId64 ": positions and offsets past 2^31 need 64-bit "
                  "arithmetic", i, t_index_str(cases[c].ndim, cases[c].shape), got, want);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Copies: compact, setitem, fill                                         */
/* ---------------------------------------------------------------------- */

START_TEST(compact_views_odd)
{
    t_rng r = t_rng_new(6010);
    for (int c = 0; c < NODD; c++)
        for (int rep = 0; rep < 6; rep++) {
            int ndim = (int)t_int(&r, 1, ND_MAX_DIMS);
            int64_t shape[ND_MAX_DIMS];
            shape_of_numel(&r, ndim, ODD[c], shape);
            nd_array a = rep % 2 ? t_random_read_view(&r, ndim, shape)
                                 : t_random_view(&r, ndim, shape), out;
            float *want = t_gather(&a);
            int64_t nb;
            float *before = t_buffer(&a, &nb);
            poison_next(ndim, shape);
            T_OK(nd_compact(&a, &out));
            char what[300];
            snprintf(what, sizeof what, "nd_compact of %s on cuda", t_describe(&a));
            t_assert_values(&out, want, what, "compact_kernel: dst[i] = src.data[offset_of(i, "
                            "src)] for every i < n (blocks rounded up; offset_of includes the "
                            "view's offset)");
            t_assert_outside_unchanged(&a, before, &a, "nd_compact's input");
            int64_t nb2;
            float *after = t_buffer(&a, &nb2);
            CHECK(memcmp(before, after, (size_t)nb * sizeof(float)) == 0,
                  "nd_compact changed its input's buffer (%s)", t_describe(&a));
            free(after);
            free(before);
            free(want);
            nd_release(&a);
            nd_release(&out);
        }
}
END_TEST

/* dst <- src over random writable dst views and broadcast src views; the
 * whole buffer under dst is compared: dst's elements hold src's, every
 * other float is as it was. */
START_TEST(setitem_views_odd)
{
    t_rng r = t_rng_new(6011);
    for (int c = 0; c < NODD; c++)
        for (int rep = 0; rep < 5; rep++) {
            int ndim = (int)t_int(&r, 1, ND_MAX_DIMS);
            int64_t shape[ND_MAX_DIMS];
            shape_of_numel(&r, ndim, ODD[c], shape);
            nd_array dst = t_random_view(&r, ndim, shape);
            nd_array src = t_random_read_view(&r, ndim, shape);
            int64_t nb;
            float *before = t_buffer(&dst, &nb), *want = t_gather(&src);
            T_OK(nd_setitem(&dst, &src));
            char what[400];
            snprintf(what, sizeof what, "nd_setitem on cuda: dst %s, src %s", t_describe(&dst),
                     t_describe2(&src));
            t_assert_values(&dst, want, what, "setitem_kernel: dst.data[offset_of(i, dst)] = "
                            "src.data[offset_of(i, src)] for i < the VIEW's numel");
            t_assert_outside_unchanged(&dst, before, &dst, "nd_setitem on cuda");
            /* and a fill of the same view */
            float v = t_float(&r, -5, 5);
            T_OK(nd_setitem_scalar(&dst, v));
            for (int64_t i = 0; i < ODD[c]; i++)
                want[i] = v;
            snprintf(what, sizeof what, "nd_setitem_scalar(%g) on cuda: dst %s", (double)v,
                     t_describe(&dst));
            t_assert_values(&dst, want, what, "fill_kernel: every element of the view, "
                            "through offset_of");
            t_assert_outside_unchanged(&dst, before, &dst, "nd_setitem_scalar on cuda");
            free(before);
            free(want);
            nd_release(&dst);
            nd_release(&src);
        }
}
END_TEST

/* A view at an offset into a bigger buffer, whose numel is much smaller
 * than the buffer: a launch over the buffer's size, or a forgotten
 * offset, shows. */
START_TEST(copies_offset_windows)
{
    t_rng r = t_rng_new(6012);
    for (int rep = 0; rep < 60; rep++) {
        int64_t rows = t_int(&r, 1, 40), cols = t_int(&r, 1, 300), pitch = cols + t_int(&r, 1, 9);
        int64_t size = (rows + 2) * pitch, shape[2] = { rows, cols };
        int64_t strides[2] = { pitch, 1 }, offset = pitch + t_int(&r, 0, pitch - cols);
        if (rep % 3 == 1) {   /* rows reversed */
            strides[0] = -pitch;
            offset += (rows - 1) * pitch;
        } else if (rep % 3 == 2) {   /* columns reversed */
            strides[1] = -1;
            offset += cols - 1;
        }
        nd_array a = t_strided(size, 2, shape, strides, offset), out;
        float *want = t_gather(&a);
        T_OK(nd_compact(&a, &out));
        char what[300];
        snprintf(what, sizeof what, "nd_compact of a window %s on cuda", t_describe(&a));
        t_assert_values(&out, want, what, "read at src.data[offset_of(i, src)]: the view's "
                        "offset is part of offset_of");
        int64_t nb;
        float *before = t_buffer(&a, &nb);
        nd_array src = t_random_array(&r, 2, shape, -1, 1);
        float *w2 = t_gather(&src);
        T_OK(nd_setitem(&a, &src));
        snprintf(what, sizeof what, "nd_setitem into a window %s on cuda", t_describe(&a));
        t_assert_values(&a, w2, what, "write only the view's elements: n is the view's numel, "
                        "not its buffer's");
        t_assert_outside_unchanged(&a, before, &a, what);
        T_OK(nd_setitem_scalar(&a, -3.0f));
        t_assert_outside_unchanged(&a, before, &a, "nd_setitem_scalar into a window on cuda");
        free(before);
        free(want);
        free(w2);
        nd_release(&a);
        nd_release(&out);
        nd_release(&src);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Elementwise                                                            */
/* ---------------------------------------------------------------------- */

static float ref_binary(nd_binop op, float x, float y)
{
    switch (op) {
    case ND_ADD: return x + y;
    case ND_SUB: return x - y;
    case ND_MUL: return x * y;
    case ND_DIV: return x / y;
    case ND_POW: return powf(x, y);
    case ND_MAXIMUM: return (isnan(x) || x >= y) ? x : y;
    case ND_EQ: return x == y ? 1.0f : 0.0f;
    case ND_GE: return x >= y ? 1.0f : 0.0f;
    }
    return NAN;
}

static float ref_unary(nd_unop op, float x)
{
    switch (op) {
    case ND_NEG: return -x;
    case ND_LOG: return logf(x);
    case ND_EXP: return expf(x);
    case ND_TANH: return tanhf(x);
    case ND_ABS: return fabsf(x);
    }
    return NAN;
}

static const char *const BINOPS[] = { "ADD", "SUB", "MUL", "DIV", "POW", "MAXIMUM", "EQ", "GE" };
static const char *const UNOPS[] = { "NEG", "LOG", "EXP", "TANH", "ABS" };

/* Every op on views of odd sizes, b broadcast along random axes; values
 * include specials.  transcendental ops within 2 ulp-ish of the host's. */
START_TEST(ewise_every_op)
{
    t_rng r = t_rng_new(6020);
    static const float special[] = { 0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 2.0f };
    for (int c = 0; c < NODD; c++) {
        int ndim = (int)t_int(&r, 1, 6);
        int64_t shape[ND_MAX_DIMS], bshape[ND_MAX_DIMS];
        shape_of_numel(&r, ndim, ODD[c], shape);
        for (int k = 0; k < ndim; k++)
            bshape[k] = t_int(&r, 0, 2) == 0 ? 1 : shape[k];
        nd_array a = t_random_read_view(&r, ndim, shape);
        nd_array bsmall = t_random_view(&r, ndim, bshape);
        /* sprinkle special values into a's and b's buffers */
        int64_t na, nb;
        float *ha = t_buffer(&a, &na), *hb = t_buffer(&bsmall, &nb);
        for (int64_t i = 0; i < na; i++)
            ha[i] = t_int(&r, 0, 5) == 0 ? special[t_int(&r, 0, 7)] : t_float(&r, -3, 3);
        for (int64_t i = 0; i < nb; i++)
            hb[i] = t_int(&r, 0, 5) == 0 ? special[t_int(&r, 0, 7)] : t_float(&r, -3, 3);
        nd_array a2 = t_view_of(na, ha, a.ndim, a.shape, a.strides, a.offset);
        nd_array b2 = t_view_of(nb, hb, bsmall.ndim, bsmall.shape, bsmall.strides,
                                bsmall.offset);
        /* b broadcast to a's shape, by stride 0, without lesson 1 */
        int64_t bst[ND_MAX_DIMS];
        for (int k = 0; k < ndim; k++)
            bst[k] = bshape[k] == 1 ? 0 : b2.strides[k];
        nd_array b;
        T_OK(nd_as_strided(&b2, ndim, shape, bst, b2.offset, &b));
        float *x = t_gather(&a2), *y = t_gather(&b), *want = t_floats(ODD[c]);
        for (int op = ND_ADD; op <= ND_GE; op++) {
            nd_array out;
            poison_next(ndim, shape);
            T_OK(nd_binary((nd_binop)op, &a2, &b, &out));
            for (int64_t i = 0; i < ODD[c]; i++)
                want[i] = ref_binary((nd_binop)op, x[i], y[i]);
            char what[400];
            snprintf(what, sizeof what, "nd_binary(ND_%s) on cuda of %s and %s", BINOPS[op],
                     t_describe(&a2), t_describe2(&b));
            t_assert_close(&out, want, 2e-6, 1e-30, what, "binary_kernel: dst, a and b each "
                           "through offset_of with their own strides (0 for a broadcast axis)");
            nd_release(&out);
        }
        for (int op = ND_NEG; op <= ND_ABS; op++) {
            nd_array out;
            poison_next(ndim, shape);
            T_OK(nd_unary((nd_unop)op, &a2, &out));
            for (int64_t i = 0; i < ODD[c]; i++)
                want[i] = ref_unary((nd_unop)op, x[i]);
            char what[300];
            snprintf(what, sizeof what, "nd_unary(ND_%s) on cuda of %s", UNOPS[op],
                     t_describe(&a2));
            t_assert_close(&out, want, 2e-6, 1e-30, what, "unary_kernel: every element, "
                           "through offset_of");
            nd_release(&out);
        }
        /* into a strided destination: the rest of its buffer untouched */
        nd_array dst = t_random_view(&r, ndim, shape);
        int64_t nd;
        float *before = t_buffer(&dst, &nd);
        T_OK(nd_binary_into(ND_SUB, &a2, &b, &dst));
        for (int64_t i = 0; i < ODD[c]; i++)
            want[i] = x[i] - y[i];
        t_assert_values(&dst, want, "nd_binary_into(ND_SUB) into a strided view on cuda",
                        "write dst.data[offset_of(i, dst)], i < n");
        t_assert_outside_unchanged(&dst, before, &dst, "nd_binary_into on cuda");
        free(before);
        nd_release(&dst);
        free(x);
        free(y);
        free(want);
        free(ha);
        free(hb);
        nd_release(&a);
        nd_release(&a2);
        nd_release(&b);
        nd_release(&b2);
        nd_release(&bsmall);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Reductions                                                             */
/* ---------------------------------------------------------------------- */

/* The reference: fold a's elements over the axes in `mask`, in double
 * for sums; outputs row-major over the kept axes. */
static void ref_reduce(nd_reduce_op op, const nd_array *a, unsigned mask, float *want,
                       int64_t nout)
{
    float *x = t_gather(a);
    int64_t n = t_numel(a->ndim, a->shape);
    double *acc = malloc((size_t)(nout > 0 ? nout : 1) * sizeof(double));
    for (int64_t o = 0; o < nout; o++)
        acc[o] = op == ND_SUM ? 0.0 : -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[ND_MAX_DIMS], o = 0;
        t_unravel(i, a->ndim, a->shape, idx);
        for (int k = 0; k < a->ndim; k++)
            if (!(mask >> k & 1))
                o = o * a->shape[k] + idx[k];
        if (op == ND_SUM)
            acc[o] += x[i];
        else if (isnan(x[i]) || x[i] > acc[o])
            acc[o] = isnan(acc[o]) ? acc[o] : x[i];
    }
    for (int64_t o = 0; o < nout; o++)
        want[o] = (float)acc[o];
    free(acc);
    free(x);
}

/* Sums and maxes over every subset of axes of random views (up to 5
 * axes), with lengths around the warp and the block; maxes of all-negative
 * values. */
START_TEST(reduce_views_every_subset)
{
    t_rng r = t_rng_new(6030);
    for (int c = 0; c < NODD; c++) {
        int ndim = (int)t_int(&r, 1, 4);
        int64_t shape[ND_MAX_DIMS];
        shape_of_numel(&r, ndim, ODD[c], shape);
        nd_array a = t_random_read_view(&r, ndim, shape);
        /* all values negative: a max that starts from 0 shows */
        int64_t nb;
        float *h = t_buffer(&a, &nb);
        for (int64_t i = 0; i < nb; i++)
            h[i] = -t_float(&r, 0.5f, 9.0f);
        nd_array v = t_view_of(nb, h, a.ndim, a.shape, a.strides, a.offset);
        free(h);
        for (unsigned mask = 1; mask < (1u << ndim); mask++) {
            int axes[ND_MAX_DIMS], naxes = 0;
            int64_t nout = 1, nred = 1;
            for (int k = 0; k < ndim; k++) {
                if (mask >> k & 1) {
                    axes[naxes++] = k;
                    nred *= shape[k];
                } else {
                    nout *= shape[k];
                }
            }
            float *want = t_floats(nout);
            for (int op = ND_SUM; op <= ND_MAX; op++) {
                nd_array out;
                poison_next(1, &nout);
                T_OK(nd_reduce((nd_reduce_op)op, &v, naxes, axes, t_int(&r, 0, 1), &out));
                ref_reduce((nd_reduce_op)op, &v, mask, want, nout);
                char what[400];
                snprintf(what, sizeof what, "nd_reduce(%s) on cuda over axes mask 0x%x of %s "
                         "(%" PRId64 " outputs of %" PRId64 " elements)", op ? "MAX" : "SUM",
                         mask, t_describe(&v), nout, nred);
                if (op == ND_SUM)
                    t_assert_close(&out, want, 1e-5, 1e-5 * sqrt((double)nred) * 9, what,
                                   "every thread folds its elements; every warp's value "
                                   "reaches the final fold (a __syncthreads() between the "
                                   "shared slots' writes and their reads)");
                else
                    t_assert_values(&out, want, what, "start a max from -INFINITY, never "
                                    "0; lanes past the warps in use must not bring a 0 in");
                nd_release(&out);
            }
            free(want);
        }
        nd_release(&a);
        nd_release(&v);
    }
}
END_TEST

/* One long reduction per output at the lengths where the block changes
 * (32 to 256 threads), NaN anywhere in a row wins a max. */
START_TEST(reduce_lengths_and_nan)
{
    static const int64_t lens[] = { 1, 2, 31, 32, 33, 64, 65, 127, 128, 129, 255, 256, 257,
                                    1024, 1025, 3001 };
    t_rng r = t_rng_new(6031);
    for (size_t c = 0; c < sizeof lens / sizeof lens[0]; c++) {
        int64_t shape[2] = { 5, lens[c] };
        nd_array a = t_random_array(&r, 2, shape, -4.0f, -1.0f);
        float *x = t_gather(&a);
        int64_t nan_at = t_int(&r, 0, lens[c] - 1);
        x[2 * lens[c] + nan_at] = NAN;   /* row 2 has a NaN */
        nd_array v = t_array_of(2, shape, x);
        int axis = 1;
        float want[5];
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            nd_array out;
            T_OK(nd_reduce((nd_reduce_op)op, &v, 1, &axis, false, &out));
            ref_reduce((nd_reduce_op)op, &v, 2u, want, 5);
            char what[200];
            snprintf(what, sizeof what, "nd_reduce(%s) on cuda over the last axis of (5,%"
                     PRId64 "), a NaN in row 2 at %" PRId64, op ? "MAX" : "SUM", lens[c],
                     nan_at);
            t_assert_close(&out, want, 1e-5, 1e-4, what, "each of the block's warps folds "
                           "its lanes (__shfl_down_sync with deltas 16..1), lane 0 writes a "
                           "shared slot, __syncthreads(), warp 0 folds the slots; NaN wins "
                           "a max");
            nd_release(&out);
        }
        free(x);
        nd_release(&a);
        nd_release(&v);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Matmul                                                                 */
/* ---------------------------------------------------------------------- */

static void ref_matmul_views(const nd_array *a, const nd_array *b, int64_t batch, int64_t m,
                             int64_t k, int64_t n, float *c)
{
    float *x = t_gather(a), *y = t_gather(b);
    for (int64_t z = 0; z < batch; z++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += (double)x[(z * m + i) * k + p] * y[(z * k + p) * n + j];
                c[(z * m + i) * n + j] = (float)s;
            }
    free(x);
    free(y);
}

/* Sizes around tiles of 64 and 128 and panels of 8 and 16, non-square in
 * every way
 * (a swapped grid or block shows), a transposed and offset operand. */
START_TEST(matmul_tile_edges)
{
    static const int64_t sizes[][3] = {
        { 1, 1, 1 }, { 2, 3, 70 }, { 70, 3, 2 }, { 63, 15, 65 }, { 65, 17, 63 },
        { 64, 16, 64 }, { 129, 33, 1 }, { 1, 33, 129 }, { 17, 64, 96 }, { 100, 1, 3 },
        { 5, 20, 300 }, { 300, 20, 5 }, { 127, 9, 129 }, { 129, 7, 127 }, { 20, 8, 257 },
        { 257, 24, 3 }, { 130, 31, 66 },
    };
    t_rng r = t_rng_new(6040);
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        int64_t m = sizes[c][0], k = sizes[c][1], n = sizes[c][2];
        int64_t batch = (int64_t)(c % 3) + 1;
        int64_t sa[3] = { batch, m, k }, sb[3] = { batch, k, n }, sc[3] = { batch, m, n };
        nd_array a = t_random_view(&r, 3, sa), b = t_random_view(&r, 3, sb);
        float *want = t_floats(batch * m * n);
        ref_matmul_views(&a, &b, batch, m, k, n, want);
        for (int tiled = 0; tiled < 2; tiled++) {
            nd_array out;
            poison_next(3, sc);
            T_OK(tiled ? nd_matmul(&a, &b, &out) : nd_matmul_naive(&a, &b, &out));
            char what[400];
            snprintf(what, sizeof what, "%s on cuda of %s @ %s", tiled ? "nd_matmul" :
                     "nd_matmul_naive", t_describe(&a), t_describe2(&b));
            t_assert_shape(&out, 3, sc, what);
            t_assert_close(&out, want, 1e-5, 1e-5 * (double)(k + 1), what,
                           "grid x covers n (columns), y covers m (rows), z the batch; the "
                           "tiled kernel stages both panels, __syncthreads(), accumulates, "
                           "__syncthreads() again before the next panel; zeros outside");
            nd_release(&out);
        }
        free(want);
        nd_release(&a);
        nd_release(&b);
    }
}
END_TEST

/* A batch broadcast from one matrix (batch stride 0) and from a (1,...)
 * axis, with negative strides. */
START_TEST(matmul_broadcast_batch)
{
    t_rng r = t_rng_new(6041);
    int64_t m = 33, k = 18, n = 65, B = 3;
    int64_t s1[2] = { m, k }, sb[3] = { B, k, n };
    nd_array a1 = t_random_view(&r, 2, s1), b = t_random_view(&r, 3, sb);
    int64_t sh[3] = { B, m, k }, st[3] = { 0, a1.strides[0], a1.strides[1] };
    nd_array a;
    T_OK(nd_as_strided(&a1, 3, sh, st, a1.offset, &a));
    float *want = t_floats(B * m * n);
    ref_matmul_views(&a, &b, B, m, k, n, want);
    int64_t sc[3] = { B, m, n };
    for (int tiled = 0; tiled < 2; tiled++) {
        nd_array out;
        poison_next(3, sc);
        T_OK(tiled ? nd_matmul(&a1, &b, &out) : nd_matmul_naive(&a1, &b, &out));
        t_assert_close(&out, want, 1e-5, 1e-4, tiled ? "nd_matmul on cuda of a (33,18) "
                       "with a batch (3,18,65)" : "nd_matmul_naive on cuda of a (33,18) with "
                       "a batch (3,18,65)", "a broadcast operand's batch stride is 0: "
                       "matrix z starts at offset_of(z, abatch)");
        nd_release(&out);
    }
    free(want);
    nd_release(&a);
    nd_release(&a1);
    nd_release(&b);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Grids past 65535 blocks (plain build only)                             */
/* ---------------------------------------------------------------------- */

#define GRID_HINT "the grid is capped at 65535 blocks: loop i += gridDim.x * blockDim.x " \
    "(outputs: o += gridDim.x; matrices: z += gridDim.z) until the end"

/* 65535 * 256 + 777 elements through a reversed view: compact (the gather
 * kernel, not lesson 7), setitem and a binary op. */
START_TEST(large_views)
{
    int64_t n = 65535LL * 256 + 777, shape[2] = { 2, n / 2 + 1 }, total = shape[0] * shape[1];
    int64_t strides[2] = { 1, -2 };   /* not a permutation of compact memory: lesson 6 */
    nd_array a = t_strided(total, 2, shape, strides, (shape[1] - 1) * 2), out;
    T_OK(nd_compact(&a, &out));
    float *want = t_gather(&a), *got = t_gather(&out);
    for (int64_t i = 0; i < total; i++)
        CHECK(got[i] == want[i], "nd_compact on cuda of %s: element %" PRId64 " is %g, want "
              "%g. Hint: %s", t_describe(&a), i, (double)got[i], (double)want[i], GRID_HINT);
    free(got);
    T_OK(nd_setitem_scalar(&a, 1.0f));
    T_OK(nd_setitem(&a, &out));   /* back again */
    got = t_gather(&a);
    for (int64_t i = 0; i < total; i++)
        CHECK(got[i] == want[i], "nd_setitem on cuda of %" PRId64 " elements: element %"
              PRId64 " is %g, want %g. Hint: %s", total, i, (double)got[i], (double)want[i],
              GRID_HINT);
    free(got);
    nd_array sum;
    T_OK(nd_binary(ND_MUL, &a, &out, &sum));
    got = t_gather(&sum);
    for (int64_t i = 0; i < total; i++)
        CHECK(got[i] == want[i] * want[i], "nd_binary(ND_MUL) on cuda of %" PRId64
              " elements: element %" PRId64 " is %g. Hint: %s", total, i, (double)got[i],
              GRID_HINT);
    free(got);
    free(want);
    nd_release(&a);
    nd_release(&out);
    nd_release(&sum);
}
END_TEST

/* 65600 outputs of 40 (two warps each: both __syncthreads() matter when
 * a block folds a second output), and 65537 matrices. */
START_TEST(large_reduce_and_batch_views)
{
    int64_t shape[2] = { 40, 65600 }, strides[2] = { 1, 40 };   /* reduce over axis 0 */
    nd_array a = t_strided(shape[0] * shape[1], 2, shape, strides, 0), out;
    int axis = 0;
    for (int op = ND_SUM; op <= ND_MAX; op++) {
        T_OK(nd_reduce((nd_reduce_op)op, &a, 1, &axis, false, &out));
        float *want = t_floats(shape[1]);
        ref_reduce((nd_reduce_op)op, &a, 1u, want, shape[1]);
        t_assert_close(&out, want, 1e-6, 0, op ? "nd_reduce(MAX) on cuda over axis 0 of a "
                       "(40,65600) view: more outputs than blocks" : "nd_reduce(SUM) on cuda "
                       "over axis 0 of a (40,65600) view: more outputs than blocks",
                       GRID_HINT "; a block that folds a second output must __syncthreads() "
                       "before it writes the shared slots again");
        free(want);
        nd_release(&out);
    }
    nd_release(&a);

    t_rng r = t_rng_new(6050);
    int64_t sa[3] = { 65537, 2, 3 }, sb[3] = { 65537, 3, 1 };
    nd_array p = t_random_array(&r, 3, sa, -1, 1), q = t_random_array(&r, 3, sb, -1, 1), c;
    float *want = t_floats(65537 * 2);
    ref_matmul_views(&p, &q, 65537, 2, 3, 1, want);
    int64_t sc[3] = { 65537, 2, 1 };
    poison_next(3, sc);
    T_OK(nd_matmul_naive(&p, &q, &c));
    t_assert_close(&c, want, 1e-5, 1e-5, "nd_matmul_naive on cuda of a batch of 65537 "
                   "(2,3) @ (3,1)", GRID_HINT);
    nd_release(&c);
    poison_next(3, sc);
    T_OK(nd_matmul(&p, &q, &c));
    t_assert_close(&c, want, 1e-5, 1e-5, "nd_matmul on cuda of a batch of 65537 (2,3) @ "
                   "(3,1)", GRID_HINT);
    nd_release(&c);
    free(want);
    nd_release(&p);
    nd_release(&q);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors of the device                                                   */
/* ---------------------------------------------------------------------- */

/* What the framework makes of CUDA's errors: out of device memory is
 * ND_ERR_NOMEM; a failed CUDA call is ND_ERR_DEVICE naming the call, its
 * file:line and CUDA's error; an error that is not sticky leaves the
 * device usable. */
START_TEST(device_errors)
{
    require_index_transform();
    const char *name = NULL;
    T_OK(nd_device_available(ND_CUDA, &name));
    bool emulator = strstr(name, "emulator") != NULL;   /* "CUDA emulator (CPU)" */
    int64_t huge = (int64_t)1 << 42;
    nd_array big;
    nd_status s = nd_empty(ND_CUDA, 1, &huge, &big);
    CHECK(s == ND_ERR_NOMEM, "nd_empty of 2^42 floats on cuda returned %s (%s), not "
          "ND_ERR_NOMEM", nd_status_name(s), nd_last_error());
    /* a device-to-device copy between host pointers: not device memory */
    float host_src[64], host_dst[64];
    memset(host_src, 0, sizeof host_src);
    int64_t shape[1] = { 64 };
    int perm[1] = { 0 };
    s = nd_permute_bytes(ND_CUDA, host_src, host_dst, 4, 1, shape, perm);
    if (s != ND_ERR_NOT_IMPLEMENTED && (emulator || s != ND_OK)) {   /* (lesson 7 not done) */
        CHECK(s == ND_ERR_DEVICE, "nd_permute_bytes on cuda between host pointers returned %s "
              "(%s), not ND_ERR_DEVICE", nd_status_name(s), nd_last_error());
        const char *msg = nd_last_error();
        CHECK(strstr(msg, "cuda") != NULL && strstr(msg, ".cu:") != NULL &&
              strstr(msg, "cudaError") != NULL, "the message of a failed CUDA call names the "
              "call, its file:line and CUDA's error: '%s'", msg);
    }
    /* the device still works */
    int64_t n = 1000;
    nd_array a, b;
    T_OK(nd_full(ND_CUDA, 1, &n, 4.0f, &a));
    T_OK(nd_compact(&a, &b));
    float *got = t_gather(&b);
    for (int64_t i = 0; i < n; i++)
        CHECK(got[i] == 4.0f, "after a failed CUDA call, nd_compact on cuda gave %g at %"
              PRId64, (double)got[i], i);
    free(got);
    nd_release(&a);
    nd_release(&b);
}
END_TEST

Suite *hidden_06_cuda(void);

Suite *hidden_06_cuda(void)
{
    Suite *s = g_suite(6, "06_cuda");
    G_ADD_HOST(s, index_offset_exhaustive, 6, INDEX_HINT);
    G_ADD_HOST(s, index_offset_64bit, 3, "i, shape, strides and the offset are int64_t: keep "
               "every product and sum in 64 bits");
    G_ADD_CUDA(s, compact_views_odd, 5, "compact_kernel over views of every layout");
    G_ADD_CUDA(s, setitem_views_odd, 6, "setitem_kernel and fill_kernel over views: write "
               "exactly the view's elements");
    G_ADD_CUDA(s, copies_offset_windows, 4, "a view's offset and its numel (not its "
               "buffer's) decide what a kernel touches");
    G_ADD_CUDA(s, ewise_every_op, 6, "binary_kernel and unary_kernel, every op, broadcast "
               "operands");
    G_ADD_CUDA(s, reduce_views_every_subset, 6, "reduce_kernel over every axis subset");
    G_ADD_CUDA(s, reduce_lengths_and_nan, 4, "reduce_kernel at lengths around 32 and 256");
    G_ADD_CUDA(s, matmul_tile_edges, 6, "both matmul kernels at the tile edges");
    G_ADD_CUDA(s, matmul_broadcast_batch, 2, "matmul batches through offset_of");
    G_ADD_CUDA(s, device_errors, 1, "the framework's errors of the CUDA device");
    G_ADD_CUDA_PLAIN(s, large_views, 3, GRID_HINT);
    G_ADD_CUDA_PLAIN(s, large_reduce_and_batch_views, 3, GRID_HINT);
    return s;
}
