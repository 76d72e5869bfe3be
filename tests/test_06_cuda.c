/*
 * test_06_cuda.c -- public tests of lesson 6: the index transform on the
 * host, and what only the CUDA device has: launches over sizes that are
 * not multiples of the block, reductions over lengths around the warp and
 * the block, matmuls around the tiles, and more elements, outputs or
 * matrices than one pass of the grid covers.
 *
 * Every test of lessons 2-5 also runs on the CUDA device, as "name[cuda]";
 * those cases count for this lesson too.  Each test here is calls over the
 * kit (tests/kit/kit.h), whose reference says what each must give (host
 * loops, index by index) and whose comparison writes the message.
 */
#include "kit.h"

#define INDEX_HINT "peel the index off i from the last axis: index[k] = i % shape[k], " \
    "i /= shape[k]; axis 0 takes what is left; the offset is offset + sum(index[k] * " \
    "strides[k])"
#define LAUNCH_HINT "round the number of blocks up (n / threads leaves the last partial " \
    "block out), and guard i < n in the kernel, or loop with a grid stride"
#define GRID_HINT "the grid is capped at MAX_BLOCKS blocks: each thread must loop, " \
    "i += gridDim.x * blockDim.x, until i >= n (a grid-stride loop)"
#define SUM_HINT "every thread of the block must fold its elements, and every warp's value " \
    "must reach the final fold"
#define MAX_HINT "start a max from -INFINITY (or the first element), never from 0; idle lanes " \
    "must not bring a 0 into a max"

/* nd_index_to_offset for n positions from i, step apart. */
static void index_call(k_ctx *k, int ndim, const int64_t *shape, const int64_t *strides,
                       int64_t offset, int64_t i, int64_t n, int64_t step, const char *hint)
{
    k_call c = k_offset_call(k, ndim, shape, strides, offset, i, n, step);
    k_check(k, &c, hint);
}

/* op (ND_SUM or ND_MAX) over one axis of argument 0 of c. */
static void reduce(k_ctx *k, k_call c, int op, int64_t axis, const char *hint)
{
    c.op = K_REDUCE;
    c.code = op;
    k_list(&c, 0, 1, &axis);
    k_check(k, &c, hint);
}

/* Both sums and maxes over the last axis of a (rows, len) array of `fill`,
 * with values set by `set` where it is not NULL. */
static void row_folds(k_ctx *k, int64_t rows, int64_t len, k_fill fill,
                      void (*set)(float *v, int64_t len), const char *sum_hint)
{
    for (int op = ND_SUM; op <= ND_MAX; op++) {
        k_call c = k_new(k, K_REDUCE);
        k_arr a = k_compact(k, &c, 2, (int64_t[]){ rows, len }, fill);
        k_arg(&c, a);
        if (set != NULL)
            set(c.bufs[a.buf].v, len);
        reduce(k, c, op, 1, op == ND_SUM ? sum_hint : MAX_HINT);
    }
}

static void matmuls(k_ctx *k, int nd, const int64_t *sa, const int64_t *sb, const char *hint)
{
    for (int tiled = 0; tiled < 2; tiled++) {
        k_call c = k_new(k, tiled ? K_MATMUL : K_MATMUL_NAIVE);
        k_arg(&c, k_compact(k, &c, nd, sa, K_RANDOM));
        k_arg(&c, k_compact(k, &c, nd, sb, K_RANDOM));
        k_check(k, &c, hint);
    }
}

/* ---------------------------------------------------------------------- */
/* The index transform, on the host                                       */
/* ---------------------------------------------------------------------- */

static void index_to_offset_cases(k_ctx *k)
{
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[3], strides[3], offset, i;
    } cases[] = {
        { "a compact (10,): element 5", 1, { 10 }, { 1 }, 0, 5 },
        { "a compact (2,3,4): its own position", 3, { 2, 3, 4 }, { 12, 4, 1 }, 0, 17 },
        { "(2,3,4) permuted: index (1,1,1)", 3, { 2, 3, 4 }, { 1, 8, 2 }, 0, 17 },
        { "rows reversed: offset 8, index (1,1)", 2, { 3, 4 }, { -4, 1 }, 8, 5 },
        { "a broadcast row: stride 0 on axis 0", 2, { 3, 4 }, { 0, 1 }, 2, 11 },
        { "every third element from 1", 1, { 5 }, { 3 }, 1, 4 },
        { "a scalar: just the offset", 0, { 0 }, { 0 }, 7, 0 },
        { "size-1 axes: their strides never count", 3, { 1, 1, 6 }, { 99, -7, 2 }, 4, 5 },
        { "the lesson's a.T: thread 17", 3, { 4, 3, 2 }, { 1, 4, 12 }, 0, 17 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        index_call(k, cases[i].ndim, cases[i].shape, cases[i].strides, cases[i].offset,
                   cases[i].i, 1, 1, cases[i].what);
}

static void index_to_offset_random(k_ctx *k)
{
    for (int t = 0; t < 2000; t++) {
        int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 1, ND_MAX_DIMS), 1, 6, 100000, shape);
        for (int d = 0; d < nd; d++)
            strides[d] = k_int(k, -50, 50);
        int64_t n = k_numel(nd, shape), step = n / 20 > 0 ? n / 20 : 1;
        index_call(k, nd, shape, strides, k_int(k, 0, 1000), k_int(k, 0, step - 1),
                   n < 20 ? n : 20, step, INDEX_HINT);
    }
}

/* ---------------------------------------------------------------------- */
/* Launches: sizes that are not multiples of the block                    */
/* ---------------------------------------------------------------------- */

static void launch_odd_sizes(k_ctx *k)
{
    static const int64_t sizes[] = { 1, 2, 31, 32, 33, 255, 256, 257, 1000, 4097, 65537 };
    for (int s = 0; s < 11; s++) {
        int64_t n = sizes[s], back = -1;
        k_call c = k_new(k, K_COMPACT);   /* a reversed view: element i is buffer[n-1-i] */
        k_arg(&c, k_strided(k, &c, n, 1, &n, &back, n - 1, K_DISTINCT));
        k_check(k, &c, LAUNCH_HINT);
        c = k_new(k, K_SETITEM);          /* through the reversed view */
        k_arg(&c, k_strided(k, &c, n, 1, &n, &back, n - 1, K_POISON));
        k_arg(&c, k_compact(k, &c, 1, &n, K_DISTINCT));
        k_check(k, &c, LAUNCH_HINT);
        c = k_new(k, K_SETITEM_SCALAR);
        k_arg(&c, k_strided(k, &c, n, 1, &n, &back, n - 1, K_POISON));
        c.scalar = 2.5f;
        k_check(k, &c, LAUNCH_HINT);
        c = k_new(k, K_BINARY);           /* with a broadcast (1,) */
        k_arg(&c, k_strided(k, &c, n, 1, &n, &back, n - 1, K_DISTINCT));
        k_arg(&c, k_compact(k, &c, 1, (int64_t[]){ 1 }, K_NEGATIVE));
        k_check(k, &c, LAUNCH_HINT);
        c = k_new(k, K_UNARY);
        k_arg(&c, k_strided(k, &c, n, 1, &n, &back, n - 1, K_DISTINCT));
        k_check(k, &c, LAUNCH_HINT);
    }
}

/* ---------------------------------------------------------------------- */
/* Reductions                                                             */
/* ---------------------------------------------------------------------- */

static void reduce_odd_lengths(k_ctx *k)
{
    static const int64_t lens[] = { 1, 2, 31, 32, 33, 63, 255, 256, 257, 1025, 5000 };
    for (int i = 0; i < 11; i++)
        row_folds(k, 37, lens[i], K_RANDOM, NULL, SUM_HINT);
}

/* inf, -inf and nan in rows of 3000 (each thread folds many values): row
 * 0 inf last, row 1 -inf, row 2 inf and -inf (nan), row 3 nan. */
static void specials(float *v, int64_t len)
{
    for (int64_t i = 0; i < 4 * len; i++)
        v[i] = 0.25f * (float)(i % 7);
    v[len - 1] = v[2 * len + 5] = INFINITY;
    v[len + 700] = v[2 * len + 2000] = -INFINITY;
    v[3 * len + 1234] = NAN;
}

static void reduce_special_values(k_ctx *k)
{
    row_folds(k, 4, 3000, K_RANDOM, specials, "a sum with inf stays inf; inf + -inf and "
              "anything + nan are nan; a compensated (Kahan) sum must stop compensating once "
              "it is infinite");
}

/* The same in 3 rows of 300000, in different blocks of a split fold: row
 * 0 inf near its end, row 1 inf and -inf far apart, row 2 nan last. */
static void specials_split(float *v, int64_t len)
{
    for (int64_t i = 0; i < 3 * len; i++)
        v[i] = 0.25f * (float)(i % 5);
    v[len - 10] = v[len + 17] = INFINITY;
    v[len + 250000] = -INFINITY;
    v[3 * len - 1] = NAN;
}

/* Few outputs of many elements: each output's elements are split over
 * many blocks, whose partial results a second pass folds. */
static void reduce_split_outputs(k_ctx *k)
{
    const char *hint = "few outputs of many elements: every block's partial result must "
                       "reach the second pass, which folds them into the output";
    row_folds(k, 1, 1000003, K_RANDOM, NULL, hint);
    for (int op = ND_SUM; op <= ND_MAX; op++) {   /* (70001,3) transposed to (3,70001) */
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_strided(k, &c, 3 * 70001, 2, (int64_t[]){ 3, 70001 }, (int64_t[]){ 1, 3 },
                            0, K_RANDOM));
        reduce(k, c, op, 1, op == ND_SUM ? hint : MAX_HINT);
    }
    row_folds(k, 3, 300000, K_RANDOM, specials_split, "the partial results of one output "
              "are folded like its elements: inf stays inf, inf + -inf and anything + nan "
              "are nan");
}

/* ---------------------------------------------------------------------- */
/* Matmul                                                                 */
/* ---------------------------------------------------------------------- */

static void matmul_odd_sizes(k_ctx *k)
{
    static const int64_t sizes[][3] = { { 1, 1, 1 }, { 1, 70, 1 }, { 127, 9, 129 },
                                        { 129, 128, 127 }, { 128, 8, 128 }, { 257, 7, 3 },
                                        { 3, 200, 130 } };
    for (int i = 0; i < 7; i++)
        matmuls(k, 2, (int64_t[]){ sizes[i][0], sizes[i][1] },
                (int64_t[]){ sizes[i][1], sizes[i][2] }, "a tile at the edge of c must read "
                "zeros past the matrices and write only the outputs inside c");
}

/* (1048577,1) @ (1,1): 65537 blocks of 16 rows, past gridDim.y's 65535. */
static void matmul_many_rows(k_ctx *k)
{
    matmuls(k, 2, (int64_t[]){ 1048577, 1 }, (int64_t[]){ 1, 1 }, "gridDim.y stops at 65535 "
            "blocks: cap it (blocks_for) and let each block loop over rows, i += gridDim.y * "
            "blockDim.y");
}

/* ---------------------------------------------------------------------- */
/* More than one grid pass                                                */
/* ---------------------------------------------------------------------- */

/* 65535 blocks of 256 threads are 16776960 threads: 1001 more elements
 * need a second pass of the grid-stride loop. */
static void large_fill_and_add(k_ctx *k)
{
    int64_t n = 65535LL * 256 + 1001;
    k_call c = k_new(k, K_SETITEM_SCALAR);
    k_arg(&c, k_compact(k, &c, 1, &n, K_POISON));
    c.scalar = 2.0f;
    k_check(k, &c, GRID_HINT);
    c = k_new(k, K_BINARY);
    k_arg(&c, k_compact(k, &c, 1, &n, K_INTEGERS));
    k_arg(&c, k_compact(k, &c, 1, (int64_t[]){ 1 }, K_NEGATIVE));
    k_check(k, &c, GRID_HINT);
}

/* More outputs than blocks: 65600 sums of 40 (blocks of two warps, the
 * first blocks folding two outputs), and a batch of 70000 matrices. */
static void large_reduce_and_batch(k_ctx *k)
{
    k_call c = k_new(k, K_REDUCE);
    k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 65600, 40 }, K_RANDOM));
    reduce(k, c, ND_SUM, 1, GRID_HINT "; a block that folds a second output must wait "
           "(__syncthreads) until warp 0 has read the shared slots of the first");
    matmuls(k, 3, (int64_t[]){ 70000, 2, 3 }, (int64_t[]){ 70000, 3, 2 }, "more matrices "
            "than gridDim.z allows: loop z += gridDim.z");
}

static const k_test tests[] = {
    K_TEST(index_to_offset_cases, K_HOST, 0, INDEX_HINT),
    K_TEST(index_to_offset_random, K_HOST, 0, INDEX_HINT),
    K_TEST(launch_odd_sizes, K_CUDA, 0, LAUNCH_HINT),
    K_TEST(reduce_odd_lengths, K_CUDA, 0, SUM_HINT),
    K_TEST(reduce_special_values, K_CUDA, 0, SUM_HINT),
    K_TEST(reduce_split_outputs, K_CUDA, 0, SUM_HINT),
    K_TEST(matmul_odd_sizes, K_CUDA, 0, "grid x covers the columns, y the rows"),
    K_TEST(matmul_many_rows, K_CUDA, 0, GRID_HINT),
    K_TEST(large_fill_and_add, K_CUDA, 0, GRID_HINT),
    K_TEST(large_reduce_and_batch, K_CUDA, 0, GRID_HINT),
};
K_SUITE(public_06, 6, "06_cuda", tests);
