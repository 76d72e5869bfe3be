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
    /* TODO (lesson 4): write plan_reduce. */
    /* Mark the reduced axes (nd_normalize_axis; a repeat is ND_ERR_AXIS);
     * refuse a max over a size-0 axis; perm = kept axes, then reduced
     * ones; out_shape = kept sizes (keepdims: 1 for each reduced axis). */
    (void)op; (void)name; (void)a; (void)naxes; (void)axes; (void)keepdims; (void)p;
    return nd_not_implemented("nd_reduce", 4);
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
    /* TODO (lesson 4): write sum_leaf. */
    /* LANES running sums: lane j adds elements j, j + LANES, ...; then
     * add the lanes pairwise.  No branch in the loop over a lane group. */
    (void)p; (void)n; (void)step;
    return 0.0f;
}

/* The sum of n floats p[0], p[step], ..., pairwise: split the run in two,
 * sum each half the same way, add the two sums.  Each element then passes
 * through about log2(n / LEAF) additions instead of up to n. */
static float sum_run(const float *p, int64_t n, int64_t step)
{
    /* TODO (lesson 4): write sum_run. */
    /* Up to LEAF elements: sum_leaf (with a literal 1 when step is 1).
     * Longer: sum each half (a multiple of LANES) and add the two. */
    (void)sum_leaf; (void)p; (void)n; (void)step;
    return 0.0f;
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
    /* TODO (lesson 4): write max_lanes. */
    /* Start every lane from p[0] (not from 0 or -FLT_MAX), fold with
     * max2, then fold the lanes into one. */
    (void)max2; (void)p; (void)n; (void)step;
    return 0.0f;
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
    /* TODO (lesson 4): write sum_block. */
    /* For each run (nd_iter_next): add sum_run of it to a double. */
    (void)p; (void)b; (void)runs; (void)sum_run;
    return 0.0f;
}

static float max_block(const float *p, const block_layout *b, nd_iter runs)
{
    /* TODO (lesson 4): write max_block. */
    /* Fold max_lanes of each run into the first element with max2. */
    (void)p; (void)b; (void)runs; (void)max_lanes;
    return 0.0f;
}
//@ end snippet reduce_blocks

//@ snippet reduce_cpu
/* dst[i] = the fold of block i of v, the view (kept axes..., reduced
 * axes...): one output per position of v's first nkept axes, in row-major
 * order (CPU). */
static nd_status reduce_cpu(nd_reduce_op op, const nd_array *v, int nkept, float *dst)
{
    /* TODO (lesson 4): write reduce_cpu. */
    /* Simplify the reduced axes (v's last ones) once; then for each
     * position of the kept axes, fold its block with sum_block or max_block. */
    (void)op; (void)v; (void)nkept; (void)dst;
    (void)sum_block; (void)max_block; (void)offset_at;
    return nd_not_implemented("nd_reduce", 4);
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
