/*
 * Lesson 4: reductions.
 *
 * nd_reduce folds the elements along some axes into one value: their sum
 * or their max.  Reducing axes (0,2) of shape (2,3,4) gives shape (3,)
 * (or (1,3,1) with keepdims); output element j folds the 2*4 = 8 elements
 * a[i,j,k].  The work has three steps:
 *
 *   1. Plan (plan_reduce).  Normalise the axes, and list a's axes with the
 *      kept ones first and the reduced ones last: (1, 0,2).  Lesson 1's
 *      nd_permute then shows a in that order, as a view, without copying:
 *      shape (3, 2,4).  Output element j is the fold of the "block" at
 *      kept index j, the view's trailing (2,4) axes.
 *   2. Simplify the block (reduce_cpu).  Lesson 2's nd_simplify_dims merges
 *      reduced axes that are neighbours in memory, so the block becomes a
 *      few "runs" along its last axis: summing the last axis of a compact
 *      array, or all of its axes, is one long contiguous run.
 *   3. Fold each run, then the runs (sum_run, max_lanes, *_block).
 *
 * Two numerical points are the heart of the lesson.
 *
 *   Accuracy of a float sum.  Adding n floats one by one rounds n times,
 *   each time with an error up to half an ulp of the running total, which
 *   grows: the error bound is O(n) * eps * sum|x| (eps = 2^-23).  Adding
 *   10^7 copies of 0.1f that way gives 1087937, not 1000000.01: 8.8% off.
 *   Summing in halves (pairwise) adds each element into only O(log n)
 *   partial sums, so the bound drops to O(log n) * eps * sum|x|; the same
 *   10^7 terms then come out at 1000000.125, two float ulps (1.1e-7) from
 *   the exact sum.
 *
 *   Max needs a start value.  Zero is wrong for all-negative data and
 *   -FLT_MAX for all -inf data; the first element is always right.  A NaN
 *   makes the result NaN, as np.max does (np.nanmax would skip it).
 */
#include "internal.h"

#include <math.h>
#include <string.h>

/* Room for any shape or list of axes printed by nd_shape_str. */
#define SHAPE_STR 200

//@ snippet reduce_plan
/* How nd_reduce lays a out.  perm lists a's axes as the view shows them:
 * the kept axes, then the reduced ones, each group in a's order, so that
 * axes next to each other in memory stay next to each other and can merge. */
typedef struct {
    int perm[ND_MAX_DIMS];
    int nkept;                      /* perm[0 .. nkept-1] are the kept axes */
    int out_ndim;
    int64_t out_shape[ND_MAX_DIMS]; /* the kept sizes; with keepdims, a 1 in
                                       place of each reduced axis          */
} reduce_plan;

/* Plan the reduction of a over axes[0 .. naxes-1] (every axis when naxes
 * is ND_ALL_AXES).  `name` names the operation in messages. */
static nd_status plan_reduce(nd_reduce_op op, const char *name, const nd_array *a,
                             int naxes, const int *axes, bool keepdims, reduce_plan *p)
{
    //@ solution plan_reduce
    bool reduced[ND_MAX_DIMS];
    for (int k = 0; k < a->ndim; k++)
        reduced[k] = naxes == ND_ALL_AXES;
    for (int i = 0; i < naxes; i++) {
        int ax;
        nd_status s = nd_normalize_axis(axes[i], a->ndim, name, &ax);
        if (s != ND_OK)
            return s;
        if (reduced[ax]) {
            char list[SHAPE_STR];
            return nd_fail(ND_ERR_AXIS, "%s: axes %s name axis %d twice", name,
                           nd_axes_str(naxes, axes, list, sizeof list), ax);
        }
        reduced[ax] = true;
    }
    /* There is a sum of no elements (0), but no max of them: NumPy raises
     * too, even when the output itself would be empty. */
    for (int k = 0; k < a->ndim; k++) {
        if (op == ND_MAX && reduced[k] && a->shape[k] == 0) {
            char sh[SHAPE_STR];
            return nd_fail(ND_ERR_SHAPE, "%s: cannot reduce axis %d of shape %s: it has "
                           "size 0, and the max of no elements is undefined", name, k,
                           nd_shape_str(a->ndim, a->shape, sh, sizeof sh));
        }
    }
    p->nkept = 0;
    p->out_ndim = 0;
    for (int k = 0; k < a->ndim; k++) {
        if (!reduced[k])
            p->perm[p->nkept++] = k;
        if (!reduced[k] || keepdims)
            p->out_shape[p->out_ndim++] = reduced[k] ? 1 : a->shape[k];
    }
    for (int k = 0, j = p->nkept; k < a->ndim; k++)
        if (reduced[k])
            p->perm[j++] = k;
    return ND_OK;
    //@ stub
    //> /* Mark the reduced axes (nd_normalize_axis; a repeat is ND_ERR_AXIS);
    //>  * refuse a max over a size-0 axis; perm = kept axes, then reduced
    //>  * ones; out_shape = kept sizes (keepdims: 1 for each reduced axis). */
    //> (void)op; (void)name; (void)a; (void)naxes; (void)axes; (void)keepdims; (void)p;
    //> return nd_not_implemented("nd_reduce", 4);
    //@ end solution plan_reduce
}
//@ end snippet reduce_plan

/* Accumulators a fold keeps side by side: 16 floats, one 64-byte line,
 * four SSE registers.  Independent accumulators let the CPU run several
 * additions at once, and let the compiler put them in vector lanes. */
#define LANES 16

/* Elements a leaf of the pairwise sum adds with the flat loop: 16 per
 * lane.  Larger leaves spend less time in calls, smaller ones round less. */
#define LEAF 256

//@ snippet reduce_sum
/* The sum of n <= LEAF floats p[0], p[step], ..., p[(n-1)*step]: lane j
 * takes elements j, j + LANES, ..., and the lanes are added pairwise at
 * the end.  The tail, fewer than LANES elements, goes one per lane, so a
 * short run is summed pairwise too.
 *
 * Speed.  Inline, so that a call with the constant step 1 becomes a copy
 * that loads whole vectors.  The pragmas unroll the lane loops completely,
 * so that the lanes live in four SSE registers instead of memory: on
 * x86-64 with GCC 12 -O2 that took the sum of a 64 MB run from 20 GB/s to
 * 35 GB/s, and the sums of 64-float rows from 13 GB/s to 19 GB/s. */
static inline float sum_leaf(const float *p, int64_t n, int64_t step)
{
    //@ solution sum_leaf
    float acc[LANES] = { 0 };
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        _Pragma("GCC unroll 16")
        for (int j = 0; j < LANES; j++)
            acc[j] += p[(i + j) * step];
    }
    for (; i < n; i++)
        acc[i % LANES] += p[i * step];
    _Pragma("GCC unroll 4")
    for (int half = LANES / 2; half > 0; half /= 2) {
        _Pragma("GCC unroll 8")
        for (int j = 0; j < half; j++)
            acc[j] += acc[j + half];
    }
    return acc[0];
    //@ stub
    //> /* LANES running sums: lane j adds elements j, j + LANES, ...; then
    //>  * add the lanes pairwise.  No branch in the loop over a lane group. */
    //> (void)p; (void)n; (void)step;
    //> return 0.0f;
    //@ end solution sum_leaf
}

/* The sum of n floats p[0], p[step], ..., pairwise: split the run in two,
 * sum each half the same way, add the two sums.  Each element then passes
 * through about log2(n / LEAF) additions instead of up to n. */
static float sum_run(const float *p, int64_t n, int64_t step)
{
    //@ solution sum_run
    if (n <= LEAF)
        return step == 1 ? sum_leaf(p, n, 1) : sum_leaf(p, n, step);
    /* Halves of whole lane groups: every leaf but the last starts on a
     * 64-byte boundary when p does, and has no tail. */
    int64_t half = n / 2 / LANES * LANES;
    return sum_run(p, half, step) + sum_run(p + half * step, n - half, step);
    //@ stub
    //> /* Up to LEAF elements: sum_leaf (with a literal 1 when step is 1).
    //>  * Longer: sum each half (a multiple of LANES) and add the two. */
    //> (void)sum_leaf; (void)p; (void)n; (void)step;
    //> return 0.0f;
    //@ end solution sum_run
}
//@ end snippet reduce_sum

/* max as np.max takes it: x if it is larger, or if it is NaN.  Once m is
 * NaN it stays NaN, since no x is larger than NaN. */
static inline float max2(float m, float x)
{
    return x > m || isnan(x) ? x : m;
}

//@ snippet reduce_max
/* The max of n >= 1 floats p[0], p[step], ...: LANES running maxima, all
 * starting from the first element, then combined.  Order does not matter
 * for a max, so no pairwise splitting is needed.  (No unroll pragma here:
 * GCC 12 vectorises this select only in its loop form.) */
static inline float max_lanes(const float *p, int64_t n, int64_t step)
{
    //@ solution max_lanes
    float acc[LANES];
    for (int j = 0; j < LANES; j++)
        acc[j] = p[0];
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] = max2(acc[j], p[(i + j) * step]);
    for (; i < n; i++)
        acc[0] = max2(acc[0], p[i * step]);
    for (int j = 1; j < LANES; j++)
        acc[0] = max2(acc[0], acc[j]);
    return acc[0];
    //@ stub
    //> /* Start every lane from p[0] (not from 0 or -FLT_MAX), fold with
    //>  * max2, then fold the lanes into one. */
    //> (void)max2; (void)p; (void)n; (void)step;
    //> return 0.0f;
    //@ end solution max_lanes
}
//@ end snippet reduce_max

/* The layout of one block: the reduced axes of the view, simplified. */
typedef struct {
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int64_t strides[ND_MAX_DIMS];
} block_layout;

/* Offset of the position `index` (n axes) under `strides`. */
static int64_t offset_at(const int64_t *index, const int64_t *strides, int n)
{
    int64_t off = 0;
    for (int k = 0; k < n; k++)
        off += index[k] * strides[k];
    return off;
}

//@ snippet reduce_blocks
/* The fold of the block at p.  Its last axis is the run; `runs` is a fresh
 * iterator over the axes before it, passed by value: each call walks its
 * own copy. */
static float sum_block(const float *p, const block_layout *b, nd_iter runs)
{
    //@ solution sum_block
    /* The runs' sums are added in double: one addition per run, off the
     * hot loop, so that a block of many short runs stays accurate too.
     * (Added one by one in float, the sums of 2.5*10^6 runs of three
     * 0.1f each come out 2.4% too large.) */
    int outer = b->ndim - 1;
    double sum = 0.0;
    while (nd_iter_next(&runs))
        sum += sum_run(p + offset_at(runs.index, b->strides, outer), b->shape[outer],
                       b->strides[outer]);
    return (float)sum;
    //@ stub
    //> /* For each run (nd_iter_next): add sum_run of it to a double. */
    //> (void)p; (void)b; (void)runs; (void)sum_run;
    //> return 0.0f;
    //@ end solution sum_block
}

static float max_block(const float *p, const block_layout *b, nd_iter runs)
{
    //@ solution max_block
    int outer = b->ndim - 1;
    int64_t n = b->shape[outer], step = b->strides[outer];
    float max = p[0];   /* the plan refused empty blocks */
    while (nd_iter_next(&runs)) {
        const float *run = p + offset_at(runs.index, b->strides, outer);
        max = max2(max, step == 1 ? max_lanes(run, n, 1) : max_lanes(run, n, step));
    }
    return max;
    //@ stub
    //> /* Fold max_lanes of each run into the first element with max2. */
    //> (void)p; (void)b; (void)runs; (void)max_lanes;
    //> return 0.0f;
    //@ end solution max_block
}
//@ end snippet reduce_blocks

//@ snippet reduce_cpu
/* dst[i] = the fold of block i of v, the view (kept axes..., reduced
 * axes...): one output per position of v's first nkept axes, in row-major
 * order (CPU). */
static nd_status reduce_cpu(nd_reduce_op op, const nd_array *v, int nkept, float *dst)
{
    //@ solution reduce_cpu
    if (nd_shape_numel(nkept, v->shape) == 0)
        return ND_OK;   /* no outputs, so nothing to fold */
    /* Every block has the same layout: simplify it once. */
    block_layout b = { .ndim = v->ndim - nkept };
    memcpy(b.shape, v->shape + nkept, (size_t)b.ndim * sizeof(int64_t));
    memcpy(b.strides, v->strides + nkept, (size_t)b.ndim * sizeof(int64_t));
    nd_status s = nd_simplify_dims(&b.ndim, b.shape, b.strides, NULL);
    if (s != ND_OK)
        return s;
    if (b.ndim == 0)   /* no reduced axis, or only size-1 ones: one element */
        b = (block_layout){ .ndim = 1, .shape = { 1 }, .strides = { 1 } };
    nd_iter outputs, runs;
    if ((s = nd_iter_init(&outputs, nkept, v->shape)) != ND_OK ||
        (s = nd_iter_init(&runs, b.ndim - 1, b.shape)) != ND_OK)
        return s;
    const float *src = nd_data(v) + v->offset;
    while (nd_iter_next(&outputs)) {
        const float *block = src + offset_at(outputs.index, v->strides, nkept);
        *dst++ = op == ND_SUM ? sum_block(block, &b, runs) : max_block(block, &b, runs);
    }
    return ND_OK;
    //@ stub
    //> /* Simplify the reduced axes (v's last ones) once; then for each
    //>  * position of the kept axes, fold its block with sum_block or max_block. */
    //> (void)op; (void)v; (void)nkept; (void)dst;
    //> (void)sum_block; (void)max_block; (void)offset_at;
    //> return nd_not_implemented("nd_reduce", 4);
    //@ end solution reduce_cpu
}
//@ end snippet reduce_cpu

nd_status nd_reduce(nd_reduce_op op, const nd_array *a, int naxes, const int *axes,
                    bool keepdims, nd_array *out)
{
    /* Validate. */
    if (op != ND_SUM && op != ND_MAX)
        return nd_fail(ND_ERR_ARG, "reduce: unknown op %d; it must be ND_SUM or ND_MAX",
                       (int)op);
    const char *name = op == ND_SUM ? "reduce(sum)" : "reduce(max)";
    nd_status s = nd_check_array(a, name, "a");
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "%s: argument 'out' is NULL", name);
    if (naxes < ND_ALL_AXES || naxes > a->ndim)
        return nd_fail(ND_ERR_ARG, "%s: naxes is %d for an array of %d axes; it must be "
                       "0..%d, or ND_ALL_AXES (-1)", name, naxes, a->ndim, a->ndim);
    if (naxes > 0 && axes == NULL)
        return nd_fail(ND_ERR_ARG, "%s: argument 'axes' is NULL but naxes is %d",
                       name, naxes);
    /* Lay out: a as (kept axes..., reduced axes...), a view. */
    reduce_plan p;
    if ((s = plan_reduce(op, name, a, naxes, axes, keepdims, &p)) != ND_OK)
        return s;
    nd_array v, made;
    if (nd_numel(a) == 0) {
        /* Nothing to fold: every output is the sum of no elements, 0 (a
         * max here has no outputs, or the plan refused it).  No kernel
         * runs, as none ever runs on an array with no elements, whose
         * strides may be anything (nd.h, "Valid arrays"). */
        if ((s = nd_zeros_for(name, a->buf->device, p.out_ndim, p.out_shape, &made)) != ND_OK)
            return s;
        nd_replace(a, out, &made);
        return ND_OK;
    }
    if ((s = nd_permute(a, p.perm, &v)) != ND_OK)
        return s;
    /* Allocate the output, then run the kernel. */
    if ((s = nd_empty_for(name, a->buf->device, p.out_ndim, p.out_shape, &made)) == ND_OK &&
        (s = a->buf->device == ND_CUDA ? nd_cuda_reduce(op, &v, p.nkept, &made)
                                       : reduce_cpu(op, &v, p.nkept, nd_data(&made))) != ND_OK)
        nd_release(&made);
    nd_release(&v);
    if (s != ND_OK)
        return s;
    nd_replace(a, out, &made);
    return ND_OK;
}
