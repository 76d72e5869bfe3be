/*
 * h07_permute.c -- hidden tests of lesson 7: nd_simplify_permutation and
 * nd_permute_bytes (every element size, every version, both devices).
 * Declarations over the kit (tests/kit/kit.h): its reference
 * gives the simplified permutation, the version the plan must choose or
 * refuse, and every byte of dst and the 64 guard bytes after it.
 *
 *   simplify        3000 random shapes (size-0 and size-1 axes) and
 *                   permutations of 0 to 8 axes, nearly sorted ones too,
 *                   in place half the time; every refusal leaves the
 *                   outputs alone
 *   permute_bytes   random permutations of 1 to 8 axes at shifted addresses;
 *                   rows moved in units narrower than an element; the tiled
 *                   transposes around their 32 and 64 tiles, with batches
 *                   and axes that merge into them; grids past the block cap;
 *                   every error, with dst untouched
 *   nd_compact      of permuted compact blocks on the CUDA device
 *   performance     from the CUDA emulator's counters (its instrumented
 *                   build, GPU or not): the tiled transpose reads and
 *                   writes whole sectors and its tile has no bank
 *                   conflict; the generic kernel moves 16 bytes a thread
 *                   where the rows allow it
 */
#include "kit.h"

static const int64_t sizes[] = { 1, 2, 4, 8, 16 };

static void permute(k_ctx *k, int64_t e, int ndim, const int64_t *shape, const int64_t *perm,
                    int version, int64_t src_shift, int64_t dst_shift)
{
    k_call c = k_permute_call(k, e, ndim, shape, perm, version, src_shift, dst_shift);
    k_check(k, &c, NULL);
}

static void simplify_properties(k_ctx *k)
{
    for (int t = 0; t < 3000; t++) {
        int n = (int)k_int(k, 0, ND_MAX_DIMS);
        int64_t shape[ND_MAX_DIMS], perm[ND_MAX_DIMS];
        for (int d = 0; d < n; d++)
            shape[d] = k_one_in(k, 3) ? 1 : t % 7 == 0 && k_one_in(k, 6) ? 0 : k_int(k, 2, 4);
        k_perm(k, n, perm);
        if (t % 3 == 0 && n >= 2) {   /* in order but for one swap of neighbours */
            int64_t d = k_int(k, 0, n - 2);
            for (int j = 0; j < n; j++)
                perm[j] = j == d ? d + 1 : j == d + 1 ? d : j;
        }
        k_call c = k_new(k, K_SIMPLIFY_PERM);
        k_list(&c, 0, n, shape);
        k_list(&c, 1, n, perm);
        c.at[0] = t % 2;
        k_check(k, &c, NULL);
    }
}

static void simplify_errors_untouched(k_ctx *k)
{
    int64_t shape[K_LIST] = { 2, 3, 4, 5 };
    static const int64_t bad[][4] = { { 3, 2, 1, 0 }, { 0, 1, 1, 2 }, { 0, 1, 2, 4 },
                                      { -1, 0, 1, 2 }, { 3, 2, 1, 3 } };
    for (int i = 0; i < 5 * 2 + 8; i++) {   /* bad[0], the valid one, first */
        k_call c = k_new(k, K_SIMPLIFY_PERM);
        k_list(&c, 0, 4, shape);
        k_list(&c, 1, 4, bad[i < 10 ? i % 5 : 0]);
        c.at[0] = i >= 5 && i < 10;   /* in place: shape and perm stay as they were */
        if (i == 10 || i == 11)
            c.n = i == 10 ? -1 : ND_MAX_DIMS + 1;
        else if (i == 12)
            c.list[0][2] = -1;
        else if (i >= 13 && i < 16)
            c.list_null[i - 13] = true;
        else if (i >= 16)
            c.at[1] = i - 15;
        k_check(k, &c, NULL);
    }
}

static void permute_random_all(k_ctx *k)
{
    for (int t = 0; t < 360; t++) {
        int64_t e = sizes[t % 5], shape[ND_MAX_DIMS], perm[ND_MAX_DIMS];
        int v = t / 5 % 3, n = (int)k_int(k, 1, ND_MAX_DIMS);
        k_shape(k, n, t % 23 == 0 ? 0 : 1, n > 5 ? 3 : 6, 3000, shape);
        k_perm(k, n, perm);
        for (int d = 0; d < n - 1 && t % 4 == 0; d++)   /* keep the last axis last */
            if (perm[d] == n - 1) {
                perm[d] = perm[n - 1];
                perm[n - 1] = n - 1;
            }
        int64_t unit = v == 2 ? e : 1;
        permute(k, e, n, shape, perm, v, unit * k_int(k, 0, 3), unit * k_int(k, 0, 3));
    }
}

static void permute_rows_in_pieces(k_ctx *k)
{
    static const int64_t shifts[] = { 0, 1, 2, 4, 8, 6, 12 };
    for (int s = 0; s < 7; s++)
        for (int i = 0; i < 5; i++)
            for (int v = 0; v <= 2; v++)
                permute(k, sizes[i], 3, (int64_t[]){ 5, 7, 3 + s }, (int64_t[]){ 1, 0, 2 }, v,
                        shifts[s], shifts[(s + 3) % 7]);
}

/* Version 3 (forced, then chosen) at every pair of sizes around the 32
 * tile: (1,0), (0,2,1) with a batch, and (b,1,r,c1,c2) by (0,1,3,4,2),
 * which simplifies to (0,2,1) of (b, r, c1*c2). */
static void transpose_tile_sizes(k_ctx *k)
{
    static const int64_t sz[] = { 1, 2, 31, 32, 33, 63, 65 };
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++) {
            int form = (i * 7 + j) % 3;
            int64_t c1 = sz[j] > 1 && sz[j] % 2 == 0 ? 2 : 1;
            int64_t shape[3][5] = { { sz[i], sz[j] }, { k_int(k, 2, 3), sz[i], sz[j] },
                                    { 2, 1, sz[i], c1, sz[j] / c1 } };
            static const int64_t perms[3][5] = { { 1, 0 }, { 0, 2, 1 }, { 0, 1, 3, 4, 2 } };
            for (int v = 3; v >= 0; v -= 3)
                permute(k, sizes[(i + j) % 5], 2 + form + (form == 2), shape[form], perms[form],
                        v, 0, 0);
        }
}

static void transpose2_tile_sizes(k_ctx *k)
{
    static const int64_t sz[] = { 2, 30, 32, 34, 62, 64, 66, 130 };
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            bool two = (i + j) % 2;
            permute(k, 2, two ? 2 : 3, two ? (int64_t[]){ sz[i], sz[j] }
                    : (int64_t[]){ 3, sz[i], sz[j] }, two ? (int64_t[]){ 1, 0 }
                    : (int64_t[]){ 0, 2, 1 }, 4, 4 * ((i + j) % 3), 4 * ((i * j) % 2));
        }
}

static void permute_past_the_grid(k_ctx *k)
{
    static const struct { int64_t e; int n; int64_t shape[3], perm[3]; int v; } cases[] = {
        { 16, 3, { 4200, 33, 2 }, { 0, 2, 1 }, 3 }, { 1, 3, { 2, 1400, 1500 }, { 0, 2, 1 }, 3 },
        { 2, 3, { 4100, 2, 66 }, { 0, 2, 1 }, 4 },  { 1, 2, { 1100, 1000 }, { 1, 0 }, 2 },
        { 8, 3, { 3, 1000, 400 }, { 2, 0, 1 }, 2 }, { 4, 3, { 2, 700, 800 }, { 1, 2, 0 }, 1 },
    };
    for (int i = 0; i < 6; i++)
        permute(k, cases[i].e, cases[i].n, cases[i].shape, cases[i].perm, cases[i].v, 0, 0);
}

static void permute_errors_untouched(k_ctx *k)
{
    int64_t shape[K_LIST] = { 8, 12 }, perm[K_LIST] = { 1, 0 };
    permute(k, 4, 2, shape, perm, -1, 0, 0);
    for (int i = 0; i < 20; i++) {
        k_call c = k_permute_call(k, i == 16 || i == 17 ? 2 : 4, 2, shape, perm, -1, 0, 0);
        switch (i) {
        case 0: case 1: case 2: case 3: c.at[0] = (int64_t[]){ 0, 3, 5, 32 }[i]; break;
        case 4: c.dev = (nd_device)7, c.bufs[0].on = c.bufs[1].on = ND_CPU + 1; break;
        case 5: c.code = 5; break;
        case 6: case 7: c.list[1][1] = i == 6 ? 1 : 2; break;      /* (1,1), (1,2) */
        case 8: case 9: c.at[3] = i - 7; break;                    /* src, dst NULL */
        case 10: c.at[3] = 4, c.at[2] = 8 * 12 * 4 - 1; break;     /* one byte in common */
        case 11: c = k_permute_call(k, 4, 2, shape, perm, -1, 8 * 12 * 4 - 1, 0);
                 c.at[3] = 4; break;
        case 12: c = k_permute_call(k, 4, 3, (int64_t[]){ 2, 3, 4 }, (int64_t[]){ 2, 1, 0 }, 3,
                                    0, 0); break;
        case 13: c.code = 4; break;                                /* 4-byte elements */
        case 14: c.code = 3, c.list[1][0] = 0, c.list[1][1] = 1; break;   /* the identity */
        case 15: c.code = 2, c.at[1] = 1; break;                   /* misaligned */
        case 16: c.code = 4, c.list[0][0] = 7; break;              /* an odd axis */
        case 17: c.code = 4, c.at[1] = 2; break;                   /* not a multiple of 4 */
        case 18: c.code = 0, c.list[1][0] = 0, c.list[1][1] = 1; break;   /* ran 0: a copy */
        default: c.code = 3; break;                                /* ran 3 when forced */
        }
        k_check(k, &c, NULL);
    }
}

static void compact_permuted(k_ctx *k)
{
    for (int t = 0; t < 120; t++) {
        int n = (int)k_int(k, 1, 6);
        int64_t base[ND_MAX_DIMS], perm[ND_MAX_DIMS], shape[ND_MAX_DIMS], st[ND_MAX_DIMS];
        k_shape(k, n, 1, n > 3 ? 6 : 40, 20000, base);
        if (t % 5 == 0 && n >= 2)
            base[n - 1] = k_int(k, 30, 70), base[n - 2] = k_int(k, 30, 70);
        k_perm(k, n, perm);
        for (int d = 0; d < n; d++) {
            shape[d] = base[perm[d]];
            st[d] = 1;
            for (int e = perm[d] + 1; e < n; e++)
                st[d] *= base[e];
        }
        int64_t pad = k_int(k, 0, 5);
        k_call c = k_new(k, K_COMPACT);
        k_arg(&c, k_strided(k, &c, k_numel(n, base) + pad + 3, n, shape, st, pad, K_DISTINCT));
        k_check(k, &c, NULL);
    }
}

/* ---------------------------------------------------------------------- */
/* Performance, on the emulator's instrumented build                      */
/* ---------------------------------------------------------------------- */

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
          "and both addresses allow 16-byte units (uint4)" },
        { K_GLOBAL_STORE, 16, 8 * 32 * 64 * 8 * 4, "your generic kernel stores %g bytes per "
          "thread where %g are possible: move 16-byte units (uint4) both ways" },
    };
    k_call c = k_permute_call(k, 4, 4, (int64_t[]){ 8, 32, 64, 8 }, (int64_t[]){ 0, 2, 1, 3 },
                              2, 0, 0);
    k_check_perf(k, &c, rules, 2, NULL);
}

#define SIMPLIFY_HINT "drop the size-1 axes (renumbering perm), then merge source axes a-1 " \
    "and a wherever the result has a right after a-1; read every input before writing an output"
#define GENERIC_HINT "naive_one / permute_one: result element i's multi-index in the permuted " \
    "shape, times the source strides of the source axes perm[k]; with the last axis kept, " \
    "its size counts units of p->unit bytes"
#define TRANSPOSE_HINT "transpose_kernel: tile[ty + j][tx] = in[r * cols + c], " \
    "__syncthreads(), out[c * rows + r] = tile[tx][ty + j], __syncthreads() before the next " \
    "tile; guard every access with r < rows && c < cols"
/* The performance tests: the CUDA device, the instrumented executor, the
 * plain build's result standing for the sanitizers'. */
#define PERF (K_CUDA | K_PLAIN | K_PROFILED)

static const k_test tests[] = {
    K_TEST(simplify_properties, K_HOST, 8, SIMPLIFY_HINT),
    K_TEST(simplify_errors_untouched, K_HOST, 2, "check every input before writing any output"),
    K_TEST(permute_random_all, K_BOTH, 12, GENERIC_HINT),
    K_TEST(permute_rows_in_pieces, K_BOTH, 4, "the bytes that move together are the whole "
           "last axis when it stays last; the unit divides them and both addresses"),
    K_TEST(transpose_tile_sizes, K_BOTH, 9, TRANSPOSE_HINT),
    K_TEST(transpose2_tile_sizes, K_BOTH, 5, "version 4 moves pairs of 2-byte elements as "
           "4-byte words through a 64 x 64 tile; both __syncthreads(); r < rows && c < cols"),
    K_TEST(permute_past_the_grid, K_BOTH | K_PLAIN, 4, "grid-stride loops in every kernel: "
           "over tiles (t += gridDim.x) or units (i += gridDim.x * blockDim.x)"),
    K_TEST(permute_errors_untouched, K_BOTH, 4, "check everything before moving a byte"),
    K_TEST(compact_permuted, K_CUDA, 4, "nd_compact of a permuted compact array on the "
           "device runs lesson 7 (4-byte elements, from the view's offset)"),
    /* performance: 7 of the lesson's 59 points (grader/weights.tsv) */
    K_TEST(transpose_whole_sectors, PERF, 2, "transpose_kernel: thread (tx, ty) reads "
           "in[r * cols + c0 + tx] and writes out[c * rows + r0 + tx]: tx, the fastest "
           "thread index, must step along a row on both sides"),
    K_TEST(transpose_no_bank_conflicts, PERF, 3, "__shared__ T tile[TILE][TILE + 1]: the "
           "padding column puts the 32 elements of a column in 32 different banks"),
    K_TEST(permute_16_byte_units, PERF, 2, "run_generic moves units of p->unit bytes "
           "(uint4 for 16): the plan's unit is the widest of 16, 8, 4, 2, 1 that divides the "
           "row's bytes and both addresses"),
};
K_SUITE(hidden_07, 7, "07_permute", tests);
