/*
 * h06_cuda.c -- hidden tests of lesson 6: the index transform and the
 * kernels of lessons 2-5 on the CUDA device (a GPU, or the emulator), over
 * the kit (tests/kit/kit.h) with other seeds and more cases than the
 * public tests:
 *
 *   nd_index_to_offset  every position of 400 random layouts of 0 to 8 axes
 *                       (zero, negative and huge strides, offsets up to
 *                       2^41), and positions past 2^32 (64 bits throughout)
 *   compact, setitem,   random views of 1 to 8 axes (offsets, negative and
 *   setitem_scalar      zero strides) of sizes around the warp (32), the
 *                       block (256) and 1024; windows at an offset in a
 *                       bigger buffer: the kit compares every buffer whole,
 *                       so nothing outside the view may change
 *   elementwise         every binary and unary op, broadcast operands,
 *                       views, special values; _into a strided view
 *   reductions          sum and max over every axis subset of random views,
 *                       all-negative values, lengths around 32/256/1024,
 *                       NaN in a row; a broadcast of more than 2^31
 *                       elements (64-bit counts in the kernels)
 *   matmul              both kernels at the 64x64 tile and 16-deep panel,
 *                       views, batches, a broadcast batch (stride 0)
 *   grids               more elements than 65535 blocks of 256 threads
 *                       cover, more outputs and more matrices than 65535
 *                       blocks (plain build only: slow on the emulator
 *                       under the sanitizers)
 *
 *   performance         from the CUDA emulator's counters (its instrumented
 *                       build, GPU or not): the compact kernel's stores and
 *                       the elementwise kernel's loads and stores coalesce
 *                       on compact arrays (whole sectors per request)
 *
 * The [cuda] cases of the hidden tests of lessons 2-5 count for this
 * lesson too.  What the framework makes of CUDA's own errors (out of
 * device memory, a failed call) is the framework's, not the student's:
 * tests/test_00_array.c checks it.
 */
#include "kit.h"

#define INDEX_HINT "peel the index off i from the last axis (index[k] = i % shape[k], " \
    "i /= shape[k]), axis 0 gets what is left; the offset is offset + sum(index[k] * " \
    "strides[k]), all in 64 bits"
#define GRID_HINT "the grid is capped at 65535 blocks: loop i += gridDim.x * blockDim.x " \
    "(outputs: o += gridDim.x; matrices: z += gridDim.z) until the end"
#define SUM_HINT "every thread folds its elements; every warp's value reaches the final " \
    "fold (a __syncthreads() between the shared slots' writes and their reads)"

/* Sizes around the warp, the block of 256 and 1024 threads. */
static const int64_t ODD[] = { 1, 2, 31, 32, 33, 63, 255, 256, 257, 511, 1023, 1024, 1025, 4099 };
#define NODD (int)(sizeof ODD / sizeof ODD[0])

static void index_run(k_ctx *k, int ndim, const int64_t *shape, const int64_t *strides,
                      int64_t offset, int64_t i, int64_t n, int64_t step, const char *hint)
{
    k_call c = k_offset_call(k, ndim, shape, strides, offset, i, n, step);
    k_check(k, &c, hint);
}

/* ---------------------------------------------------------------------- */
/* The index transform                                                    */
/* ---------------------------------------------------------------------- */

static void index_offset_exhaustive(k_ctx *k)
{
    for (int t = 0; t < 400; t++) {
        int nd = t % (ND_MAX_DIMS + 1);
        int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
        nd = k_shape(k, nd, 1, nd > 5 ? 3 : 7, 5000, shape);
        for (int d = 0; d < nd; d++) {
            int kind = (int)k_int(k, 0, 5);
            strides[d] = kind == 0 ? 0 : kind == 1 ? k_int(k, -(1LL << 40), 1LL << 40)
                                                   : k_int(k, -60, 60);
        }
        index_run(k, nd, shape, strides, k_int(k, 0, 1LL << 41), 0, k_numel(nd, shape), 1,
                  NULL);
    }
}

/* Positions and offsets past 2^31 and 2^32. */
static void index_offset_64bit(k_ctx *k)
{
    static const struct {
        int ndim;
        int64_t shape[3], strides[3], offset;
    } cases[] = {
        { 1, { 6000000000LL }, { 1 }, 0 },
        { 2, { 100000, 100000 }, { 1, 100000 }, 7 },
        { 3, { 3, 2000000, 1000 }, { -2000000000LL, 1000, 1 }, 6000000000LL },
        { 2, { 70000, 70000 }, { 70001, -1 }, 69999 },
    };
    for (int i = 0; i < 4; i++) {
        int64_t n = k_numel(cases[i].ndim, cases[i].shape), from = k_int(k, 0, 999999);
        for (int probe = 0; probe < 3; probe++)   /* the last, past 2^32, and 2000 spread */
            index_run(k, cases[i].ndim, cases[i].shape, cases[i].strides, cases[i].offset,
                      probe == 0 ? n - 1 : probe == 1 ? (1LL << 32) + 5 : from,
                      probe < 2 ? 1 : 2000, (n - 1 - from) / 1999, NULL);
    }
}

/* ---------------------------------------------------------------------- */
/* Copies                                                                 */
/* ---------------------------------------------------------------------- */

static void compact_views_odd(k_ctx *k)
{
    for (int s = 0; s < NODD; s++)
        for (int rep = 0; rep < 6; rep++) {
            int64_t shape[ND_MAX_DIMS];
            int nd = (int)k_int(k, 1, ND_MAX_DIMS);
            k_shape_of(k, nd, ODD[s], shape);
            k_call c = k_new(k, K_COMPACT);
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY | (rep % 2 ? K_REPEAT : 0), K_DISTINCT));
            k_check(k, &c, "compact_kernel: dst[i] = src.data[offset_of(i, src)] for every "
                    "i < n (blocks rounded up; offset_of includes the view's offset)");
        }
}

static void setitem_views_odd(k_ctx *k)
{
    for (int s = 0; s < NODD; s++)
        for (int rep = 0; rep < 5; rep++) {
            int64_t shape[ND_MAX_DIMS];
            int nd = (int)k_int(k, 1, ND_MAX_DIMS);
            k_shape_of(k, nd, ODD[s], shape);
            k_call c = k_new(k, K_SETITEM);
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_POISON));
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_DISTINCT));
            k_check(k, &c, "setitem_kernel: dst.data[offset_of(i, dst)] = "
                    "src.data[offset_of(i, src)] for i < the VIEW's numel");
            c = k_new(k, K_SETITEM_SCALAR);
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_DISTINCT));
            c.scalar = k_float(k, -5, 5);
            k_check(k, &c, "fill_kernel: every element of the view, through offset_of");
        }
}

/* A window at an offset into a bigger buffer, whose numel is much smaller
 * than the buffer's: a launch over the buffer, or a forgotten offset,
 * shows.  Rows or columns reversed by turns. */
static void copies_offset_windows(k_ctx *k)
{
    for (int rep = 0; rep < 60; rep++) {
        int64_t rows = k_int(k, 1, 40), cols = k_int(k, 1, 300), pitch = cols + k_int(k, 1, 9);
        int64_t size = (rows + 2) * pitch, shape[2] = { rows, cols }, strides[2] = { pitch, 1 };
        int64_t offset = pitch + k_int(k, 0, pitch - cols);
        if (rep % 3 == 1) {
            strides[0] = -pitch;
            offset += (rows - 1) * pitch;
        } else if (rep % 3 == 2) {
            strides[1] = -1;
            offset += cols - 1;
        }
        for (int op = 0; op < 3; op++) {
            static const k_op ops[] = { K_COMPACT, K_SETITEM, K_SETITEM_SCALAR };
            k_call c = k_new(k, ops[op]);
            k_arg(&c, k_strided(k, &c, size, 2, shape, strides, offset, K_DISTINCT));
            if (ops[op] == K_SETITEM)
                k_arg(&c, k_compact(k, &c, 2, shape, K_RANDOM));
            c.scalar = -3.0f;
            k_check(k, &c, "a view's offset is part of offset_of, and n is the view's numel, "
                    "not its buffer's: write only the view's elements");
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Elementwise                                                            */
/* ---------------------------------------------------------------------- */

static void ewise_every_op(k_ctx *k)
{
    for (int s = 0; s < NODD; s++) {
        int64_t shape[ND_MAX_DIMS], bshape[ND_MAX_DIMS];
        int nd = (int)k_int(k, 1, 6);
        k_shape_of(k, nd, ODD[s], shape);
        int bnd = k_broadcastable(k, nd, shape, bshape);
        for (int op = ND_ADD; op <= ND_GE; op++) {
            k_call c = k_new(k, K_BINARY);
            c.code = op;
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_SPECIAL));
            k_arg(&c, k_view(k, &c, bnd, bshape, K_ANY, K_SPECIAL));
            k_check(k, &c, "binary_kernel: dst, a and b each through offset_of with their "
                    "own strides (0 for a broadcast axis)");
        }
        for (int op = ND_NEG; op <= ND_ABS; op++) {
            k_call c = k_new(k, K_UNARY);
            c.code = op;
            k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_SPECIAL));
            k_check(k, &c, "unary_kernel: every element, through offset_of");
        }
        k_call c = k_new(k, K_BINARY_INTO);   /* into a strided view */
        c.code = ND_SUB;
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_RANDOM));
        k_arg(&c, k_view(k, &c, bnd, bshape, K_ANY, K_RANDOM));
        k_arg(&c, k_view(k, &c, nd, shape, K_ANY, K_POISON));
        k_check(k, &c, "write dst.data[offset_of(i, dst)] for i < n, and nothing else");
    }
}

/* ---------------------------------------------------------------------- */
/* Reductions                                                             */
/* ---------------------------------------------------------------------- */

/* Sums and maxes over every subset of axes of random views of up to 4
 * axes, all values negative: a max that starts from 0 shows. */
static void reduce_views_every_subset(k_ctx *k)
{
    for (int s = 0; s < NODD; s++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = (int)k_int(k, 1, 4);
        k_shape_of(k, nd, ODD[s], shape);
        for (unsigned mask = 1; mask < (1u << nd); mask++)
            for (int op = ND_SUM; op <= ND_MAX; op++) {
                k_call c = k_new(k, K_REDUCE);
                k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_NEGATIVE));
                int64_t axes[ND_MAX_DIMS];
                int n = 0;
                for (int d = 0; d < nd; d++)
                    if (mask >> d & 1)
                        axes[n++] = d;
                k_list(&c, 0, n, axes);
                c.code = op;
                c.keepdims = k_one_in(k, 2);
                k_check(k, &c, op == ND_SUM ? SUM_HINT : "start a max from -INFINITY, never "
                        "0; lanes past the warps in use must not bring a 0 in");
            }
    }
}

/* One long reduction per output at the lengths where the block changes,
 * a NaN somewhere in row 2. */
static void reduce_lengths_and_nan(k_ctx *k)
{
    static const int64_t lens[] = { 1, 2, 31, 32, 33, 64, 65, 127, 128, 129, 255, 256, 257,
                                    1024, 1025, 3001 };
    for (int i = 0; i < 16; i++)
        for (int op = ND_SUM; op <= ND_MAX; op++) {
            k_call c = k_new(k, K_REDUCE);
            k_arr a = k_compact(k, &c, 2, (int64_t[]){ 5, lens[i] }, K_NEGATIVE);
            k_arg(&c, a);
            c.bufs[a.buf].v[2 * lens[i] + k_int(k, 0, lens[i] - 1)] = NAN;
            k_list(&c, 0, 1, (int64_t[]){ 1 });
            c.code = op;
            k_check(k, &c, "each of the block's warps folds its lanes (__shfl_down_sync with "
                    "deltas 16..1), lane 0 writes a shared slot, __syncthreads(), warp 0 "
                    "folds the slots; NaN wins a max");
        }
}

/* The sum of a broadcast (stride 0) of one element 2^31 + 3 times: the
 * count, positions and loop variables past 2^31 need 64 bits (an int
 * loop variable wraps negative and never reaches the end). */
static void reduce_broadcast_past_2e31(k_ctx *k)
{
    int64_t len = (1LL << 31) + 3, zero = 0;
    k_call c = k_new(k, K_REDUCE);
    k_arg(&c, k_strided(k, &c, 1, 1, &len, &zero, 0, K_INTEGERS));
    k_list(&c, 0, 1, &zero);
    c.code = ND_SUM;
    k_check(k, &c, "a row of 2^31 + 3 elements: n, i and every position are int64_t (an "
            "int stops at 2^31 - 1)");
}

/* ---------------------------------------------------------------------- */
/* Matmul                                                                 */
/* ---------------------------------------------------------------------- */

static void matmul_pair(k_ctx *k, int nd, const int64_t *sa, int bnd, const int64_t *sb,
                        int how, const char *hint)
{
    for (int tiled = 0; tiled < 2; tiled++) {
        k_call c = k_new(k, tiled ? K_MATMUL : K_MATMUL_NAIVE);
        k_arg(&c, k_view(k, &c, nd, sa, how, K_RANDOM));
        k_arg(&c, k_view(k, &c, bnd, sb, how, K_RANDOM));
        k_check(k, &c, hint);
    }
}

/* Around tiles of 64 and panels of 16, non-square every way (a swapped
 * grid or block shows), batches of 1 to 3, operands of every layout. */
static void matmul_tile_edges(k_ctx *k)
{
    static const int64_t sizes[][3] = {
        { 1, 1, 1 }, { 2, 3, 70 }, { 70, 3, 2 }, { 63, 15, 65 }, { 65, 17, 63 },
        { 64, 16, 64 }, { 129, 33, 1 }, { 1, 33, 129 }, { 17, 64, 96 }, { 100, 1, 3 },
        { 5, 20, 300 }, { 300, 20, 5 }, { 127, 9, 129 }, { 129, 7, 127 }, { 20, 8, 257 },
        { 257, 24, 3 }, { 130, 31, 66 },
    };
    for (int i = 0; i < 17; i++) {
        int64_t b = i % 3 + 1, m = sizes[i][0], n = sizes[i][1], p = sizes[i][2];
        matmul_pair(k, 3, (int64_t[]){ b, m, n }, 3, (int64_t[]){ b, n, p }, K_ANY,
                    "grid x covers the columns, y the rows, z the batch; the tiled kernel "
                    "stages both panels, __syncthreads(), accumulates, __syncthreads() again "
                    "before the next panel; zeros outside");
    }
}

/* One matrix against a batch (its batch stride 0), and batch axes that
 * repeat (K_REPEAT: stride 0 on some axes). */
static void matmul_broadcast_batch(k_ctx *k)
{
    const char *hint = "a broadcast operand's batch stride is 0: matrix z starts at "
                       "offset_of(z, abatch)";
    matmul_pair(k, 2, (int64_t[]){ 33, 18 }, 3, (int64_t[]){ 3, 18, 65 }, K_ANY, hint);
    matmul_pair(k, 3, (int64_t[]){ 3, 33, 18 }, 2, (int64_t[]){ 18, 65 }, K_ANY, hint);
    matmul_pair(k, 4, (int64_t[]){ 2, 1, 9, 40 }, 3, (int64_t[]){ 3, 40, 7 }, K_ANY, hint);
    for (int i = 0; i < 4; i++)
        matmul_pair(k, 3, (int64_t[]){ 4, 20, 17 }, 3, (int64_t[]){ 4, 17, 33 },
                    K_ANY | K_REPEAT, hint);
}

/* ---------------------------------------------------------------------- */
/* Grids past 65535 blocks (plain build only)                             */
/* ---------------------------------------------------------------------- */

/* 65535 * 256 + 778 elements through a view that is no permutation of
 * compact memory (the gather kernel, not lesson 7's). */
static void large_views(k_ctx *k)
{
    int64_t half = (65535LL * 256 + 777) / 2 + 1, shape[2] = { 2, half }, n = 2 * half;
    int64_t strides[2] = { 1, -2 }, offset = (half - 1) * 2;
    for (int op = 0; op < 4; op++) {
        static const k_op ops[] = { K_COMPACT, K_SETITEM, K_SETITEM_SCALAR, K_BINARY };
        k_call c = k_new(k, ops[op]);
        k_arg(&c, k_strided(k, &c, n, 2, shape, strides, offset, K_INTEGERS));
        if (op == 1 || op == 3)
            k_arg(&c, k_compact(k, &c, 2, shape, K_INTEGERS));
        c.scalar = 1.0f;
        c.code = ND_MUL;
        k_check(k, &c, GRID_HINT);
    }
}

/* 65600 outputs of 40 (two warps each: both __syncthreads() matter when a
 * block folds a second output), read across the rows; 65537 matrices;
 * more rows than 65535 blocks of 16 (gridDim.y is capped). */
static void large_reduce_and_batch_views(k_ctx *k)
{
    for (int op = ND_SUM; op <= ND_MAX; op++) {
        k_call c = k_new(k, K_REDUCE);
        k_arg(&c, k_strided(k, &c, 40 * 65600, 2, (int64_t[]){ 40, 65600 },
                            (int64_t[]){ 1, 40 }, 0, K_RANDOM));
        k_list(&c, 0, 1, (int64_t[]){ 0 });
        c.code = op;
        k_check(k, &c, GRID_HINT);
    }
    matmul_pair(k, 3, (int64_t[]){ 65537, 2, 3 }, 3, (int64_t[]){ 65537, 3, 1 }, 0, GRID_HINT);
    /* 1048590 rows: past 65535 blocks of 16 rows on gridDim.y */
    matmul_pair(k, 2, (int64_t[]){ 1048590, 1 }, 2, (int64_t[]){ 1, 2 }, K_STEPS, GRID_HINT);
}

/* ---------------------------------------------------------------------- */
/* Performance, on the emulator's instrumented build                      */
/* ---------------------------------------------------------------------- */

#define COALESCE_HINT "thread gid = blockIdx.x * blockDim.x + threadIdx.x handles element " \
    "gid, then gid + gridDim.x * blockDim.x: neighbouring threads of a warp touch " \
    "neighbouring elements of a compact array, 32 floats in 4 sectors"

/* A transposed view with a gap between its columns gathered into a new
 * compact array (not a permutation of compact memory, which lesson 7's
 * kernels move): compact_kernel's reads are strided, its writes must
 * coalesce. */
static void compact_stores_coalesce(k_ctx *k)
{
    static const k_perf rules[] = {
        { K_GLOBAL_STORE, 0, 96 * 80 * 4, "your compact kernel's writes to the compact result "
          "take %g sectors per request where %g would do: a warp must write 32 neighbouring "
          "elements of dst" },
    };
    k_call c = k_new(k, K_COMPACT);
    k_arg(&c, k_strided(k, &c, 79 * 194 + 96, 2, (int64_t[]){ 96, 80 }, (int64_t[]){ 1, 194 },
                        0, K_DISTINCT));
    k_check_perf(k, &c, rules, 1, NULL);
}

static void ewise_coalesces(k_ctx *k)
{
    static const k_perf rules[] = {
        { K_GLOBAL_LOAD, 0, 2 * 64 * 200 * 4, "your elementwise kernel's reads of compact "
          "operands take %g sectors per request where %g would do: a warp must read 32 "
          "neighbouring elements" },
        { K_GLOBAL_STORE, 0, 64 * 200 * 4, "your elementwise kernel's writes to the compact "
          "result take %g sectors per request where %g would do: a warp must write 32 "
          "neighbouring elements" },
    };
    int64_t shape[] = { 64, 200 };
    k_call c = k_new(k, K_BINARY);
    c.code = ND_ADD;
    k_arg(&c, k_compact(k, &c, 2, shape, K_RANDOM));
    k_arg(&c, k_compact(k, &c, 2, shape, K_RANDOM));
    k_check_perf(k, &c, rules, 2, NULL);
}

/* The performance tests: the instrumented executor, the plain build's
 * result standing for the sanitizers'. */
#define PERF (K_CUDA | K_PLAIN | K_PROFILED)

static const k_test tests[] = {
    K_TEST(index_offset_exhaustive, K_HOST, 6, INDEX_HINT),
    K_TEST(index_offset_64bit, K_HOST, 3, "i, shape, strides and the offset are int64_t: keep "
           "every product and sum in 64 bits"),
    K_TEST(compact_views_odd, K_CUDA, 5, "compact_kernel over views of every layout"),
    K_TEST(setitem_views_odd, K_CUDA, 6, "setitem_kernel and fill_kernel over views: write "
           "exactly the view's elements"),
    K_TEST(copies_offset_windows, K_CUDA, 4, "a view's offset and its numel (not its "
           "buffer's) decide what a kernel touches"),
    K_TEST(ewise_every_op, K_CUDA, 6, "binary_kernel and unary_kernel, every op, broadcast "
           "operands"),
    K_TEST(reduce_views_every_subset, K_CUDA, 6, "reduce_kernel over every axis subset"),
    K_TEST(reduce_lengths_and_nan, K_CUDA, 4, "reduce_kernel at lengths around 32 and 256"),
    K_TEST(reduce_broadcast_past_2e31, K_CUDA | K_PLAIN, 2, "64-bit counts in the kernels"),
    K_TEST(matmul_tile_edges, K_CUDA, 6, "both matmul kernels at the tile edges"),
    K_TEST(matmul_broadcast_batch, K_CUDA, 2, "matmul batches through offset_of"),
    K_TEST(large_views, K_CUDA | K_PLAIN, 3, GRID_HINT),
    K_TEST(large_reduce_and_batch_views, K_CUDA | K_PLAIN, 3, GRID_HINT),
    /* performance: 6 of the lesson's 101.25 points (grader/weights.tsv) */
    K_TEST(compact_stores_coalesce, PERF, 3, COALESCE_HINT),
    K_TEST(ewise_coalesces, PERF, 3, COALESCE_HINT),
};
K_SUITE(hidden_06, 6, "06_cuda", tests);
