/*
 * test_07_permute.c -- public tests of lesson 7: nd_simplify_permutation,
 * nd_permute_bytes and each of its kernel versions (through
 * nd_permute_bytes_version), and nd_compact of a permuted view on the
 * CUDA device, which goes through lesson 7.
 *
 * The reference is a host loop, index by index: element i of the result
 * (row-major in the permuted shape) has multi-index idx; the source index
 * is src_idx[perm[k]] = idx[k]; its bytes are copied from the source's
 * row-major offset.  Inputs are distinct byte patterns, outputs start as
 * 0xAB bytes, and 64 guard bytes after the output (and any bytes before a
 * shifted pointer) must stay 0xAB.  Random cases use fixed seeds.
 *
 * Every test first calls a lesson-7 function on a valid input and
 * requires ND_OK, so that the skeleton fails every test with "not
 * implemented".
 */
#include "nd_test.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64          /* bytes after dst that must stay untouched */
#define POISON 0xAB

static const size_t ELEM_SIZES[] = { 1, 2, 4, 8, 16 };
#define NSIZES 5

static const char *const VERSION_NAME[] = { "auto", "naive", "generic", "transpose",
                                            "transpose2" };

static const char *const VERSION_HINT[] = {
    "nd_permute_bytes chose the version named above (ran); fix that version first: its "
    "own test (version 1 to 4) says more",
    "naive_one: result element i has multi-index idx in the PERMUTED shape; the source "
    "offset is sum(idx[k] * src_stride[k]); copy elem_bytes bytes",
    "check index_helper::init (row-major strides), index_of (divide by stride[k], keep "
    "the remainder) and permute_one; and the plan: with the last axis not permuted, its "
    "size counts units of p->unit bytes, not elements",
    "transpose_kernel: in, tile[ty + j][tx] = in[r * cols + c]; out, out[c * rows + r] = "
    "tile[tx][ty + j]; a __syncthreads() between the two, and one after; guard every "
    "access with r < rows && c < cols (sizes need not be multiples of 32)",
    "transpose2_kernel: a word holds elements 2w (low half) and 2w + 1 (high half); the "
    "tile is 64 x 64 elements; both __syncthreads(); guard with r < rows && c < cols",
};

/* One case: move a compact array of `shape` (elements of e bytes) into
 * its permutation, with src and dst `shift` bytes past their buffers'
 * starts (to test alignment). */
typedef struct pcase {
    size_t e;
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int perm[ND_MAX_DIMS];
    int version;
    size_t src_shift, dst_shift;
} pcase;

static const char *case_str(const pcase *c)
{
    static char text[400];
    char sh[200], pm[100], shift[80] = "";
    int64_t p64[ND_MAX_DIMS];
    for (int k = 0; k < c->ndim; k++)
        p64[k] = c->perm[k];
    if (c->src_shift || c->dst_shift)
        snprintf(shift, sizeof shift, ", src and dst shifted by %zu and %zu bytes",
                 c->src_shift, c->dst_shift);
    snprintf(text, sizeof text, "permute_bytes_version(elem_bytes=%zu, shape=%s, perm=%s, "
             "version=%d (%s)%s)", c->e, nd_shape_str(c->ndim, c->shape, sh, sizeof sh),
             nd_shape_str(c->ndim, p64, pm, sizeof pm), c->version,
             VERSION_NAME[c->version], shift);
    return text;
}

/* Byte b of source element i: the element number, XOR a per-byte mask, so
 * elements of 4 bytes or more are all different, and 2-byte ones up to
 * 65536 elements. */
static unsigned char pattern(int64_t i, size_t b)
{
    return (unsigned char)(((uint64_t)i >> (8 * (b % 8))) ^ (0x5Au + 37u * (unsigned)b));
}

/* A buffer of nbytes on T_DEV holding host bytes `bytes` (floats are only
 * the carrier: every byte is copied as it is). */
static nd_array bytes_on_dev(const unsigned char *bytes, size_t nbytes)
{
    int64_t nf = (int64_t)((nbytes + sizeof(float) - 1) / sizeof(float));
    float *f = t_floats(nf);
    memset(f, POISON, (size_t)nf * sizeof(float));
    memcpy(f, bytes, nbytes);
    nd_array a;
    T_OK(nd_from_host(T_DEV, 1, &nf, f, &a));
    free(f);
    return a;
}

static unsigned char *bytes_of(const nd_array *a)
{
    unsigned char *h = t_alloc(a->buf->nbytes + 4);
    T_OK(nd_buffer_to_host(a, h, a->buf->nbytes + 4));
    return h;
}

static void hex(const unsigned char *p, size_t n, char *dst)
{
    for (size_t b = 0; b < n; b++)
        sprintf(dst + 2 * b, "%02x", p[n - 1 - b]);   /* as a little-endian number */
}

/* Run one case; require ND_OK, the reference's bytes in dst and nothing
 * written around it.  Returns the version that ran. */
static int check_case(const pcase *c)
{
    int64_t n = t_numel(c->ndim, c->shape);
    size_t bytes = (size_t)n * c->e;
    unsigned char *src = t_alloc(c->src_shift + bytes + 1);
    memset(src, POISON, c->src_shift);
    for (int64_t i = 0; i < n; i++)
        for (size_t b = 0; b < c->e; b++)
            src[c->src_shift + (size_t)i * c->e + b] = pattern(i, b);
    size_t dst_size = c->dst_shift + bytes + GUARD;
    unsigned char *poison = t_alloc(dst_size);
    memset(poison, POISON, dst_size);
    nd_array sa = bytes_on_dev(src, c->src_shift + bytes), da = bytes_on_dev(poison, dst_size);

    int ran = -1;
    nd_status s = nd_permute_bytes_version(T_DEV, (unsigned char *)sa.buf->ptr + c->src_shift,
                                           (unsigned char *)da.buf->ptr + c->dst_shift, c->e,
                                           c->ndim, c->shape, c->perm, c->version, &ran);
    ck_assert_msg(s == ND_OK, "%s returned %s: %s", case_str(c), nd_status_name(s),
                  nd_last_error());
    ck_assert_msg(ran >= 0 && ran <= 4 && (c->version == 0 || ran == c->version),
                  "%s: *ran is %d; expected %s", case_str(c), ran,
                  c->version == 0 ? "0 to 4" : "the version asked for");

    unsigned char *got = bytes_of(&da);
    int64_t dshape[ND_MAX_DIMS], sstride[ND_MAX_DIMS];
    t_row_major(c->ndim, c->shape, sstride);
    for (int k = 0; k < c->ndim; k++)
        dshape[k] = c->shape[c->perm[k]];
    for (size_t b = 0; b < c->dst_shift; b++)
        ck_assert_msg(got[b] == POISON, "%s wrote byte %zu before dst (it was 0x%02x, is now "
                      "0x%02x)", case_str(c), c->dst_shift - b, POISON, got[b]);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[ND_MAX_DIMS], off = 0;
        t_unravel(i, c->ndim, dshape, idx);
        for (int k = 0; k < c->ndim; k++)
            off += idx[k] * sstride[c->perm[k]];
        const unsigned char *want = src + c->src_shift + (size_t)off * c->e;
        const unsigned char *have = got + c->dst_shift + (size_t)i * c->e;
        if (memcmp(want, have, c->e) != 0) {
            char w[40], g[40], sh[200], di[200], si[200];
            int64_t sidx[ND_MAX_DIMS];
            t_unravel(off, c->ndim, c->shape, sidx);
            hex(want, c->e, w);
            hex(have, c->e, g);
            bool poisoned = true;
            for (size_t b = 0; b < c->e; b++)
                poisoned = poisoned && have[b] == POISON;
            int v = c->version == 0 ? ran : c->version;
            if (v < 0 || v > 4)
                v = 0;
            ck_abort_msg("%s%s%s: result element %s (of result shape %s) should be source "
                         "element %s = 0x%s, got 0x%s%s. Hint: %s", case_str(c),
                         c->version == 0 ? " ran version " : "",
                         c->version == 0 ? VERSION_NAME[v] : "",
                         nd_shape_str(c->ndim, idx, di, sizeof di),
                         nd_shape_str(c->ndim, dshape, sh, sizeof sh),
                         nd_shape_str(c->ndim, sidx, si, sizeof si), w, g,
                         poisoned ? " (the 0xAB bytes dst started with: never written)" : "",
                         VERSION_HINT[v]);
        }
    }
    for (size_t b = 0; b < GUARD; b++)
        ck_assert_msg(got[c->dst_shift + bytes + b] == POISON,
                      "%s wrote past the end of dst: byte %zu after it was 0x%02x, is now "
                      "0x%02x. Hint: every store needs its bounds test (r < rows && c < cols, "
                      "or i < count)", case_str(c), b, POISON, got[c->dst_shift + bytes + b]);
    nd_release(&sa);
    nd_release(&da);
    free(src);
    free(poison);
    free(got);
    return ran;
}

/* A case from a shape and perm given as lists. */
static pcase make_case(size_t e, int ndim, const int64_t *shape, const int *perm, int version)
{
    pcase c;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.ndim = ndim;
    for (int k = 0; k < ndim; k++) {
        c.shape[k] = shape[k];
        c.perm[k] = perm[k];
    }
    c.version = version;
    return c;
}

/* A random permutation of 0..n-1 (Fisher-Yates). */
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

/* The smallest valid call: lesson 7 must answer ND_OK before anything else
 * is tested, so that a stub fails with "not implemented". */
static void require_lesson7(void)
{
    int64_t shape[2] = { 2, 3 };
    int perm[2] = { 1, 0 }, nd, p[2];
    int64_t sh[2];
    T_OK(nd_simplify_permutation(2, shape, perm, &nd, sh, p));
    pcase c = make_case(4, 2, shape, perm, 0);
    check_case(&c);
}

/* ---------------------------------------------------------------------- */
/* nd_simplify_permutation                                                */
/* ---------------------------------------------------------------------- */

static void check_simplify(int ndim, const int64_t *shape, const int *perm, int want_ndim,
                           const int64_t *want_shape, const int *want_perm)
{
    int got_ndim = -1, got_perm[ND_MAX_DIMS];
    int64_t got_shape[ND_MAX_DIMS];
    char sh[200], pm[100], gs[200], gp[100], ws[200], wp[100];
    int64_t p64[ND_MAX_DIMS], g64[ND_MAX_DIMS], w64[ND_MAX_DIMS];
    for (int k = 0; k < ndim; k++)
        p64[k] = perm[k];
    nd_shape_str(ndim, shape, sh, sizeof sh);
    nd_shape_str(ndim, p64, pm, sizeof pm);
    T_OK(nd_simplify_permutation(ndim, shape, perm, &got_ndim, got_shape, got_perm));
    bool same = got_ndim == want_ndim;
    for (int k = 0; same && k < want_ndim; k++)
        same = got_shape[k] == want_shape[k] && got_perm[k] == want_perm[k];
    if (!same) {
        int gn = got_ndim < 0 || got_ndim > ND_MAX_DIMS ? 0 : got_ndim;
        for (int k = 0; k < gn; k++)
            g64[k] = got_perm[k];
        for (int k = 0; k < want_ndim; k++)
            w64[k] = want_perm[k];
        ck_abort_msg("nd_simplify_permutation(shape=%s, perm=%s) gave ndim %d, shape %s, perm "
                     "%s; expected ndim %d, shape %s, perm %s. Hint: drop size-1 axes first "
                     "(renumbering perm), then merge source axes a-1 and a when the result "
                     "has a right after a-1", sh, pm, got_ndim,
                     nd_shape_str(gn, got_shape, gs, sizeof gs), nd_shape_str(gn, g64, gp, sizeof gp),
                     want_ndim, nd_shape_str(want_ndim, want_shape, ws, sizeof ws),
                     nd_shape_str(want_ndim, w64, wp, sizeof wp));
    }
}

START_TEST(simplify_known)
{
    /* The lesson's example: (3,4,5,6) by (2,3,0,1) is a transpose of
     * (12,30). */
    check_simplify(4, (int64_t[]){ 3, 4, 5, 6 }, (int[]){ 2, 3, 0, 1 }, 2,
                   (int64_t[]){ 12, 30 }, (int[]){ 1, 0 });
    /* The identity is one axis. */
    check_simplify(3, (int64_t[]){ 2, 3, 4 }, (int[]){ 0, 1, 2 }, 1, (int64_t[]){ 24 },
                   (int[]){ 0 });
    /* Nothing merges. */
    check_simplify(3, (int64_t[]){ 2, 3, 4 }, (int[]){ 0, 2, 1 }, 3, (int64_t[]){ 2, 3, 4 },
                   (int[]){ 0, 2, 1 });
    check_simplify(3, (int64_t[]){ 2, 3, 4 }, (int[]){ 2, 1, 0 }, 3, (int64_t[]){ 2, 3, 4 },
                   (int[]){ 2, 1, 0 });
    /* (0,2,3,1): axes 2 and 3 stay together. */
    check_simplify(4, (int64_t[]){ 2, 3, 4, 5 }, (int[]){ 0, 2, 3, 1 }, 3,
                   (int64_t[]){ 2, 3, 20 }, (int[]){ 0, 2, 1 });
    /* (1,2,3,0): a transpose of (2, 60). */
    check_simplify(4, (int64_t[]){ 2, 3, 4, 5 }, (int[]){ 1, 2, 3, 0 }, 2,
                   (int64_t[]){ 2, 60 }, (int[]){ 1, 0 });
    /* (0,2,1,3): the last axis stays last. */
    check_simplify(4, (int64_t[]){ 2, 3, 4, 5 }, (int[]){ 0, 2, 1, 3 }, 4,
                   (int64_t[]){ 2, 3, 4, 5 }, (int[]){ 0, 2, 1, 3 });
    /* Size-1 axes go, and then their neighbours may merge: (1,5,1,7) by
     * (3,2,1,0) is a transpose of (5,7); (2,1,3) by (1,0,2) is the
     * identity. */
    check_simplify(4, (int64_t[]){ 1, 5, 1, 7 }, (int[]){ 3, 2, 1, 0 }, 2,
                   (int64_t[]){ 5, 7 }, (int[]){ 1, 0 });
    check_simplify(3, (int64_t[]){ 2, 1, 3 }, (int[]){ 1, 0, 2 }, 1, (int64_t[]){ 6 },
                   (int[]){ 0 });
    check_simplify(4, (int64_t[]){ 4, 1, 3, 2 }, (int[]){ 2, 3, 1, 0 }, 2,
                   (int64_t[]){ 4, 6 }, (int[]){ 1, 0 });
    /* One element: no axes at all. */
    check_simplify(0, NULL, NULL, 0, NULL, NULL);
    check_simplify(3, (int64_t[]){ 1, 1, 1 }, (int[]){ 2, 0, 1 }, 0, NULL, NULL);
    /* A size-0 axis stays; so the shape still has no elements. */
    check_simplify(3, (int64_t[]){ 4, 0, 3 }, (int[]){ 2, 0, 1 }, 2, (int64_t[]){ 0, 3 },
                   (int[]){ 1, 0 });
    /* Eight axes reversed: nothing merges. */
    check_simplify(8, (int64_t[]){ 2, 3, 2, 3, 2, 3, 2, 3 }, (int[]){ 7, 6, 5, 4, 3, 2, 1, 0 },
                   8, (int64_t[]){ 2, 3, 2, 3, 2, 3, 2, 3 }, (int[]){ 7, 6, 5, 4, 3, 2, 1, 0 });

    /* In place: out_shape and out_perm may be shape and perm. */
    int64_t shape[4] = { 3, 4, 5, 6 };
    int perm[4] = { 2, 3, 0, 1 }, nd = -1;
    T_OK(nd_simplify_permutation(4, shape, perm, &nd, shape, perm));
    ck_assert_msg(nd == 2 && shape[0] == 12 && shape[1] == 30 && perm[0] == 1 && perm[1] == 0,
                  "nd_simplify_permutation in place (out_shape == shape, out_perm == perm) "
                  "gave ndim %d, shape (%" PRId64 ",%" PRId64 "), perm (%d,%d); expected 2, "
                  "(12,30), (1,0). Hint: read all of shape and perm before writing the "
                  "outputs", nd, shape[0], shape[1], perm[0], perm[1]);
}
END_TEST

/* Random shapes (with size-1 axes) and permutations: the simplified
 * permutation must move every element to the same place, and be as
 * short as it can be. */
START_TEST(simplify_random)
{
    t_rng r = t_rng_new(7001);
    for (int trial = 0; trial < 400; trial++) {
        int ndim = (int)t_int(&r, 0, ND_MAX_DIMS), perm[ND_MAX_DIMS], sp[ND_MAX_DIMS], sn;
        int64_t shape[ND_MAX_DIMS], ss[ND_MAX_DIMS];
        for (int k = 0; k < ndim; k++)
            shape[k] = t_int(&r, 0, 2) == 0 ? 1 : t_int(&r, 2, 4);
        random_perm(&r, ndim, perm);
        /* Sometimes a permutation that is nearly in order, so that axes
         * merge. */
        if (ndim > 1 && t_int(&r, 0, 1)) {
            int cut = (int)t_int(&r, 1, ndim - 1);
            for (int k = 0; k < ndim; k++)
                perm[k] = (k + cut) % ndim;
        }
        char what[300], sh[200], pm[100];
        int64_t p64[ND_MAX_DIMS];
        for (int k = 0; k < ndim; k++)
            p64[k] = perm[k];
        snprintf(what, sizeof what, "nd_simplify_permutation(shape=%s, perm=%s)",
                 nd_shape_str(ndim, shape, sh, sizeof sh), nd_shape_str(ndim, p64, pm, sizeof pm));
        T_OK(nd_simplify_permutation(ndim, shape, perm, &sn, ss, sp));
        ck_assert_msg(sn >= 0 && sn <= ndim, "%s: ndim %d out of 0..%d", what, sn, ndim);
        bool seen[ND_MAX_DIMS] = { false };
        for (int k = 0; k < sn; k++) {
            ck_assert_msg(sp[k] >= 0 && sp[k] < sn && !seen[sp[k]],
                          "%s: the result's perm is not a permutation of 0..%d", what, sn - 1);
            seen[sp[k]] = true;
            ck_assert_msg(ss[k] != 1, "%s: the result keeps a size-1 axis (%d)", what, k);
            ck_assert_msg(k == 0 || sp[k] != sp[k - 1] + 1, "%s: result axes %d and %d could "
                          "still merge (perm has %d right after %d)", what, k - 1, k, sp[k],
                          sp[k - 1]);
        }
        int64_t n = t_numel(ndim, shape);
        ck_assert_msg(t_numel(sn, ss) == n, "%s: %" PRId64 " elements became %" PRId64, what,
                      n, t_numel(sn, ss));
        if (n == 0)
            continue;
        /* Every result position reads the same source offset both ways. */
        int64_t st[ND_MAX_DIMS], sst[ND_MAX_DIMS], ds[ND_MAX_DIMS], dss[ND_MAX_DIMS];
        t_row_major(ndim, shape, st);
        t_row_major(sn, ss, sst);
        for (int k = 0; k < ndim; k++)
            ds[k] = shape[perm[k]];
        for (int k = 0; k < sn; k++)
            dss[k] = ss[sp[k]];
        for (int64_t i = 0; i < n; i++) {
            int64_t idx[ND_MAX_DIMS], off = 0, off2 = 0;
            t_unravel(i, ndim, ds, idx);
            for (int k = 0; k < ndim; k++)
                off += idx[k] * st[perm[k]];
            t_unravel(i, sn, dss, idx);
            for (int k = 0; k < sn; k++)
                off2 += idx[k] * sst[sp[k]];
            ck_assert_msg(off == off2, "%s: result element %" PRId64 " comes from source "
                          "offset %" PRId64 ", but from %" PRId64 " after simplifying. Hint: "
                          "merged axes must be neighbours in the source AND in the result, "
                          "in the same order", what, i, off, off2);
        }
    }
}
END_TEST

START_TEST(simplify_errors)
{
    int64_t shape[3] = { 2, 3, 4 }, out_shape[ND_MAX_DIMS];
    int perm[3] = { 2, 0, 1 }, out_perm[ND_MAX_DIMS], nd = 77;
    T_OK(nd_simplify_permutation(3, shape, perm, &nd, out_shape, out_perm));
    nd = 77;
    const char *op = "simplify_permutation";
    T_ERR_OP(nd_simplify_permutation(3, shape, perm, NULL, out_shape, out_perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_simplify_permutation(3, shape, perm, &nd, NULL, out_perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_simplify_permutation(3, shape, perm, &nd, out_shape, NULL), ND_ERR_ARG, op);
    T_ERR_OP(nd_simplify_permutation(3, NULL, perm, &nd, out_shape, out_perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_simplify_permutation(3, shape, NULL, &nd, out_shape, out_perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_simplify_permutation(-1, shape, perm, &nd, out_shape, out_perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_simplify_permutation(ND_MAX_DIMS + 1, shape, perm, &nd, out_shape, out_perm),
             ND_ERR_ARG, op);
    T_ERR_OP(nd_simplify_permutation(3, (int64_t[]){ 2, -1, 4 }, perm, &nd, out_shape, out_perm),
             ND_ERR_ARG, op);
    T_ERR_OP(nd_simplify_permutation(3, shape, (int[]){ 0, 1, 1 }, &nd, out_shape, out_perm),
             ND_ERR_AXIS, op);
    T_ERR_OP(nd_simplify_permutation(3, shape, (int[]){ 0, 1, 3 }, &nd, out_shape, out_perm),
             ND_ERR_AXIS, op);
    T_ERR_OP(nd_simplify_permutation(3, shape, (int[]){ -1, 0, 1 }, &nd, out_shape, out_perm),
             ND_ERR_AXIS, op);
    ck_assert_msg(nd == 77, "nd_simplify_permutation failed but wrote *out_ndim (%d): on an "
                  "error, leave every output as it was", nd);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_permute_bytes, version by version                                   */
/* ---------------------------------------------------------------------- */

/* Random permutations of 1 to 6 axes, sizes 1 to 9 (some 1), every
 * element size, versions auto, naive and generic. */
START_TEST(permute_random)
{
    require_lesson7();
    t_rng r = t_rng_new(7002);
    for (int ndim = 1; ndim <= 6; ndim++) {
        for (int trial = 0; trial < 3; trial++) {
            pcase c;
            memset(&c, 0, sizeof c);
            c.ndim = ndim;
            t_random_shape(&r, ndim, ndim <= 3 ? 9 : 5, false, 1500, c.shape);
            random_perm(&r, ndim, c.perm);
            for (int i = 0; i < NSIZES; i++) {
                c.e = ELEM_SIZES[i];
                for (c.version = 0; c.version <= 2; c.version++)
                    check_case(&c);
            }
        }
    }
}
END_TEST

/* Transposes (1,0) and (0,2,1) whose sizes are and are not multiples of
 * the 32x32 tile, with every element size and every version that can do
 * them (version 4 only with 2 bytes and even sizes, else it must refuse). */
START_TEST(permute_transpose_edges)
{
    require_lesson7();
    static const int64_t sizes[][3] = {
        { 1, 1, 1 }, { 1, 1, 33 }, { 1, 31, 1 }, { 1, 32, 32 }, { 1, 33, 65 }, { 1, 64, 30 },
        { 3, 17, 40 }, { 2, 66, 34 }, { 5, 2, 7 }, { 2, 40, 96 },
    };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int three = 0; three <= 1; three++) {
            pcase c;
            memset(&c, 0, sizeof c);
            if (three) {
                c.ndim = 3;
                memcpy(c.shape, sizes[s], sizeof sizes[s]);
                c.perm[0] = 0, c.perm[1] = 2, c.perm[2] = 1;
            } else {
                if (sizes[s][0] != 1)
                    continue;
                c.ndim = 2;
                c.shape[0] = sizes[s][1], c.shape[1] = sizes[s][2];
                c.perm[0] = 1, c.perm[1] = 0;
            }
            bool real = c.shape[c.ndim - 1] > 1 && c.shape[c.ndim - 2] > 1;
            for (int i = 0; i < NSIZES; i++) {
                c.e = ELEM_SIZES[i];
                for (c.version = 0; c.version <= 4; c.version++) {
                    bool pairs = c.e == 2 && c.shape[c.ndim - 1] % 2 == 0 &&
                                 c.shape[c.ndim - 2] % 2 == 0;
                    if (!real && c.version >= 3)
                        continue;   /* not a transpose once size-1 axes go */
                    if (c.version == 4 && !pairs) {
                        int64_t n = t_numel(c.ndim, c.shape);
                        nd_array a;
                        T_OK(nd_zeros(T_DEV, 1, (int64_t[]){ 2 * n * 4 + 8 }, &a));
                        float *p = (float *)a.buf->ptr;
                        nd_status st = nd_permute_bytes_version(T_DEV, p, p + n * 4 + 4, c.e,
                                                                c.ndim, c.shape, c.perm, 4,
                                                                NULL);
                        ck_assert_msg(st == ND_ERR_ARG, "%s returned %s; expected ND_ERR_ARG: "
                                      "version 4 needs 2-byte elements and both transposed "
                                      "sizes even", case_str(&c), nd_status_name(st));
                        nd_release(&a);
                        continue;
                    }
                    check_case(&c);
                }
            }
        }
    }
}
END_TEST

/* A permutation that is a transpose only after simplifying: version 3
 * must take it, and a permutation that is not must be refused. */
START_TEST(permute_transpose_after_simplify)
{
    require_lesson7();
    /* (3,4,5,6) by (2,3,0,1) is (12,30) by (1,0). */
    pcase c = make_case(4, 4, (int64_t[]){ 3, 4, 5, 6 }, (int[]){ 2, 3, 0, 1 }, 3);
    check_case(&c);
    /* (2,1,20,1,24) by (0,4,3,2,1) is (2,20,24) by (0,2,1). */
    c = make_case(2, 5, (int64_t[]){ 2, 1, 20, 1, 24 }, (int[]){ 0, 4, 3, 2, 1 }, 4);
    check_case(&c);
    c.version = 3;
    check_case(&c);
    /* (2,3,4) by (2,1,0) is no transpose. */
    int64_t shape[3] = { 2, 3, 4 };
    nd_array a;
    T_OK(nd_zeros(T_DEV, 1, (int64_t[]){ 64 }, &a));
    float *p = (float *)a.buf->ptr;
    for (int v = 3; v <= 4; v++)
        T_ERR_OP(nd_permute_bytes_version(T_DEV, p, p + 32, 2, 3, shape, (int[]){ 2, 1, 0 }, v,
                                          NULL), ND_ERR_ARG, "permute_bytes");
    nd_release(&a);
}
END_TEST

/* The last axis not permuted: a thread moves up to 16 bytes.  Whole
 * last axes of 1 to 64 bytes, and pointers shifted off alignment. */
START_TEST(permute_movement)
{
    require_lesson7();
    static const int64_t lasts[] = { 1, 2, 3, 4, 6, 8, 16 };
    static const size_t shifts[][2] = { { 0, 0 }, { 1, 0 }, { 0, 2 }, { 4, 4 }, { 8, 0 },
                                        { 3, 5 } };
    for (size_t l = 0; l < sizeof lasts / sizeof lasts[0]; l++)
        for (int i = 0; i < NSIZES; i++)
            for (size_t s = 0; s < sizeof shifts / sizeof shifts[0]; s++)
                for (int v = 0; v <= 2; v++) {
                    pcase c = make_case(ELEM_SIZES[i], 4, (int64_t[]){ 2, 5, 3, lasts[l] },
                                        (int[]){ 0, 2, 1, 3 }, v);
                    c.src_shift = shifts[s][0];
                    c.dst_shift = shifts[s][1];
                    /* A last axis of size 1 goes: the last axis left is
                     * permuted, and then misaligned elements are the
                     * naive kernel's alone. */
                    bool split = lasts[l] == 1 && (c.src_shift % c.e || c.dst_shift % c.e);
                    if (split && v == 2) {
                        nd_array a;
                        T_OK(nd_zeros(T_DEV, 1, (int64_t[]){ 2 * 30 * 4 + 8 }, &a));
                        char *p = (char *)a.buf->ptr;
                        T_ERR_OP(nd_permute_bytes_version(T_DEV, p + c.src_shift,
                                                          p + 30 * 16 + 16 + c.dst_shift, c.e,
                                                          4, c.shape, c.perm, 2, NULL),
                                 ND_ERR_ARG, "permute_bytes");
                        nd_release(&a);
                        continue;
                    }
                    check_case(&c);
                }
}
END_TEST

/* Misaligned pointers with the last axis permuted: only the naive kernel
 * can move an element in pieces, so auto must pick it and generic and
 * transpose must refuse. */
START_TEST(permute_misaligned)
{
    require_lesson7();
    for (int i = 1; i < NSIZES; i++) {
        pcase c = make_case(ELEM_SIZES[i], 2, (int64_t[]){ 37, 40 }, (int[]){ 1, 0 }, 0);
        c.src_shift = 1;
        int ran = check_case(&c);
        ck_assert_msg(ran == 1, "%s ran version %d; expected 1 (naive): the source address "
                      "is not a multiple of the element size", case_str(&c), ran);
        c.version = 1;
        check_case(&c);
        nd_array a;
        T_OK(nd_zeros(T_DEV, 1, (int64_t[]){ 37 * 40 * 8 + 8 }, &a));
        char *p = (char *)a.buf->ptr;
        for (int v = 2; v <= 3; v++)
            T_ERR_OP(nd_permute_bytes_version(T_DEV, p + 1, p + 37 * 40 * 16 + 16, c.e, 2,
                                              c.shape, c.perm, v, NULL), ND_ERR_ARG,
                     "permute_bytes");
        nd_release(&a);
    }
}
END_TEST

/* 2-byte elements, transposed in pairs (version 4), sizes even but not
 * multiples of 64, with a batch. */
START_TEST(permute_transpose2)
{
    require_lesson7();
    static const int64_t shapes[][3] = { { 1, 2, 2 }, { 1, 64, 64 }, { 1, 66, 130 },
                                         { 3, 18, 100 }, { 2, 128, 2 }, { 4, 34, 62 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        pcase c = make_case(2, 3, shapes[s], (int[]){ 0, 2, 1 }, 4);
        if (shapes[s][0] == 1) {
            c = make_case(2, 2, shapes[s] + 1, (int[]){ 1, 0 }, 4);
        }
        check_case(&c);
    }
}
END_TEST

/* What nd_permute_bytes chooses. */
START_TEST(permute_choice)
{
    require_lesson7();
    static const struct {
        size_t e;
        int ndim;
        int64_t shape[4];
        int perm[4];
        int want;
        const char *why;
    } cases[] = {
        { 4, 3, { 2, 3, 4 }, { 0, 1, 2 }, 0, "the identity is one copy" },
        { 4, 3, { 2, 1, 4 }, { 1, 0, 2 }, 0, "moving a size-1 axis is the identity" },
        { 4, 0, { 0 }, { 0 }, 0, "one element: a copy" },
        { 4, 2, { 40, 50 }, { 1, 0 }, 3, "a (1,0) of 4-byte elements, both sizes >= 16" },
        { 8, 3, { 3, 40, 50 }, { 0, 2, 1 }, 3, "a (0,2,1), both sizes >= 16" },
        { 2, 2, { 40, 50 }, { 1, 0 }, 4, "2-byte elements, both sizes even" },
        { 2, 2, { 41, 50 }, { 1, 0 }, 3, "2-byte elements, an odd size" },
        { 4, 4, { 4, 5, 6, 7 }, { 2, 3, 0, 1 }, 3, "simplifies to (1,0) of (20,42)" },
        { 4, 4, { 2, 5, 6, 7 }, { 0, 2, 1, 3 }, 2, "(0,2,1,3): the last axis stays last" },
        { 4, 3, { 2, 5, 6 }, { 2, 1, 0 }, 2, "(2,1,0) is no transpose" },
        { 4, 2, { 500, 3 }, { 1, 0 }, 2, "a transpose with an axis < 16: generic" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pcase c = make_case(cases[i].e, cases[i].ndim, cases[i].shape, cases[i].perm, 0);
        int ran = check_case(&c);
        ck_assert_msg(ran == cases[i].want, "%s ran version %d (%s); expected %d (%s): %s. "
                      "Hint: see the choice in make_plan and the lesson's rules", case_str(&c),
                      ran, VERSION_NAME[ran >= 0 && ran <= 4 ? ran : 0], cases[i].want,
                      VERSION_NAME[cases[i].want], cases[i].why);
    }
}
END_TEST

/* No elements: nothing written (NULL pointers allowed).  A 0-d array and
 * all-size-1 shapes: one element copied, for every version. */
START_TEST(permute_empty_and_one)
{
    require_lesson7();
    int64_t empty[3] = { 4, 0, 3 };
    int perm3[3] = { 2, 0, 1 };
    for (int v = 0; v <= 2; v++) {
        T_OK(nd_permute_bytes_version(T_DEV, NULL, NULL, 4, 3, empty, perm3, v, NULL));
        pcase c = make_case(4, 3, empty, perm3, v);
        check_case(&c);
    }
    for (int i = 0; i < NSIZES; i++)
        for (int v = 0; v <= 2; v++) {
            pcase c = make_case(ELEM_SIZES[i], 0, NULL, NULL, v);
            check_case(&c);
            c = make_case(ELEM_SIZES[i], 3, (int64_t[]){ 1, 1, 1 }, perm3, v);
            check_case(&c);
        }
}
END_TEST

/* More work than one pass of the grid: the kernels' grid-stride loops
 * (over elements, or over tiles) must cover the rest. */
START_TEST(permute_large_grid)
{
    require_lesson7();
    /* The transposes launch at most a few thousand blocks: 5000 tiles of
     * 2x3 and 4500 of 2x4 need the tile loop.  The element kernels: 1.1
     * million units, and an axis longer than 65535 (the limit of a grid's
     * y and z). */
    pcase c = make_case(4, 3, (int64_t[]){ 5000, 2, 3 }, (int[]){ 0, 2, 1 }, 3);
    check_case(&c);
    c = make_case(2, 3, (int64_t[]){ 4500, 2, 4 }, (int[]){ 0, 2, 1 }, 4);
    check_case(&c);
    c = make_case(1, 2, (int64_t[]){ 1031, 1067 }, (int[]){ 1, 0 }, 2);
    check_case(&c);
    c.version = 1;
    check_case(&c);
    c = make_case(4, 2, (int64_t[]){ 70001, 3 }, (int[]){ 1, 0 }, 0);
    check_case(&c);
    c = make_case(2, 3, (int64_t[]){ 3, 70001, 2 }, (int[]){ 1, 0, 2 }, 2);
    check_case(&c);
}
END_TEST

START_TEST(permute_errors)
{
    require_lesson7();
    int64_t shape[2] = { 3, 4 };
    int perm[2] = { 1, 0 };
    nd_array a = t_arange(1, (int64_t[]){ 64 });
    float *src = (float *)a.buf->ptr, *dst = src + 32;
    const char *op = "permute_bytes";
    T_OK(nd_permute_bytes(T_DEV, src, dst, 4, 2, shape, perm));
    T_OK(nd_permute_bytes(T_DEV, src + 12, src + 48, 4, 2, shape, perm));   /* just apart */
    float before[64], after[64];
    T_OK(nd_buffer_to_host(&a, before, sizeof before));
    T_ERR_OP(nd_permute_bytes(T_DEV, NULL, dst, 4, 2, shape, perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes(T_DEV, src, NULL, 4, 2, shape, perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes(T_DEV, src, dst, 4, 2, NULL, perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes(T_DEV, src, dst, 4, 2, shape, NULL), ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes((nd_device)9, src, dst, 4, 2, shape, perm), ND_ERR_ARG, op);
    static const size_t bad_sizes[] = { 0, 3, 5, 12, 32 };
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++)
        T_ERR_OP(nd_permute_bytes(T_DEV, src, dst, bad_sizes[i], 2, shape, perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes(T_DEV, src, dst, 4, -1, shape, perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes(T_DEV, src, dst, 4, ND_MAX_DIMS + 1, shape, perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes(T_DEV, src, dst, 4, 2, (int64_t[]){ 3, -4 }, perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes(T_DEV, src, dst, 4, 2, shape, (int[]){ 1, 1 }), ND_ERR_AXIS, op);
    T_ERR_OP(nd_permute_bytes(T_DEV, src, dst, 4, 2, shape, (int[]){ 0, 2 }), ND_ERR_AXIS, op);
    T_ERR_OP(nd_permute_bytes(T_DEV, src, dst, 4, 2, shape, (int[]){ -1, 0 }), ND_ERR_AXIS, op);
    /* 12 floats at src + 4 overlap the 12 at src. */
    T_ERR_OP(nd_permute_bytes(T_DEV, src, src + 4, 4, 2, shape, perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes(T_DEV, src + 11, src, 4, 2, shape, perm), ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes_version(T_DEV, src, dst, 4, 2, shape, perm, 5, NULL), ND_ERR_ARG,
             op);
    T_ERR_OP(nd_permute_bytes_version(T_DEV, src, dst, 4, 2, shape, perm, -1, NULL),
             ND_ERR_ARG, op);
    T_ERR_OP(nd_permute_bytes_version(T_DEV, src, dst, 4, 2, shape, perm, 4, NULL), ND_ERR_ARG,
             op);
    T_OK(nd_buffer_to_host(&a, after, sizeof after));
    for (int i = 0; i < 64; i++)
        ck_assert_msg(memcmp(&before[i], &after[i], sizeof(float)) == 0,
                      "a failed nd_permute_bytes wrote to memory (float %d was %g, is %g): "
                      "check every argument before moving anything", i, (double)before[i],
                      (double)after[i]);
    nd_release(&a);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_compact of permuted views goes through lesson 7                      */
/* ---------------------------------------------------------------------- */

START_TEST(compact_permuted_views)
{
    require_lesson7();
    /* Views that are permutations of a compact block (some at an offset,
     * some with size-1 axes), and one that is not (a reversed axis). */
    static const struct {
        int ndim;
        int64_t shape[4];
        int64_t strides[4];
        int64_t offset;
    } views[] = {
        { 2, { 37, 45 }, { 1, 37 }, 0 },                     /* (45,37) transposed */
        { 3, { 5, 33, 17 }, { 561, 1, 33 }, 7 },            /* (0,2,1), offset 7 */
        { 4, { 3, 5, 1, 6 }, { 30, 1, 99, 5 }, 2 },          /* (0,3,1), a size-1 axis */
        { 4, { 6, 2, 5, 3 }, { 1, 90, 6, 30 }, 0 },          /* (1,3,2,0) */
        { 3, { 4, 20, 20 }, { 400, 20, 1 }, 3 },            /* compact, offset 3 */
        { 2, { 20, 16 }, { -1, 20 }, 19 },                   /* reversed: a gather */
    };
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
        nd_array v = t_strided(4000, views[i].ndim, views[i].shape, views[i].strides,
                               views[i].offset);
        float *want = t_gather(&v);
        nd_array out;
        char what[300];
        snprintf(what, sizeof what, "nd_compact of the view %s on %s", t_describe(&v),
                 nd_device_name(T_DEV));
        T_OK(nd_compact(&v, &out));
        t_assert_values(&out, want, what, "a permuted view of compact memory goes through "
                        "nd_permute_bytes on CUDA: check its plan and kernels (the tests "
                        "permute_* above say which)");
        nd_release(&out);
        nd_release(&v);
        free(want);
    }
}
END_TEST

Suite *suite_07_permute(void);

Suite *suite_07_permute(void)
{
    Suite *s = t_suite(7, "07_permute");
    T_ADD_HOST(s, simplify_known);
    T_ADD_HOST(s, simplify_random);
    T_ADD_HOST(s, simplify_errors);
    T_ADD(s, permute_random);
    T_ADD(s, permute_transpose_edges);
    T_ADD(s, permute_transpose_after_simplify);
    T_ADD(s, permute_transpose2);
    T_ADD(s, permute_movement);
    T_ADD(s, permute_misaligned);
    T_ADD(s, permute_choice);
    T_ADD(s, permute_empty_and_one);
    T_ADD(s, permute_large_grid);
    T_ADD(s, permute_errors);
    T_ADD(s, compact_permuted_views);
    return s;
}
