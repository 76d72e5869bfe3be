/*
 * h07_permute.c -- hidden tests of lesson 7: nd_simplify_permutation and
 * nd_permute_bytes (every element size, every version, on both devices).
 *
 *   simplify         3000 random shapes (size-1 and size-0 axes) and
 *                    permutations of 0 to 8 axes, nearly-sorted ones too:
 *                    the result moves every element where the original
 *                    does, has no size-1 axis and no pair left to merge,
 *                    and is a permutation; in place; errors leave the
 *                    outputs alone
 *   permute_bytes    random permutations of 1 to 8 axes for 1, 2, 4, 8 and
 *                    16-byte elements, versions 0, 1 and 2, at shifted
 *                    addresses; the tiled transposes (3, and 4 for 2-byte
 *                    elements) at every size around the 32 and 64 tiles,
 *                    with batches and axes that merge into them; pieces
 *                    of elements moved when the last axis stays; grids
 *                    past the kernels' block cap; every error, with dst
 *                    untouched; what *ran says
 *   nd_compact       of permuted views on the CUDA device (through
 *                    nd_permute_bytes)
 *
 * Every byte of dst, and 64 guard bytes around it, is compared with a
 * host reference (index by index); sources are distinct byte patterns.
 */
#include "grader.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond))                                                       \
            ck_abort_msg(__VA_ARGS__);                                     \
    } while (0)

#define GUARD 64
#define POISON 0xCD

static const size_t SIZES[] = { 1, 2, 4, 8, 16 };

static void random_perm(t_rng *r, int n, int *perm)
{
    for (int k = 0; k < n; k++)
        perm[k] = k;
    for (int k = n - 1; k > 0; k--) {
        int j = (int)t_int(r, 0, k), t = perm[k];
        perm[k] = perm[j];
        perm[j] = t;
    }
}

static const char *perm_str(int n, const int *perm, char *dst, size_t cap)
{
    int64_t p[ND_MAX_DIMS];
    for (int k = 0; k < n; k++)
        p[k] = perm[k];
    return nd_shape_str(n, p, dst, cap);
}

/* Row-major source offset (in elements) of result element i. */
static int64_t src_offset(int64_t i, int ndim, const int64_t *shape, const int *perm)
{
    int64_t st[ND_MAX_DIMS], s = 1, off = 0;
    for (int k = ndim - 1; k >= 0; k--) {
        st[k] = s;
        s *= shape[k];
    }
    for (int k = ndim - 1; k >= 0; k--) {
        int64_t n = shape[perm[k]];
        off += (i % n) * st[perm[k]];
        i /= n;
    }
    return off;
}

static void require_lesson7(void)
{
    int64_t shape[2] = { 2, 3 }, sh[2];
    int perm[2] = { 1, 0 }, nd, p[2];
    T_OK(nd_simplify_permutation(2, shape, perm, &nd, sh, p));
    nd_array a, b;
    int64_t two = 2;
    T_OK(nd_zeros(T_DEV, 1, &two, &a));
    T_OK(nd_zeros(T_DEV, 1, &two, &b));
    T_OK(nd_permute_bytes(T_DEV, a.buf->ptr, b.buf->ptr, 1, 2, shape, perm));
    nd_release(&a);
    nd_release(&b);
}

/* ---------------------------------------------------------------------- */
/* nd_simplify_permutation                                                */
/* ---------------------------------------------------------------------- */

#define SIMPLIFY_HINT "drop the size-1 axes (renumbering perm), then merge source axes " \
    "a-1 and a wherever the result has a right after a-1; write the outputs last"

START_TEST(simplify_properties)
{
    require_lesson7();
    t_rng r = t_rng_new(7100);
    for (int trial = 0; trial < 3000; trial++) {
        int ndim = (int)t_int(&r, 0, ND_MAX_DIMS), perm[ND_MAX_DIMS];
        int64_t shape[ND_MAX_DIMS];
        for (int k = 0; k < ndim; k++) {
            int kind = (int)t_int(&r, 0, 9);
            shape[k] = kind < 3 ? 1 : kind == 3 && trial % 7 == 0 ? 0 : t_int(&r, 2, 4);
        }
        random_perm(&r, ndim, perm);
        if (trial % 3 == 0)   /* nearly in order: one swap of neighbours */
            for (int k = 0; k < ndim; k++)
                perm[k] = k;
        if (trial % 3 == 0 && ndim >= 2) {
            int k = (int)t_int(&r, 0, ndim - 2), t = perm[k];
            perm[k] = perm[k + 1];
            perm[k + 1] = t;
        }
        int sn = -7, sp[ND_MAX_DIMS + 1];
        int64_t ss[ND_MAX_DIMS + 1];
        sp[ND_MAX_DIMS] = -99;
        ss[ND_MAX_DIMS] = -99;
        char a1[200], a2[100], b1[200], b2[100];
        T_OK(nd_simplify_permutation(ndim, shape, perm, &sn, ss, sp));
        nd_shape_str(ndim, shape, a1, sizeof a1);
        perm_str(ndim, perm, a2, sizeof a2);
        CHECK(sn >= 0 && sn <= ndim, "nd_simplify_permutation(shape=%s, perm=%s) gave ndim "
              "%d. Hint: %s", a1, a2, sn, SIMPLIFY_HINT);
        nd_shape_str(sn, ss, b1, sizeof b1);
        perm_str(sn, sp, b2, sizeof b2);
        int64_t n = t_numel(ndim, shape), sn_numel = t_numel(sn, ss);
        bool seen[ND_MAX_DIMS] = { false };
        for (int k = 0; k < sn; k++) {
            CHECK(sp[k] >= 0 && sp[k] < sn && !seen[sp[k]], "nd_simplify_permutation(shape=%s, "
                  "perm=%s) gave perm %s: not a permutation. Hint: %s", a1, a2, b2,
                  SIMPLIFY_HINT);
            seen[sp[k]] = true;
            CHECK(ss[k] != 1, "nd_simplify_permutation(shape=%s, perm=%s) gave shape %s: a "
                  "size-1 axis is left. Hint: %s", a1, a2, b1, SIMPLIFY_HINT);
            CHECK(k == 0 || sp[k] != sp[k - 1] + 1, "nd_simplify_permutation(shape=%s, perm="
                  "%s) gave shape %s, perm %s: result axes %d and %d are source axes %d and "
                  "%d, which could merge. Hint: %s", a1, a2, b1, b2, k - 1, k, sp[k - 1], sp[k],
                  SIMPLIFY_HINT);
        }
        CHECK(sn_numel == n, "nd_simplify_permutation(shape=%s, perm=%s) gave shape %s: %"
              PRId64 " elements, not %" PRId64 ". Hint: %s", a1, a2, b1, sn_numel, n,
              SIMPLIFY_HINT);
        CHECK(sp[ND_MAX_DIMS] == -99 && ss[ND_MAX_DIMS] == -99, "nd_simplify_permutation wrote "
              "past ND_MAX_DIMS entries of its outputs");
        /* the same movement, element by element */
        for (int64_t i = 0; i < n; i++) {
            int64_t want = src_offset(i, ndim, shape, perm), got = src_offset(i, sn, ss, sp);
            CHECK(got == want, "nd_simplify_permutation(shape=%s, perm=%s) gave shape %s, perm "
                  "%s, which moves result element %" PRId64 " from source element %" PRId64
                  ", not %" PRId64 ". Hint: %s", a1, a2, b1, b2, i, got, want, SIMPLIFY_HINT);
        }
        /* in place gives the same */
        int64_t ish[ND_MAX_DIMS];
        int ip[ND_MAX_DIMS], in = -1;
        memcpy(ish, shape, sizeof ish);
        memcpy(ip, perm, sizeof ip);
        T_OK(nd_simplify_permutation(ndim, ish, ip, &in, ish, ip));
        bool same = in == sn;
        for (int k = 0; same && k < sn; k++)
            same = ish[k] == ss[k] && ip[k] == sp[k];
        CHECK(same, "nd_simplify_permutation(shape=%s, perm=%s) in place (out_shape == shape, "
              "out_perm == perm) differs from the answer with separate outputs (%s, %s). "
              "Hint: read every input before writing the outputs", a1, a2, b1, b2);
    }
}
END_TEST

START_TEST(simplify_errors_untouched)
{
    require_lesson7();
    int64_t shape[4] = { 2, 3, 4, 5 }, neg[2] = { 2, -1 };
    static const int bad[][4] = { { 0, 1, 1, 2 }, { 0, 1, 2, 4 }, { -1, 0, 1, 2 },
                                  { 3, 2, 1, 3 } };
    int sn = 77, sp[ND_MAX_DIMS];
    int64_t ss[ND_MAX_DIMS];
    for (int k = 0; k < ND_MAX_DIMS; k++) {
        sp[k] = 55;
        ss[k] = 66;
    }
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        nd_status s = nd_simplify_permutation(4, shape, bad[b], &sn, ss, sp);
        CHECK(s == ND_ERR_AXIS, "nd_simplify_permutation with perm (%d,%d,%d,%d) returned %s, "
              "not ND_ERR_AXIS", bad[b][0], bad[b][1], bad[b][2], bad[b][3],
              nd_status_name(s));
    }
    int p2[2] = { 1, 0 }, p9[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
    int64_t s9[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    CHECK(nd_simplify_permutation(2, neg, p2, &sn, ss, sp) == ND_ERR_ARG,
          "a negative size must be ND_ERR_ARG");
    CHECK(nd_simplify_permutation(9, s9, p9, &sn, ss, sp) == ND_ERR_ARG,
          "9 axes must be ND_ERR_ARG");
    CHECK(nd_simplify_permutation(-1, shape, p2, &sn, ss, sp) == ND_ERR_ARG,
          "ndim -1 must be ND_ERR_ARG");
    CHECK(nd_simplify_permutation(2, shape, NULL, &sn, ss, sp) == ND_ERR_ARG,
          "a NULL perm must be ND_ERR_ARG");
    CHECK(nd_simplify_permutation(2, shape, p2, NULL, ss, sp) == ND_ERR_ARG,
          "a NULL out_ndim must be ND_ERR_ARG");
    CHECK(nd_simplify_permutation(2, shape, p2, &sn, NULL, sp) == ND_ERR_ARG,
          "a NULL out_shape must be ND_ERR_ARG");
    CHECK(nd_simplify_permutation(2, shape, p2, &sn, ss, NULL) == ND_ERR_ARG,
          "a NULL out_perm must be ND_ERR_ARG");
    CHECK(sn == 77, "a failed nd_simplify_permutation changed *out_ndim to %d", sn);
    for (int k = 0; k < ND_MAX_DIMS; k++)
        CHECK(sp[k] == 55 && ss[k] == 66, "a failed nd_simplify_permutation changed its "
              "outputs (entry %d)", k);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_permute_bytes                                                       */
/* ---------------------------------------------------------------------- */

typedef struct {
    size_t e;
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int perm[ND_MAX_DIMS];
    int version;
    size_t src_shift, dst_shift;
} pcase;

static const char *const VNAME[] = { "auto", "naive", "generic", "transpose", "transpose2" };

static const char *case_str(const pcase *c)
{
    static char text[500];
    char sh[200], pm[100];
    snprintf(text, sizeof text, "nd_permute_bytes_version(%s, elem_bytes=%zu, shape=%s, "
             "perm=%s, version=%d (%s), src +%zu bytes, dst +%zu bytes)",
             nd_device_name(T_DEV), c->e, nd_shape_str(c->ndim, c->shape, sh, sizeof sh),
             perm_str(c->ndim, c->perm, pm, sizeof pm), c->version, VNAME[c->version],
             c->src_shift, c->dst_shift);
    return text;
}

static unsigned char pattern(int64_t i, size_t b)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + b * 0xBF58476D1CE4E5B9ull;
    return (unsigned char)(x >> 56 ^ x >> 17);
}

static nd_array dev_bytes(const unsigned char *bytes, size_t n)
{
    int64_t nf = (int64_t)((n + 3) / 4) + 1;
    float *f = t_floats(nf);
    memset(f, POISON, (size_t)nf * 4);
    memcpy(f, bytes, n);
    nd_array a;
    T_OK(nd_from_host(T_DEV, 1, &nf, f, &a));
    free(f);
    return a;
}

/* Run one case and compare every byte of dst and its guards. */
static int run_case(const pcase *c, const char *hint)
{
    int64_t n = t_numel(c->ndim, c->shape);
    size_t bytes = (size_t)n * c->e, ssize = c->src_shift + bytes, dsize = c->dst_shift + bytes + GUARD;
    unsigned char *src = t_alloc(ssize + 1), *pois = t_alloc(dsize);
    memset(src, POISON, c->src_shift);
    for (int64_t i = 0; i < n; i++)
        for (size_t b = 0; b < c->e; b++)
            src[c->src_shift + (size_t)i * c->e + b] = pattern(i, b);
    memset(pois, POISON, dsize);
    nd_array sa = dev_bytes(src, ssize), da = dev_bytes(pois, dsize);
    int ran = -1;
    nd_status s = nd_permute_bytes_version(T_DEV, (unsigned char *)sa.buf->ptr + c->src_shift,
                                           (unsigned char *)da.buf->ptr + c->dst_shift, c->e,
                                           c->ndim, c->shape, c->perm, c->version, &ran);
    CHECK(s == ND_OK, "%s returned %s: %s", case_str(c), nd_status_name(s), nd_last_error());
    CHECK(c->version == 0 ? ran >= 0 && ran <= 4 : ran == c->version,
          "%s: *ran is %d", case_str(c), ran);
    unsigned char *got = t_alloc(da.buf->nbytes);
    T_OK(nd_buffer_to_host(&da, got, da.buf->nbytes));
    for (size_t b = 0; b < c->dst_shift; b++)
        CHECK(got[b] == POISON, "%s wrote %zu bytes before dst", case_str(c), c->dst_shift - b);
    for (int64_t i = 0; i < n; i++) {
        int64_t off = src_offset(i, c->ndim, c->shape, c->perm);
        const unsigned char *w = src + c->src_shift + (size_t)off * c->e;
        const unsigned char *g = got + c->dst_shift + (size_t)i * c->e;
        if (memcmp(w, g, c->e) != 0) {
            int64_t ds[ND_MAX_DIMS], idx[ND_MAX_DIMS];
            for (int k = 0; k < c->ndim; k++)
                ds[k] = c->shape[c->perm[k]];
            t_unravel(i, c->ndim, ds, idx);
            size_t b = 0;
            while (w[b] == g[b])
                b++;
            ck_abort_msg("%s (ran %d): result element %" PRId64 " %s should be source element %"
                         PRId64 "; its byte %zu is 0x%02x, want 0x%02x%s. Hint: %s",
                         case_str(c), ran, i, t_index_str(c->ndim, idx), off, b, g[b], w[b],
                         g[b] == POISON ? " (never written?)" : "", hint);
        }
    }
    for (size_t b = 0; b < GUARD; b++)
        CHECK(got[c->dst_shift + bytes + b] == POISON, "%s wrote past the end of dst (byte %zu "
              "after it). Hint: guard every store (i < count, r < rows && c < cols)",
              case_str(c), b);
    free(got);
    free(src);
    free(pois);
    nd_release(&sa);
    nd_release(&da);
    return ran;
}

#define GENERIC_HINT "naive_one / permute_one: result element i's multi-index in the " \
    "permuted shape, times the source strides of the source axes perm[k]; with the last axis " \
    "kept, its size counts units of p->unit bytes"

/* Random permutations of 1 to 8 axes, every element size, versions 0-2,
 * random byte shifts (multiples of the element for version 2). */
START_TEST(permute_random_all)
{
    require_lesson7();
    t_rng r = t_rng_new(7200 + (uint64_t)T_DEV);
    for (int trial = 0; trial < 360; trial++) {
        pcase c;
        memset(&c, 0, sizeof c);
        c.e = SIZES[trial % 5];
        c.version = (trial / 5) % 3;
        c.ndim = (int)t_int(&r, 1, ND_MAX_DIMS);
        t_random_shape(&r, c.ndim, c.ndim > 5 ? 3 : 6, trial % 23 == 0, 3000, c.shape);
        random_perm(&r, c.ndim, c.perm);
        if (trial % 4 == 0 && c.ndim >= 2) {   /* keep the last axis last */
            for (int k = 0; k < c.ndim; k++)
                if (c.perm[k] == c.ndim - 1) {
                    c.perm[k] = c.perm[c.ndim - 1];
                    c.perm[c.ndim - 1] = c.ndim - 1;
                }
        }
        size_t unit = c.version == 2 ? c.e : 1;
        c.src_shift = unit * (size_t)t_int(&r, 0, 3);
        c.dst_shift = unit * (size_t)t_int(&r, 0, 3);
        run_case(&c, GENERIC_HINT);
    }
}
END_TEST

/* The last axis stays: whole rows move in units narrower than an element
 * when the addresses allow no more. */
START_TEST(permute_rows_in_pieces)
{
    require_lesson7();
    static const size_t shifts[] = { 0, 1, 2, 4, 8, 6, 12 };
    for (size_t s = 0; s < sizeof shifts / sizeof shifts[0]; s++)
        for (int i = 0; i < 5; i++) {
            pcase c;
            memset(&c, 0, sizeof c);
            c.e = SIZES[i];
            c.ndim = 3;
            c.shape[0] = 5;
            c.shape[1] = 7;
            c.shape[2] = (int64_t)(3 + s);
            c.perm[0] = 1;
            c.perm[1] = 0;
            c.perm[2] = 2;
            c.src_shift = shifts[s];
            c.dst_shift = shifts[(s + 3) % 7];
            for (c.version = 0; c.version <= 2; c.version++)
                run_case(&c, GENERIC_HINT);
        }
}
END_TEST

#define TRANSPOSE_HINT "transpose_kernel: tile[ty + j][tx] = in[r * cols + c], " \
    "__syncthreads(), out[c * rows + r] = tile[tx][ty + j], __syncthreads() before the next " \
    "tile; guard every access with r < rows && c < cols"

/* Version 3 at every pair of sizes around the 32 tile, for every element
 * size, as (1,0), as (0,2,1) with a batch, and from 5 axes that merge. */
START_TEST(transpose_tile_sizes)
{
    require_lesson7();
    static const int64_t sz[] = { 1, 2, 31, 32, 33, 63, 65 };
    int nsz = (int)(sizeof sz / sizeof sz[0]);
    t_rng r = t_rng_new(7300);
    for (int i = 0; i < nsz; i++)
        for (int j = 0; j < nsz; j++) {
            pcase c;
            memset(&c, 0, sizeof c);
            c.e = SIZES[(i + j) % 5];
            c.version = 3;
            int form = (i * nsz + j) % 3;
            if (form == 0) {
                c.ndim = 2;
                c.shape[0] = sz[i];
                c.shape[1] = sz[j];
                c.perm[0] = 1;
                c.perm[1] = 0;
            } else if (form == 1) {
                c.ndim = 3;
                c.shape[0] = t_int(&r, 2, 3);
                c.shape[1] = sz[i];
                c.shape[2] = sz[j];
                c.perm[0] = 0;
                c.perm[1] = 2;
                c.perm[2] = 1;
            } else {
                /* (b, 1, r, c1, c2) by (0, 1, 3, 4, 2): (0,2,1) of (b, r, c1*c2) */
                c.ndim = 5;
                c.shape[0] = 2;
                c.shape[1] = 1;
                c.shape[2] = sz[i];
                c.shape[3] = sz[j] > 1 && sz[j] % 2 == 0 ? 2 : 1;
                c.shape[4] = sz[j] / c.shape[3];
                c.perm[0] = 0;
                c.perm[1] = 1;
                c.perm[2] = 3;
                c.perm[3] = 4;
                c.perm[4] = 2;
            }
            if (sz[i] == 1 || sz[j] == 1)
                c.version = 0;   /* simplifies to a copy: no transpose to force */
            run_case(&c, TRANSPOSE_HINT);
            c.version = 0;
            run_case(&c, TRANSPOSE_HINT);
        }
}
END_TEST

/* Version 4: 2-byte elements in pairs, even sizes around the 64 tile. */
START_TEST(transpose2_tile_sizes)
{
    require_lesson7();
    static const int64_t sz[] = { 2, 30, 32, 34, 62, 64, 66, 130 };
    int nsz = (int)(sizeof sz / sizeof sz[0]);
    for (int i = 0; i < nsz; i++)
        for (int j = 0; j < nsz; j++) {
            pcase c;
            memset(&c, 0, sizeof c);
            c.e = 2;
            c.version = 4;
            if ((i + j) % 2) {
                c.ndim = 2;
                c.shape[0] = sz[i];
                c.shape[1] = sz[j];
                c.perm[0] = 1;
                c.perm[1] = 0;
            } else {
                c.ndim = 3;
                c.shape[0] = 3;
                c.shape[1] = sz[i];
                c.shape[2] = sz[j];
                c.perm[0] = 0;
                c.perm[1] = 2;
                c.perm[2] = 1;
            }
            c.src_shift = 4 * (size_t)((i + j) % 3);
            c.dst_shift = 4 * (size_t)((i * j) % 2);
            run_case(&c, "transpose2_kernel: a 64x64 tile of 2-byte elements; a word holds "
                     "elements 2w (low half) and 2w + 1; both __syncthreads(); guard with "
                     "r < rows && c < cols");
        }
}
END_TEST

/* More tiles and units than the kernels' grids hold (4096 blocks). */
START_TEST(permute_past_the_grid)
{
    require_lesson7();
    static const struct {
        size_t e;
        int ndim;
        int64_t shape[3];
        int perm[3];
        int version;
    } cases[] = {
        { 16, 3, { 4200, 33, 2 }, { 0, 2, 1 }, 3 },
        { 1, 3, { 2, 1400, 1500 }, { 0, 2, 1 }, 3 },
        { 2, 3, { 4100, 2, 66 }, { 0, 2, 1 }, 4 },
        { 1, 2, { 1100, 1000 }, { 1, 0 }, 2 },
        { 8, 3, { 3, 1000, 400 }, { 2, 0, 1 }, 2 },
        { 4, 3, { 2, 700, 800 }, { 1, 2, 0 }, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pcase c;
        memset(&c, 0, sizeof c);
        c.e = cases[i].e;
        c.ndim = cases[i].ndim;
        for (int k = 0; k < c.ndim; k++) {
            c.shape[k] = cases[i].shape[k];
            c.perm[k] = cases[i].perm[k];
        }
        c.version = cases[i].version;
        run_case(&c, "the grid is capped (MAX_BLOCKS): loop over tiles (t += gridDim.x) or "
                 "units (i += gridDim.x * blockDim.x) until all are done");
    }
}
END_TEST

/* Errors: each leaves dst as it was. */
START_TEST(permute_errors_untouched)
{
    require_lesson7();
    int64_t nf = 256, shape[2] = { 8, 12 }, odd[2] = { 7, 12 };
    int perm[2] = { 1, 0 }, dup[2] = { 1, 1 }, idp[2] = { 0, 1 }, oob[2] = { 0, 2 };
    nd_array a, b;
    T_OK(nd_full(T_DEV, 1, &nf, 1.0f, &a));
    T_OK(nd_full(T_DEV, 1, &nf, 2.0f, &b));
    char *s = (char *)a.buf->ptr, *d = (char *)b.buf->ptr;
    static const size_t bad_e[] = { 0, 3, 5, 32 };
    for (size_t i = 0; i < 4; i++)
        CHECK(nd_permute_bytes(T_DEV, s, d, bad_e[i], 2, shape, perm) == ND_ERR_ARG,
              "elem_bytes %zu must be ND_ERR_ARG", bad_e[i]);
    CHECK(nd_permute_bytes((nd_device)7, s, d, 4, 2, shape, perm) == ND_ERR_ARG,
          "device 7 must be ND_ERR_ARG");
    CHECK(nd_permute_bytes_version(T_DEV, s, d, 4, 2, shape, perm, 5, NULL) == ND_ERR_ARG,
          "version 5 must be ND_ERR_ARG");
    CHECK(nd_permute_bytes_version(T_DEV, s, d, 4, 2, shape, perm, -1, NULL) == ND_ERR_ARG,
          "version -1 must be ND_ERR_ARG");
    CHECK(nd_permute_bytes(T_DEV, s, d, 4, 2, shape, dup) == ND_ERR_AXIS,
          "perm (1,1) must be ND_ERR_AXIS");
    CHECK(nd_permute_bytes(T_DEV, s, d, 4, 2, shape, oob) == ND_ERR_AXIS,
          "perm (0,2) must be ND_ERR_AXIS");
    CHECK(nd_permute_bytes(T_DEV, NULL, d, 4, 2, shape, perm) == ND_ERR_ARG,
          "a NULL src must be ND_ERR_ARG");
    CHECK(nd_permute_bytes(T_DEV, s, NULL, 4, 2, shape, perm) == ND_ERR_ARG,
          "a NULL dst must be ND_ERR_ARG");
    /* overlapping by one byte, either way */
    CHECK(nd_permute_bytes(T_DEV, s, s + 8 * 12 * 4 - 1, 4, 2, shape, perm) == ND_ERR_ARG,
          "src and dst overlapping by one byte must be ND_ERR_ARG");
    CHECK(nd_permute_bytes(T_DEV, s + 8 * 12 * 4 - 1, s, 4, 2, shape, perm) == ND_ERR_ARG,
          "dst and src overlapping by one byte must be ND_ERR_ARG");
    /* versions that cannot */
    int p3[3] = { 2, 1, 0 };
    int64_t s3[3] = { 2, 3, 4 };
    CHECK(nd_permute_bytes_version(T_DEV, s, d, 4, 3, s3, p3, 3, NULL) == ND_ERR_ARG,
          "version 3 of (2,1,0) must be ND_ERR_ARG");
    CHECK(nd_permute_bytes_version(T_DEV, s, d, 4, 2, shape, perm, 4, NULL) == ND_ERR_ARG,
          "version 4 of 4-byte elements must be ND_ERR_ARG");
    CHECK(nd_permute_bytes_version(T_DEV, s, d, 2, 2, odd, perm, 4, NULL) == ND_ERR_ARG,
          "version 4 with an odd axis must be ND_ERR_ARG");
    CHECK(nd_permute_bytes_version(T_DEV, s + 2, d, 2, 2, shape, perm, 4, NULL) == ND_ERR_ARG,
          "version 4 at an address not a multiple of 4 must be ND_ERR_ARG");
    CHECK(nd_permute_bytes_version(T_DEV, s + 1, d, 4, 2, shape, perm, 2, NULL) == ND_ERR_ARG,
          "version 2 at a misaligned address must be ND_ERR_ARG");
    CHECK(nd_permute_bytes_version(T_DEV, s, d, 4, 2, shape, idp, 3, NULL) == ND_ERR_ARG,
          "version 3 of the identity must be ND_ERR_ARG");
    float *h = t_floats(nf);
    T_OK(nd_to_host(&b, h, (size_t)nf));
    for (int64_t i = 0; i < nf; i++)
        CHECK(h[i] == 2.0f, "a failed nd_permute_bytes wrote into dst (float %" PRId64 ")", i);
    free(h);
    /* ran: the version that ran; 0 for a copy; NULL is fine */
    int ran = -1;
    T_OK(nd_permute_bytes_version(T_DEV, s, d, 4, 2, shape, idp, 0, &ran));
    CHECK(ran == 0, "the identity ran version %d; expected 0 (a copy)", ran);
    for (int v = 1; v <= 3; v++) {
        T_OK(nd_permute_bytes_version(T_DEV, s, d, 4, 2, shape, perm, v, &ran));
        CHECK(ran == v, "version %d forced, *ran says %d", v, ran);
        T_OK(nd_permute_bytes_version(T_DEV, s, d, 4, 2, shape, perm, v, NULL));
    }
    nd_release(&a);
    nd_release(&b);
}
END_TEST

/* nd_compact of permuted (and sliced-to-offset) compact arrays on the
 * device goes through nd_permute_bytes. */
START_TEST(compact_permuted)
{
    require_lesson7();
    t_rng r = t_rng_new(7400);
    for (int trial = 0; trial < 120; trial++) {
        int ndim = (int)t_int(&r, 1, 6), perm[ND_MAX_DIMS];
        int64_t base[ND_MAX_DIMS], bst[ND_MAX_DIMS], shape[ND_MAX_DIMS], st[ND_MAX_DIMS];
        t_random_shape(&r, ndim, ndim > 3 ? 6 : 40, false, 20000, base);
        if (trial % 5 == 0 && ndim >= 2) {
            base[ndim - 1] = t_int(&r, 30, 70);
            base[ndim - 2] = t_int(&r, 30, 70);
        }
        t_row_major(ndim, base, bst);
        random_perm(&r, ndim, perm);
        for (int k = 0; k < ndim; k++) {
            shape[k] = base[perm[k]];
            st[k] = bst[perm[k]];
        }
        int64_t pad = t_int(&r, 0, 5), n = t_numel(ndim, base);
        nd_array a = t_strided(n + pad + 3, ndim, shape, st, pad), out;
        float *want = t_gather(&a);
        T_OK(nd_compact(&a, &out));
        char what[300];
        snprintf(what, sizeof what, "nd_compact on %s of %s", nd_device_name(T_DEV),
                 t_describe(&a));
        t_assert_values(&out, want, what, "a permuted compact array is moved by "
                        "nd_permute_bytes (4-byte elements) from the view's offset");
        free(want);
        nd_release(&a);
        nd_release(&out);
    }
}
END_TEST

Suite *hidden_07_permute(void);

Suite *hidden_07_permute(void)
{
    Suite *s = g_suite(7, "07_permute");
    G_ADD_HOST(s, simplify_properties, 8, SIMPLIFY_HINT);
    G_ADD_HOST(s, simplify_errors_untouched, 2, "check every input before writing any output");
    G_ADD(s, permute_random_all, 12, GENERIC_HINT);
    G_ADD(s, permute_rows_in_pieces, 4, "the bytes that move together are the whole last "
          "axis when it stays last; the unit divides them and both addresses");
    G_ADD(s, transpose_tile_sizes, 9, TRANSPOSE_HINT);
    G_ADD(s, transpose2_tile_sizes, 5, "version 4 moves pairs of 2-byte elements as words");
    G_ADD_PLAIN(s, permute_past_the_grid, 4, "grid-stride loops in every kernel");
    G_ADD(s, permute_errors_untouched, 4, "check everything before moving a byte");
    G_ADD_CUDA(s, compact_permuted, 4, "nd_compact of a permuted compact array on the "
               "device runs lesson 7");
    return s;
}
