/*
 * h04_reduce.c -- hidden tests of lesson 4: nd_reduce, the sum and the max
 * over any set of axes, with and without keepdims, over the kit
 * (tests/kit/kit.h) with other seeds and more cases than the public tests:
 *
 *   axes        every subset of the axes of 4-D views, each listed in every
 *               order with random signs, keepdims on and off; thousands of
 *               random reductions of 0 to 8 axes; ND_ALL_AXES with axes
 *               NULL; naxes 0 (a copy); axes lists of exactly naxes entries
 *               (a read past them is a sanitizer report)
 *   layouts     permuted, stepped and reversed views, windows at offsets,
 *               stride 0 (a sum over a broadcast is count x value), size-1
 *               axes with junk strides, every 3-D shape with sizes 0..3,
 *               compact inputs such as nd_reduce's own results
 *   max         all-negative and all -inf blocks, -FLT_MAX next to -inf, the
 *               max at every position of runs around lane and leaf sizes; a
 *               NaN (or inf - inf in a sum) spoils its own block and no
 *               other, and a NaN outside the view none
 *   sums        long axes (2^22 and 10^7 terms) in many layouts within the
 *               pairwise bound (tests/kit/ref.c); integers, exact; more
 *               than 2^31 terms (a broadcast): counts are int64_t
 *   errors      every out-of-range and repeated axis, naxes out of range,
 *               NULL axes, unknown ops, a max over a size-0 axis (also when
 *               the result is empty), bad arrays: the right status, *out
 *               untouched (also when out is a), the input as it was
 */
#include "kit.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#define SUM_HINT "read a through its own offset and signed strides (0 on a broadcast " \
    "axis) for up to 8 axes; fold each block completely; the sum of an empty block is 0"
#define MAX_HINT "a max starts from the block's first element: a block of negative numbers " \
    "has a negative max, an all -inf block -inf; a NaN in a block makes its max NaN"
#define ACCURACY_HINT "add a long run in halves (pairwise summation), each half the same " \
    "way, so that each element goes through O(log n) roundings; add the runs' sums in " \
    "double: a running float total rounds at its own, growing scale"

static void reduce(k_ctx *k, k_call *c, int op, int naxes, const int64_t *axes, bool keep)
{
    k_reduce_of(c, op, naxes, axes, keep);
    k_check(k, c, NULL);
}

/* A random reduction of a random view of shape (nd axes) with `how`. */
static void random_reduce(k_ctx *k, int op, int nd, const int64_t *shape, int how, k_fill fill,
                          bool keep, int out)
{
    int64_t axes[ND_MAX_DIMS];
    k_call c = k_new(k, K_REDUCE);
    k_arg(&c, k_view(k, &c, nd, shape, how, fill));
    c.out = out;
    reduce(k, &c, op, k_axes(k, nd, axes), k_one_in(k, 3) ? NULL : axes, keep);
}

static k_fill fill_for(int op, int i)
{
    static const k_fill max_fills[] = { K_NEGATIVE, K_SPECIAL, K_RANDOM, K_INTEGERS };
    return op == ND_SUM ? (i % 2 ? K_RANDOM : K_INTEGERS) : max_fills[i % 4];
}

/* ---------------------------------------------------------------------- */
/* Axes                                                                   */
/* ---------------------------------------------------------------------- */

static void subsets(k_ctx *k, int op)
{
    static const int64_t shapes[][4] = {
        { 2, 3, 4, 5 }, { 3, 1, 4, 2 }, { 1, 1, 1, 1 }, { 4, 2, 1, 6 }, { 2, 0, 3, 2 },
        { 5, 3, 2, 1 }, { 1, 7, 1, 3 }, { 2, 2, 2, 2 }, { 3, 4, 0, 1 }, { 6, 5, 4, 3 },
        { 17, 1, 2, 3 }, { 2, 3, 1, 33 },
    };
    for (int s = 0; s < 24; s++)
        for (int mask = 0; mask < 16; mask++) {
            int64_t set[4], n = 0, orders = 1;
            for (int b = 0; b < 4; b++)
                if (mask >> b & 1)
                    set[n++] = b;
            for (int64_t i = 2; i <= n; i++)
                orders *= i;
            for (int64_t j = 0; j < orders + (mask == 0 || mask == 15); j++) {
                int64_t axes[4], pool[4], rest = n, code = j;   /* order j of n! */
                memcpy(pool, set, sizeof pool);
                for (int i = 0; i < n; i++, code /= rest + 1) {
                    int pick = (int)(code % rest);
                    axes[i] = pool[pick] - (k_one_in(k, 2) ? 4 : 0);
                    pool[pick] = pool[--rest];
                }
                k_call c = k_new(k, K_REDUCE);
                k_arg(&c, k_view(k, &c, 4, shapes[s / 2], K_ANY | (s % 2 ? K_REPEAT : 0),
                                 fill_for(op, s + mask)));
                bool all = j == orders;   /* every axis as ND_ALL_AXES, none as NULL */
                reduce(k, &c, op, all ? (mask ? ND_ALL_AXES : 0) : (int)n, all ? NULL : axes,
                       (j + s) % 2);
            }
        }
}

static void reduce_sum_every_axis_subset(k_ctx *k) { subsets(k, ND_SUM); }
static void reduce_max_every_axis_subset(k_ctx *k) { subsets(k, ND_MAX); }

static void random_8d(k_ctx *k, int op)
{
    for (int i = 0; i < 2500; i++) {
        int64_t shape[ND_MAX_DIMS];
        bool big = i % 6 == 5;
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 5 == 0 ? 0 : 1, big ? 40 : 4,
                         big ? 2000 : 400, shape);
        random_reduce(k, op, nd, shape, K_ANY | K_REPEAT, fill_for(op, i), k_one_in(k, 2),
                      K_OUT_NEW);
    }
}

static void reduce_sum_random_8d(k_ctx *k) { random_8d(k, ND_SUM); }
static void reduce_max_random_8d(k_ctx *k) { random_8d(k, ND_MAX); }

static void reduce_keepdims_in_place(k_ctx *k)
{
    for (int i = 0; i < 1500; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), 1, 5, 500, shape);
        random_reduce(k, i % 2, nd, shape, K_ANY | K_REPEAT, fill_for(i % 2, i / 2), true,
                      K_OUT_NEW);
    }
}

static void reduce_compact_inputs(k_ctx *k)
{
    /* compact arrays with offset 0 and a buffer of exactly their elements,
     * as nd_reduce returns them: a result reduced again */
    for (int i = 0; i < 600; i++) {
        int64_t shape[ND_MAX_DIMS], axes[ND_MAX_DIMS];
        int nd = k_shape(k, i % 7, i % 7 == 0 ? 0 : 1, 5, 600, shape);
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_compact(k, &c, nd, shape, fill_for(i % 2, i / 2)));
        reduce(k, &c, i % 2, k_axes(k, nd, axes), axes, i % 3 == 0);
    }
}

static void reduce_no_axes_copy(k_ctx *k)
{
    for (int i = 0; i < 900; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 6 == 0 ? 0 : 1, 4, 600, shape);
        for (int how = 0; how < 4; how++) {   /* naxes 0 with axes NULL or not; ND_ALL_AXES */
            k_call c = k_new(k, K_REDUCE);
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_SPECIAL));
            bool copy = how < 2 || k_numel(nd, shape) == 0;
            reduce(k, &c, how % 2, copy ? 0 : ND_ALL_AXES, how == 1 ? (int64_t[]){ 9 } : NULL,
                   k_one_in(k, 2));
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Layouts                                                                */
/* ---------------------------------------------------------------------- */

static void reduce_broadcast_views(k_ctx *k)
{
    for (int i = 0; i < 300; i++) {   /* one element, -1.25, on 1..8 axes of stride 0 */
        int64_t shape[ND_MAX_DIMS], zeros[ND_MAX_DIMS] = { 0 }, axes[ND_MAX_DIMS];
        int nd = k_shape(k, 1 + i % ND_MAX_DIMS, 1, i % 4 == 3 ? 300 : 7, 1 << 15, shape);
        int naxes = k_axes(k, nd, axes);
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            k_call c = k_new(k, K_REDUCE);
            k_arg(&c, k_strided(k, &c, 3, nd, shape, zeros, 1, K_DISTINCT));
            c.bufs[0].v[1] = -1.25f;
            reduce(k, &c, op, naxes, axes, i % 2);
        }
    }
    for (int i = 0; i < 200; i++) {   /* a row or a column of (m, n), either way */
        int64_t m = k_int(k, 1, 70), n = k_int(k, 1, 70), st = k_one_in(k, 2) ? 1 : -1;
        for (int col = 0; col < 2; col++)
            for (int op = ND_SUM; op <= ND_MAX; op++) {
                int64_t len = col ? m : n, off = 2 + (st < 0 ? len - 1 : 0), ax = k_int(k, -2, 2);
                int64_t strides[2] = { col ? st : 0, col ? 0 : st };
                k_call c = k_new(k, K_REDUCE);
                k_arg(&c, k_strided(k, &c, len + 5, 2, (int64_t[]){ m, n }, strides, off,
                                    fill_for(op, i)));
                reduce(k, &c, op, ax == 2 ? ND_ALL_AXES : 1, &ax, i % 3 == 0);
            }
    }
    for (int i = 0; i < 600; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, 1 + i % ND_MAX_DIMS, 1, 5, 600, shape);
        random_reduce(k, i % 2, nd, shape, K_REPEAT | K_STEPS, fill_for(i % 2, i), i % 4 == 0,
                      K_OUT_NEW);
    }
}

static void reduce_negative_strides_offsets(k_ctx *k)
{
    for (int i = 0; i < 1600; i++) {   /* every axis reversed, in a window at an offset */
        int64_t shape[ND_MAX_DIMS], st[ND_MAX_DIMS], axes[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), 1, i % 5 == 4 ? 30 : 5, 900, shape);
        int64_t pad = k_int(k, 0, 9), off = pad;
        for (int d = nd - 1, s = 1; d >= 0; s *= (int)shape[d--]) {
            bool back = i % 2 == 0 || k_one_in(k, 2);
            st[d] = back ? -s : s;
            off += back ? (shape[d] - 1) * s : 0;
        }
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_strided(k, &c, pad + k_numel(nd, shape) + k_int(k, 0, 9), nd, shape, st,
                            off, fill_for(i % 2, i / 2)));
        reduce(k, &c, i % 2, k_axes(k, nd, axes), axes, i % 4 == 1);
    }
}

static void reduce_empty_and_unit_axes(k_ctx *k)
{
    for (int i = 0; i < 64; i++)   /* every 3-D shape with sizes 0..3, every axis set */
        for (int op = ND_SUM; op <= ND_MAX; op++)
            for (int mask = 0; mask < 9; mask++)
                for (int keep = 0; keep < 2; keep++) {
                    int64_t shape[3] = { i % 4, i / 4 % 4, i / 16 }, axes[3];
                    int n = 0;
                    for (int b = 0; b < 3; b++)
                        if (mask >> b & 1)
                            axes[n++] = k_one_in(k, 2) ? b : b - 3;
                    k_call c = k_new(k, K_REDUCE);
                    k_arg(&c, k_view(k, &c, 3, shape, K_ANY | K_REPEAT, fill_for(op, i)));
                    reduce(k, &c, op, mask == 8 ? ND_ALL_AXES : n, axes, keep);
                }
    for (int i = 0; i < 800; i++) {   /* mostly size-1 axes (junk strides), a 0 now and then */
        int64_t shape[ND_MAX_DIMS];
        int nd = 1 + i % ND_MAX_DIMS;
        for (int d = 0; d < nd; d++)
            shape[d] = k_one_in(k, 4) ? k_int(k, 2, 6) : 1;
        if (i % 4 == 0)
            shape[k_int(k, 0, nd - 1)] = 0;
        random_reduce(k, i % 2, nd, shape, K_ANY, fill_for(i % 2, i), i % 3 == 1, K_OUT_NEW);
    }
}

/* ---------------------------------------------------------------------- */
/* The max                                                                */
/* ---------------------------------------------------------------------- */

/* The max of a run of n elements (step step) set by `kind`: negative with
 * the largest at position at; all -inf; -inf with one -FLT_MAX at `at`. */
static void run_max(k_ctx *k, int64_t n, int64_t step, int kind, int64_t at)
{
    int64_t size = 3 * n + 4, off = step > 0 ? 2 : 2 + (n - 1) * -step;
    k_call c = k_new(k, K_REDUCE);
    k_arg(&c, k_strided(k, &c, size, 1, &n, &step, off, K_POISON));
    float *v = c.bufs[0].v;
    for (int64_t i = 0; i < size; i++)
        v[i] = kind ? -INFINITY : -(float)k_int(k, 2, 50) - 0.5f;
    v[0] = v[size - 1] = 5;   /* outside the view */
    if (kind != 1)
        v[off + at * step] = kind ? -FLT_MAX : -1.5f;
    reduce(k, &c, ND_MAX, at % 2 ? ND_ALL_AXES : 1, (int64_t[]){ 0 }, false);
}

static void reduce_max_negative_and_inf(k_ctx *k)
{
    static const int64_t steps[] = { 1, 2, -1, -3 };
    for (int64_t n = 1; n <= 520; n = n < 70 ? n + 1 : n < 250 ? 250 : n < 262 ? n + 1 :
                                      n < 508 ? 508 : n + 1) {
        for (int64_t at = 0; at < n; at += n <= 40 ? 1 : 1 + k_int(k, 0, n / 4))
            run_max(k, n, steps[(n + at) % 4], 0, at);
        run_max(k, n, steps[n % 4], 1, 0);
        run_max(k, n, steps[(n + 1) % 4], 2, k_int(k, 0, n - 1));
    }
    for (int i = 0; i < 400; i++) {
        int64_t shape[3];
        int nd = k_shape(k, 2 + i % 2, 1, i % 5 == 0 ? 60 : 9, 3000, shape);
        random_reduce(k, ND_MAX, nd, shape, K_ANY | K_REPEAT, i % 2 ? K_NEGATIVE : K_SPECIAL,
                      i % 2, K_OUT_NEW);
    }
}

static void reduce_nan_one_block(k_ctx *k)
{
    int64_t shape[3] = { 5, 6, 7 };
    for (int i = 0; i < 60; i++)   /* one or two NaN, or inf and -inf, in a (5,6,7) view */
        for (int op = ND_SUM; op <= ND_MAX; op++)
            for (int mask = 1; mask < 8; mask++) {
                k_call c = k_new(k, K_REDUCE);
                k_arr a = k_view(k, &c, 3, shape, K_ANY, K_NEGATIVE);
                for (int j = 0; j <= i % 2; j++) {
                    int64_t idx[3] = { k_int(k, 0, 4), k_int(k, 0, 5), k_int(k, 0, 6) };
                    c.bufs[a.buf].v[k_offset(&a, idx)] = i % 4 == 3 ? (j ? -INFINITY : INFINITY)
                                                                    : NAN;
                }
                k_arg(&c, a);
                int64_t axes[3], n = 0;
                for (int b = 0; b < 3; b++)
                    if (mask >> b & 1)
                        axes[n++] = b;
                reduce(k, &c, op, (int)n, axes, mask == 5);
            }
    for (int64_t n = 1; n <= 300; n += 1 + n / 8)   /* NaN between the view's elements */
        for (int op = ND_SUM; op <= ND_MAX; op++)
            for (int64_t st = -2; st <= 2; st += 4) {
                k_call c = k_new(k, K_REDUCE);
                k_arg(&c, k_strided(k, &c, 2 * n + 2, 1, &n, &st, st > 0 ? 0 : 2 * n, K_POISON));
                for (int64_t i = 0; i < 2 * n + 2; i += 2)
                    c.bufs[0].v[i] = -(float)(i % 17) - 1;
                reduce(k, &c, op, ND_ALL_AXES, NULL, false);
            }
    for (int i = 0; i < 6; i++) {   /* NaN first, last or anywhere in every third row */
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_strided(k, &c, 40 * 37, 2, (int64_t[]){ 40, 37 }, (int64_t[]){ 37, 1 }, 0,
                            K_NEGATIVE));
        for (int row = 0; row < 40; row += 3)
            c.bufs[0].v[row * 37 + (i % 3 == 0 ? 0 : i % 3 == 1 ? 36 : row % 37)] = NAN;
        reduce(k, &c, ND_MAX, 1, (int64_t[]){ i / 3 }, false);
    }
}

/* ---------------------------------------------------------------------- */
/* Long sums                                                              */
/* ---------------------------------------------------------------------- */

typedef struct {
    int64_t size;   /* floats in the buffer */
    int ndim;
    int64_t shape[8], strides[8], offset;
    int naxes;
    int64_t axes[3];
    bool keep;
} layout;

/* The sum (and with `max` the max) over each layout of a buffer whose
 * element i is value(k, i). */
static void layouts(k_ctx *k, const layout *l, int n, float (*value)(k_ctx *, int64_t),
                    bool max)
{
    for (int i = 0; i < n; i++)
        for (int op = ND_SUM; op <= (max ? ND_MAX : ND_SUM); op++) {
            k_call c = k_new(k, K_REDUCE);
            k_arg(&c, k_strided(k, &c, l[i].size, l[i].ndim, l[i].shape, l[i].strides,
                                l[i].offset, K_POISON));
            for (int64_t j = 0; j < l[i].size; j++)
                c.bufs[0].v[j] = value(k, j);
            reduce(k, &c, op, l[i].naxes, l[i].axes, l[i].keep);
        }
}

static float drifting(k_ctx *k, int64_t i) { (void)i; return 0.1f + k_float(k, 0, 0.01f); }
static float tenth(k_ctx *k, int64_t i) { (void)k; (void)i; return 0.1f; }
static float small_int(k_ctx *k, int64_t i) { (void)i; return (float)k_int(k, -3, 3); }

static void reduce_sum_accuracy_layouts(k_ctx *k)
{
    /* 2^22 values 0.1 + [0, 0.01): a running float total drifts far */
    static const layout l[] = {
        { 1 << 22, 1, { 1 << 22 }, { 1 }, 0, 1, { 0 }, false },
        { 1 << 22, 1, { 1 << 22 }, { -1 }, (1 << 22) - 1, ND_ALL_AXES, { 0 }, false },
        { 1 << 22, 1, { 1398101 }, { 3 }, 1, 1, { -1 }, false },
        { 1 << 22, 2, { 2048, 2048 }, { 1, 2048 }, 0, 2, { 1, 0 }, false },
        { 1 << 22, 2, { 1048575, 3 }, { 4, 1 }, 1, 2, { -2, -1 }, false },   /* runs of 3 */
        { 1 << 22, 3, { 128, 128, 256 }, { 1, 32768, 128 }, 0, 3, { -1, -3, -2 }, false },
        { 1 << 22, 2, { 4, 1 << 20 }, { 1 << 20, 1 }, 0, 1, { 1 }, false },
        { 3, 2, { 2097152, 2 }, { 0, 1 }, 1, 1, { 0 }, false },             /* a broadcast row */
        { 1 << 21, 2, { 2, 1 << 21 }, { 0, -1 }, (1 << 21) - 1, ND_ALL_AXES, { 0 }, false },
    };
    layouts(k, l, (int)(sizeof l / sizeof l[0]), drifting, false);
}

static void reduce_sum_naive_fails(k_ctx *k)
{
    /* 10^7 copies of 0.1f: one running float total is 8.8% off */
    static const layout l[] = {
        { 10000000, 3, { 100, 1000, 100 }, { 100000, 100, 1 }, 0, 3, { -1, 0, -2 }, false },
        { 10000000, 2, { 5000, 2000 }, { 1, 5000 }, 0, ND_ALL_AXES, { 0 }, true },
        { 10000000, 2, { 3333333, 3 }, { 3, 1 }, 1, 2, { 1, 0 }, false },
        { 2000000, 2, { 5, 2000000 }, { 0, 1 }, 0, ND_ALL_AXES, { 0 }, false },
        { 5000000, 2, { 2, 5000000 }, { 0, -1 }, 4999999, 1, { -1 }, false },
        { 5, 2, { 2000000, 5 }, { 0, -1 }, 4, 2, { 0, 1 }, true },          /* runs of 5 */
    };
    layouts(k, l, (int)(sizeof l / sizeof l[0]), tenth, false);
}

static void reduce_large_exact(k_ctx *k)
{
    /* 2^22 integers -3..3: every sum exact in any order */
    static const layout l[] = {
        { 1 << 22, 2, { 2048, 2048 }, { 1, 2048 }, 0, 1, { 0 }, false },
        { 1 << 22, 2, { 2048, 2048 }, { 1, 2048 }, 0, 1, { -1 }, true },
        { 1 << 22, 2, { 4096, 1024 }, { 1024, 1 }, 0, 1, { 0 }, false },
        /* a (8,8,8,8,8,8,4,4) array with its axes reversed in order and direction */
        { 1 << 22, 8, { 4, 4, 8, 8, 8, 8, 8, 8 },
          { -1, -4, -16, -128, -1024, -8192, -65536, -524288 }, (1 << 22) - 1, 2, { 0, 7 },
          false },
        { 1 << 22, 8, { 4, 4, 8, 8, 8, 8, 8, 8 },
          { -1, -4, -16, -128, -1024, -8192, -65536, -524288 }, (1 << 22) - 1, 3, { -3, 1, 4 },
          true },
    };
    layouts(k, l, (int)(sizeof l / sizeof l[0]), small_int, true);
}

static void reduce_count_past_int32(k_ctx *k)
{
    /* 2^31 + 1024 elements (one float, stride 0): a 32-bit count wraps */
    static const layout l[] = {
        { 1, 1, { 2147484672 }, { 0 }, 0, 1, { 0 }, false },
        { 2, 2, { 2, 1073742336 }, { 1, 0 }, 0, ND_ALL_AXES, { 0 }, false },
    };
    layouts(k, l, 2, drifting, false);
}

/* ---------------------------------------------------------------------- */
/* out == a, errors                                                       */
/* ---------------------------------------------------------------------- */

static void reduce_out_aliases_input(k_ctx *k)
{
    for (int i = 0; i < 800; i++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 5 == 0 ? 0 : 1, 4, 400, shape);
        random_reduce(k, i % 2, nd, shape, K_ANY, fill_for(i % 2, i), k_one_in(k, 2), 0);
    }
    static const struct { int naxes; int64_t axes[3]; nd_status want; } bad[] = {
        { 1, { 2 }, ND_ERR_AXIS }, { 2, { 0, -2 }, ND_ERR_AXIS }, { 3, { 0, 1, 0 }, ND_ERR_ARG },
        { 1, { -3 }, ND_ERR_AXIS },
    };
    for (int i = 0; i < 8; i++) {
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 2, 3 }, K_DISTINCT));
        c.out = 0;
        k_reduce_of(&c, i % 2, bad[i / 2].naxes, bad[i / 2].axes, false);
        k_expect(k, &c, bad[i / 2].want, NULL);
    }
}

/* nd_reduce(op, a of ndim axes 1, 2, 3, 1, ..., naxes, axes) must fail with want. */
static void refused(k_ctx *k, int op, int ndim, int naxes, const int64_t *axes, nd_status want)
{
    static const int64_t shape[ND_MAX_DIMS] = { 1, 2, 3, 1, 2, 3, 1, 2 };
    k_call c = k_new(k, K_REDUCE);
    k_arg(&c, k_view(k, &c, ndim, shape, K_ANY, K_DISTINCT));
    k_reduce_of(&c, op, naxes, axes, k_one_in(k, 2));
    k_expect(k, &c, want, NULL);
}

static void reduce_axis_errors(k_ctx *k)
{
    static const int64_t bad[] = { 0, 0, 1, 6, 100, -100, INT_MAX, INT_MIN };
    for (int nd = 1; nd <= ND_MAX_DIMS; nd++)
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            int64_t axes[ND_MAX_DIMS];
            for (int b = 0; b < 8; b++)   /* out of range: alone, or with the other axes */
                for (int at = -1; at < nd; at++) {
                    int64_t v = b >= 4 ? bad[b] : b % 2 ? -nd - 1 - bad[b] : nd + bad[b];
                    for (int d = 0; d < nd; d++)
                        axes[d] = d == at ? v : d % 2 ? d - nd : d;
                    refused(k, op, nd, at < 0 ? 1 : nd, at < 0 ? &v : axes, ND_ERR_AXIS);
                }
            for (int d = 0; d < nd && nd >= 2; d++)   /* an axis twice, as d or d - nd */
                for (int p = 0; p < 4; p++) {
                    int n = 0;
                    axes[n++] = p & 1 ? d - nd : d;
                    for (int e = 0; e < nd && nd >= 3 && n < nd - 1; e++)
                        if (e != d)
                            axes[n++] = e;
                    axes[n++] = p & 2 ? d - nd : d;
                    refused(k, op, nd, n, axes, ND_ERR_AXIS);
                }
        }
}

static void reduce_argument_errors(k_ctx *k)
{
    for (int nd = 0; nd <= ND_MAX_DIMS; nd++)
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            int64_t axes[ND_MAX_DIMS + 2] = { 0 };
            int bad_n[] = { nd + 1, -2, -100, INT_MIN, ND_MAX_DIMS + 1 };
            for (int b = 0; b < 5; b++)
                refused(k, op, nd, bad_n[b], axes, ND_ERR_ARG);
            for (int n = 1; n <= nd; n++)
                refused(k, op, nd, n, NULL, ND_ERR_ARG);
        }
    static const int ops[] = { 2, 3, -1, 100, INT_MAX, INT_MIN };
    for (int i = 0; i < 12; i++) {
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 2, 3 }, K_DISTINCT));
        c.out = i % 2 ? 0 : K_OUT_NEW;
        k_reduce_of(&c, ops[i / 2], ND_ALL_AXES, NULL, i % 4 == 1);
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
    for (int op = ND_SUM; op <= ND_MAX; op++) {
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_view(k, &c, 3, (int64_t[]){ 2, 1, 3 }, K_ANY, K_DISTINCT));
        k_reduce_of(&c, op, ND_ALL_AXES, NULL, false);
        k_check_bad_arrays(k, &c);
    }
}

static void reduce_max_empty_error(k_ctx *k)
{
    for (int i = 0; i < 400; i++) {
        int64_t shape[ND_MAX_DIMS], axes[ND_MAX_DIMS], others[ND_MAX_DIMS];
        int nd = 1 + i % ND_MAX_DIMS, n = 0, m = 0, zero = (int)k_int(k, 0, nd - 1);
        for (int d = 0; d < nd; d++)
            shape[d] = d == zero || k_one_in(k, 3) ? 0 : k_int(k, 1, 3);
        for (int d = 0; d < nd; d++) {
            if (d == zero || k_one_in(k, 3))
                axes[n++] = d - (k_one_in(k, 2) ? nd : 0);
            if (shape[d] > 0)
                others[m++] = d - (k_one_in(k, 2) ? nd : 0);
        }
        for (int j = 0; j < 5; j++) {   /* max: over the 0 axis, all, out == a; sums; others */
            k_call c = k_new(k, K_REDUCE);
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_NEGATIVE));
            c.out = j == 2 ? 0 : K_OUT_NEW;
            k_reduce_of(&c, j == 3 ? ND_SUM : ND_MAX, j == 1 ? ND_ALL_AXES : j == 4 ? m : n,
                        j == 4 ? others : axes, i % 2);
            if (j < 3)
                k_expect(k, &c, ND_ERR_SHAPE, NULL);
            else
                k_check(k, &c, NULL);
        }
    }
}

/* Reductions of arrays with no elements, any strides and sizes up to 2^44
 * (nd.h, "Valid arrays", rule 4): sums of nothing are 0, maxes over an
 * empty axis ND_ERR_SHAPE, and no stride is read (issue #17). */
static void reduce_empty_wild_strides(k_ctx *k)
{
    for (int i = 0; i < 300; i++) {
        k_call c = k_new(k, K_REDUCE);
        int nd = (int)k_int(k, 1, 6);
        k_arg(&c, k_empty_view(k, &c, nd, 4));
        int64_t axes[ND_MAX_DIMS];
        int naxes = k_axes(k, nd, axes);
        int64_t kept = 1;   /* the result's size: kept small (sums of nothing are zeros) */
        for (int d = 0; d < nd && naxes != ND_ALL_AXES; d++) {
            bool red = false;
            for (int j = 0; j < naxes; j++)
                red |= axes[j] == d || axes[j] == d - nd;
            kept *= red ? 1 : c.args[0].shape[d];
        }
        if (kept > 4096)
            continue;
        k_reduce_of(&c, i % 2 ? ND_SUM : ND_MAX, naxes, axes, k_one_in(k, 2));
        k_check(k, &c, "an array with no elements may carry any strides: its sums are 0, "
                "computed without them");
    }
}

static const k_test tests[] = {
    K_TEST(reduce_sum_every_axis_subset, K_CPU, 3, "mark the listed axes (a negative one "
           "counts from the end; their order does not matter); output element i folds every "
           "element whose index, with the reduced axes left out, is i"),
    K_TEST(reduce_max_every_axis_subset, K_CPU, 3, "reduce the axes as for the sum; " MAX_HINT),
    K_TEST(reduce_sum_random_8d, K_BOTH, 3, SUM_HINT),
    K_TEST(reduce_max_random_8d, K_CPU, 3, MAX_HINT),
    K_TEST(reduce_keepdims_in_place, K_BOTH, 2, "with keepdims the result has a's ndim, each "
           "reduced axis IN ITS PLACE with size 1 (not moved to the end), the same values"),
    K_TEST(reduce_compact_inputs, K_BOTH, 2, "a result of nd_reduce is an input like any "
           "other: compact, offset 0, a buffer of exactly its elements"),
    K_TEST(reduce_no_axes_copy, K_BOTH, 2, "naxes 0 reduces no axis: a compact copy of a in a "
           "NEW buffer, NaN, inf and -0.0 included; with ND_ALL_AXES never read axes"),
    K_TEST(reduce_broadcast_views, K_CPU, 3, "a stride-0 axis shows one element again and "
           "again: a sum adds it once per position; step by the stride, even when it is 0"),
    K_TEST(reduce_negative_strides_offsets, K_BOTH, 2, "begin at data + offset (the INPUT "
           "view's), step by the signed strides, and ignore the stride of a size-1 axis"),
    K_TEST(reduce_empty_and_unit_axes, K_BOTH, 3, "a sum over a size-0 axis is 0 for each "
           "output; a max over one is ND_ERR_SHAPE even when the result is empty; a size-1 "
           "axis reduces to its one element"),
    K_TEST(reduce_max_negative_and_inf, K_BOTH, 3, MAX_HINT "; fold EVERY partial max, the "
           "tail's too, into the result"),
    K_TEST(reduce_nan_one_block, K_BOTH, 3, "a NaN makes the max of ITS block NaN (a plain > "
           "or fmaxf drops it), and no other output; inf - inf makes a sum NaN; read only "
           "the elements of the view"),
    K_TEST(reduce_sum_accuracy_layouts, K_BOTH, 4, ACCURACY_HINT),
    K_TEST(reduce_sum_naive_fails, K_CPU, 3, ACCURACY_HINT),
    K_TEST(reduce_large_exact, K_CPU, 2, "sizes, strides and offsets are int64_t; a 2^22-"
           "element or 8-D view is folded in one pass over its blocks, whatever their layout"),
    K_TEST(reduce_count_past_int32, K_CPU | K_PLAIN, 2, "a run may hold more than 2^31 "
           "elements: every count and index is int64_t, never int"),
    K_TEST(reduce_out_aliases_input, K_BOTH, 2, "with out == a, build the result in a new "
           "array first, then let nd_replace drop a's old reference; on an error leave a as "
           "it was"),
    K_TEST(reduce_axis_errors, K_BOTH, 3, "normalise each axis (add ndim if negative), then "
           "reject one outside 0..ndim-1, or one reduced twice (1 and 1-ndim are the same "
           "axis), with ND_ERR_AXIS before writing *out"),
    K_TEST(reduce_argument_errors, K_BOTH, 2, "check op, a, out, naxes (0..ndim, or "
           "ND_ALL_AXES) and axes (NULL only with naxes 0 or ND_ALL_AXES) with ND_ERR_ARG "
           "before reading any axis"),
    K_TEST(reduce_max_empty_error, K_BOTH, 2, "a max over a size-0 axis has no value: "
           "ND_ERR_SHAPE before allocating anything, even when the result has no elements; "
           "the SUM of no elements is 0"),
    K_TEST(reduce_empty_wild_strides, K_BOTH, 1, SUM_HINT),
};
K_SUITE(hidden_04, 4, "04_reduce", tests);
