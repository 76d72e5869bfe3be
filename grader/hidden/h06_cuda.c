/*
 * h06_cuda.c -- hidden tests of lesson 6: the index transform and the
 * kernels of lessons 2-5 on the CUDA device (a GPU, or the emulator).  Most
 * are the public tests of tests/test_06_cuda.c run again (K_AGAIN: other
 * seeds, k_count's cases scaled); their own: a sum over more than 2^31
 * elements and writes through views of more than 2^31 (64-bit counts and
 * indices in the kernels), a tiled matmul of more row tiles than
 * gridDim.y allows, and performance from the
 * emulator's counters (its instrumented build): the compact and
 * elementwise kernels' accesses to compact arrays coalesce; and a
 * reduction split over several blocks per output, on that build, whose
 * racecheck between blocks fails a kernel whose blocks add to one word
 * without an atomic (right on the emulator, wrong on a GPU).
 *
 * The [cuda] cases of the hidden tests of lessons 2-5 count for this
 * lesson too.  What the framework makes of CUDA's own errors (out of
 * device memory, a failed call) is the framework's: tests/test_00_array.c
 * checks it.
 */
#include "kit.h"

#define INDEX_HINT "peel the index off i from the last axis (index[k] = i % shape[k], " \
    "i /= shape[k]), axis 0 gets what is left; the offset is offset + sum(index[k] * " \
    "strides[k]), all in 64 bits"
#define GRID_HINT "the grid is capped at 65535 blocks: loop i += gridDim.x * blockDim.x " \
    "(outputs: o += gridDim.x; matrices: z += gridDim.z) until the end"

/* The sum of a broadcast (stride 0) of one element 2^31 + 3 times: the
 * count, positions and loop variables past 2^31 need 64 bits (an int
 * loop variable wraps negative and never reaches the end). */
static void reduce_broadcast_past_2e31(k_ctx *k)
{
    int64_t len = (1LL << 31) + 3, zero = 0;
    k_call c = k_new(k, K_REDUCE);
    k_arg(&c, k_strided(k, &c, 1, 1, &len, &zero, 0, K_INTEGERS));
    k_reduce_of(&c, ND_SUM, 1, &zero, false);
    k_check(k, &c, "a row of 2^31 + 3 elements: n, i and every position are int64_t (an "
            "int stops at 2^31 - 1); it is split over many blocks, which run in any order "
            "and at the same time: their partial sums reach the output through a second "
            "pass or atomicAdd, never by adding to what another block stored");
}

/* (65535 * 128 + 1, 1) @ (1, 1) by the tiled kernel: 65536 row tiles of
 * 128, one more than gridDim.y allows (the naive kernel's rows of 16
 * pass the limit at 1048561 rows: many_rows).  Sampled (grader/emu/
 * README.md, "Sampled launches"): of the 65535 blocks the emulator runs
 * block 0, the last ones and two chosen by the seed, where every block
 * would take 6-8 s of CPU.  So a is 0 but in its last row, the one row of
 * tile 65535, which a kernel that loops over row tiles gives to block 0
 * (i0 = 0, then 65535 * 128); c's buffer starts as zeros in sampled mode
 * (fresh pages), so the rows of the blocks that did not run hold their
 * answer, 0, already.  On a GPU every block runs. */
static void matmul_row_tiles_past_grid(k_ctx *k)
{
    const int64_t m = 65535 * 128 + 1;
    float *a = k_floats(k, m), b = (float)k_int(k, 2, 9);
    for (int64_t i = 0; i < m; i++)
        a[i] = 0.0f;
    a[m - 1] = (float)k_int(k, 1, 9);
    k_call c = k_new(k, K_MATMUL);
    c.sampled = true;
    k_arg(&c, k_given(k, &c, 2, (int64_t[]){ m, 1 }, a));
    k_arg(&c, k_given(k, &c, 2, (int64_t[]){ 1, 1 }, &b));
    k_check(k, &c, "65536 row tiles of TM = 128 rows: the tiled kernel's gridDim.y stops at "
            "65535 (blocks_for(m, TM)), so each block loops over its row tiles, i0 = "
            "blockIdx.y * TM, i0 += gridDim.y * TM, while i0 < m");
}

/* The kernels that write through a view (binary_kernel, unary_kernel,
 * fill_kernel, setitem_kernel) over 3 x (2^20 + 1) x 1024 =
 * 3,221,228,544 elements (past 2^31, as the count, every thread's index
 * and the grid stride must go), in about 20 KB: the inputs are one row of
 * 1024 repeated (strides 0, 0, 1), and dst has three slabs of one row
 * each (strides 1024, 0, 1), so the elements of slab s all write row s
 * of dst's buffer.  Slab 2 is elements 2^31 + 2048 and on: row 2 starts
 * as -0.25, -1.25, ..., and only they can give it its answer (rows 0 and
 * 1 hold theirs from the start, since the emulator runs only some
 * blocks).
 *
 * On the emulator the calls are sampled (grader/emu/README.md, "Sampled
 * launches"): each launch runs a few blocks, those of its last 2048
 * threads among them, whose last elements are in slab 2 whatever the
 * mapping (a grid-stride loop, or one thread per element), and each
 * buffer sits between guard pages.  An index kept in an int wraps
 * negative after 2^31 - 1: the next access lands a few KB before an
 * input or dst, in a guard (a crash, at once), and slab 2 is never
 * reached.  On a GPU every block runs: 3.2 * 10^9 elements over 20 KB,
 * milliseconds.  (compact_kernel's output is compact: 2^31 elements of
 * it are 8 GB, more than an executor may reserve.) */
#define PAST_2E31_HINT(kernel) kernel " over 3 * (2^20 + 1) * 1024 elements: i, n and the " \
    "grid stride are int64_t (an int stops at 2^31 - 1; use int64_t)"

/* op over that layout: K_BINARY_INTO (ND_ADD), K_UNARY_INTO (ND_NEG),
 * K_SETITEM_SCALAR (3.5), K_SETITEM. */
static void past_2e31(k_ctx *k, k_op op, const char *hint)
{
    enum { C = 1024 };
    int64_t shape[] = { 3, K_P2(20) + 1, C }, row[] = { 0, 0, 1 }, slabs[] = { C, 0, 1 };
    float *a = k_floats(k, C), *b = k_floats(k, C), *d = k_floats(k, 3 * C);
    for (int j = 0; j < C; j++) {
        a[j] = (float)k_int(k, -8, 8);
        b[j] = (float)k_int(k, -8, 8);
        d[j] = d[C + j] = op == K_BINARY_INTO ? a[j] + b[j] : op == K_UNARY_INTO ? -a[j]
                        : op == K_SETITEM_SCALAR ? 3.5f : a[j];
        d[2 * C + j] = -0.25f - (float)j;
    }
    k_call c = k_new(k, op);
    c.code = op == K_BINARY_INTO ? (int)ND_ADD : (int)ND_NEG;
    c.scalar = 3.5f;
    c.sampled = true;
    bool setitem = op == K_SETITEM || op == K_SETITEM_SCALAR;
    if (setitem)
        k_arg(&c, k_at(k_buffer_of(k, &c, 3 * C, d), 3, shape, slabs, 0));
    if (op != K_SETITEM_SCALAR)
        k_arg(&c, k_at(k_buffer_of(k, &c, C, a), 3, shape, row, 0));
    if (op == K_BINARY_INTO)
        k_arg(&c, k_at(k_buffer_of(k, &c, C, b), 3, shape, row, 0));
    if (!setitem)
        k_arg(&c, k_at(k_buffer_of(k, &c, 3 * C, d), 3, shape, slabs, 0));
    k_check(k, &c, hint);
}

static void kernels_past_2e31(k_ctx *k)
{
    past_2e31(k, K_BINARY_INTO, PAST_2E31_HINT("binary_kernel"));
    past_2e31(k, K_UNARY_INTO, PAST_2E31_HINT("unary_kernel"));
    past_2e31(k, K_SETITEM_SCALAR, PAST_2E31_HINT("fill_kernel"));
    past_2e31(k, K_SETITEM, PAST_2E31_HINT("setitem_kernel"));
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
    k_call c = k_on_view(k, K_COMPACT, 79 * 194 + 96, 2, (int64_t[]){ 96, 80 },
                         (int64_t[]){ 1, 194 }, 0);
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
    k_call c = k_on_array(k, K_BINARY, 2, shape);
    c.code = ND_ADD;
    k_arg(&c, k_compact(k, &c, 2, shape, K_RANDOM));
    k_check_perf(k, &c, rules, 2, NULL);
}

/* Rows of 20000 elements: more than SPLIT_MIN (8192) in the solution's
 * launch_reduce, so each output's elements are split over 3 blocks.  On
 * the instrumented executor a kernel whose blocks combine their partial
 * results in one global word without an atomic (a plain +=), or whose
 * last block reads the others' partials without __threadfence() and an
 * atomic counter, is a racecheck fault (grader/emu/README.md, "The
 * sanitizer"), where the plain emulator, running one block at a time,
 * gets the right sum. */
static void reduce_split_no_race(k_ctx *k)
{
    int64_t axis = 1;
    k_call c = k_new(k, K_REDUCE);
    k_arg(&c, k_compact(k, &c, 2, (int64_t[]){ 2, 20000 }, K_RANDOM));
    k_reduce_of(&c, ND_SUM, 1, &axis, false);
    k_check_perf(k, &c, NULL, 0, NULL);
}

#define SPLIT_RACE_HINT "the blocks of one output run in any order and at the same time " \
    "on a GPU: each writes its partial result to a slot of its own and a second launch " \
    "folds them (or atomicAdd); a plain += on one word, or a last block reading the " \
    "partials without " \
    "__threadfence() and an atomic counter, races. make cuda-sanitize " \
    "T='reduce_split_outputs[cuda]' names both lines"

/* The performance tests: the instrumented executor, the plain build's
 * result standing for the sanitizers'. */
#define PERF (K_CUDA | K_PLAIN | K_PROFILED)

static const k_test tests[] = {
    K_AGAIN(index_offset_random, public_06, index_to_offset_random, 1, K_HOST, 6, INDEX_HINT),
    K_AGAIN(index_offset_64bit, public_06, index_to_offset_cases, 1, K_HOST, 3, "i, shape, "
            "strides and the offset are int64_t: keep every product and sum in 64 bits"),
    K_AGAIN(kernels_views_odd, public_06, launch_odd_sizes, 6, K_CUDA, 19, "compact_kernel, "
            "setitem_kernel, fill_kernel, binary_kernel and unary_kernel over views of every "
            "layout: a view's offset and its numel (not its buffer's) decide what a kernel "
            "touches"),
    K_AGAIN(reduce_views_and_lengths, public_06, reduce_odd_lengths, 5, K_CUDA, 10,
            "reduce_kernel over every axis subset, at lengths around 32 and 256: start a max "
            "from -INFINITY; every warp's value reaches the final fold"),
    K_AGAIN(reduce_split_any_order, public_06, reduce_split_outputs, 1, K_CUDA, 2,
            "blocks run in any order and at the same time: the partial results of a split "
            "output reach it by a second pass (or atomicAdd)"),
    K_TEST(reduce_broadcast_past_2e31, K_CUDA | K_PLAIN, 2, "64-bit counts in the kernels"),
    /* 2 of kernels_views_odd's points (21 before): the lesson's total is
     * unchanged */
    K_TEST(kernels_past_2e31, K_CUDA | K_PLAIN, 2, "binary_kernel, unary_kernel, "
           "fill_kernel and setitem_kernel over more than 2^31 elements: i, n and the grid "
           "stride are int64_t; an int index wraps negative after 2^31 - 1 (an int stops at "
           "2^31 - 1; use int64_t)"),
    K_AGAIN(matmul_tile_edges, public_06, matmul_odd_sizes, 1, K_CUDA, 8, "both matmul "
            "kernels at the tile edges; batches through offset_of"),
    /* past 65535 blocks: the plain build only (slow on the emulator under
     * the sanitizers) */
    K_AGAIN(large_views, public_06, large_fill_and_add, 1, K_CUDA | K_PLAIN, 3, GRID_HINT),
    K_AGAIN(large_reduce_and_batch_views, public_06, large_reduce_and_batch, 1,
            K_CUDA | K_PLAIN, 2, GRID_HINT),
    K_AGAIN(many_rows, public_06, matmul_many_rows, 1, K_CUDA | K_PLAIN, 1, GRID_HINT),
    K_TEST(matmul_row_tiles_past_grid, K_CUDA | K_PLAIN, 1, "the tiled kernel loops over row "
           "tiles past gridDim.y"),
    /* performance: 6 of the lesson's 101.25 points (grader/weights.tsv) */
    K_TEST(compact_stores_coalesce, PERF, 3, COALESCE_HINT),
    K_TEST(ewise_coalesces, PERF, 2, COALESCE_HINT),
    K_TEST(reduce_split_no_race, PERF, 1, SPLIT_RACE_HINT),
};
K_SUITE(hidden_06, 6, "06_cuda", tests);
