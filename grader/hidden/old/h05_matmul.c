/*
 * h05_matmul.c -- hidden tests of lesson 5: nd_matmul (tiled) and
 * nd_matmul_naive, NumPy's matmul on strided views: (..., m, k) @
 * (..., k, n) -> (..., m, n), the batch axes broadcast.
 *
 * What this file covers (the suite at the end lists every test with its
 * points and hint):
 *
 *   tile edges       every pair (m, n) of 36 sizes around register tiles
 *                    (4, 6, 8, 12, 16, 24, 32, 36, 48, 64, 96, 128, +-1);
 *                    depths around every plausible KC (16 .. 1024, +-1);
 *                    rows around every plausible MC (72 .. 528, +-1) and
 *                    columns around every plausible NC (256 .. 4096, +-1)
 *   random views     hundreds of random products per function, sizes 0..130
 *                    (half of them on a tile edge), inputs transposed,
 *                    reversed, strided, windows of larger matrices, stride-0
 *                    rows, columns and batches, at offsets; batches of up to
 *                    3 axes broadcast
 *   batch rules      every pair of batch shapes of 0..3 axes with sizes
 *                    0..2 (1600 pairs): the result's shape by NumPy's rule,
 *                    or ND_ERR_SHAPE naming both shapes
 *   properties       a batched product equals the products of its matrices
 *                    one by one; (A@B).T == B.T@A.T; A@I == I@A == A exactly
 *                    (I compact, or a Toeplitz view of 2k-1 floats); a
 *                    stride-0 operand gives what its compact copy gives
 *   aliasing         a @ a.T and other views of one buffer as both inputs;
 *                    out == a, out == b, out == a == b, as the only
 *                    reference to the old buffer or not
 *   empty            m, n, k or a batch axis 0; k == 0 gives zeros
 *   larger           257x513x129 and friends for both functions; for the
 *                    tiled one 600x700x900, 530x520x300 (transposed and
 *                    reversed inputs), 40x300x4200 and a broadcast batch,
 *                    through several KC, MC and NC blocks, checked exactly
 *   errors           inner and batch mismatches (also with sizes 0), inputs
 *                    of 0 or 1 axes, NULL, released and broken arrays, with
 *                    out == a: the output untouched, the inputs as they were
 *
 * The reference never calls lesson code: inputs are built with
 * nd_from_host and nd_as_strided, read back with t_gather, and multiplied
 * here in double (i, p, j order, NumPy's batch rule written out).  Every
 * buffer element that an input view does NOT reach is NaN, so that a
 * product reading outside its views (packing that assumes compact inputs,
 * a wrong offset) shows.  Before each call, freed memory of the result's
 * size is left full of NaN (dirty_heap), so that an element never written,
 * or a sum that does not start from 0, shows as well.
 *
 * Values.  Small integers in [-4, 4] make every partial sum an integer
 * below 2^24 (for k < 2^20), exact in float in any order: those products
 * are compared exactly.  Random floats in [-1, 1) are compared with the
 * standard bound of a float dot product of k terms (Higham 3.1):
 *
 *     |got - exact| <= k * FLT_EPSILON * sum over p of |a[i][p] * b[p][j]|
 *
 * which holds for every summation order (running sum, slices of KC, FMA or
 * not) and is judged against the sum of |terms|, not |result|, so a result
 * that cancels is judged fairly.  An index mistake moves a result by whole
 * terms, far beyond it.  The large products are checked without an
 * O(m n k) reference: each element must be an integer, and c x == a (b x)
 * exactly for three random integer vectors x (Freivalds); a wrong row is
 * then recomputed to name its first wrong element.
 *
 * Every test first calls a lesson-5 function on a valid input with T_OK,
 * so that on the skeleton each test fails with "not implemented".
 */
#include "grader.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fail with a formatted message unless cond holds (cheap in loops). */
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond))                                                       \
            ck_abort_msg(__VA_ARGS__);                                     \
    } while (0)

#define NAIVE_HINT "c[..., i, j] = sum over p of a[..., i, p] * b[..., p, j], reading a and " \
    "b through their own offsets and signed strides (transposed, reversed, stride 0)"
#define TILED_HINT "pack the panels through the views' offsets and strides, zero-pad the " \
    "edges of the packed blocks, and write back only the valid part of an edge block"
#define VIEWS_HINT "pack the panels through the views' strides and offset: a transposed, " \
    "reversed, windowed or stride-0 a or b must give the same product as its compact copy, " \
    "and no element outside the views may be read"
#define BATCH_HINT "batch axes align at the right; a size-1 or missing axis of a or b " \
    "repeats (stride 0) against the other's size; each input is read at ITS OWN batch " \
    "position; c is (batch..., m, n)"

/* ---------------------------------------------------------------------- */
/* The functions under test                                               */
/* ---------------------------------------------------------------------- */

typedef nd_status matmul_fn(const nd_array *a, const nd_array *b, nd_array *out);

typedef struct {
    matmul_fn *fn;
    const char *name;
} impl;

static const impl TILED = { nd_matmul, "nd_matmul" };
static const impl NAIVE = { nd_matmul_naive, "nd_matmul_naive" };
static const impl *const BOTH[2] = { &TILED, &NAIVE };

/* Every test starts here: (2,3) @ (3,2) must succeed. */
static void first_call(const impl *f)
{
    int64_t sa[2] = { 2, 3 }, sb[2] = { 3, 2 };
    nd_array a = t_arange(2, sa), b = t_arange(2, sb), c;
    char call[80];
    snprintf(call, sizeof call, "%s(a of shape (2,3), b of shape (3,2), &out)", f->name);
    t_ok(f->fn(&a, &b, &c), call, __FILE__, __LINE__);   /* T_OK, naming the function */
    nd_release(&c);
    nd_release(&a);
    nd_release(&b);
}

/* Sizes at the edges of register tiles: 4, 6, 8, 12, 16, 24, 32, 36 (3 x
 * 12), 48, 64, 96, 128, one below and one above. */
static const int64_t EDGES[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 23, 24,
                                 25, 31, 32, 33, 35, 36, 37, 47, 48, 49, 63, 64, 65, 95, 96,
                                 97, 127, 128, 129 };
#define NEDGES (int)(sizeof EDGES / sizeof EDGES[0])

/* ---------------------------------------------------------------------- */
/* Inputs                                                                 */
/* ---------------------------------------------------------------------- */

static void random_perm(t_rng *r, int n, int *p)
{
    for (int k = 0; k < n; k++)
        p[k] = k;
    for (int k = n - 1; k > 0; k--) {
        int j = (int)t_int(r, 0, k), t = p[k];
        p[k] = p[j];
        p[j] = t;
    }
}

/* An input value: a small integer in [-4, 4], or a float in [-1, 1). */
static float value(t_rng *r, bool ints)
{
    return ints ? (float)t_int(r, -4, 4) : t_float(r, -1.0f, 1.0f);
}

/* A view of a new buffer of `size` floats with this layout: the elements
 * the view reaches hold random values, every other element is NaN. */
static nd_array filled(t_rng *r, int64_t size, int ndim, const int64_t *shape,
                       const int64_t *strides, int64_t offset, bool ints)
{
    float *v = t_floats(size);
    for (int64_t i = 0; i < size; i++)
        v[i] = NAN;
    int64_t n = t_numel(ndim, shape), idx[ND_MAX_DIMS] = { 0 }, off = offset;
    for (int64_t i = 0; i < n; i++) {   /* an odometer over the view */
        v[off] = value(r, ints);
        for (int k = ndim - 1; k >= 0; k--) {
            off += strides[k];
            if (++idx[k] < shape[k])
                break;
            off -= idx[k] * strides[k];
            idx[k] = 0;
        }
    }
    nd_array out = t_view_of(size, v, ndim, shape, strides, offset);
    free(v);
    return out;
}

/* The layouts of random inputs. */
enum {
    COMPACT,     /* row-major */
    TRANSPOSED,  /* every matrix column-major (the batch row-major) */
    WINDOW,      /* a window of a larger array: padded rows, an offset */
    STRIDED,     /* axes permuted, steps +-1 and +-2, an offset: a view of views */
    REVERSED,    /* the same with every step negative */
    BROADCAST,   /* STRIDED, then rows, columns, both or the batch of stride 0 */
    NKINDS
};

/* A random input of `shape` (ndim >= 2) laid out as `kind`, in a buffer
 * of about `cap` floats at most, holding ints or floats (NaN elsewhere). */
static nd_array gen_input(t_rng *r, int ndim, const int64_t *shape, int kind, bool ints,
                          int64_t cap)
{
    int perm[ND_MAX_DIMS];   /* the base's axis order, slowest first */
    for (int k = 0; k < ndim; k++)
        perm[k] = k;
    if (kind == TRANSPOSED) {
        perm[ndim - 2] = ndim - 1;
        perm[ndim - 1] = ndim - 2;
    } else if (kind >= STRIDED) {
        random_perm(r, ndim, perm);
    }
    bool loose = kind >= WINDOW, steps = kind >= STRIDED;
    int64_t b[ND_MAX_DIMS], step[ND_MAX_DIMS], bs[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    int64_t total = 1;
    for (int k = 0; k < ndim; k++) {
        int64_t m = steps && t_int(r, 0, 2) == 0 ? 2 : 1, slack = loose ? t_int(r, 0, 3) : 0;
        int64_t need = shape[k] > 0 ? (shape[k] - 1) * m + 1 : 0;
        if ((need + slack) * total > cap) {
            m = 1;
            slack = 0;
            need = shape[k];
        }
        step[k] = kind == REVERSED || (steps && t_int(r, 0, 2) == 0) ? -m : m;
        b[k] = need + slack;
        total *= b[k] > 0 ? b[k] : 1;
    }
    int64_t s = 1;
    for (int j = ndim - 1; j >= 0; j--) {
        bs[perm[j]] = s;
        s *= b[perm[j]] > 0 ? b[perm[j]] : 1;
    }
    int64_t pad = loose ? t_int(r, 0, 5) : 0, offset = pad;
    for (int k = 0; k < ndim; k++) {
        strides[k] = step[k] * bs[k];
        if (shape[k] == 0 || b[k] == 0)
            continue;
        int64_t span = (shape[k] - 1) * llabs(step[k]);
        int64_t first = t_int(r, 0, b[k] - 1 - span);
        offset += (step[k] < 0 ? b[k] - 1 - first : first) * bs[k];
    }
    if (kind == BROADCAST) {
        int pattern = (int)t_int(r, 0, ndim > 2 ? 3 : 2);
        if (pattern == 0 || pattern == 2)
            strides[ndim - 2] = 0;   /* every row the same */
        if (pattern == 1 || pattern == 2)
            strides[ndim - 1] = 0;   /* every column the same */
        for (int k = 0; pattern == 3 && k < ndim - 2; k++)
            strides[k] = 0;          /* every matrix of the batch the same */
    }
    return filled(r, pad + total + (loose ? t_int(r, 0, 3) : 0), ndim, shape, strides, offset,
                  ints);
}

/* Shorthand for a matrix (rows, cols). */
static nd_array gen_matrix(t_rng *r, int64_t rows, int64_t cols, int kind, bool ints)
{
    int64_t shape[2] = { rows, cols };
    return gen_input(r, 2, shape, kind, ints, INT64_C(1) << 20);
}

/* A matrix size for random cases: a tile edge (or 0) half of the time,
 * otherwise any of 0..130. */
static int64_t random_size(t_rng *r)
{
    if (t_int(r, 0, 1))
        return t_int(r, 0, 30) == 0 ? 0 : EDGES[t_int(r, 0, NEDGES - 1)];
    return t_int(r, 0, 130);
}

/* Shapes of a random product: c's batch of 0..3 axes of sizes 0..3 (0
 * rarely); a and b keep the last 0..all of its axes (one of them often
 * all), each either the size or 1.  The largest of m, n, k is halved until
 * batch * m * n * k <= max_macs. */
static void random_shapes(t_rng *r, int64_t max_macs, int *nda, int64_t *sa, int *ndb,
                          int64_t *sb)
{
    int64_t m = random_size(r), n = random_size(r), k = random_size(r), batch[3];
    int nb = (int)t_int(r, 0, 3);
    for (int j = 0; j < nb; j++)
        batch[j] = t_int(r, 0, 12) == 0 ? 0 : t_int(r, 1, 3);
    int keep_a = (int)t_int(r, 0, nb), keep_b = (int)t_int(r, 0, nb);
    if (t_int(r, 0, 1))
        *(t_int(r, 0, 1) ? &keep_a : &keep_b) = nb;
    for (int j = 0; j < keep_a; j++)
        sa[j] = t_int(r, 0, 2) == 0 ? 1 : batch[nb - keep_a + j];
    for (int j = 0; j < keep_b; j++)
        sb[j] = t_int(r, 0, 2) == 0 ? 1 : batch[nb - keep_b + j];
    int64_t count = t_numel(nb, batch);
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

/* The same view with its last two axes swapped: x.T. */
static nd_array transpose_of(const nd_array *x)
{
    int d = x->ndim;
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    memcpy(strides, x->strides, sizeof strides);
    shape[d - 2] = x->shape[d - 1];
    shape[d - 1] = x->shape[d - 2];
    strides[d - 2] = x->strides[d - 1];
    strides[d - 1] = x->strides[d - 2];
    nd_array t;
    T_OK(nd_as_strided(x, d, shape, strides, x->offset, &t));
    return t;
}

/* A compact copy of x (made here, not with lesson 2's nd_compact). */
static nd_array compact_copy(const nd_array *x)
{
    float *v = t_gather(x);
    nd_array c = t_array_of(x->ndim, x->shape, v);
    free(v);
    return c;
}

/* "PREFIX: a shape=... strides=... offset=..., b shape=..." into dst. */
static const char *describe_ab(char *dst, size_t cap, const char *prefix, const nd_array *a,
                               const nd_array *b)
{
    snprintf(dst, cap, "%s: a %s, b %s", prefix, t_describe(a), t_describe2(b));
    return dst;
}

/* ---------------------------------------------------------------------- */
/* The reference                                                          */
/* ---------------------------------------------------------------------- */

/* NumPy's matmul shape rule, written out: c's shape, or false when the
 * shapes do not fit (ndim >= 2 assumed). */
static bool product_shape(int nda, const int64_t *sa, int ndb, const int64_t *sb, int *ndc,
                          int64_t *sc)
{
    if (sa[nda - 1] != sb[ndb - 2])
        return false;
    int nd = nda > ndb ? nda : ndb;
    for (int j = 0; j < nd - 2; j++) {
        int ja = j - (nd - nda), jb = j - (nd - ndb);
        int64_t da = ja >= 0 ? sa[ja] : 1, db = jb >= 0 ? sb[jb] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        sc[j] = da == 1 ? db : da;
    }
    sc[nd - 2] = sa[nda - 2];
    sc[nd - 1] = sb[ndb - 1];
    *ndc = nd;
    return true;
}

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

/* a @ b computed here: c's shape, and per element of c (row-major) the
 * exact value and the error a float implementation may make. */
typedef struct {
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int64_t n;   /* elements of c */
    double *value, *bound;
} reference;

static reference reference_of(const nd_array *a, const nd_array *b)
{
    reference ref = { 0 };
    CHECK(product_shape(a->ndim, a->shape, b->ndim, b->shape, &ref.ndim, ref.shape),
          "test setup: the shapes of %s and %s do not fit", t_describe(a), t_describe2(b));
    int nb = ref.ndim - 2;
    int64_t m = a->shape[a->ndim - 2], k = a->shape[a->ndim - 1], n = b->shape[b->ndim - 1];
    int64_t batches = t_numel(nb, ref.shape);
    ref.n = batches * m * n;
    ref.value = t_alloc((size_t)ref.n * sizeof(double));
    ref.bound = t_alloc((size_t)ref.n * sizeof(double));
    float *va = t_gather(a), *vb = t_gather(b);
    for (int64_t t = 0; t < batches; t++) {
        int64_t idx[ND_MAX_DIMS];
        t_unravel(t, nb, ref.shape, idx);
        const float *ma = va + matrix_number(a, idx, nb) * m * k;
        const float *mb = vb + matrix_number(b, idx, nb) * k * n;
        double *v = ref.value + t * m * n, *bd = ref.bound + t * m * n;
        for (int64_t e = 0; e < m * n; e++)
            v[e] = bd[e] = 0;
        for (int64_t i = 0; i < m; i++) {
            for (int64_t p = 0; p < k; p++) {
                double x = ma[i * k + p];
                for (int64_t j = 0; j < n; j++) {
                    double term = x * mb[p * n + j];
                    v[i * n + j] += term;
                    bd[i * n + j] += fabs(term);
                }
            }
        }
        for (int64_t e = 0; e < m * n; e++)
            bd[e] = (double)k * FLT_EPSILON * bd[e] + 1e-30;
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

/* Leave freed memory of c's size full of NaN, twice over, so that malloc
 * likely hands it to the result: an element never written, or a sum that
 * does not start from 0, then shows as NaN rather than as a lucky 0.  (The
 * first free of a large block raises malloc's mmap threshold, so that the
 * second block, and then the result, come from the reused heap.) */
static void dirty_heap(int ndim, const int64_t *shape)
{
    for (int k = 0; k < 2; k++) {
        nd_array nan = t_nan_array(ndim, shape);
        nd_release(&nan);
    }
}

/* c must be a new compact array of `shape` on T_DEV, with a buffer of its
 * own of exactly numel floats and one reference. */
static void expect_new_compact(const nd_array *c, int ndim, const int64_t *shape,
                               const nd_array *a, const nd_array *b, const char *what)
{
    t_assert_shape(c, ndim, shape, what);
    int64_t n = t_numel(ndim, shape);
    CHECK(c->buf != NULL && c->buf != a->buf && c->buf != b->buf, "%s: the result must be "
          "a new array, not a view of an input", what);
    CHECK(c->buf->device == T_DEV, "%s: the result lives on %s, the inputs on %s", what,
          nd_device_name(c->buf->device), nd_device_name(T_DEV));
    CHECK(c->buf->refcount == 1, "%s: the result's buffer has refcount %" PRId64 ", expected "
          "1 (out's reference only)", what, c->buf->refcount);
    CHECK(c->buf->nbytes == (size_t)n * sizeof(float), "%s: the result's buffer has %zu "
          "bytes, expected exactly %" PRId64 " floats", what, c->buf->nbytes, n);
    CHECK(c->offset == 0, "%s: the result has offset %" PRId64 ", expected 0", what,
          c->offset);
    for (int64_t k = c->ndim - 1, s = 1; k >= 0 && n > 0; s *= c->shape[k--])
        CHECK(c->shape[k] == 1 || c->strides[k] == s, "%s: the result %s is not compact: "
              "stride %" PRId64 " on axis %d, expected %" PRId64, what, t_describe(c),
              c->strides[k], (int)k, s);
}

/* The compact c must hold the reference's values, each within its bound
 * (exactly when `exact`). */
static void expect_values(const nd_array *c, const reference *ref, bool exact, const char *what,
                          const char *hint)
{
    float *got = t_buffer(c, NULL);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < ref->n; i++) {
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
    char tol[160] = "exactly: the values are small integers, whose sums are exact in float";
    if (!exact)
        snprintf(tol, sizeof tol, "within %.3g, k * FLT_EPSILON * sum over p of |a[i][p] * "
                 "b[p][j]|", ref->bound[first]);
    ck_abort_msg("%s: %" PRId64 " of %" PRId64 " elements wrong; first at index %s: expected "
                 "%.9g (%s), got %.9g%s. Hint: %s", what, bad, ref->n,
                 t_index_str(ref->ndim, idx), ref->value[first], tol, g,
                 isnan(g) ? " (NaN: never written, not started from 0, or read from outside "
                 "an input view)" : "", hint);
}

/* An input as it was before a call: matmul reads its inputs, never
 * writes them or their structs, and keeps no reference. */
typedef struct {
    const nd_array *a;
    nd_array copy;
    float *before;
    int64_t size, refs;
} snap;

static snap snap_of(const nd_array *a)
{
    snap s = { .a = a, .copy = *a, .refs = a->buf->refcount };
    s.before = t_buffer(a, &s.size);
    return s;
}

static void expect_kept(snap *s, const char *name, const char *what)
{
    CHECK(t_same_struct(s->a, &s->copy) && s->a->buf->refcount == s->refs, "%s: the call "
          "changed input %s (now %s, refcount %" PRId64 ", was refcount %" PRId64 ")", what,
          name, t_describe(s->a), s->a->buf->refcount, s->refs);
    float *after = t_buffer(s->a, NULL);
    t_assert_floats(after, s->before, 1, &s->size, what, "matmul reads its inputs and never "
                    "writes them");
    free(after);
    free(s->before);
}

/* Run f(a, b): it must succeed with a new compact result of c's shape and
 * leave the inputs as they were.  Returns the result. */
static nd_array run_product(const impl *f, const nd_array *a, const nd_array *b,
                            const char *what)
{
    int ndc;
    int64_t sc[ND_MAX_DIMS];
    CHECK(product_shape(a->ndim, a->shape, b->ndim, b->shape, &ndc, sc), "test setup: %s: "
          "the shapes do not fit", what);
    snap sa = snap_of(a), sb = snap_of(b);
    dirty_heap(ndc, sc);
    nd_array c;
    t_poison(&c);
    nd_status s = f->fn(a, b, &c);
    CHECK(s == ND_OK, "%s(a, b) for %s returned %s: %s", f->name, what, nd_status_name(s),
          nd_last_error());
    char full[1600];
    snprintf(full, sizeof full, "%s(a, b) for %s", f->name, what);
    expect_new_compact(&c, ndc, sc, a, b, full);
    expect_kept(&sa, "a", full);
    expect_kept(&sb, "b", full);
    return c;
}

/* f(a, b) against the reference, exactly when `exact`. */
static void check_product(const impl *f, const nd_array *a, const nd_array *b, bool exact,
                          const char *what, const char *hint)
{
    reference ref = reference_of(a, b);
    nd_array c = run_product(f, a, b, what);
    char full[1600];
    snprintf(full, sizeof full, "%s(a, b) for %s", f->name, what);
    expect_values(&c, &ref, exact, full, hint);
    nd_release(&c);
    reference_free(&ref);
}

/* Two products must be equal element by element; `got` is read
 * transposed (its last two axes swapped) when `transposed`. */
static void expect_same(const nd_array *got, const nd_array *want, bool transposed,
                        const char *what, const char *hint)
{
    int d = want->ndim;
    int64_t m = want->shape[d - 2], n = want->shape[d - 1], count = nd_numel(want);
    float *g = t_gather(got), *w = t_gather(want);
    for (int64_t e = 0; e < count; e++) {
        int64_t t = e / (m * n), i = e / n % m, j = e % n;
        float x = transposed ? g[t * m * n + j * m + i] : g[e];
        if (x != w[e]) {
            int64_t idx[ND_MAX_DIMS];
            t_unravel(e, d, want->shape, idx);
            double gx = x, wx = w[e];
            free(g);
            free(w);
            ck_abort_msg("%s: differ at index %s: %.9g, expected %.9g (exactly: the values "
                         "are small integers). Hint: %s", what, t_index_str(d, idx), gx, wx,
                         hint);
        }
    }
    free(g);
    free(w);
}

/* ---------------------------------------------------------------------- */
/* Exact check of large integer products (Freivalds)                       */
/* ---------------------------------------------------------------------- */

/* c == a @ b exactly, a and b holding integers in [-4, 4], without an
 * O(m n k) reference: each element of c must be an integer of size at most
 * 16 k, and for three random integer vectors x, c x == a (b x) exactly in
 * int64.  A wrong element changes its row's product with all but a
 * vanishing fraction of the x; that row is then recomputed in full to name
 * its first wrong element. */
static void expect_product_large(const nd_array *c, const nd_array *a, const nd_array *b,
                                 t_rng *r, const char *what, const char *hint)
{
    int ndc;
    int64_t sc[ND_MAX_DIMS];
    CHECK(product_shape(a->ndim, a->shape, b->ndim, b->shape, &ndc, sc), "test setup");
    int nb = ndc - 2;
    int64_t m = sc[nb], n = sc[nb + 1], k = a->shape[a->ndim - 1];
    float *va = t_gather(a), *vb = t_gather(b), *vc = t_buffer(c, NULL);
    int64_t *x = t_alloc((size_t)n * sizeof(int64_t)), *y = t_alloc((size_t)k * sizeof(int64_t));
    int64_t batches = t_numel(nb, sc), wrong_row = -1, wrong_t = 0;
    for (int64_t t = 0; t < batches && wrong_row < 0; t++) {
        int64_t idx[ND_MAX_DIMS];
        t_unravel(t, nb, sc, idx);
        const float *ma = va + matrix_number(a, idx, nb) * m * k;
        const float *mb = vb + matrix_number(b, idx, nb) * k * n;
        const float *mc = vc + t * m * n;
        for (int64_t e = 0; e < m * n && wrong_row < 0; e++)
            if (!(fabsf(mc[e]) <= 16.0f * (float)k && mc[e] == floorf(mc[e])))
                wrong_row = e / n;
        for (int v = 0; v < 3 && wrong_row < 0; v++) {
            for (int64_t j = 0; j < n; j++)
                x[j] = t_int(r, -1000, 1000);
            for (int64_t p = 0; p < k; p++) {
                int64_t s = 0;
                for (int64_t j = 0; j < n; j++)
                    s += (int64_t)mb[p * n + j] * x[j];
                y[p] = s;
            }
            for (int64_t i = 0; i < m && wrong_row < 0; i++) {
                int64_t want = 0, got = 0;
                for (int64_t p = 0; p < k; p++)
                    want += (int64_t)ma[i * k + p] * y[p];
                for (int64_t j = 0; j < n; j++)
                    got += (int64_t)mc[i * n + j] * x[j];
                if (got != want)
                    wrong_row = i;
            }
        }
        wrong_t = t;
    }
    if (wrong_row >= 0) {   /* recompute the row to name the first wrong element */
        int64_t idx[ND_MAX_DIMS];
        t_unravel(wrong_t, nb, sc, idx);
        const float *ma = va + matrix_number(a, idx, nb) * m * k;
        const float *mb = vb + matrix_number(b, idx, nb) * k * n;
        const float *mc = vc + wrong_t * m * n;
        for (int64_t j = 0; j < n; j++) {
            double want = 0;
            for (int64_t p = 0; p < k; p++)
                want += (double)ma[wrong_row * k + p] * mb[p * n + j];
            if ((double)mc[wrong_row * n + j] != want) {
                idx[nb] = wrong_row;
                idx[nb + 1] = j;
                ck_abort_msg("%s: the element at index %s is %.9g, expected %.9g (exactly: "
                             "the values are small integers). Hint: %s", what,
                             t_index_str(ndc, idx), (double)mc[wrong_row * n + j], want,
                             hint);
            }
        }
        ck_abort_msg("%s: row %" PRId64 " of matrix %" PRId64 " of the result fails the "
                     "check, but no element differs (test error)", what, wrong_row, wrong_t);
    }
    free(va);
    free(vb);
    free(vc);
    free(x);
    free(y);
}

/* ---------------------------------------------------------------------- */
/* Refusals                                                               */
/* ---------------------------------------------------------------------- */

/* f(a, b, out) must fail with `want`, with a message naming the operation
 * (and, for ND_ERR_SHAPE, both shapes), *out untouched, and the inputs
 * (when they are arrays) as they were. */
static void expect_refused(const impl *f, const nd_array *a, const nd_array *b,
                           nd_status want, const char *what)
{
    bool ka = a != NULL && a->buf != NULL && a->ndim >= 0 && a->ndim <= ND_MAX_DIMS;
    bool kb = b != NULL && b->buf != NULL && b->ndim >= 0 && b->ndim <= ND_MAX_DIMS;
    nd_array ca = ka ? *a : (nd_array){ 0 }, cb = kb ? *b : (nd_array){ 0 }, out;
    int64_t ra = ka ? a->buf->refcount : 0, rb = kb ? b->buf->refcount : 0;
    t_poison(&out);
    nd_clear_error();
    nd_status s = f->fn(a, b, &out);
    const char *msg = nd_last_error();
    CHECK(s == want, "%s(%s) returned %s, expected %s%s%s", f->name, what, nd_status_name(s),
          nd_status_name(want), s == ND_OK ? "" : ": ", s == ND_OK ? "" : msg);
    CHECK(strstr(msg, "matmul") != NULL, "%s(%s) failed rightly, but its message \"%s\" does "
          "not name the operation 'matmul'", f->name, what, msg);
    if (want == ND_ERR_SHAPE) {
        char sa[200], sb[200];
        nd_shape_str(a->ndim, a->shape, sa, sizeof sa);
        nd_shape_str(b->ndim, b->shape, sb, sizeof sb);
        CHECK(strstr(msg, sa) && strstr(msg, sb), "%s(%s): the message \"%s\" should name "
              "both shapes, %s and %s", f->name, what, msg, sa, sb);
    }
    char call[800];
    snprintf(call, sizeof call, "%s(%s)", f->name, what);
    t_assert_untouched(&out, call);
    CHECK(!ka || (t_same_struct(a, &ca) && a->buf->refcount == ra), "%s failed but changed "
          "a or its refcount: check everything before taking references", call);
    CHECK(!kb || (t_same_struct(b, &cb) && b->buf->refcount == rb), "%s failed but changed "
          "b or its refcount: check everything before taking references", call);
}

/* f(&x, &y, &x) on a failing pair: x stays exactly as it was. */
static void expect_refused_in_place(const impl *f, nd_array *x, const nd_array *y,
                                    const char *what)
{
    nd_array before = *x;
    int64_t refs = x->buf->refcount;
    nd_status s = f->fn(x, y, x);
    CHECK(s != ND_OK, "%s(&x, &y, &x) succeeded for %s", f->name, what);
    CHECK(t_same_struct(x, &before) && x->buf == before.buf && x->buf->refcount == refs,
          "%s(&x, &y, &x) failed for %s but changed x (now %s): on an error leave out as it "
          "was, even when it is an input", f->name, what, t_describe(x));
}

/* ---------------------------------------------------------------------- */
/* Tile edges                                                             */
/* ---------------------------------------------------------------------- */

START_TEST(register_tile_edges)
{
    first_call(&TILED);
    first_call(&NAIVE);
    /* every pair (m, n) of EDGES, k small: every edge of every register
     * tile of a plausible size, in both directions */
    t_rng r = t_rng_new(50101);
    for (int f = 0; f < 2; f++) {
        for (int i = 0; i < NEDGES; i++) {
            for (int j = 0; j < NEDGES; j++) {
                int64_t m = EDGES[i], n = EDGES[j], k = t_int(&r, 1, 20);
                int ka = (i + 2 * j) % NKINDS, kb = (3 * i + j) % NKINDS;
                nd_array a = gen_matrix(&r, m, k, ka, true), b = gen_matrix(&r, k, n, kb, true);
                char what[1000], pre[100];
                snprintf(pre, sizeof pre, "(%" PRId64 ",%" PRId64 ") @ (%" PRId64 ",%" PRId64
                         ")", m, k, k, n);
                check_product(BOTH[f], &a, &b, true, describe_ab(what, sizeof what, pre, &a, &b),
                              TILED_HINT);
                nd_release(&a);
                nd_release(&b);
            }
        }
    }
}
END_TEST

START_TEST(depth_edges)
{
    first_call(&TILED);
    first_call(&NAIVE);
    /* k around every plausible KC (and unroll factor of the k loop) */
    static const int64_t depth[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64,
                                     65, 127, 128, 129, 191, 192, 193, 255, 256, 257, 383, 384,
                                     385, 511, 512, 513, 767, 768, 769, 1023, 1024, 1025 };
    t_rng r = t_rng_new(50201);
    for (int f = 0; f < 2; f++) {
        for (size_t d = 0; d < sizeof depth / sizeof depth[0]; d++) {
            for (int rep = 0; rep < 3; rep++) {
                int64_t k = depth[d], m = EDGES[t_int(&r, 0, 26)], n = EDGES[t_int(&r, 0, 29)];
                nd_array a = gen_matrix(&r, m, k, (int)t_int(&r, 0, NKINDS - 1), true);
                nd_array b = gen_matrix(&r, k, n, (int)t_int(&r, 0, NKINDS - 1), true);
                char what[1000], pre[100];
                snprintf(pre, sizeof pre, "k = %" PRId64 ": (%" PRId64 ",%" PRId64 ") @ (%"
                         PRId64 ",%" PRId64 ")", k, m, k, k, n);
                check_product(BOTH[f], &a, &b, true, describe_ab(what, sizeof what, pre, &a, &b),
                              "cut k into slices of KC and keep the last, shorter slice (kc = "
                              "min(KC, k - pc)); every slice ADDS its product to c, which "
                              "starts at 0");
                nd_release(&a);
                nd_release(&b);
            }
        }
    }
}
END_TEST

START_TEST(cache_block_edges)
{
    first_call(&TILED);
    first_call(&NAIVE);
    /* m around every plausible MC, with k sometimes past a KC slice; n
     * around every plausible NC */
    static const int64_t rows[] = { 71, 72, 73, 95, 96, 97, 119, 120, 121, 143, 144, 145, 191,
                                    192, 193, 255, 256, 257, 263, 264, 265, 287, 288, 289, 383,
                                    384, 385, 511, 512, 513, 527, 528, 529 };
    static const int64_t cols[] = { 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047,
                                    2048, 2049, 4095, 4096, 4097 };
    t_rng r = t_rng_new(50301);
    for (int f = 0; f < 2; f++) {
        char what[1000], pre[100];
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            int64_t m = rows[i], n = t_int(&r, 1, 40), k = i % 3 == 2 ? 257 : t_int(&r, 1, 30);
            nd_array a = gen_matrix(&r, m, k, (int)t_int(&r, 0, NKINDS - 1), true);
            nd_array b = gen_matrix(&r, k, n, (int)t_int(&r, 0, NKINDS - 1), true);
            snprintf(pre, sizeof pre, "m = %" PRId64 ": (%" PRId64 ",%" PRId64 ") @ (%" PRId64
                     ",%" PRId64 ")", m, m, k, k, n);
            check_product(BOTH[f], &a, &b, true, describe_ab(what, sizeof what, pre, &a, &b),
                          TILED_HINT);
            nd_release(&a);
            nd_release(&b);
        }
        for (size_t j = 0; j < sizeof cols / sizeof cols[0]; j++) {
            int64_t n = cols[j], m = t_int(&r, 1, 14), k = t_int(&r, 1, 30);
            nd_array a = gen_matrix(&r, m, k, (int)t_int(&r, 0, NKINDS - 1), true);
            nd_array b = gen_matrix(&r, k, n, (int)t_int(&r, 0, NKINDS - 1), true);
            snprintf(pre, sizeof pre, "n = %" PRId64 ": (%" PRId64 ",%" PRId64 ") @ (%" PRId64
                     ",%" PRId64 ")", n, m, k, k, n);
            check_product(BOTH[f], &a, &b, true, describe_ab(what, sizeof what, pre, &a, &b),
                          TILED_HINT);
            nd_release(&a);
            nd_release(&b);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Random products on any views                                           */
/* ---------------------------------------------------------------------- */

/* `cases` random products for f: sizes 0..130, any views, batches
 * broadcast; every other case small integers (compared exactly), the
 * others floats (within the bound). */
static void random_products(const impl *f, uint64_t seed, int cases)
{
    t_rng r = t_rng_new(seed);
    for (int c = 0; c < cases; c++) {
        int nda, ndb;
        int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        random_shapes(&r, 200000, &nda, sa, &ndb, sb);
        bool ints = c % 2 == 0;
        nd_array a = gen_input(&r, nda, sa, (int)t_int(&r, 0, NKINDS - 1), ints, 1 << 20);
        nd_array b = gen_input(&r, ndb, sb, (int)t_int(&r, 0, NKINDS - 1), ints, 1 << 20);
        char pre[60], what[1000];
        snprintf(pre, sizeof pre, "random case %d (%s)", c, ints ? "integers" : "floats");
        check_product(f, &a, &b, ints, describe_ab(what, sizeof what, pre, &a, &b), VIEWS_HINT);
        nd_release(&a);
        nd_release(&b);
    }
}

START_TEST(naive_random_views)
{
    first_call(&NAIVE);
    random_products(&NAIVE, 50401, 400);
}
END_TEST

START_TEST(tiled_random_views)
{
    first_call(&TILED);
    random_products(&TILED, 50501, 600);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Batches                                                                */
/* ---------------------------------------------------------------------- */

START_TEST(batch_shapes_exhaustive)
{
    first_call(&TILED);
    first_call(&NAIVE);
    /* every batch shape of 0..3 axes with sizes 0..2: 1 + 3 + 9 + 27 */
    enum { NSHAPES = 40 };
    int nd[NSHAPES];
    int64_t sh[NSHAPES][3];
    for (int i = 0, d = 0; d <= 3; d++) {
        int count = d == 0 ? 1 : d == 1 ? 3 : d == 2 ? 9 : 27;
        for (int x = 0; x < count; x++, i++) {
            nd[i] = d;
            for (int k = 0, y = x; k < d; k++, y /= 3)
                sh[i][k] = y % 3;
        }
    }
    t_rng r = t_rng_new(50601);
    for (int f = 0; f < 2; f++) {
        for (int i = 0; i < NSHAPES; i++) {
            for (int j = 0; j < NSHAPES; j++) {
                int64_t m = t_int(&r, 1, 5), k = t_int(&r, 0, 4), n = t_int(&r, 1, 5);
                int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS], sc[ND_MAX_DIMS];
                memcpy(sa, sh[i], sizeof sh[i]);
                memcpy(sb, sh[j], sizeof sh[j]);
                sa[nd[i]] = m;
                sa[nd[i] + 1] = k;
                sb[nd[j]] = k;
                sb[nd[j] + 1] = n;
                int nda = nd[i] + 2, ndb = nd[j] + 2, ndc;
                nd_array a = gen_input(&r, nda, sa, (int)t_int(&r, 0, NKINDS - 1), true, 4096);
                nd_array b = gen_input(&r, ndb, sb, (int)t_int(&r, 0, NKINDS - 1), true, 4096);
                char what[1000], pre[100], ta[100], tb[100];
                snprintf(pre, sizeof pre, "%s @ %s", nd_shape_str(nda, sa, ta, sizeof ta),
                         nd_shape_str(ndb, sb, tb, sizeof tb));
                describe_ab(what, sizeof what, pre, &a, &b);
                if (product_shape(nda, sa, ndb, sb, &ndc, sc)) {
                    check_product(BOTH[f], &a, &b, true, what, BATCH_HINT);
                } else {
                    expect_refused(BOTH[f], &a, &b, ND_ERR_SHAPE, what);
                }
                nd_release(&a);
                nd_release(&b);
            }
        }
    }
}
END_TEST

/* The 2-D view of matrix `t` (row-major over c's batch shape, nb axes) of
 * v as c's batch broadcasting reads it. */
static nd_array matrix_view(const nd_array *v, int64_t t, int nb, const int64_t *batch)
{
    int64_t idx[ND_MAX_DIMS], off = v->offset;
    t_unravel(t, nb, batch, idx);
    int lead = nb - (v->ndim - 2);
    for (int j = 0; j < v->ndim - 2; j++)
        off += (v->shape[j] == 1 ? 0 : idx[j + lead]) * v->strides[j];
    int d = v->ndim;
    nd_array out;
    T_OK(nd_as_strided(v, 2, v->shape + d - 2, v->strides + d - 2, off, &out));
    return out;
}

START_TEST(batched_equals_per_matrix)
{
    first_call(&TILED);
    first_call(&NAIVE);
    t_rng r = t_rng_new(50701);
    for (int f = 0; f < 2; f++) {
        for (int c = 0; c < 80; c++) {
            int nda, ndb, ndc;
            int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS], sc[ND_MAX_DIMS];
            do
                random_shapes(&r, 60000, &nda, sa, &ndb, sb);
            while (nda + ndb == 4);   /* a batch, at least */
            product_shape(nda, sa, ndb, sb, &ndc, sc);
            nd_array a = gen_input(&r, nda, sa, (int)t_int(&r, 0, NKINDS - 1), true, 1 << 20);
            nd_array b = gen_input(&r, ndb, sb, (int)t_int(&r, 0, NKINDS - 1), true, 1 << 20);
            char what[1000], pre[60];
            snprintf(pre, sizeof pre, "case %d", c);
            describe_ab(what, sizeof what, pre, &a, &b);
            nd_array whole = run_product(BOTH[f], &a, &b, what);
            int nb = ndc - 2;
            int64_t m = sc[nb], n = sc[nb + 1], batches = t_numel(nb, sc);
            for (int64_t t = 0; t < batches; t++) {
                nd_array x = matrix_view(&a, t, nb, sc), y = matrix_view(&b, t, nb, sc);
                nd_array one = run_product(BOTH[f], &x, &y, what), part;
                T_OK(nd_as_strided(&whole, 2, sc + nb, whole.strides + nb, t * m * n, &part));
                int64_t idx[ND_MAX_DIMS];
                t_unravel(t, nb, sc, idx);
                char msg[1400];
                snprintf(msg, sizeof msg, "%s(a, b) for %s: matrix %s of the batch against "
                         "the product of the two matrices it comes from", BOTH[f]->name, what,
                         t_index_str(nb, idx));
                expect_same(&part, &one, false, msg, BATCH_HINT);
                nd_release(&part);
                nd_release(&one);
                nd_release(&x);
                nd_release(&y);
            }
            nd_release(&whole);
            nd_release(&a);
            nd_release(&b);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Properties                                                             */
/* ---------------------------------------------------------------------- */

START_TEST(transpose_identity)
{
    first_call(&TILED);
    first_call(&NAIVE);
    /* (A @ B).T == B.T @ A.T, exactly with integers: the transposes are
     * views (last two strides swapped), so every layout turns into
     * another */
    t_rng r = t_rng_new(50801);
    for (int f = 0; f < 2; f++) {
        for (int c = 0; c < 120; c++) {
            int nda, ndb;
            int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
            random_shapes(&r, 100000, &nda, sa, &ndb, sb);
            nd_array a = gen_input(&r, nda, sa, (int)t_int(&r, 0, NKINDS - 1), true, 1 << 20);
            nd_array b = gen_input(&r, ndb, sb, (int)t_int(&r, 0, NKINDS - 1), true, 1 << 20);
            nd_array at = transpose_of(&a), bt = transpose_of(&b);
            char what[1000], pre[60];
            snprintf(pre, sizeof pre, "case %d, A @ B", c);
            describe_ab(what, sizeof what, pre, &a, &b);
            reference ref = reference_of(&a, &b);
            nd_array ab = run_product(BOTH[f], &a, &b, what);
            expect_values(&ab, &ref, true, what, VIEWS_HINT);
            snprintf(pre, sizeof pre, "case %d, B.T @ A.T", c);
            describe_ab(what, sizeof what, pre, &bt, &at);
            nd_array ba = run_product(BOTH[f], &bt, &at, what);
            char msg[1400];
            snprintf(msg, sizeof msg, "%s: (B.T @ A.T).T against A @ B", what);
            expect_same(&ba, &ab, true, msg, "(A@B).T == B.T@A.T: a transposed view is only "
                        "swapped strides, so read both inputs through their strides");
            reference_free(&ref);
            nd_release(&ab);
            nd_release(&ba);
            nd_release(&at);
            nd_release(&bt);
            nd_release(&a);
            nd_release(&b);
        }
    }
}
END_TEST

/* An identity matrix (n, n): compact, a Toeplitz view of 2n-1 floats
 * (element (i, j) at n-1-i+j: strides (-1, 1)), or either broadcast as a
 * batch of 3 with stride 0. */
static nd_array identity(int64_t n, int form)
{
    int64_t size = 2 * n - 1 > 0 ? 2 * n - 1 : 1;
    float *v = t_floats(n * n > size ? n * n : size);
    int64_t shape[3] = { 3, n, n }, strides[3] = { 0, n, 1 }, offset = 0;
    if (form % 2 == 0) {
        size = n * n;
        for (int64_t e = 0; e < size; e++)
            v[e] = e / n == e % n ? 1.0f : 0.0f;
    } else {
        for (int64_t e = 0; e < size; e++)
            v[e] = e == n - 1 ? 1.0f : 0.0f;
        strides[1] = -1;
        offset = n > 0 ? n - 1 : 0;
    }
    nd_array out = form < 2 ? t_view_of(size, v, 2, shape + 1, strides + 1, offset)
                            : t_view_of(size, v, 3, shape, strides, offset);
    free(v);
    return out;
}

START_TEST(identity_exact)
{
    first_call(&TILED);
    first_call(&NAIVE);
    /* A @ I == A and I @ A == A exactly, with random floats: each element
     * is one product by 1 plus zeros, exact in any order */
    static const char *const forms[] = { "compact", "a Toeplitz view (strides (-1,1))",
                                         "compact, a batch of 3 with stride 0",
                                         "a Toeplitz view, a batch of 3 with stride 0" };
    t_rng r = t_rng_new(50901);
    for (int f = 0; f < 2; f++) {
        for (int c = 0; c < 60; c++) {
            int64_t shape[3] = { 2, EDGES[t_int(&r, 0, NEDGES - 1)],
                                 EDGES[t_int(&r, 0, NEDGES - 1)] };
            int form = c % 4, nd = form < 2 && c % 3 == 0 ? 3 : 2;
            nd_array a = gen_input(&r, nd, shape + 3 - nd, (int)t_int(&r, 0, NKINDS - 1), false,
                                   1 << 20);
            nd_array left = identity(shape[1], form), right = identity(shape[2], form);
            nd_array want = compact_copy(&a);
            char what[1000], pre[200];
            for (int side = 0; side < 2; side++) {
                const nd_array *x = side ? &left : &a, *y = side ? &a : &right;
                snprintf(pre, sizeof pre, "case %d, %s with I %s", c, side ? "I @ A" : "A @ I",
                         forms[form]);
                describe_ab(what, sizeof what, pre, x, y);
                nd_array got = run_product(BOTH[f], x, y, what);
                if (got.ndim == want.ndim) {
                    expect_same(&got, &want, false, what, "read the identity through its "
                                "strides too: (-1, 1) is a legal layout");
                } else {   /* a batch of 3 of the same product */
                    for (int64_t t = 0; t < 3; t++) {
                        nd_array part;
                        T_OK(nd_as_strided(&got, 2, got.shape + 1, got.strides + 1,
                                           t * nd_numel(&want), &part));
                        expect_same(&part, &want, false, what, BATCH_HINT);
                        nd_release(&part);
                    }
                }
                nd_release(&got);
            }
            nd_release(&want);
            nd_release(&left);
            nd_release(&right);
            nd_release(&a);
        }
    }
}
END_TEST

START_TEST(broadcast_equals_compact)
{
    first_call(&TILED);
    first_call(&NAIVE);
    /* an operand with stride-0 rows, columns or batch gives exactly what
     * its compact copy gives */
    t_rng r = t_rng_new(51001);
    for (int f = 0; f < 2; f++) {
        for (int c = 0; c < 100; c++) {
            int nda, ndb;
            int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
            random_shapes(&r, 100000, &nda, sa, &ndb, sb);
            int side = c % 2;
            nd_array a = gen_input(&r, nda, sa, side ? (int)t_int(&r, 0, NKINDS - 1) : BROADCAST,
                                   true, 1 << 20);
            nd_array b = gen_input(&r, ndb, sb, side ? BROADCAST : (int)t_int(&r, 0, NKINDS - 1),
                                   true, 1 << 20);
            nd_array *bc = side ? &b : &a, copy = compact_copy(bc);
            char what[1000], pre[80];
            snprintf(pre, sizeof pre, "case %d, %s broadcast", c, side ? "b" : "a");
            describe_ab(what, sizeof what, pre, &a, &b);
            nd_array got = run_product(BOTH[f], &a, &b, what);
            nd_array want = run_product(BOTH[f], side ? &a : &copy, side ? &copy : &b, what);
            char msg[1400];
            snprintf(msg, sizeof msg, "%s: the product against the product of %s's compact "
                     "copy", what, side ? "b" : "a");
            expect_same(&got, &want, false, msg, "a stride of 0 repeats one row, column or "
                        "matrix: pack element (i, p) from offset + i*rs + p*cs with the real "
                        "strides, never from assumed compact ones");
            reference ref = reference_of(&a, &b);
            expect_values(&got, &ref, true, msg, VIEWS_HINT);
            reference_free(&ref);
            nd_release(&got);
            nd_release(&want);
            nd_release(&copy);
            nd_release(&a);
            nd_release(&b);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Aliasing                                                               */
/* ---------------------------------------------------------------------- */

START_TEST(same_buffer_inputs)
{
    first_call(&TILED);
    first_call(&NAIVE);
    /* a @ a.T, a.T @ a, and a @ a for a square a: both inputs are views of
     * one buffer; then two overlapping windows of one buffer */
    t_rng r = t_rng_new(51101);
    for (int f = 0; f < 2; f++) {
        for (int c = 0; c < 40; c++) {
            int64_t shape[3] = { t_int(&r, 1, 2), EDGES[t_int(&r, 0, NEDGES - 1)],
                                 EDGES[t_int(&r, 0, NEDGES - 1)] };
            int nd = c % 4 == 3 ? 3 : 2;
            bool ints = c % 2 == 0;
            nd_array a = gen_input(&r, nd, shape + 3 - nd, (int)t_int(&r, 0, NKINDS - 1), ints,
                                   1 << 20);
            nd_array at = transpose_of(&a);
            char what[1000], pre[80];
            snprintf(pre, sizeof pre, "case %d, a @ a.T", c);
            check_product(BOTH[f], &a, &at, ints, describe_ab(what, sizeof what, pre, &a, &at),
                          VIEWS_HINT);
            snprintf(pre, sizeof pre, "case %d, a.T @ a", c);
            check_product(BOTH[f], &at, &a, ints, describe_ab(what, sizeof what, pre, &at, &a),
                          VIEWS_HINT);
            nd_release(&at);
            nd_release(&a);

            /* a square a, and a @ a with one struct as both arguments */
            int64_t sq[2] = { shape[1], shape[1] };
            a = gen_matrix(&r, sq[0], sq[1], (int)t_int(&r, 0, NKINDS - 1), ints);
            snprintf(pre, sizeof pre, "case %d, a @ a", c);
            check_product(BOTH[f], &a, &a, ints, describe_ab(what, sizeof what, pre, &a, &a),
                          VIEWS_HINT);
            nd_release(&a);

            /* rows 0..m-1 and rows s..s+m-1 of one (m+s, m) window, the
             * second transposed */
            int64_t m = shape[2], s = t_int(&r, 0, 3), big[2] = { m + s, m };
            nd_array base = gen_matrix(&r, big[0], big[1], WINDOW, ints), x, y;
            T_OK(nd_as_strided(&base, 2, (int64_t[]){ m, m }, base.strides, base.offset, &x));
            T_OK(nd_as_strided(&base, 2, (int64_t[]){ m, m },
                               (int64_t[]){ base.strides[1], base.strides[0] },
                               base.offset + s * base.strides[0], &y));
            snprintf(pre, sizeof pre, "case %d, overlapping windows of one buffer", c);
            check_product(BOTH[f], &x, &y, ints, describe_ab(what, sizeof what, pre, &x, &y),
                          VIEWS_HINT);
            nd_release(&x);
            nd_release(&y);
            nd_release(&base);
        }
    }
}
END_TEST

/* One call f(x, y, out) with out == &x, &y or both (which 0, 1, 2): out
 * becomes the product and the old reference goes (exactly once). */
static void check_in_place(const impl *f, nd_array *x, nd_array *y, int which, bool keep_old,
                           const char *what)
{
    static const char *const calls[] = { "f(&x, &y, &x)", "f(&x, &y, &y)", "f(&x, &x, &x)" };
    const nd_array *rhs = which == 2 ? x : y;
    nd_array *out = which == 1 ? y : x;
    char full[1400];
    snprintf(full, sizeof full, "%s as %s, %s", f->name, calls[which], what);
    reference ref = reference_of(x, rhs);
    nd_array keep = { 0 }, other = which == 1 ? *x : *y;
    int64_t refs = 0, other_refs = which == 2 ? 0 : other.buf->refcount;
    if (keep_old) {
        T_OK(nd_share(out, &keep));
        refs = keep.buf->refcount;
    }
    dirty_heap(ref.ndim, ref.shape);
    nd_status s = f->fn(x, rhs, out);
    CHECK(s == ND_OK, "%s returned %s: %s", full, nd_status_name(s), nd_last_error());
    if (keep_old) {
        CHECK(out->buf != keep.buf && keep.buf->refcount == refs - 1, "%s: out's old buffer "
              "has refcount %" PRId64 ", expected %" PRId64 ": release out's old reference "
              "once, after computing into a new array", full, keep.buf->refcount, refs - 1);
    }
    if (which != 2)
        CHECK(t_same_struct(which == 1 ? x : y, &other) && other.buf->refcount == other_refs,
              "%s: the input that is not out changed", full);
    expect_new_compact(out, ref.ndim, ref.shape, &keep, which == 1 ? x : y, full);
    expect_values(out, &ref, true, full, "compute into a new array first; only then release "
                  "out's old reference (it may be the last one of an input's buffer) and "
                  "store the result");
    nd_release(&keep);
    reference_free(&ref);
}

START_TEST(out_aliases_input)
{
    first_call(&TILED);
    first_call(&NAIVE);
    t_rng r = t_rng_new(51201);
    for (int f = 0; f < 2; f++) {
        for (int c = 0; c < 60; c++) {
            int which = c % 3;
            bool keep_old = c % 6 < 3, batched = c % 4 == 1;
            int64_t m = EDGES[t_int(&r, 0, 25)], k = EDGES[t_int(&r, 0, 25)];
            int64_t n = which == 2 ? k : EDGES[t_int(&r, 0, 25)];
            if (which == 2)
                m = k;
            /* x (m,k) or a broadcast batch (2,1,m,k); y (k,n) or (3,k,n) */
            int64_t sx[4] = { 2, 1, m, k }, sy[3] = { 3, k, n };
            int ndx = batched && which != 2 ? 4 : 2, ndy = batched && which != 2 ? 3 : 2;
            nd_array x = gen_input(&r, ndx, sx + 4 - ndx, (int)t_int(&r, 0, NKINDS - 1), true,
                                   1 << 20);
            nd_array y = gen_input(&r, ndy, sy + 3 - ndy, (int)t_int(&r, 0, NKINDS - 1), true,
                                   1 << 20);
            char what[1000], pre[100];
            snprintf(pre, sizeof pre, "case %d%s", c, keep_old ? ", out's buffer held "
                     "elsewhere too" : ", out holding the only reference to its buffer");
            describe_ab(what, sizeof what, pre, &x, which == 2 ? &x : &y);
            check_in_place(BOTH[f], &x, &y, which, keep_old, what);
            nd_release(&x);
            nd_release(&y);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Empty products                                                         */
/* ---------------------------------------------------------------------- */

START_TEST(empty_and_zero_depth)
{
    first_call(&TILED);
    first_call(&NAIVE);
    /* k == 0 is the empty sum: zeros, of the right shape (dirty_heap makes
     * sure they are not zeros left in memory by chance); m, n or a batch
     * axis of 0: an empty result of the right shape */
    static const struct {
        int nda, ndb;
        int64_t sa[4], sb[4];
    } cases[] = {
        { 2, 2, { 3, 0 }, { 0, 4 } },
        { 2, 2, { 1, 0 }, { 0, 1 } },
        { 2, 2, { 300, 0 }, { 0, 700 } },
        { 2, 2, { 13, 0 }, { 0, 33 } },
        { 4, 3, { 2, 1, 37, 0 }, { 3, 0, 33 } },
        { 2, 4, { 5, 0 }, { 2, 2, 0, 129 } },
        { 2, 2, { 0, 5 }, { 5, 3 } },
        { 2, 2, { 4, 5 }, { 5, 0 } },
        { 2, 2, { 0, 0 }, { 0, 0 } },
        { 2, 2, { 0, 300 }, { 300, 0 } },
        { 3, 2, { 0, 5, 3 }, { 3, 4 } },
        { 4, 3, { 2, 0, 5, 3 }, { 1, 3, 4 } },
        { 3, 4, { 1, 5, 3 }, { 0, 2, 3, 4 } },
        { 3, 3, { 0, 5, 0 }, { 1, 0, 4 } },
    };
    t_rng r = t_rng_new(51301);
    for (int f = 0; f < 2; f++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            for (int kind = 0; kind < NKINDS; kind++) {
                nd_array a = gen_input(&r, cases[c].nda, cases[c].sa, kind, false, 1 << 20);
                nd_array b = gen_input(&r, cases[c].ndb, cases[c].sb, NKINDS - 1 - kind, false,
                                       1 << 20);
                char what[1000], pre[100], ta[100], tb[100];
                snprintf(pre, sizeof pre, "%s @ %s", nd_shape_str(cases[c].nda, cases[c].sa,
                         ta, sizeof ta), nd_shape_str(cases[c].ndb, cases[c].sb, tb, sizeof tb));
                check_product(BOTH[f], &a, &b, true, describe_ab(what, sizeof what, pre, &a, &b),
                              "k == 0 is the empty sum: write zeros (clear c first, or "
                              "start each sum from 0); m, n or a batch of 0 is an empty result "
                              "of the right shape, not an error");
                nd_release(&a);
                nd_release(&b);
            }
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Larger products                                                        */
/* ---------------------------------------------------------------------- */

START_TEST(mid_sizes)
{
    first_call(&TILED);
    first_call(&NAIVE);
    /* sizes past every register tile and one or two cache blocks, in each
     * of m, n and k, both functions */
    static const struct {
        int nda, ndb;
        int64_t sa[3], sb[3];
    } cases[] = {
        { 2, 2, { 257, 513 }, { 513, 129 } },
        { 2, 2, { 129, 257 }, { 257, 513 } },
        { 2, 2, { 513, 129 }, { 129, 257 } },
        { 3, 2, { 2, 130, 131 }, { 131, 129 } },
    };
    t_rng r = t_rng_new(51401);
    for (int f = 0; f < 2; f++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            bool ints = c % 2 == 0;
            int ka = (int)((c + 2 * f) % NKINDS), kb = (int)((c + 3 + f) % NKINDS);
            nd_array a = gen_input(&r, cases[c].nda, cases[c].sa, ka, ints, 1 << 21);
            nd_array b = gen_input(&r, cases[c].ndb, cases[c].sb, kb, ints, 1 << 21);
            char what[1000], pre[60];
            snprintf(pre, sizeof pre, "mid-size case %zu (%s)", c, ints ? "integers" : "floats");
            check_product(BOTH[f], &a, &b, ints, describe_ab(what, sizeof what, pre, &a, &b),
                          TILED_HINT);
            nd_release(&a);
            nd_release(&b);
        }
    }
}
END_TEST

START_TEST(large_cache_blocks)
{
    first_call(&TILED);
    /* several KC slices, MC blocks and (in the third) NC blocks of every
     * plausible size, exactly: integers, checked as described at the top */
    static const struct {
        const char *what;
        int nda, ndb;
        int64_t sa[4], sb[4];
        int ka, kb;
    } cases[] = {
        { "(600,700) @ (700,900), compact", 2, 2, { 600, 700 }, { 700, 900 }, COMPACT,
          COMPACT },
        { "(530,520) @ (520,300), a transposed, b reversed", 2, 2, { 530, 520 }, { 520, 300 },
          TRANSPOSED, REVERSED },
        { "(40,300) @ (300,4200), a in a larger array, b transposed", 2, 2, { 40, 300 },
          { 300, 4200 }, WINDOW, TRANSPOSED },
        { "(3,1,270,300) @ (2,300,140), random views", 4, 3, { 3, 1, 270, 300 }, { 2, 300, 140 },
          STRIDED, STRIDED },
    };
    t_rng r = t_rng_new(51501);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array a = gen_input(&r, cases[c].nda, cases[c].sa, cases[c].ka, true, 1 << 22);
        nd_array b = gen_input(&r, cases[c].ndb, cases[c].sb, cases[c].kb, true, 1 << 22);
        char what[1000];
        describe_ab(what, sizeof what, cases[c].what, &a, &b);
        nd_array got = run_product(&TILED, &a, &b, what);
        char full[1200];
        snprintf(full, sizeof full, "nd_matmul(a, b) for %s", what);
        expect_product_large(&got, &a, &b, &r, full, "each KC slice of k adds its product to "
                             "c (never assigns); pack a's MC x KC block again for every slice "
                             "pc and block ic, and b's panel for every pc and jc; offset c by "
                             "(ic, jc) with row stride n");
        nd_release(&got);
        nd_release(&a);
        nd_release(&b);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */
/* ---------------------------------------------------------------------- */

START_TEST(shape_errors)
{
    first_call(&TILED);
    first_call(&NAIVE);
    static const struct {
        int nda, ndb;
        int64_t sa[8], sb[8];
        const char *why;
    } bad[] = {
        { 2, 2, { 3, 4 }, { 5, 6 }, "inner sizes 4 and 5" },
        { 3, 3, { 2, 3, 4 }, { 3, 4, 5 }, "batch sizes 2 and 3" },
        { 3, 3, { 2, 3, 4 }, { 2, 5, 6 }, "inner sizes 4 and 5, batched" },
        { 3, 2, { 5, 2, 3 }, { 4, 3 }, "inner sizes 3 and 4, b broadcast" },
        { 2, 2, { 3, 0 }, { 4, 5 }, "inner sizes 0 and 4" },
        { 2, 2, { 3, 4 }, { 0, 5 }, "inner sizes 4 and 0" },
        { 2, 2, { 0, 3 }, { 4, 0 }, "inner sizes 3 and 4, an empty result" },
        { 3, 3, { 0, 3, 4 }, { 2, 4, 5 }, "batch sizes 0 and 2" },
        { 4, 3, { 2, 2, 3, 4 }, { 3, 4, 5 }, "batch sizes 2 and 3, aligned at the right" },
        { 4, 4, { 2, 1, 3, 4 }, { 3, 1, 4, 5 }, "batch sizes 2 and 3 on the first axis" },
        { 8, 8, { 1, 1, 1, 1, 1, 2, 3, 4 }, { 1, 1, 1, 1, 1, 3, 4, 5 },
          "8 axes, batch sizes 2 and 3 on the last batch axis" },
        { 8, 3, { 2, 1, 1, 1, 1, 1, 3, 4 }, { 2, 5, 5 }, "8 axes, inner sizes 4 and 5" },
    };
    t_rng r = t_rng_new(51601);
    for (int f = 0; f < 2; f++) {
        for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
            nd_array a = gen_input(&r, bad[c].nda, bad[c].sa, (int)(c % NKINDS), false, 1 << 16);
            nd_array b = gen_input(&r, bad[c].ndb, bad[c].sb, (int)((c + 3) % NKINDS), false,
                                   1 << 16);
            char what[1000], pre[200], ta[100], tb[100];
            snprintf(pre, sizeof pre, "%s @ %s, %s", nd_shape_str(bad[c].nda, bad[c].sa, ta,
                     sizeof ta), nd_shape_str(bad[c].ndb, bad[c].sb, tb, sizeof tb), bad[c].why);
            describe_ab(what, sizeof what, pre, &a, &b);
            expect_refused(BOTH[f], &a, &b, ND_ERR_SHAPE, what);
            expect_refused_in_place(BOTH[f], &a, &b, what);
            nd_release(&a);
            nd_release(&b);
        }
        /* random mismatches: the inner sizes differ, or one batch axis */
        for (int c = 0; c < 200; c++) {
            int nda, ndb, ndc;
            int64_t sa[ND_MAX_DIMS], sb[ND_MAX_DIMS], sc[ND_MAX_DIMS];
            random_shapes(&r, 20000, &nda, sa, &ndb, sb);
            if (c % 2 == 0 || nda == 2 || ndb == 2) {
                sb[ndb - 2] = sa[nda - 1] + t_int(&r, 1, 3) * (t_int(&r, 0, 1) && sa[nda - 1] > 3
                                                                 ? -1 : 1);
            } else {
                int j = (int)t_int(&r, 1, nda < ndb ? nda - 2 : ndb - 2);
                sa[nda - 2 - j] = 2;
                sb[ndb - 2 - j] = t_int(&r, 0, 1) ? 0 : 3;
            }
            CHECK(!product_shape(nda, sa, ndb, sb, &ndc, sc), "test setup");
            nd_array a = gen_input(&r, nda, sa, (int)t_int(&r, 0, NKINDS - 1), false, 1 << 16);
            nd_array b = gen_input(&r, ndb, sb, (int)t_int(&r, 0, NKINDS - 1), false, 1 << 16);
            char what[1000], pre[60];
            snprintf(pre, sizeof pre, "random mismatch %d", c);
            describe_ab(what, sizeof what, pre, &a, &b);
            expect_refused(BOTH[f], &a, &b, ND_ERR_SHAPE, what);
            nd_release(&a);
            nd_release(&b);
        }
    }
}
END_TEST

START_TEST(argument_errors)
{
    first_call(&TILED);
    first_call(&NAIVE);
    for (int f = 0; f < 2; f++) {
        const impl *im = BOTH[f];
        /* fewer than 2 axes, in a, b or both: ND_ERR_ARG even where NumPy
         * would take a 1-D vector */
        static const struct {
            int nda, ndb;
            int64_t sa[2], sb[2];
            const char *why;
        } few[] = {
            { 1, 2, { 4 }, { 4, 3 }, "a 1-D a" },
            { 2, 1, { 3, 4 }, { 4 }, "a 1-D b" },
            { 1, 1, { 4 }, { 4 }, "two 1-D vectors" },
            { 0, 2, { 0 }, { 1, 1 }, "a scalar a" },
            { 2, 0, { 1, 1 }, { 0 }, "a scalar b" },
            { 0, 0, { 0 }, { 0 }, "two scalars" },
            { 1, 2, { 0 }, { 0, 3 }, "an empty 1-D a" },
            { 2, 1, { 2, 3 }, { 5 }, "a 1-D b of the wrong size" },
        };
        for (size_t c = 0; c < sizeof few / sizeof few[0]; c++) {
            nd_array x = t_arange(few[c].nda, few[c].sa), y = t_arange(few[c].ndb, few[c].sb);
            char what[300], ta[100], tb[100];
            snprintf(what, sizeof what, "a of shape %s, b of shape %s: %s",
                     nd_shape_str(few[c].nda, few[c].sa, ta, sizeof ta),
                     nd_shape_str(few[c].ndb, few[c].sb, tb, sizeof tb), few[c].why);
            expect_refused(im, &x, &y, ND_ERR_ARG, what);
            expect_refused_in_place(im, &x, &y, what);
            nd_release(&x);
            nd_release(&y);
        }
        /* NULL, released and broken arrays; a NULL out */
        int64_t s34[2] = { 3, 4 }, s45[2] = { 4, 5 };
        nd_array a = t_arange(2, s34), b = t_arange(2, s45), gone = t_arange(2, s34);
        nd_array wide = a, neg = a;
        nd_release(&gone);
        wide.ndim = ND_MAX_DIMS + 1;
        neg.ndim = -1;
        expect_refused(im, NULL, &b, ND_ERR_ARG, "NULL, b");
        expect_refused(im, &a, NULL, ND_ERR_ARG, "a, NULL");
        expect_refused(im, NULL, NULL, ND_ERR_ARG, "NULL, NULL");
        expect_refused(im, &gone, &b, ND_ERR_ARG, "a released a, b");
        expect_refused(im, &a, &gone, ND_ERR_ARG, "a, a released b");
        expect_refused(im, &wide, &b, ND_ERR_ARG, "an a with ndim 9, b");
        expect_refused(im, &a, &neg, ND_ERR_ARG, "a, a b with ndim -1");
        nd_clear_error();
        nd_status s = im->fn(&a, &b, NULL);
        CHECK(s == ND_ERR_ARG && strstr(nd_last_error(), "matmul"), "%s(a, b, NULL) returned "
              "%s (\"%s\"), expected ND_ERR_ARG naming 'matmul'", im->name, nd_status_name(s),
              nd_last_error());
        if (T_DEV != ND_CPU) {
            nd_array host;
            float zero[20] = { 0 };
            T_OK(nd_from_host(ND_CPU, 2, s45, zero, &host));
            expect_refused(im, &a, &host, ND_ERR_DEVICE, "a on the device, b on the cpu");
            nd_release(&host);
        }
        CHECK(a.buf->refcount == 1 && b.buf->refcount == 1, "failed %s calls changed an "
              "input's refcount", im->name);
        nd_release(&a);
        nd_release(&b);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The suite: points and hints                                            */
/* ---------------------------------------------------------------------- */

Suite *hidden_05_matmul(void);

Suite *hidden_05_matmul(void)
{
    Suite *s = g_suite(5, "05_matmul");
    G_ADD(s, register_tile_edges, 3,
          "m and n need not be multiples of MR or NR: pack the rows and columns past an edge "
          "as zeros, and write back only the mr x nr part of an edge block that exists in c");
    G_ADD(s, depth_edges, 4,
          "cut k into slices of KC and keep the last, shorter slice (kc = min(KC, k - pc)); "
          "every slice ADDS its product to c, which starts at 0; k == 0 leaves zeros");
    G_ADD(s, cache_block_edges, 3,
          "the last MC block of rows and the last NC block of columns may be short: mc = "
          "min(MC, m - ic), nc = min(NC, n - jc), and c's block starts at (ic, jc) with row "
          "stride n");
    G_ADD(s, naive_random_views, 4, NAIVE_HINT);
    G_ADD(s, tiled_random_views, 5, VIEWS_HINT);
    G_ADD(s, batch_shapes_exhaustive, 3,
          "NumPy's matmul rule: batch axes align at the right, equal or 1 (0 against 1 gives "
          "0); anything else is ND_ERR_SHAPE naming both shapes, checked before allocating");
    G_ADD(s, batched_equals_per_matrix, 3, BATCH_HINT);
    G_ADD(s, transpose_identity, 2,
          "(A@B).T == B.T@A.T: a transposed view is only swapped strides, so read both inputs "
          "through their own strides, whichever is unit");
    G_ADD(s, identity_exact, 2,
          "A@I == A exactly: the identity may come as any view (a Toeplitz view with strides "
          "(-1,1), a stride-0 batch), and every element is one product by 1 plus zeros");
    G_ADD(s, broadcast_equals_compact, 3,
          "a stride of 0 repeats one row, column or matrix: pack element (i, p) from offset "
          "+ i*rs + p*cs with the real strides, never from assumed compact ones");
    G_ADD(s, same_buffer_inputs, 2,
          "a and b may be views of one buffer (a @ a.T, a @ a): read them, never write "
          "them, and write only into the new result");
    G_ADD(s, out_aliases_input, 3,
          "with out == a or out == b, compute into a new array first; only then release out's "
          "old reference (maybe the last one of an input's buffer) and store the result");
    G_ADD(s, empty_and_zero_depth, 2,
          "k == 0 is the empty sum: write zeros; m, n or a batch of 0 is an empty result of "
          "the right shape, not an error");
    G_ADD(s, mid_sizes, 2, TILED_HINT);
    G_ADD(s, large_cache_blocks, 4,
          "each KC slice of k adds its product to c (never assigns); pack a's block again for "
          "every slice pc and block ic, b's panel for every pc and jc; offset c by (ic, jc) "
          "with row stride n");
    G_ADD(s, shape_errors, 3,
          "check the inner sizes (even 0 against 4) and the batch axes before anything "
          "else: ND_ERR_SHAPE, a message naming both shapes, out untouched (even when out is "
          "a), no reference taken");
    G_ADD(s, argument_errors, 2,
          "NULL, released or broken arrays, a NULL out, and inputs of fewer than 2 axes are "
          "ND_ERR_ARG, before anything is allocated or written");
    return s;
}
