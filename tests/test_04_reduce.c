/*
 * test_04_reduce.c -- public tests of lesson 4: nd_reduce, the sum and the
 * max over any set of axes, with and without keepdims.
 *
 * The kit builds the inputs with nd_as_strided (never with lesson 1 or 2
 * functions); its reference wants NumPy's shape, a max exactly, and a sum
 * exactly when every partial sum is a float, else within the bound a
 * pairwise sum meets (tests/kit/ref.c).  The tests follow the lesson: sums
 * first, then the max.
 */
#include "kit.h"

#include <float.h>
#include <limits.h>
#include <math.h>

#define SUM_HINT "output element i folds every element whose index, with the reduced " \
    "axes left out, is i; read a through its offset and strides (negative or 0 too), and " \
    "give the result NumPy's shape: the kept axes, a 1 in place of each reduced one with " \
    "keepdims"
#define MAX_HINT "start the max from the block's first element (not from 0 or -FLT_MAX: a " \
    "block of negative numbers has a negative max), fold every element with max2, and " \
    "let a NaN anywhere in the block make it NaN, as np.max does"
#define ACCURACY_HINT "adding one by one (even in several lanes) loses accuracy as the " \
    "total grows; sum the two halves of a long run separately and add them (pairwise " \
    "summation), and add the sums of many runs in double"

static void reduce(k_ctx *k, k_call *c, int op, int naxes, const int64_t *axes, bool keep,
                   const char *hint)
{
    k_reduce_of(c, op, naxes, axes, keep);
    k_check(k, c, hint);
}

/* Views of a buffer of floats; `what` is the hint of a case. */
typedef struct {
    const char *what;
    int ndim;
    int64_t shape[3], strides[3], offset;
    int naxes;
    int64_t axes[3];
    bool keep;
} example;

/* The reductions of these n views of a buffer of `size` floats; `hint`, or
 * else each case's `what`, is the hint. */
static void examples(k_ctx *k, int op, const example *e, int n, int64_t size, k_fill fill,
                     const char *hint)
{
    for (int i = 0; i < n; i++) {
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_strided(k, &c, size, e[i].ndim, e[i].shape, e[i].strides, e[i].offset, fill));
        reduce(k, &c, op, e[i].naxes, e[i].naxes > 0 ? e[i].axes : NULL, e[i].keep,
               hint ? hint : e[i].what);
    }
}

/* Views of a buffer of 24 floats, and their sums worked out by hand; the
 * max takes them too. */
static const example EXAMPLES[] = {
    { "column sums of a (2,3) array: shape (3,)", 2, { 2, 3 }, { 3, 1 }, 0, 1, { 0 }, false },
    { "row sums: shape (2,)", 2, { 2, 3 }, { 3, 1 }, 0, 1, { 1 }, false },
    { "row sums, axis -1, keepdims: shape (2,1)", 2, { 2, 3 }, { 3, 1 }, 0, 1, { -1 }, true },
    { "both axes listed: a 0-d result", 2, { 2, 3 }, { 3, 1 }, 0, 2, { 0, 1 }, false },
    { "both axes listed from the end: a 0-d result", 2, { 2, 3 }, { 3, 1 }, 0, 2, { -1, -2 },
      false },
    { "every axis (ND_ALL_AXES, axes NULL), keepdims: shape (1,1)", 2, { 2, 3 }, { 3, 1 },
      0, ND_ALL_AXES, { 0 }, true },
    { "no axis (naxes 0): a copy", 2, { 2, 3 }, { 3, 1 }, 0, 0, { 0 }, false },
    { "axes (0,2) of a (2,3,4) array: shape (3,)", 3, { 2, 3, 4 }, { 12, 4, 1 }, 0, 2,
      { 0, 2 }, false },
    { "axes (2,0), keepdims: shape (1,3,1)", 3, { 2, 3, 4 }, { 12, 4, 1 }, 0, 2, { 2, 0 }, true },
    { "axes (-1,-3), the same as (0,2)", 3, { 2, 3, 4 }, { 12, 4, 1 }, 0, 2, { -1, -3 }, false },
    { "axis 1, keepdims: shape (2,1,4), not (2,4,1)", 3, { 2, 3, 4 }, { 12, 4, 1 }, 0, 1,
      { 1 }, true },
    { "every axis of (2,3,4)", 3, { 2, 3, 4 }, { 12, 4, 1 }, 0, ND_ALL_AXES, { 0 }, false },
    { "row sums of a transpose (strides (1,3))", 2, { 3, 2 }, { 1, 3 }, 0, 1, { 1 }, false },
    { "column sums of a transpose", 2, { 3, 2 }, { 1, 3 }, 0, 1, { 0 }, false },
    { "a reversed row (stride -1, offset 5)", 1, { 6 }, { -1 }, 5, 1, { 0 }, false },
    { "column sums of a broadcast row (stride 0)", 2, { 3, 4 }, { 0, 1 }, 0, 1, { 0 }, false },
    { "row sums of a broadcast row, keepdims", 2, { 3, 4 }, { 0, 1 }, 4, 1, { 1 }, true },
    { "every other element, from offset 1", 1, { 4 }, { 2 }, 1, 1, { 0 }, false },
    { "a scalar (ndim 0) at offset 5, every axis, keepdims", 0, { 0 }, { 0 }, 5,
      ND_ALL_AXES, { 0 }, true },
};
#define NEXAMPLES (int)(sizeof EXAMPLES / sizeof EXAMPLES[0])

static void reduce_examples(k_ctx *k)
{
    examples(k, ND_SUM, EXAMPLES, NEXAMPLES, 24, K_DISTINCT, NULL);
}

/* k_count(k, 700) random reductions (op) of random views of 0..8 axes,
 * filled in turn with fills: every fifth with runs past a few lane groups;
 * stride 0 on some axes half of the time; compact now and then. */
static void random_reductions(k_ctx *k, int op, const k_fill *fills, const char *hint)
{
    for (int i = 0; i < k_count(k, 700); i++) {
        int64_t shape[ND_MAX_DIMS], axes[ND_MAX_DIMS];
        bool big = i % 5 == 4;
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), i % 4 == 0 ? 0 : 1, big ? 64 : 5,
                         big ? 1024 : 256, shape);
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_view(k, &c, nd, shape, i % 6 == 5 ? 0 : K_ANY | (i % 2 ? K_REPEAT : 0),
                         fills[i % 3]));
        int naxes = k_axes(k, nd, axes);
        reduce(k, &c, op, naxes, naxes > 0 || i % 2 ? axes : NULL, k_one_in(k, 2), hint);
    }
}

static void reduce_sum_random(k_ctx *k)
{
    random_reductions(k, ND_SUM, (const k_fill[]){ K_RANDOM, K_INTEGERS, K_DISTINCT },
                      SUM_HINT);
}

static void reduce_all_and_no_axes(k_ctx *k)
{
    /* ND_ALL_AXES (axes NULL), every axis listed in any order, and naxes 0
     * (a copy in a new buffer: NaN, inf and -0 too; axes NULL or not read),
     * on 0 to 8 axes, the sum and the max */
    static const int64_t unread[1] = { 9 };
    for (int i = 0; i < k_count(k, 4 * (ND_MAX_DIMS + 1)); i++) {
        int64_t shape[ND_MAX_DIMS], all[ND_MAX_DIMS];
        int nd = k_shape(k, i % (ND_MAX_DIMS + 1), 1, 4, 512, shape);
        k_perm(k, nd, all);
        for (int d = 0; d < nd; d++)
            all[d] -= k_one_in(k, 2) ? nd : 0;
        for (int how = 0; how < 6; how++) {
            k_call c = k_new(k, K_REDUCE);
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT,
                             how % 3 == 2 ? K_SPECIAL : K_RANDOM));
            reduce(k, &c, i % 2, how % 3 == 0 ? ND_ALL_AXES : how % 3 == 1 ? nd : 0,
                   how % 3 == 1 ? all : how == 2 ? unread : NULL, how > 2, "ND_ALL_AXES "
                   "reduces every axis (a 0-d result, or all 1s with keepdims); naxes 0 "
                   "reduces none: a compact copy in a new buffer, each block a single element");
        }
    }
}

static void reduce_out_aliases_input(k_ctx *k)
{
    for (int i = 0; i < k_count(k, 60); i++) {   /* nd_reduce(op, &x, ..., &x) */
        int64_t shape[ND_MAX_DIMS] = { 3, 4 }, axes[ND_MAX_DIMS] = { 1 };
        int nd = i == 0 ? 2 : k_shape(k, i % 5, 1, 5, 200, shape);
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY, i % 2 ? K_NEGATIVE : K_RANDOM));
        c.out = 0;
        reduce(k, &c, i % 2, i == 0 ? 1 : k_axes(k, nd, axes), axes, k_one_in(k, 2),
               "when out is a, the result replaces a's reference only at the end (nd_reduce, "
               "given, does it)");
    }
}

static void reduce_empty(k_ctx *k)
{
    /* empty views at the end of a buffer of 12: a sum over a size-0 axis
     * is 0; a max over one is ND_ERR_SHAPE, even when the result is empty;
     * an empty result is no error */
    static const struct {
        int ndim;
        int64_t shape[3];
        int naxes;
        int64_t axes[2];
        bool keep;
    } cases[] = {
        { 2, { 3, 0 }, 1, { 1 }, false },  { 2, { 3, 0 }, 1, { 1 }, true },
        { 1, { 0 }, ND_ALL_AXES, { 0 }, false }, { 3, { 2, 0, 3 }, 1, { -2 }, false },
        { 3, { 2, 0, 3 }, 2, { 0, 1 }, true }, { 2, { 0, 3 }, 1, { 1 }, false },
        { 2, { 0, 3 }, 1, { 0 }, false },  { 2, { 0, 0 }, 1, { 1 }, false },
        { 2, { 2, 0 }, 0, { 0 }, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            k_call c = k_on_view(k, K_REDUCE, 12, cases[i].ndim, cases[i].shape,
                                 (int64_t[]){ 4, 1, 1 }, 12);
            c.out = (i + op) % 3 == 0 ? 0 : K_OUT_NEW;   /* a refused max leaves a as it was */
            reduce(k, &c, op, cases[i].naxes, cases[i].naxes > 0 ? cases[i].axes : NULL,
                   cases[i].keep, "the sum of no elements is 0; the max of none is undefined: "
                   "ND_ERR_SHAPE, even when the result has no elements");
        }
}

static void reduce_errors(k_ctx *k)
{
    int64_t shape[3] = { 2, 3, 4 };
    k_call c = k_on_array(k, K_REDUCE, 3, shape);
    reduce(k, &c, ND_SUM, 2, (int64_t[]){ 0, -1 }, true, SUM_HINT);
    static const struct { int ndim, naxes; int64_t axes[4]; nd_status want; } bad[] = {
        { 3, 1, { 3 }, ND_ERR_AXIS },        { 3, 1, { -4 }, ND_ERR_AXIS },
        { 3, 2, { 0, -3 }, ND_ERR_AXIS },    { 3, 2, { 1, 1 }, ND_ERR_AXIS },
        { 3, 2, { 2, 5 }, ND_ERR_AXIS },     { 3, 3, { 0, 2, -1 }, ND_ERR_AXIS },
        { 3, 2, { -1, 100 }, ND_ERR_AXIS },  { 2, 2, { 0, -2 }, ND_ERR_AXIS },
        { 3, 2, { INT_MIN, 0 }, ND_ERR_AXIS }, { 3, 1, { INT_MAX }, ND_ERR_AXIS },
        { 3, -2, { 0 }, ND_ERR_ARG },        { 3, 4, { 0, 1, 2, 0 }, ND_ERR_ARG },
        { 3, INT_MIN, { 0 }, ND_ERR_ARG },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            c = k_on_array(k, K_REDUCE, bad[i].ndim, shape);
            k_reduce_of(&c, op, bad[i].naxes, bad[i].axes, false);
            c.out = i % 3 == 2 ? 0 : K_OUT_NEW;   /* a failed call with out == a changes a not */
            k_expect(k, &c, bad[i].want, NULL);
        }
    for (int i = 0; i < 5; i++) {   /* axes NULL with naxes 1; unknown ops */
        c = k_on_array(k, K_REDUCE, 3, shape);
        k_reduce_of(&c, (int[]){ ND_SUM, 2, -1, INT_MAX, INT_MIN }[i], 1,
                    i == 0 ? NULL : (int64_t[]){ 0 }, false);
        c.out = i % 2 ? 0 : K_OUT_NEW;
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
    c = k_on_array(k, K_REDUCE, 3, shape);
    k_reduce_of(&c, ND_SUM, 1, (int64_t[]){ 1 }, false);
    k_check_bad_arrays(k, &c);
}

static void reduce_sum_special_values(k_ctx *k)
{
    static const struct { int64_t n; float v[4]; } cases[] = {
        { 3, { 1, INFINITY, 2 } }, { 2, { -INFINITY, 1 } }, { 2, { INFINITY, -INFINITY } },
        { 3, { 1, NAN, 2 } },      { 1, { 0.5f } },         { 3, { -2.5f, -0.25f, -1 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_given(k, &c, 1, &cases[i].n, cases[i].v));
        reduce(k, &c, ND_SUM, 1, (int64_t[]){ 0 }, false, "add as IEEE does, with no special "
               "case: inf + 1 is inf, inf + -inf is NaN, NaN + anything is NaN");
    }
}

static void reduce_sum_accuracy(k_ctx *k)
{
    /* 10^7 copies of 0.1f: one running float gives 1087937, 8.8% off;
     * pairwise is within 1.1e-7.  Long runs, runs that cannot merge (a
     * stride-0 axis repeats a row of the buffer), short ones. */
    static const struct {
        int64_t size, shape[2], strides[2], offset;
        int naxes;
        int64_t axes[2];
    } cases[] = {
        { 10000000, { 1, 10000000 }, { 1, 1 }, 0, ND_ALL_AXES, { 0 } },   /* one run */
        { 10000000, { 2, 5000000 }, { 1, 2 }, 0, 1, { 1 } },              /* interleaved */
        { 3, { 1, 10000000 }, { 5, 0 }, 1, 1, { -1 } },                   /* stride 0 */
        { 1000, { 9990, 1000 }, { 0, 1 }, 0, ND_ALL_AXES, { 0 } },        /* 9990 runs */
        { 3, { 2500000, 3 }, { 0, 1 }, 0, 2, { 1, 0 } },                  /* runs of 3 */
        { 1000, { 10000, 1000 }, { 0, -1 }, 999, 2, { -1, 0 } },          /* reversed */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_strided(k, &c, cases[i].size, 2, cases[i].shape, cases[i].strides,
                            cases[i].offset, K_POISON));
        for (int64_t j = 0; j < cases[i].size; j++)
            c.bufs[0].v[j] = 0.1f;
        reduce(k, &c, ND_SUM, cases[i].naxes, cases[i].axes, false, ACCURACY_HINT);
    }
}

static void reduce_max_random(k_ctx *k)
{
    examples(k, ND_MAX, EXAMPLES, NEXAMPLES, 24, K_NEGATIVE, MAX_HINT);
    random_reductions(k, ND_MAX, (const k_fill[]){ K_NEGATIVE, K_RANDOM, K_SPECIAL }, MAX_HINT);
}

/* The max of a run of n elements (step `step`, in a buffer that holds 5
 * outside the run) set by kind: 0 negative with the largest, -1.5, at
 * position at; 1 all -inf; 2 -inf with one -FLT_MAX at `at`; 3 negative
 * with a NaN at `at`. */
static void run_max(k_ctx *k, int64_t n, int64_t step, int kind, int64_t at)
{
    static const float marks[] = { -1.5f, -INFINITY, -FLT_MAX, NAN };
    int64_t size = 3 * n + 4, off = step > 0 ? 2 : 2 + (n - 1) * -step;
    k_call c = k_new(k, K_REDUCE);
    k_arg(&c, k_strided(k, &c, size, 1, &n, &step, off, K_POISON));
    float *v = c.bufs[0].v;
    for (int64_t i = 0; i < size; i++)
        v[i] = kind == 1 || kind == 2 ? -INFINITY : -(float)k_int(k, 2, 50) - 0.5f;
    v[0] = v[size - 1] = 5;   /* outside the view */
    v[off + at * step] = marks[kind];
    reduce(k, &c, ND_MAX, at % 2 ? ND_ALL_AXES : 1, (int64_t[]){ 0 }, false, MAX_HINT);
}

static void reduce_max_special_values(k_ctx *k)
{
    /* runs shorter and longer than a lane group (16) and a leaf (256),
     * forwards and backwards, contiguous and strided: the max at each
     * position (at some, in long runs), all -inf, -FLT_MAX among -inf */
    static const int64_t steps[] = { 1, 2, -1, -3 };
    for (int64_t n = 1; n <= 520; n = n < 70 ? n + 1 : n < 250 ? 250 : n < 262 ? n + 1 :
                                      n < 508 ? 508 : n + 1) {
        for (int64_t at = 0; at < n; at += n <= 40 ? 1 : 1 + k_int(k, 0, n / 4))
            run_max(k, n, steps[(n + at) % 4], 0, at);
        run_max(k, n, steps[n % 4], 1, 0);
        run_max(k, n, steps[(n + 1) % 4], 2, k_int(k, 0, n - 1));
    }
    /* NaN first, in the middle or last */
    static const int64_t lengths[] = { 1, 2, 5, 16, 17, 40, 255, 300 };
    for (int i = 0; i < 8; i++)
        for (int w = 0; w < 3; w++)
            run_max(k, lengths[i], 1, 3, w == 0 ? 0 : w == 1 ? lengths[i] / 2 : lengths[i] - 1);
    static const struct { int64_t n; float v[4]; } cases[] = {
        { 2, { -INFINITY, -INFINITY } }, { 3, { -INFINITY, -5, -INFINITY } },
        { 3, { 1, INFINITY, 2 } },       { 3, { -3, -2.5f, -7 } },
        { 2, { INFINITY, NAN } },        { 2, { -FLT_MAX, -INFINITY } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_given(k, &c, 1, &cases[i].n, cases[i].v));
        reduce(k, &c, ND_MAX, ND_ALL_AXES, NULL, false, MAX_HINT);
    }
}

static void reduce_nan_stays_in_its_block(k_ctx *k)
{
    /* 160 negative values with one NaN, at 117: (2,37) of a (4,40) array,
     * (37,2) of its transpose, (1,2,17) of a (2,4,18) view whose axes 0 and
     * 2 do not merge */
    static const struct {
        int ndim;
        int64_t shape[3], strides[3];
        int naxes;
        int64_t axes[2];
    } cases[] = {
        { 2, { 4, 40 }, { 40, 1 }, 1, { 1 } },  { 2, { 4, 40 }, { 40, 1 }, 1, { 0 } },
        { 2, { 4, 40 }, { 40, 1 }, ND_ALL_AXES, { 0 } }, { 2, { 40, 4 }, { 1, 40 }, 1, { 0 } },
        { 2, { 40, 4 }, { 1, 40 }, 1, { 1 } },  { 3, { 2, 4, 18 }, { 20, 40, 1 }, 2, { 0, 2 } },
        { 3, { 2, 4, 18 }, { 20, 40, 1 }, 2, { 2, 1 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            k_call c = k_new(k, K_REDUCE);
            k_arr a = k_strided(k, &c, 160, cases[i].ndim, cases[i].shape, cases[i].strides, 0,
                                K_NEGATIVE);
            c.bufs[a.buf].v[117] = NAN;
            k_arg(&c, a);
            reduce(k, &c, op, cases[i].naxes, cases[i].axes, false, "a NaN belongs to one "
                   "block: it makes that output NaN and no other; start each block afresh");
        }
}

static void reduce_large_exact(k_ctx *k)
{
    /* 2^20 integers in [-8, 8]: every sum exact in any order; runs of
     * lengths that are and are not multiples of 16, many layouts */
    static const example cases[] = {
        { NULL, 2, { 1024, 1024 }, { 1024, 1 }, 0, 1, { 1 }, false },
        { NULL, 2, { 1024, 1024 }, { 1024, 1 }, 0, 1, { 0 }, false },
        { NULL, 2, { 1024, 1024 }, { 1024, 1 }, 0, ND_ALL_AXES, { 0 }, false },
        { NULL, 2, { 1024, 1024 }, { 1, 1024 }, 0, 1, { 1 }, false },        /* transposed */
        { NULL, 2, { 999, 1037 }, { 1037, 1 }, 5, 1, { -1 }, false },
        { NULL, 2, { 999, 1037 }, { -1037, -1 }, 999 * 1037 + 4, 1, { 1 }, false },  /* reversed */
        { NULL, 1, { 524287 }, { 2 }, 1, 1, { 0 }, false },                 /* stride 2 */
        /* element (i,j,k) is base[63-j][k][i] of a (64,128,128) base */
        { NULL, 3, { 128, 64, 128 }, { 1, -16384, 128 }, 63 * 16384, 2, { 0, 2 }, false },
        { NULL, 3, { 128, 64, 128 }, { 1, -16384, 128 }, 63 * 16384, 2, { 1, 2 }, false },
        { NULL, 3, { 128, 64, 128 }, { 1, -16384, 128 }, 63 * 16384, 1, { 1 }, false },
    };
    for (int op = ND_SUM; op <= ND_MAX; op++)
        examples(k, op, cases, (int)(sizeof cases / sizeof cases[0]), 1 << 20, K_INTEGERS,
                 "every partial sum is an exact integer: a wrong value is an element missed or "
                 "added twice; check the tail after the last full group of lanes, and the step "
                 "of every element");
}

/* ---------------------------------------------------------------------- */
/* Extreme shapes, strides and offsets (issue #17)                         */
/* ---------------------------------------------------------------------- */

/* nd_reduce(op, a, naxes, axes, keepdims) on a view of a over a buffer of
 * 4 floats with this layout. */
static void reduce_on(k_ctx *k, int ndim, const int64_t *shape, const int64_t *strides, int op,
                      int naxes, const int64_t *axes, bool keepdims, nd_status want,
                      const char *hint)
{
    k_call c = k_on_view(k, K_REDUCE, 4, ndim, shape, strides, 0);
    k_reduce_of(&c, op, naxes, axes, keepdims);
    k_expect(k, &c, want, hint);
}

/* Reductions of arrays with no elements, any strides (k_wild) and sizes up
 * to 2^44, which an array with no elements may have (they overflowed in
 * 02_compact.c and 04_reduce.c once): sums of nothing are 0, maxes over an
 * empty axis ND_ERR_SHAPE, and no stride is read. */
static void extreme_reduce_empty(k_ctx *k)
{
    static const int64_t four = 4, one = 1, ax0[1] = { 0 };
    reduce_on(k, 1, &four, &one, ND_SUM, 1, ax0, false, ND_OK, SUM_HINT);
    for (int i = 0; i < k_count(k, 100); i++) {
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
        k_check(k, &c, "an array with no elements may have any strides (nd.h, \"Valid "
                "arrays\", rule 4): the sum of nothing is 0, without reading a stride");
    }
}

/* Out of memory for the result, reduce says so in its own name ("empty:
 * cannot allocate" once): no axis reduced over a (2^29,2^29) view of one
 * float, a result of 2^58 floats, 2^60 bytes (the kit's executor sets
 * allocator_may_return_null=1 for AddressSanitizer: NULL in both builds). */
static void extreme_reduce_out_of_memory(k_ctx *k)
{
    static const int64_t four = 4, one = 1, most[2] = { K_P2(29), K_P2(29) }, zero[2] = { 0 };
    static const char *const hint = "report a failed allocation in the operation's own name, "
        "not nd_empty's";
    reduce_on(k, 1, &four, &one, ND_SUM, 0, NULL, false, ND_OK, SUM_HINT);
    reduce_on(k, 2, most, zero, ND_SUM, 0, NULL, false, ND_ERR_NOMEM, hint);
    reduce_on(k, 2, most, zero, ND_MAX, 0, NULL, true, ND_ERR_NOMEM, hint);
}

static const k_test tests[] = {
    K_TEST(reduce_examples, K_BOTH, 0, SUM_HINT),
    K_TEST(reduce_sum_random, K_BOTH, 0, SUM_HINT),
    K_TEST(reduce_all_and_no_axes, K_BOTH, 0, SUM_HINT),
    K_TEST(reduce_out_aliases_input, K_BOTH, 0, SUM_HINT),
    K_TEST(reduce_empty, K_BOTH, 0, SUM_HINT),
    K_TEST(reduce_errors, K_BOTH, 0, "normalise each axis, refuse one out of range or named "
           "twice (ND_ERR_AXIS), all before anything is written"),
    K_TEST(reduce_sum_special_values, K_BOTH, 0, SUM_HINT),
    K_TEST(reduce_sum_accuracy, K_CPU, 0, ACCURACY_HINT),
    K_TEST(reduce_max_random, K_BOTH, 0, MAX_HINT),
    K_TEST(reduce_max_special_values, K_BOTH, 0, MAX_HINT),
    K_TEST(reduce_nan_stays_in_its_block, K_BOTH, 0, MAX_HINT),
    K_TEST(reduce_large_exact, K_CPU, 0, SUM_HINT),
    K_TEST(extreme_reduce_empty, K_BOTH, 0, SUM_HINT),
    K_TEST(extreme_reduce_out_of_memory, K_BOTH, 0, SUM_HINT),
};
K_SUITE(public_04, 4, "04_reduce", tests);
