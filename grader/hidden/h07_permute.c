/*
 * h07_permute.c -- hidden tests of lesson 7: nd_simplify_permutation and
 * nd_permute_bytes (every element size, every version, both devices).
 * Most are the public tests of tests/test_07_permute.c run again (K_AGAIN:
 * other seeds, k_count's cases scaled).  Their own are performance, from
 * the CUDA emulator's counters (its instrumented build, GPU or not): the
 * tiled transpose reads and writes whole sectors and its tile has no bank
 * conflict; the generic kernel moves 16 bytes a thread where the rows
 * allow it.
 */
#include "kit.h"

#define TRANSPOSE_BYTES (256 * 256 * 4)

static void transpose_whole_sectors(k_ctx *k)
{
    static const k_perf rules[] = {
        { K_GLOBAL_LOAD, 0, TRANSPOSE_BYTES, "your tiled transpose's reads take %g sectors per "
          "request where %g would do: a warp must read 32 neighbours of one row of src" },
        { K_GLOBAL_STORE, 0, TRANSPOSE_BYTES, "your tiled transpose's writes take %g sectors "
          "per request where %g would do: a warp must write 32 neighbours of one row of dst, "
          "read out of one column of the tile" },
    };
    k_call c = k_permute_call(k, 4, 2, (int64_t[]){ 256, 256 }, (int64_t[]){ 1, 0 }, 3, 0, 0);
    k_check_perf(k, &c, rules, 2, NULL);
}

static void transpose_no_bank_conflicts(k_ctx *k)
{
    static const k_perf rules[] = {
        { K_SHARED_LOAD, 0, TRANSPOSE_BYTES, "your tile's column reads are %1$g-way bank "
          "conflicts (%1$g wavefronts per request where %2$g would do): pad the row, "
          "tile[TILE][TILE + 1], so that the 32 elements of a column fall in 32 banks" },
        { K_SHARED_STORE, 0, TRANSPOSE_BYTES, "your tile's row writes are %1$g-way bank "
          "conflicts (%1$g wavefronts per request where %2$g would do): a warp must write 32 "
          "neighbours of one row of the tile" },
    };
    k_call c = k_permute_call(k, 4, 2, (int64_t[]){ 256, 256 }, (int64_t[]){ 1, 0 }, 3, 0, 0);
    k_check_perf(k, &c, rules, 2, NULL);
}

/* Rows of 8 floats (32 bytes) kept last, at 16-byte aligned addresses:
 * the unit is 16 bytes. */
static void permute_16_byte_units(k_ctx *k)
{
    static const k_perf rules[] = {
        { K_GLOBAL_LOAD, 16, 8 * 32 * 64 * 8 * 4, "your generic kernel loads %g bytes per "
          "thread where %g are possible: the last axis stays last, and its 32 bytes per row "
          "and both addresses allow 16-byte units; move them as uint4 (or float4, int4): a "
          "16-byte type aligned to less than 16 bytes (struct { float a, b, c, d; } is "
          "4-byte aligned) is moved by nvcc as 4-byte loads; a struct of your own needs "
          "__align__(16)" },
        { K_GLOBAL_STORE, 16, 8 * 32 * 64 * 8 * 4, "your generic kernel stores %g bytes per "
          "thread where %g are possible: move 16-byte units both ways as uint4 (or a "
          "struct declared __align__(16): nvcc stores a 4-byte aligned struct as 4-byte "
          "stores)" },
    };
    k_call c = k_permute_call(k, 4, 4, (int64_t[]){ 8, 32, 64, 8 }, (int64_t[]){ 0, 2, 1, 3 },
                              2, 0, 0);
    k_check_perf(k, &c, rules, 2, NULL);
}

/* The performance tests: the CUDA device, the instrumented executor, the
 * plain build's result standing for the sanitizers'. */
#define PERF (K_CUDA | K_PLAIN | K_PROFILED)

static const k_test tests[] = {
    K_AGAIN(simplify_properties, public_07, simplify_random, 8, K_HOST, 8, "drop the "
            "size-1 axes (renumbering perm), then merge source axes a-1 and a wherever the "
            "result has a right after a-1; read every input before writing an output"),
    K_AGAIN(simplify_errors_untouched, public_07, simplify_errors, 1, K_HOST, 2, "check every "
            "input before writing any output"),
    K_AGAIN(permute_random_all, public_07, permute_random, 2, K_BOTH, 12, "naive_one / "
            "permute_one: result element i's multi-index in the permuted shape, times the "
            "source strides of the source axes perm[k]; with the last axis kept, its size "
            "counts units of p->unit bytes"),
    K_AGAIN(permute_rows_in_pieces, public_07, permute_movement, 1, K_BOTH, 4, "the bytes "
            "that move together are the whole last axis when it stays last; the unit divides "
            "them and both addresses"),
    K_AGAIN(transpose_tile_sizes, public_07, permute_transpose_edges, 4, K_BOTH, 9,
            "transpose_kernel: tile[ty + j][tx] = in[r * cols + c], __syncthreads(), "
            "out[c * rows + r] = tile[tx][ty + j], __syncthreads() before the next tile; guard "
            "every access with r < rows && c < cols"),
    K_AGAIN(transpose2_tile_sizes, public_07, permute_transpose2, 8, K_BOTH, 5, "version 4 "
            "moves pairs of 2-byte elements as 4-byte words through a 64 x 64 tile; both "
            "__syncthreads(); r < rows && c < cols"),
    K_AGAIN(permute_past_the_grid, public_07, permute_large_grid, 1, K_BOTH | K_PLAIN, 4,
            "grid-stride loops in every kernel, over tiles (t += gridDim.x) or units (i += "
            "gridDim.x * blockDim.x); a transpose block that moves several tiles waits "
            "(__syncthreads) at the end of each before the next"),
    K_AGAIN(permute_errors_untouched, public_07, permute_errors, 1, K_BOTH, 4, "check "
            "everything before moving a byte"),
    K_AGAIN(compact_permuted, public_07, compact_permuted_views, 20, K_CUDA, 4, "nd_compact of "
            "a permuted compact array on the device runs lesson 7 (4-byte elements, from the "
            "view's offset)"),
    /* performance: 7 of the lesson's 59 points (grader/weights.tsv) */
    K_TEST(transpose_whole_sectors, PERF, 2, "transpose_kernel: thread (tx, ty) reads "
           "in[r * cols + c0 + tx] and writes out[c * rows + r0 + tx]: tx, the fastest "
           "thread index, must step along a row on both sides"),
    K_TEST(transpose_no_bank_conflicts, PERF, 3, "__shared__ T tile[TILE][TILE + 1]: the "
           "padding column puts the 32 elements of a column in 32 different banks"),
    K_TEST(permute_16_byte_units, PERF, 2, "run_generic moves units of p->unit bytes "
           "(uint4 for 16, a type aligned to 16 bytes): the plan's unit is the widest of 16, "
           "8, 4, 2, 1 that divides the row's bytes and both addresses"),
};
K_SUITE(hidden_07, 7, "07_permute", tests);
