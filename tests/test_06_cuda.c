/*
 * test_06_cuda.c -- public tests of lesson 6: the index transform on the
 * host, and what only the CUDA device has: launches over sizes that are
 * not multiples of the block, reductions over lengths around the warp and
 * the block, matmuls around the tiles, and more elements, outputs or
 * matrices than one pass of the grid covers.
 *
 * Every test of lessons 2-5 also runs on the CUDA device, as "name[cuda]";
 * those cases count for this lesson too.
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
#define SPLIT_HINT "few outputs of many elements, each split over many blocks: the blocks " \
    "of a launch run in any order and at the same time, so a block must never fold its " \
    "partial result into one another block wrote (block 0 storing, the others adding: " \
    "a block that runs before block 0, or with it, is lost); each block writes a partial " \
    "of its own, and a second pass folds them into the output (or combine them with " \
    "atomicAdd)"
#define MAX_HINT "start a max from -INFINITY (or the first element), never from 0; idle lanes " \
    "must not bring a 0 into a max"

/* op (ND_SUM or ND_MAX) over one axis of argument 0 of c. */
static void reduce(k_ctx *k, k_call c, int op, int64_t axis, const char *hint)
{
    k_reduce_of(&c, op, 1, &axis, false);
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

/* a @ b by both kernels, a (nd) and b (bnd) views made as `how` says. */
static void matmuls(k_ctx *k, int nd, const int64_t *sa, int bnd, const int64_t *sb, int how,
                    const char *hint)
{
    for (int tiled = 0; tiled < 2; tiled++) {
        k_call c = k_product(k, tiled ? K_MATMUL : K_MATMUL_NAIVE, nd, sa, bnd, sb, how, K_RANDOM);
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
        { "(6000000000,): position 2^32 + 5, in 64 bits", 1, { 6000000000LL }, { 1 }, 0,
          (1LL << 32) + 5 },
        { "(100000,100000) transposed: the last position", 2, { 100000, 100000 },
          { 1, 100000 }, 7, 9999999999LL },
        { "an offset past 2^32, a stride of -2000000000", 3, { 3, 2000000, 1000 },
          { -2000000000LL, 1000, 1 }, 6000000000LL, 5999999999LL },
        { "(70000,70000) with strides (70001,-1): past 2^32", 2, { 70000, 70000 },
          { 70001, -1 }, 69999, (1LL << 32) + 5 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        k_call c = k_offset_call(k, cases[i].ndim, cases[i].shape, cases[i].strides,
                                 cases[i].offset, cases[i].i, 1, 1);
        k_check(k, &c, cases[i].what);
    }
}

/* Random layouts of 0 to 8 axes: zero, negative and huge strides, offsets
 * up to 2^41; 20 positions spread over each. */
static void index_to_offset_random(k_ctx *k)
{
    for (int t = 0; t < k_count(k, 2000); t++) {
        int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
        int nd = k_shape(k, t % (ND_MAX_DIMS + 1), 1, 6, 100000, shape);
        for (int d = 0; d < nd; d++) {
            int kind = (int)k_int(k, 0, 5);
            strides[d] = kind == 0 ? 0 : kind == 1 ? k_int(k, -K_P2(40), K_P2(40))
                                                   : k_int(k, -60, 60);
        }
        int64_t n = k_numel(nd, shape), step = n / 20 > 0 ? n / 20 : 1;
        k_call c = k_offset_call(k, nd, shape, strides, k_int(k, 0, K_P2(41)),
                                 k_int(k, 0, step - 1), n < 20 ? n : 20, step);
        k_check(k, &c, INDEX_HINT);
    }
}

/* ---------------------------------------------------------------------- */
/* Launches: sizes that are not multiples of the block                    */
/* ---------------------------------------------------------------------- */

/* Every copy and elementwise kernel over random views (offsets, windows,
 * negative and zero strides, 1 to 8 axes) of sizes around the warp, the
 * block and 1024: a launch over the buffer, not the view, shows. */
static void launch_odd_sizes(k_ctx *k)
{
    static const int64_t sizes[] = { 1, 2, 31, 32, 33, 63, 255, 256, 257, 511, 1023, 1024, 1025,
                                     4099, 65537 };
    for (int i = 0; i < k_count(k, 15); i++) {
        int64_t shape[ND_MAX_DIMS], bshape[ND_MAX_DIMS];
        int nd = (int)k_int(k, 1, ND_MAX_DIMS);
        k_shape_of(k, nd, sizes[i % 15], shape);
        int bnd = k_broadcastable(k, nd, shape, bshape);
        k_call c = k_new(k, K_COMPACT);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY | (i / 15 % 2 ? K_REPEAT : 0), K_DISTINCT));
        k_check(k, &c, LAUNCH_HINT);
        c = k_new(k, K_SETITEM);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_POISON));
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_DISTINCT));
        k_check(k, &c, LAUNCH_HINT);
        c = k_new(k, K_SETITEM_SCALAR);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_DISTINCT));
        c.scalar = k_float(k, -5, 5);
        k_check(k, &c, LAUNCH_HINT);
        c = k_new(k, i % 3 ? K_BINARY : K_BINARY_INTO);   /* b broadcast */
        c.code = ND_ADD + i % (ND_GE - ND_ADD + 1);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_SPECIAL));
        k_arg(&c, k_view(k, &c, bnd, bshape, K_ANY, K_SPECIAL));
        if (c.op == K_BINARY_INTO)   /* into a strided view */
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_POISON));
        k_check(k, &c, LAUNCH_HINT);
        c = k_new(k, K_UNARY);
        c.code = ND_NEG + i % (ND_ABS - ND_NEG + 1);
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_SPECIAL));
        k_check(k, &c, LAUNCH_HINT);
    }
}

/* ---------------------------------------------------------------------- */
/* Reductions                                                             */
/* ---------------------------------------------------------------------- */

/* Row 2's middle element a NaN, in rows of negative values. */
static void nan_in_row_2(float *v, int64_t len)
{
    v[2 * len + len / 2] = NAN;
}

/* Sums and maxes of rows whose lengths are around the warp and the block,
 * all values negative (a max from 0 shows) and a NaN in row 2; then over
 * every subset of axes of random views of up to 4 axes. */
static void reduce_odd_lengths(k_ctx *k)
{
    static const int64_t lens[] = { 1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
                                    1024, 1025, 3001, 5000 };
    for (int i = 0; i < 18; i++)
        row_folds(k, 37, lens[i], K_NEGATIVE, nan_in_row_2, SUM_HINT);
    for (int s = 0; s < k_count(k, 3); s++) {
        int64_t shape[ND_MAX_DIMS], axes[ND_MAX_DIMS];
        int nd = (int)k_int(k, 1, 4);
        k_shape_of(k, nd, lens[s % 18], shape);
        for (unsigned mask = 1; mask < (1u << nd); mask++)
            for (int op = ND_SUM; op <= ND_MAX; op++) {
                k_call c = k_new(k, K_REDUCE);
                k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_NEGATIVE));
                int n = 0;
                for (int d = 0; d < nd; d++)
                    if (mask >> d & 1)
                        axes[n++] = d;
                k_reduce_of(&c, op, n, axes, k_one_in(k, 2));
                k_check(k, &c, op == ND_SUM ? SUM_HINT : MAX_HINT);
            }
    }
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
    const char *hint = SPLIT_HINT;
    row_folds(k, 1, 1000003, K_RANDOM, NULL, hint);
    for (int op = ND_SUM; op <= ND_MAX; op++) {   /* (70001,3) transposed to (3,70001) */
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_strided(k, &c, 3 * 70001, 2, (int64_t[]){ 3, 70001 }, (int64_t[]){ 1, 3 },
                            0, K_RANDOM));
        reduce(k, c, op, 1, op == ND_SUM ? hint : MAX_HINT);
    }
    row_folds(k, 3, 300000, K_RANDOM, specials_split, "the partial results of one output "
              "are folded like its elements: inf stays inf, inf + -inf and anything + nan "
              "are nan; " SPLIT_HINT);
}

/* ---------------------------------------------------------------------- */
/* Matmul                                                                 */
/* ---------------------------------------------------------------------- */

/* Around tiles of 64 and panels of 16, non-square every way (a swapped
 * grid or block shows), batches of 1 to 3, operands of every layout; then
 * one matrix against a batch (its batch stride 0), and batch axes that
 * repeat (K_REPEAT: stride 0 on some axes). */
static void matmul_odd_sizes(k_ctx *k)
{
    static const int64_t sizes[][3] = {
        { 1, 1, 1 }, { 2, 3, 70 }, { 70, 3, 2 }, { 63, 15, 65 }, { 65, 17, 63 },
        { 64, 16, 64 }, { 129, 33, 1 }, { 1, 33, 129 }, { 17, 64, 96 }, { 100, 1, 3 },
        { 5, 20, 300 }, { 300, 20, 5 }, { 127, 9, 129 }, { 129, 7, 127 }, { 20, 8, 257 },
        { 257, 24, 3 }, { 130, 31, 66 }, { 1, 70, 1 }, { 129, 128, 127 }, { 3, 200, 130 },
    };
    for (int i = 0; i < 20; i++) {
        int64_t b = i % 3 + 1, m = sizes[i][0], n = sizes[i][1], p = sizes[i][2];
        matmuls(k, 3, (int64_t[]){ b, m, n }, 3, (int64_t[]){ b, n, p }, K_ANY, "a tile at the "
                "edge of c must read zeros past the matrices and write only the outputs inside "
                "c; both panels staged, __syncthreads() before and after accumulating");
    }
    const char *hint = "a broadcast operand's batch stride is 0: matrix z starts at "
                       "offset_of(z, abatch)";
    matmuls(k, 2, (int64_t[]){ 33, 18 }, 3, (int64_t[]){ 3, 18, 65 }, K_ANY, hint);
    matmuls(k, 3, (int64_t[]){ 3, 33, 18 }, 2, (int64_t[]){ 18, 65 }, K_ANY, hint);
    matmuls(k, 4, (int64_t[]){ 2, 1, 9, 40 }, 3, (int64_t[]){ 3, 40, 7 }, K_ANY, hint);
    for (int i = 0; i < 4; i++)
        matmuls(k, 3, (int64_t[]){ 4, 20, 17 }, 3, (int64_t[]){ 4, 17, 33 }, K_ANY | K_REPEAT,
                hint);
}

/* (1048577,1) @ (1,1): 65537 blocks of 16 rows, past gridDim.y's 65535. */
static void matmul_many_rows(k_ctx *k)
{
    matmuls(k, 2, (int64_t[]){ 1048577, 1 }, 2, (int64_t[]){ 1, 1 }, 0, "gridDim.y stops at 65535 "
            "blocks: cap it (blocks_for) and let each block loop over rows, i += gridDim.y * "
            "blockDim.y");
}

/* ---------------------------------------------------------------------- */
/* More than one grid pass                                                */
/* ---------------------------------------------------------------------- */

/* 65535 blocks of 256 threads are 16776960 threads: a view of 1002 more
 * elements (no permutation of compact memory: the gather kernels) needs a
 * second pass of the grid-stride loop, in each kernel. */
static void large_fill_and_add(k_ctx *k)
{
    int64_t half = (65535LL * 256 + 1002) / 2, shape[2] = { 2, half }, n = 2 * half;
    int64_t strides[2] = { 1, -2 }, offset = (half - 1) * 2;
    for (int op = 0; op < 4; op++) {
        static const k_op ops[] = { K_COMPACT, K_SETITEM, K_SETITEM_SCALAR, K_BINARY };
        k_call c = k_new(k, ops[op]);
        k_arg(&c, k_strided(k, &c, n, 2, shape, strides, offset, K_INTEGERS));
        if (op == 1 || op == 3)
            k_arg(&c, k_compact(k, &c, 2, shape, K_INTEGERS));
        c.scalar = 2.5f;
        c.code = ND_MUL;
        k_check(k, &c, GRID_HINT);
    }
}

/* More outputs than blocks: 65600 sums and maxes of 40, read across the
 * rows (blocks of two warps, the first blocks folding two outputs), and a
 * batch of 70000 matrices. */
static void large_reduce_and_batch(k_ctx *k)
{
    for (int op = ND_SUM; op <= ND_MAX; op++) {
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_strided(k, &c, 40 * 65600, 2, (int64_t[]){ 40, 65600 }, (int64_t[]){ 1, 40 },
                            0, K_RANDOM));
        reduce(k, c, op, 0, GRID_HINT "; a block that folds a second output must wait "
               "(__syncthreads) until warp 0 has read the shared slots of the first");
    }
    matmuls(k, 3, (int64_t[]){ 70000, 2, 3 }, 3, (int64_t[]){ 70000, 3, 2 }, 0, "more matrices "
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
