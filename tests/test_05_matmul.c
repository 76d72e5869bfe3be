/*
 * test_05_matmul.c -- public tests of lesson 5: nd_matmul (tiled) and
 * nd_matmul_naive, NumPy's matmul on strided views: (..., m, k) @
 * (..., k, n) -> (..., m, n), the leading (batch) axes broadcast.
 *
 * The reference never calls lesson code.  Inputs are made with
 * nd_from_host and nd_as_strided (directly, or through the t_random_*
 * helpers); their values are read back with t_gather; the product is the
 * triple loop below, in double, with NumPy's batch broadcasting written out
 * plainly.  Every test runs both functions, except the two random tests,
 * which run one each.
 *
 * Tolerance.  Both functions accumulate in float, in any order they like
 * (a running sum, blocks of a tile's depth, FMA or not), so results are
 * compared with the standard error bound of a float dot product of k
 * terms: for each element,
 *
 *     |got - exact| <= k * FLT_EPSILON * sum over p of |a[i][p] * b[p][j]|
 *
 * (Higham, Accuracy and Stability of Numerical Algorithms, 3.1: the bound
 * is gamma_k = k*u/(1 - k*u) with u = FLT_EPSILON/2, and gamma_k <= k *
 * FLT_EPSILON while k*u <= 1/2).  It holds for every summation order, and
 * it scales with the sum of |terms|, not with |result|, so a result that
 * cancels to near 0 is still judged fairly.  The double reference is exact
 * to about k * 1e-16 relative, far inside the bound, and an atol of 1e-30
 * covers products that underflow.  An index mistake, by contrast, moves a
 * result by whole terms, thousands of times the bound.  Where every value
 * is a small integer, every partial sum is exact in float, and results are
 * compared exactly.
 *
 * Every test first calls a lesson-5 function on a valid input and requires
 * ND_OK, so that an unwritten lesson fails every test with "not
 * implemented", and an implementation that refuses everything cannot pass
 * an error test.  Random cases use fixed seeds: a failure repeats.
 */
#include "nd_test.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

#define NAIVE_HINT "c[..., i, j] = sum over p of a[..., i, p] * b[..., p, j]: read a " \
    "and b through their strides and offsets (they may be transposed, reversed or " \
    "broadcast with stride 0); batch axes align at the right and a size-1 or " \
    "missing axis repeats"
#define TILED_HINT NAIVE_HINT "; sizes need not be multiples of your tiles: pad the " \
    "packed blocks with zeros, write back only the valid part of an edge block, and " \
    "add (not assign) the product of each slice of k to c"

typedef nd_status matmul_fn(const nd_array *a, const nd_array *b, nd_array *out);

/* The two functions under test: every test runs both. */
static const struct impl {
    matmul_fn *fn;
    const char *name;
    const char *hint;
} impls[] = {
    { nd_matmul, "nd_matmul", TILED_HINT },
    { nd_matmul_naive, "nd_matmul_naive", NAIVE_HINT },
};
#define NIMPLS (int)(sizeof impls / sizeof impls[0])

/* Like T_OK, but the failure message starts with `what`, the case. */
#define T_OK_CASE(call, what)                                                   \
    do {                                                                        \
        nd_status s_ = (call);                                                  \
        ck_assert_msg(s_ == ND_OK, "%s: %s returned %s: %s", (what), #call,     \
                      nd_status_name(s_), nd_last_error());                     \
    } while (0)

/* Like T_ERR, and the message must name the operation `op`. */
static int64_t numel_of(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    return n;
}

static void *alloc_bytes(size_t n)
{
    void *p = malloc(n > 0 ? n : 1);
    ck_assert_msg(p != NULL, "test setup: out of memory for %zu bytes", n);
    return p;
}

/* Random values for a test: small integers in [-4, 4] (then every partial
 * sum of a product of depth k < 2^20 is an integer below 2^24, exact in
 * float), or floats in [-1, 1). */
static float random_value(t_rng *r, bool ints)
{
    return ints ? (float)t_int(r, -4, 4) : t_float(r, -1.0f, 1.0f);
}

/* The same view over a new buffer of the same size holding random values:
 * t_random_view's buffers hold 0.5, 1.5, ..., all positive, which would
 * never test cancellation.  Releases v. */
static nd_array revalue(t_rng *r, nd_array v, bool ints)
{
    int64_t size = (int64_t)(v.buf->nbytes / sizeof(float));
    float *vals = alloc_bytes((size_t)size * sizeof(float));
    for (int64_t i = 0; i < size; i++)
        vals[i] = random_value(r, ints);
    nd_array out = t_view_of(size, vals, v.ndim, v.shape, v.strides, v.offset);
    free(vals);
    nd_release(&v);
    return out;
}

/* A random view of this shape (transposed, reversed, strided, or with
 * stride-0 axes) holding random values. */
static nd_array random_input(t_rng *r, int ndim, const int64_t *shape, bool ints)
{
    return revalue(r, t_random_read_view(r, ndim, shape), ints);
}

/* A compact array of this shape holding random values. */
static nd_array random_compact(t_rng *r, int ndim, const int64_t *shape, bool ints)
{
    int64_t n = numel_of(ndim, shape);
    float *vals = alloc_bytes((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        vals[i] = random_value(r, ints);
    nd_array a;
    T_OK(nd_from_host(T_DEV, ndim, shape, vals, &a));
    free(vals);
    return a;
}

/* ---------------------------------------------------------------------- */
/* The reference                                                          */
/* ---------------------------------------------------------------------- */

/* a @ b, computed here: c's shape, and per element (row-major) the exact
 * value and the error a float implementation may make (see the top). */
typedef struct {
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    double *value, *bound;
} reference;

/* Row-major position, among v's matrices, of the one that c's batch index
 * idx (nb axes) reads: v's batch axes align at the right of c's, and a
 * size-1 axis of v is read at 0 whatever c's index there. */
static int64_t matrix_number(const nd_array *v, const int64_t *idx, int nb)
{
    int vb = v->ndim - 2, lead = nb - vb;
    int64_t pos = 0;
    for (int j = 0; j < vb; j++)
        pos = pos * v->shape[j] + (v->shape[j] == 1 ? 0 : idx[j + lead]);
    return pos;
}

/* The reference product of a and b, whose shapes must fit (ndim >= 2,
 * inner sizes equal, batch axes broadcastable). */
static reference reference_of(const nd_array *a, const nd_array *b)
{
    reference ref = { .ndim = a->ndim > b->ndim ? a->ndim : b->ndim };
    int nb = ref.ndim - 2;
    for (int j = 0; j < nb; j++) {   /* NumPy broadcasting of the batch axes */
        int ja = j - (nb - (a->ndim - 2)), jb = j - (nb - (b->ndim - 2));
        int64_t da = ja >= 0 ? a->shape[ja] : 1, db = jb >= 0 ? b->shape[jb] : 1;
        ck_assert_msg(da == db || da == 1 || db == 1, "test setup: batch sizes %" PRId64
                      " and %" PRId64 " do not broadcast", da, db);
        ref.shape[j] = da == 1 ? db : da;
    }
    int64_t m = a->shape[a->ndim - 2], k = a->shape[a->ndim - 1], n = b->shape[b->ndim - 1];
    ck_assert_msg(b->shape[b->ndim - 2] == k, "test setup: inner sizes differ");
    ref.shape[nb] = m;
    ref.shape[nb + 1] = n;
    int64_t total = numel_of(ref.ndim, ref.shape), batches = numel_of(nb, ref.shape);
    ref.value = alloc_bytes((size_t)total * sizeof(double));
    ref.bound = alloc_bytes((size_t)total * sizeof(double));
    float *va = t_gather(a), *vb = t_gather(b);
    for (int64_t t = 0; t < batches; t++) {
        int64_t idx[ND_MAX_DIMS];
        t_unravel(t, nb, ref.shape, idx);
        const float *ma = va + matrix_number(a, idx, nb) * m * k;
        const float *mb = vb + matrix_number(b, idx, nb) * k * n;
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) {
                double sum = 0, size = 0;
                for (int64_t p = 0; p < k; p++) {
                    double term = (double)ma[i * k + p] * (double)mb[p * n + j];
                    sum += term;
                    size += fabs(term);
                }
                int64_t e = (t * m + i) * n + j;
                ref.value[e] = sum;
                ref.bound[e] = (double)k * FLT_EPSILON * size + 1e-30;
            }
        }
    }
    free(va);
    free(vb);
    return ref;
}

static void reference_free(reference *ref)
{
    free(ref->value);
    free(ref->bound);
}

/* c must hold the reference's values, each within its bound (exactly
 * when `exact`). */
static void assert_product(const nd_array *c, const reference *ref, bool exact,
                           const char *what, const char *hint)
{
    float *got = t_gather(c);
    int64_t n = numel_of(ref->ndim, ref->shape), bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
        double tol = exact ? 0 : ref->bound[i];
        if (!(fabs((double)got[i] - ref->value[i]) <= tol)) {   /* NaN fails too */
            if (first < 0)
                first = i;
            bad++;
        }
    }
    if (first < 0) {
        free(got);
        return;
    }
    int64_t idx[ND_MAX_DIMS];
    t_unravel(first, ref->ndim, ref->shape, idx);
    double g = got[first];
    free(got);
    char tol[120] = "exactly: the values are small integers, whose sums are exact in float";
    if (!exact)
        snprintf(tol, sizeof tol, "within %.3g, k * FLT_EPSILON * sum over p of "
                 "|a[i][p] * b[p][j]|", ref->bound[first]);
    ck_abort_msg("%s: %" PRId64 " of %" PRId64 " elements wrong; first at index %s: "
                 "expected %.9g (%s), got %.9g%s. Hint: %s", what, bad, n,
                 t_index_str(ref->ndim, idx), ref->value[first], tol, g,
                 isnan(g) ? " (NaN: never written?)" : "", hint);
}

/* c must be a new compact array of the reference's shape on T_DEV, in a
 * buffer of its own. */
static void assert_new_compact(const nd_array *c, const reference *ref, const nd_array *a,
                               const nd_array *b, const char *what)
{
    t_assert_shape(c, ref->ndim, ref->shape, what);
    int64_t n = numel_of(ref->ndim, ref->shape);
    ck_assert_msg(c->buf != NULL && c->buf != a->buf && c->buf != b->buf,
                  "%s: the result must be a new array, not a view of an input", what);
    ck_assert_msg(c->buf->device == T_DEV, "%s: the result lives on %s, the inputs on %s",
                  what, nd_device_name(c->buf->device), nd_device_name(T_DEV));
    ck_assert_msg(c->buf->refcount == 1, "%s: the result's buffer has refcount %" PRId64
                  ", expected 1 (out's reference only)", what, c->buf->refcount);
    ck_assert_msg(c->buf->nbytes == (size_t)n * sizeof(float),
                  "%s: the result's buffer has %zu bytes, expected exactly %" PRId64
                  " floats", what, c->buf->nbytes, n);
    ck_assert_msg(c->offset == 0, "%s: the result has offset %" PRId64 ", expected 0",
                  what, c->offset);
    /* Row-major strides; those of size-1 axes, or of an empty array, are
     * never used, as nd_is_compact says. */
    for (int64_t k = c->ndim - 1, s = 1; k >= 0 && n > 0; s *= c->shape[k--])
        ck_assert_msg(c->shape[k] == 1 || c->strides[k] == s,
                      "%s: the result %s is not compact: stride %" PRId64 " on axis %d, "
                      "expected %" PRId64, what, t_describe(c), c->strides[k], (int)k, s);
}

/* The input v must be as it was (`copy`, buffer contents `before`, size
 * floats, and refcount `refs`): matmul reads its inputs, never writes. */
static void assert_input_unchanged(const nd_array *v, const nd_array *copy, const float *before,
                                   int64_t size, int64_t refs, const char *what)
{
    ck_assert_msg(t_same_view(v, copy) && v->buf->refcount == refs,
                  "%s: the call changed an input view or its buffer's refcount", what);
    float *after = t_buffer(v, NULL);
    t_assert_floats(after, before, 1, &size, what, "matmul reads its inputs and never "
                    "writes them");
    free(after);
}

/* Run impl on a and b and check everything: the result's shape, layout
 * and values against the reference (exactly when `exact`), and the
 * inputs untouched. */
static void check_product(const struct impl *f, const nd_array *a, const nd_array *b,
                          bool exact, const char *what)
{
    reference ref = reference_of(a, b);
    int64_t size_a, size_b, refs_a = a->buf->refcount, refs_b = b->buf->refcount;
    float *before_a = t_buffer(a, &size_a), *before_b = t_buffer(b, &size_b);
    nd_array copy_a = *a, copy_b = *b, c;
    char full[1200];
    snprintf(full, sizeof full, "%s(a, b) for %s", f->name, what);
    /* A NaN array of the result's size, freed just before the call: malloc
     * likely hands its memory to the result, so that an element never
     * written shows as NaN rather than as a lucky 0. */
    nd_array nan = t_nan_array(ref.ndim, ref.shape);
    nd_release(&nan);
    t_poison(&c);   /* out's old contents are no reference: never read them */
    T_OK_CASE(f->fn(a, b, &c), full);
    assert_new_compact(&c, &ref, a, b, full);
    assert_product(&c, &ref, exact, full, f->hint);
    assert_input_unchanged(a, &copy_a, before_a, size_a, refs_a, full);
    assert_input_unchanged(b, &copy_b, before_b, size_b, refs_b, full);
    nd_release(&c);
    reference_free(&ref);
    free(before_a);
    free(before_b);
}

/* "PREFIX: a shape=(2,3) strides=(3,1) offset=0, b shape=..." into dst. */
static const char *describe_ab(char *dst, size_t cap, const char *prefix, const nd_array *a,
                               const nd_array *b)
{
    snprintf(dst, cap, "%s: a %s, b %s", prefix, t_describe(a), t_describe2(b));
    return dst;
}

/* ---------------------------------------------------------------------- */
/* Random cases                                                           */
/* ---------------------------------------------------------------------- */

/* A matrix size: 0 or 1 now and then, otherwise 1..max. */
static int64_t random_size(t_rng *r, int64_t max)
{
    int64_t pick = t_int(r, 0, 19);
    return pick == 0 ? 0 : pick <= 2 ? 1 : t_int(r, 1, max);
}

/* Shapes for a random product: m, n, k from random_size(max); a batch of
 * 0 to 3 axes of size 1..3, of which a and b each keep the last 0..all
 * (the others missing), some set to 1 (broadcast).  Halves the largest of
 * m, n, k until batch * m * n * k <= max_macs, to bound the time. */
static void random_shapes(t_rng *r, int64_t max, int64_t max_macs, int *nda, int64_t *sa,
                          int *ndb, int64_t *sb)
{
    int64_t m = random_size(r, max), n = random_size(r, max), k = random_size(r, max);
    int nbatch = (int)t_int(r, 0, 3);
    int64_t batch[3];
    for (int j = 0; j < nbatch; j++)
        batch[j] = t_int(r, 1, 3);
    int keep_a = (int)t_int(r, 0, nbatch), keep_b = (int)t_int(r, 0, nbatch);
    if (t_int(r, 0, 1))   /* often, one input has every batch axis */
        keep_a = nbatch;
    for (int j = 0; j < keep_a; j++)
        sa[j] = t_int(r, 0, 2) == 0 ? 1 : batch[nbatch - keep_a + j];
    for (int j = 0; j < keep_b; j++)
        sb[j] = t_int(r, 0, 2) == 0 ? 1 : batch[nbatch - keep_b + j];
    int64_t count = numel_of(nbatch, batch);
    while (count * m * n * k > max_macs) {
        int64_t *big = m >= n && m >= k ? &m : n >= k ? &n : &k;
        *big /= 2;
    }
    *nda = keep_a + 2;
    *ndb = keep_b + 2;
    sa[keep_a] = m;
    sa[keep_a + 1] = k;
    sb[keep_b] = k;
    sb[keep_b + 1] = n;
}

/* `cases` random products for one function: sizes 0..70 (rarely tile
 * multiples), any views, batches broadcast. */
static void random_products(const struct impl *f, uint64_t seed, int cases)
{
    t_rng r = t_rng_new(seed);
    for (int c = 0; c < cases; c++) {
        int nda, ndb;
        int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        random_shapes(&r, 70, 120000, &nda, sa, &ndb, sb);
        nd_array a = random_input(&r, nda, sa, false), b = random_input(&r, ndb, sb, false);
        char prefix[40], what[1000];
        snprintf(prefix, sizeof prefix, "random case %d", c);
        check_product(f, &a, &b, false, describe_ab(what, sizeof what, prefix, &a, &b));
        nd_release(&a);
        nd_release(&b);
    }
}

/* ---------------------------------------------------------------------- */
/* Tests                                                                  */
/* ---------------------------------------------------------------------- */

START_TEST(matmul_small_cases)
{
    /* Products small enough to check by hand; exact in float. */
    static const struct {
        const char *what;
        int nda, ndb;
        int64_t sa[3], sb[3];
        float a[8], b[8];
        int ndc;
        int64_t sc[3];
        float want[8];
    } cases[] = {
        { "(2,3) @ (3,2)", 2, 2, { 2, 3 }, { 3, 2 }, { 1, 2, 3, 4, 5, 6 },
          { 7, 8, 9, 10, 11, 12 }, 2, { 2, 2 }, { 58, 64, 139, 154 } },
        { "(1,1) @ (1,1)", 2, 2, { 1, 1 }, { 1, 1 }, { 3 }, { -2 }, 2, { 1, 1 }, { -6 } },
        { "a row times a column: (1,3) @ (3,1)", 2, 2, { 1, 3 }, { 3, 1 }, { 1, 2, 3 },
          { 4, 5, 6 }, 2, { 1, 1 }, { 32 } },
        { "a column times a row (outer product): (3,1) @ (1,2)", 2, 2, { 3, 1 }, { 1, 2 },
          { 1, 2, 3 }, { 4, 5 }, 2, { 3, 2 }, { 4, 5, 8, 10, 12, 15 } },
        { "a batch of two: (2,1,2) @ (2,2,1)", 3, 3, { 2, 1, 2 }, { 2, 2, 1 }, { 1, 2, 3, 4 },
          { 5, 6, 7, 8 }, 3, { 2, 1, 1 }, { 17, 53 } },
        { "one b for a batch of two a: (2,2,2) @ (2,2)", 3, 2, { 2, 2, 2 }, { 2, 2 },
          { 1, 0, 0, 1, 2, 0, 0, 2 }, { 1, 2, 3, 4 }, 3, { 2, 2, 2 },
          { 1, 2, 3, 4, 2, 4, 6, 8 } },
        { "cancellation to exactly 0: (1,2) @ (2,1)", 2, 2, { 1, 2 }, { 2, 1 }, { 3, -2 },
          { 2, 3 }, 2, { 1, 1 }, { 0 } },
    };
    for (int f = 0; f < NIMPLS; f++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            nd_array a, b, out;
            T_OK(nd_from_host(T_DEV, cases[c].nda, cases[c].sa, cases[c].a, &a));
            T_OK(nd_from_host(T_DEV, cases[c].ndb, cases[c].sb, cases[c].b, &b));
            char what[300];
            snprintf(what, sizeof what, "%s of %s", impls[f].name, cases[c].what);
            T_OK_CASE(impls[f].fn(&a, &b, &out), what);
            t_assert_shape(&out, cases[c].ndc, cases[c].sc, what);
            t_assert_values(&out, cases[c].want, what, impls[f].hint);
            nd_release(&out);
            check_product(&impls[f], &a, &b, true, cases[c].what);
            nd_release(&a);
            nd_release(&b);
        }
    }
}
END_TEST

START_TEST(matmul_special_views)
{
    /* Named views of a buffer of 12 random values, each used as a (times
     * a compact b) and as b (a compact a times it). */
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[3], strides[3], offset;
    } views[] = {
        { "a transpose", 2, { 4, 3 }, { 1, 4 }, 0 },
        { "both axes reversed", 2, { 3, 4 }, { -4, -1 }, 11 },
        { "every row the same (row stride 0)", 2, { 3, 4 }, { 0, 1 }, 4 },
        { "every column the same (column stride 0)", 2, { 4, 3 }, { 1, 0 }, 8 },
        { "one element everywhere (strides 0, 0)", 2, { 3, 3 }, { 0, 0 }, 5 },
        { "every other column, offset 1", 2, { 3, 2 }, { 4, 2 }, 1 },
        { "a batch of transposes, batch axis reversed", 3, { 2, 2, 3 }, { -6, 1, 2 }, 6 },
        { "a broadcast batch (batch stride 0)", 3, { 3, 2, 4 }, { 0, 4, 1 }, 0 },
    };
    t_rng r = t_rng_new(51);
    float vals[12];
    for (int f = 0; f < NIMPLS; f++) {
        for (size_t c = 0; c < sizeof views / sizeof views[0]; c++) {
            for (int i = 0; i < 12; i++)
                vals[i] = random_value(&r, false);
            int nd = views[c].ndim;
            nd_array v = t_view_of(12, vals, nd, views[c].shape, views[c].strides,
                                 views[c].offset);
            int64_t rows = views[c].shape[nd - 2], cols = views[c].shape[nd - 1];
            nd_array b = random_compact(&r, 2, (int64_t[]){ cols, 5 }, false);
            nd_array a = random_compact(&r, 2, (int64_t[]){ 3, rows }, false);
            char what[300];
            snprintf(what, sizeof what, "a = %s (%s), b compact (%" PRId64 ",5)",
                     views[c].what, t_describe(&v), cols);
            check_product(&impls[f], &v, &b, false, what);
            snprintf(what, sizeof what, "a compact (3,%" PRId64 "), b = %s (%s)", rows,
                     views[c].what, t_describe(&v));
            check_product(&impls[f], &a, &v, false, what);
            nd_release(&v);
            nd_release(&a);
            nd_release(&b);
        }
        /* a @ a.T, both views of one buffer */
        for (int i = 0; i < 12; i++)
            vals[i] = random_value(&r, false);
        nd_array a = t_view_of(12, vals, 2, (int64_t[]){ 3, 4 }, (int64_t[]){ 4, 1 }, 0), t;
        T_OK(nd_as_strided(&a, 2, (int64_t[]){ 4, 3 }, (int64_t[]){ 1, 4 }, 0, &t));
        check_product(&impls[f], &a, &t, false, "a @ a.T, views of one buffer");
        check_product(&impls[f], &t, &a, false, "a.T @ a, views of one buffer");
        nd_release(&t);
        nd_release(&a);
    }
}
END_TEST

START_TEST(matmul_naive_random)
{
    random_products(&impls[1], 52, 500);
}
END_TEST

START_TEST(matmul_tiled_random)
{
    random_products(&impls[0], 53, 500);
}
END_TEST

START_TEST(matmul_tile_edges)
{
    /* Sizes one below, at and one above common tile sizes: register
     * blocks (MR, NR) for m and n, cache blocks of k (KC), of m (MC) and
     * of n (NC).  An edge handled wrongly shows in one of them. */
    static const int64_t small[] = { 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 23,
                                     24, 25, 31, 32, 33, 47, 48, 49, 63, 64, 65 };
    static const int64_t depth[] = { 127, 128, 129, 255, 256, 257, 383, 384, 385, 511, 512,
                                     513 };
    static const int64_t rows[] = { 71, 72, 73, 95, 96, 97, 143, 144, 145, 191, 192, 193,
                                    263, 264, 265, 383, 384, 385, 511, 512, 513 };
    static const int64_t cols[] = { 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097 };
    const int ns = (int)(sizeof small / sizeof small[0]);
    t_rng r = t_rng_new(54);
    for (int f = 0; f < NIMPLS; f++) {
        int c = 0;
        char what[1000], prefix[80];
        for (size_t d = 0; d < sizeof depth / sizeof depth[0]; d++, c++) {
            int64_t m = small[t_int(&r, 0, ns - 1)], n = small[t_int(&r, 0, ns - 1)];
            nd_array a = random_input(&r, 2, (int64_t[]){ m, depth[d] }, false);
            nd_array b = random_input(&r, 2, (int64_t[]){ depth[d], n }, false);
            snprintf(prefix, sizeof prefix, "tile edge case %d, k = %" PRId64, c, depth[d]);
            check_product(&impls[f], &a, &b, false, describe_ab(what, sizeof what, prefix,
                                                                &a, &b));
            nd_release(&a);
            nd_release(&b);
        }
        for (int i = 0; i < 2 * ns; i++, c++) {   /* m and n around register tiles */
            int64_t m = small[i % ns], n = small[(i * 7 + 3) % ns], k = t_int(&r, 1, 40);
            nd_array a = random_input(&r, 2, (int64_t[]){ m, k }, false);
            nd_array b = random_input(&r, 2, (int64_t[]){ k, n }, false);
            snprintf(prefix, sizeof prefix, "tile edge case %d, m = %" PRId64 ", n = %"
                     PRId64, c, m, n);
            check_product(&impls[f], &a, &b, false, describe_ab(what, sizeof what, prefix,
                                                                &a, &b));
            nd_release(&a);
            nd_release(&b);
        }
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++, c++) {
            nd_array a = random_input(&r, 2, (int64_t[]){ rows[i], 19 }, false);
            nd_array b = random_input(&r, 2, (int64_t[]){ 19, 21 }, false);
            snprintf(prefix, sizeof prefix, "tile edge case %d, m = %" PRId64, c, rows[i]);
            check_product(&impls[f], &a, &b, false, describe_ab(what, sizeof what, prefix,
                                                                &a, &b));
            nd_release(&a);
            nd_release(&b);
        }
        for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++, c++) {
            nd_array a = random_input(&r, 2, (int64_t[]){ 3, 11 }, false);
            nd_array b = random_input(&r, 2, (int64_t[]){ 11, cols[i] }, false);
            snprintf(prefix, sizeof prefix, "tile edge case %d, n = %" PRId64, c, cols[i]);
            check_product(&impls[f], &a, &b, false, describe_ab(what, sizeof what, prefix,
                                                                &a, &b));
            nd_release(&a);
            nd_release(&b);
        }
    }
}
END_TEST

START_TEST(matmul_large)
{
    /* (300,257) @ (257,301) = 23 million multiply-adds, several blocks of
     * every common tile size in each direction.  Small integer values:
     * every partial sum is exact, so the result must be too.  Compact
     * inputs, then a transposed and reversed a with a transposed b. */
    t_rng r = t_rng_new(55);
    const int64_t m = 300, k = 257, n = 301;
    for (int f = 0; f < NIMPLS; f++) {
        nd_array a = random_compact(&r, 2, (int64_t[]){ m, k }, true);
        nd_array b = random_compact(&r, 2, (int64_t[]){ k, n }, true);
        check_product(&impls[f], &a, &b, true, "(300,257) @ (257,301), compact");
        nd_release(&a);
        nd_release(&b);

        /* a(i,p) = base_a[299-i][p]... stored transposed: base (257,300) */
        a = random_compact(&r, 2, (int64_t[]){ k, m }, true);
        b = random_compact(&r, 2, (int64_t[]){ n, k }, true);
        nd_array at, bt;
        T_OK(nd_as_strided(&a, 2, (int64_t[]){ m, k }, (int64_t[]){ -1, -m }, k * m - 1, &at));
        T_OK(nd_as_strided(&b, 2, (int64_t[]){ k, n }, (int64_t[]){ 1, k }, 0, &bt));
        char what[600];
        check_product(&impls[f], &at, &bt, true, describe_ab(what, sizeof what,
                      "(300,257) @ (257,301), a transposed and reversed, b transposed",
                      &at, &bt));
        nd_release(&at);
        nd_release(&bt);
        nd_release(&a);
        nd_release(&b);
    }
}
END_TEST

START_TEST(matmul_batch_broadcast)
{
    /* NumPy's batch rules, with the result's shape written out. */
    static const struct {
        const char *what;
        int nda, ndb;
        int64_t sa[5], sb[5];
        int ndc;
        int64_t sc[5];
    } cases[] = {
        { "(2,1,4,3) @ (3,3,5): size 1 and missing axes stretch", 4, 3, { 2, 1, 4, 3 },
          { 3, 3, 5 }, 4, { 2, 3, 4, 5 } },
        { "(4,3) @ (6,3,5): one a for every b", 2, 3, { 4, 3 }, { 6, 3, 5 }, 3, { 6, 4, 5 } },
        { "(6,4,3) @ (3,5): one b for every a", 3, 2, { 6, 4, 3 }, { 3, 5 }, 3, { 6, 4, 5 } },
        { "(3,1,1,4,3) @ (1,2,1,3,5)", 5, 5, { 3, 1, 1, 4, 3 }, { 1, 2, 1, 3, 5 }, 5,
          { 3, 2, 1, 4, 5 } },
        { "(1,4,3) @ (1,3,5)", 3, 3, { 1, 4, 3 }, { 1, 3, 5 }, 3, { 1, 4, 5 } },
        { "(2,3,4,3) @ (2,3,3,5): equal batches", 4, 4, { 2, 3, 4, 3 }, { 2, 3, 3, 5 }, 4,
          { 2, 3, 4, 5 } },
        { "(1,1,1,4,3) @ (3,5): extra leading size-1 axes", 5, 2, { 1, 1, 1, 4, 3 },
          { 3, 5 }, 5, { 1, 1, 1, 4, 5 } },
        { "(0,4,3) @ (3,5): an empty batch", 3, 2, { 0, 4, 3 }, { 3, 5 }, 3, { 0, 4, 5 } },
        { "(0,1,4,3) @ (3,3,5): an empty batch axis broadcast against 3", 4, 3,
          { 0, 1, 4, 3 }, { 3, 3, 5 }, 4, { 0, 3, 4, 5 } },
    };
    t_rng r = t_rng_new(56);
    for (int f = 0; f < NIMPLS; f++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            for (int views = 0; views < 2; views++) {   /* compact, then any views */
                nd_array a = views ? random_input(&r, cases[c].nda, cases[c].sa, false)
                                   : random_compact(&r, cases[c].nda, cases[c].sa, false);
                nd_array b = views ? random_input(&r, cases[c].ndb, cases[c].sb, false)
                                   : random_compact(&r, cases[c].ndb, cases[c].sb, false);
                char what[1000], prefix[200];
                snprintf(prefix, sizeof prefix, "%s%s", cases[c].what,
                         views ? ", random views" : "");
                describe_ab(what, sizeof what, prefix, &a, &b);
                nd_array out;
                T_OK_CASE(impls[f].fn(&a, &b, &out), what);
                t_assert_shape(&out, cases[c].ndc, cases[c].sc, what);
                nd_release(&out);
                check_product(&impls[f], &a, &b, false, what);
                nd_release(&a);
                nd_release(&b);
            }
        }
    }
}
END_TEST

START_TEST(matmul_empty)
{
    /* m, n or k of 0.  k = 0 is the empty sum: all zeros (check_product
     * makes sure they are not zeros left in memory by chance). */
    static const struct {
        const char *what;
        int nda, ndb;
        int64_t sa[3], sb[3];
    } cases[] = {
        { "m = 0: (0,4) @ (4,3)", 2, 2, { 0, 4 }, { 4, 3 } },
        { "n = 0: (3,4) @ (4,0)", 2, 2, { 3, 4 }, { 4, 0 } },
        { "k = 0: (3,0) @ (0,4), all zeros", 2, 2, { 3, 0 }, { 0, 4 } },
        { "k = 0, batched: (2,3,0) @ (0,5)", 3, 2, { 2, 3, 0 }, { 0, 5 } },
        { "all 0: (0,0) @ (0,0)", 2, 2, { 0, 0 }, { 0, 0 } },
        { "m = n = 0: (0,5) @ (5,0)", 2, 2, { 0, 5 }, { 5, 0 } },
        { "m = 1, k = 0: (1,0) @ (0,1)", 2, 2, { 1, 0 }, { 0, 1 } },
    };
    t_rng r = t_rng_new(57);
    for (int f = 0; f < NIMPLS; f++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            nd_array a = random_input(&r, cases[c].nda, cases[c].sa, false);
            nd_array b = random_input(&r, cases[c].ndb, cases[c].sb, false);
            char what[600];
            check_product(&impls[f], &a, &b, true, describe_ab(what, sizeof what,
                                                               cases[c].what, &a, &b));
            nd_release(&a);
            nd_release(&b);
        }
    }
}
END_TEST

START_TEST(matmul_out_aliases_input)
{
    /* f(&x, &y, &x): x becomes the product and its old reference goes;
     * likewise f(&x, &y, &y) and f(&x, &x, &x). */
    t_rng r = t_rng_new(58);
    for (int f = 0; f < NIMPLS; f++) {
        for (int which = 0; which < 3; which++) {
            int64_t n = which == 2 ? 4 : 5;
            nd_array base = random_compact(&r, 2, (int64_t[]){ 3, 4 }, false);
            nd_array y = random_compact(&r, 2, (int64_t[]){ 3, n }, false), x;
            T_OK(nd_as_strided(&base, 2, (int64_t[]){ 4, 3 }, (int64_t[]){ 1, 4 }, 0, &x));
            if (which == 2) {   /* x @ x needs a square x: (4,4) */
                nd_release(&x);
                nd_release(&base);
                base = random_compact(&r, 2, (int64_t[]){ 4, 4 }, false);
                T_OK(nd_as_strided(&base, 2, (int64_t[]){ 4, 4 }, (int64_t[]){ 1, 4 }, 0,
                                   &x));
            }
            const nd_array *rhs = which == 2 ? &x : &y;
            nd_array *out = which == 1 ? &y : &x;
            static const char *const calls[] = { "f(&x, &y, &x)", "f(&x, &y, &y)",
                                                 "f(&x, &x, &x)" };
            char what[300];
            snprintf(what, sizeof what, "%s as %s, x a transposed view", impls[f].name,
                     calls[which]);
            reference ref = reference_of(&x, rhs);
            /* keep holds out's old buffer alive, to count its references */
            nd_array keep;
            T_OK(nd_share(out, &keep));
            int64_t refs = keep.buf->refcount;
            T_OK_CASE(impls[f].fn(&x, rhs, out), what);
            ck_assert_msg(out->buf != keep.buf, "%s must give out a new buffer", what);
            ck_assert_msg(keep.buf->refcount == refs - 1, "%s: out's old buffer has "
                          "refcount %" PRId64 ", expected %" PRId64 ": out's old reference "
                          "must be released, once", what, keep.buf->refcount, refs - 1);
            assert_new_compact(out, &ref, &keep, &base, what);
            assert_product(out, &ref, false, what, impls[f].hint);
            nd_release(&keep);
            reference_free(&ref);
            nd_release(&x);
            nd_release(&y);
            nd_release(&base);
        }
    }
}
END_TEST

/* A failed call must leave out as it was and the input a intact. */
static void check_refused(const struct impl *f, const nd_array *a, const nd_array *b,
                          nd_status want, const char *what)
{
    nd_array out;
    t_poison(&out);
    nd_clear_error();
    nd_status s = f->fn(a, b, &out);
    ck_assert_msg(s == want, "%s(%s) returned %s, expected %s%s%s", f->name, what,
                  nd_status_name(s), nd_status_name(want), s == ND_OK ? "" : ": ",
                  s == ND_OK ? "" : nd_last_error());
    ck_assert_msg(strstr(nd_last_error(), "matmul") != NULL, "%s(%s) failed rightly, but "
                  "its message \"%s\" does not name the operation 'matmul'", f->name, what,
                  nd_last_error());
    char call[400];
    snprintf(call, sizeof call, "%s(%s)", f->name, what);
    t_assert_untouched(&out, call);
}

START_TEST(matmul_errors)
{
    for (int f = 0; f < NIMPLS; f++) {
        const struct impl *im = &impls[f];
        nd_array a = t_arange(2, (int64_t[]){ 3, 4 }), b = t_arange(2, (int64_t[]){ 4, 5 });
        nd_array out;
        T_OK(im->fn(&a, &b, &out));
        nd_release(&out);

        /* shapes that do not fit: the message names both */
        static const struct {
            int nda, ndb;
            int64_t sa[3], sb[3];
            nd_status want;
            const char *why;
        } bad[] = {
            { 2, 2, { 3, 4 }, { 5, 6 }, ND_ERR_SHAPE, "inner sizes 4 and 5" },
            { 3, 3, { 2, 3, 4 }, { 3, 4, 5 }, ND_ERR_SHAPE, "batch sizes 2 and 3" },
            { 3, 3, { 2, 3, 4 }, { 2, 5, 6 }, ND_ERR_SHAPE, "inner sizes, batched" },
            { 3, 2, { 5, 2, 3 }, { 4, 3 }, ND_ERR_SHAPE, "inner sizes 3 and 4, b broadcast" },
            { 3, 3, { 2, 2, 3 }, { 1, 3, 2 }, ND_OK, "(a valid broadcast, for contrast)" },
            { 1, 2, { 4 }, { 4, 3 }, ND_ERR_ARG, "a 1-D a" },
            { 2, 1, { 3, 4 }, { 4 }, ND_ERR_ARG, "a 1-D b" },
            { 0, 2, { 0 }, { 1, 1 }, ND_ERR_ARG, "a scalar a" },
            { 2, 0, { 1, 1 }, { 0 }, ND_ERR_ARG, "a scalar b" },
        };
        for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
            nd_array x = t_arange(bad[c].nda, bad[c].sa), y = t_arange(bad[c].ndb, bad[c].sb);
            char sa[200], sb[200], what[600];
            nd_shape_str(bad[c].nda, bad[c].sa, sa, sizeof sa);
            nd_shape_str(bad[c].ndb, bad[c].sb, sb, sizeof sb);
            snprintf(what, sizeof what, "a of shape %s, b of shape %s: %s", sa, sb,
                     bad[c].why);
            if (bad[c].want == ND_OK) {
                T_OK_CASE(im->fn(&x, &y, &out), what);
                nd_release(&out);
            } else {
                check_refused(im, &x, &y, bad[c].want, what);
                ck_assert_msg(bad[c].want != ND_ERR_SHAPE || (strstr(nd_last_error(), sa) &&
                                                             strstr(nd_last_error(), sb)),
                              "%s(%s): the message \"%s\" should name both shapes, %s and %s",
                              im->name, what, nd_last_error(), sa, sb);
                ck_assert_msg(x.buf->refcount == 1 && y.buf->refcount == 1,
                              "%s(%s) failed but kept a reference to an input", im->name,
                              what);
            }
            nd_release(&x);
            nd_release(&y);
        }

        /* NULL, released and broken arrays */
        nd_array gone = t_arange(2, (int64_t[]){ 3, 4 }), bad_ndim = a;
        nd_release(&gone);
        check_refused(im, NULL, &b, ND_ERR_ARG, "NULL, b");
        check_refused(im, &a, NULL, ND_ERR_ARG, "a, NULL");
        check_refused(im, &gone, &b, ND_ERR_ARG, "a released a, b");
        check_refused(im, &b, &gone, ND_ERR_ARG, "b, a released b");
        bad_ndim.ndim = ND_MAX_DIMS + 1;
        check_refused(im, &bad_ndim, &b, ND_ERR_ARG, "an a with ndim 9, b");
        bad_ndim.ndim = -1;
        check_refused(im, &a, &bad_ndim, ND_ERR_ARG, "a, a b with ndim -1");
        T_ERR_OP(im->fn(&a, &b, NULL), ND_ERR_ARG, "matmul");

        /* arrays on two devices (only when the test runs on another device) */
        if (T_DEV != ND_CPU) {
            nd_array host;
            T_OK(nd_from_host(ND_CPU, 2, (int64_t[]){ 4, 5 }, (float[20]){ 0 }, &host));
            check_refused(im, &a, &host, ND_ERR_DEVICE, "a on the device, b on the cpu");
            nd_release(&host);
        }
        ck_assert_msg(a.buf->refcount == 1 && b.buf->refcount == 1,
                      "failed %s calls changed an input's refcount", im->name);
        nd_release(&a);
        nd_release(&b);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The suite                                                              */
/* ---------------------------------------------------------------------- */

/* ---------------------------------------------------------------------- */
/* Extreme shapes, strides and offsets (issue #17): regression tests.      */
/* The rules of "Valid arrays" in nd.h bound sizes and the elements an     */
/* array reaches, but not the strides it never steps along (size-1 axes,   */
/* arrays with no elements), which may hold any int64: arithmetic on them  */
/* must be checked (nd_add_ok, nd_mul_ok in internal.h) or skipped.  Run   */
/* these with SAN=1: an overflow is undefined behaviour, which UBSan turns */
/* into a failure even where the wrapped value happens to pass.            */
/* ---------------------------------------------------------------------- */

#define X_P2(e) ((int64_t)1 << (e))

/* Finding 2: huge m and n in an empty batch once passed the element check
 * (which stopped at the 0), and m * n overflowed (05_matmul.c:321).  The
 * shapes a, b and c would take are checked, and the error names matmul.
 * With k == 0, a and b have no elements and any strides; the product is
 * zeros, computed without them. */
START_TEST(extreme_matmul_shapes)
{
    int64_t two[2] = { 2, 2 }, zero3[3] = { 0, 0, 0 };
    nd_array one, a, b, c, keep;
    T_OK(nd_zeros(T_DEV, 2, two, &a));
    T_OK(nd_matmul(&a, &a, &c));
    nd_release(&c);
    nd_release(&a);
    T_OK(nd_zeros(T_DEV, 0, NULL, &one));
    t_poison(&keep);
    /* (0,2^40,1) @ (1,2^40): the result (0,2^40,2^40) has too many elements */
    int64_t sa[3] = { 0, X_P2(40), 1 }, sb[2] = { 1, X_P2(40) };
    T_OK(nd_as_strided(&one, 3, sa, zero3, 0, &a));
    T_OK(nd_as_strided(&one, 2, sb, zero3, 0, &b));
    T_ERR_OP(nd_matmul(&a, &b, &keep), ND_ERR_ARG, "matmul");
    T_ERR_OP(nd_matmul_naive(&a, &b, &keep), ND_ERR_ARG, "matmul_naive");
    nd_release(&a);
    nd_release(&b);
    /* (1,2^30,2^28) @ (2^10,2^28,1): c is (2^10,2^30,1), but a broadcast
     * to the batch would be (2^10,2^30,2^28) */
    int64_t ta[3] = { 1, X_P2(30), X_P2(28) }, tb[3] = { X_P2(10), X_P2(28), 1 };
    T_OK(nd_as_strided(&one, 3, ta, zero3, 0, &a));
    T_OK(nd_as_strided(&one, 3, tb, zero3, 0, &b));
    T_ERR_OP(nd_matmul(&a, &b, &keep), ND_ERR_ARG, "matmul");
    t_assert_untouched(&keep, "matmul of shapes with too many elements");
    nd_release(&a);
    nd_release(&b);
    /* k == 0: a (3,2,0) with strides (INT64_MAX,INT64_MIN,1) */
    int64_t s320[3] = { 3, 2, 0 }, wild[3] = { INT64_MAX, INT64_MIN, 1 }, s304[3] = { 3, 0, 4 };
    int64_t s324[3] = { 3, 2, 4 };
    float zeros[24] = { 0 };
    T_OK(nd_as_strided(&one, 3, s320, wild, 1, &a));
    T_OK(nd_zeros(T_DEV, 3, s304, &b));
    T_OK(nd_matmul(&a, &b, &c));
    t_assert_shape(&c, 3, s324, "(3,2,0) @ (3,0,4)");
    t_assert_values(&c, zeros, "(3,2,0) @ (3,0,4) with a's strides (INT64_MAX,INT64_MIN,1)",
                    "a sum over k = 0 terms is 0");
    nd_release(&c);
    T_OK(nd_matmul_naive(&a, &b, &c));
    t_assert_values(&c, zeros, "naive (3,2,0) @ (3,0,4)", "");
    nd_release(&c);
    nd_release(&a);
    nd_release(&b);
    nd_release(&one);
}
END_TEST

static void add_extreme_tests(Suite *s)
{
    T_ADD(s, extreme_matmul_shapes);
}

Suite *suite_05_matmul(void);

Suite *suite_05_matmul(void)
{
    Suite *s = t_suite(5, "05_matmul");
    T_ADD(s, matmul_small_cases);
    T_ADD(s, matmul_special_views);
    T_ADD(s, matmul_naive_random);
    T_ADD(s, matmul_tiled_random);
    T_ADD(s, matmul_tile_edges);
    T_ADD(s, matmul_large);
    T_ADD(s, matmul_batch_broadcast);
    T_ADD(s, matmul_empty);
    T_ADD(s, matmul_out_aliases_input);
    T_ADD(s, matmul_errors);
    add_extreme_tests(s);
    return s;
}
