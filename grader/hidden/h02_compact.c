/*
 * h02_compact.c -- hidden tests of lesson 2: the odometer, nd_simplify_dims,
 * nd_compact (a strided gather) and nd_setitem / nd_setitem_scalar (a
 * strided scatter).
 *
 * What this file covers, in nd.h's order (the suite at the end lists every
 * test with its points and hint):
 *
 *   nd_iter            every 8-axis shape with sizes 1..3 (1.7 million
 *                      positions) and random shapes with zeros; totals past
 *                      2^32; the shape copied at init; re-init; two
 *                      iterators at once; nothing moves after the end;
 *                      errors on every axis
 *   nd_simplify_dims   10000 random layouts of up to 8 axes, one or two
 *                      operands, compared with THE simplified layout (the
 *                      rule has one answer: the offsets kept in order, no
 *                      size-1 axis and no mergeable pair left); layouts
 *                      where exactly one operand allows a merge; nothing
 *                      read or written past ndim (exact-size heap arrays)
 *   nd_compact         5000 random views of up to 8 axes (negative and zero
 *                      strides, permuted, sliced); compact windows at an
 *                      offset; reversed layouts that look contiguous;
 *                      2^22-element transposes and 8-D views; out == a;
 *                      always a new buffer of exactly numel floats, offset 0,
 *                      row-major strides, the input untouched
 *   nd_setitem         5000 random dst views (up to 8 axes) and broadcast
 *                      src views; src with extra leading size-1 axes; every
 *                      pair of small shapes against NumPy's rule; setitem(v, v)
 *                      and disjoint views of one buffer; 2^22 elements
 *   nd_setitem_scalar  random views with negative strides and offsets,
 *                      special values (NaN, inf, -0, denormals)
 *
 * For every write, the WHOLE buffer under dst is compared with a reference
 * scatter done here on a host copy: dst's elements hold src's values and
 * every other element is as it was; src's buffer, both structs and both
 * refcounts are unchanged.  The reference never calls lesson code, and
 * neither do the inputs: views are made with nd_as_strided, never with
 * lesson 1's functions, so lesson 2 is graded on its own.
 *
 * Every test first calls a lesson-2 function on a valid input with T_OK,
 * so that on the skeleton each test fails with "not implemented".
 */
#include "grader.h"

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

/* The call must fail with `want`, with a message naming `op`. */
#define EXPECT_FAIL(want, op, ...)                                         \
    do {                                                                   \
        nd_clear_error();                                                  \
        t_err((__VA_ARGS__), (want), #__VA_ARGS__, __FILE__, __LINE__);   \
        CHECK(strstr(nd_last_error(), (op)) != NULL, "%s failed as it "    \
              "should, but its message \"%s\" does not name the operation " \
              "\"%s\"", #__VA_ARGS__, nd_last_error(), (op));              \
    } while (0)

/* For calls in loops, whose text alone would not say which case failed:
 * `got` (the status of the call `what` describes) must be `want`, with a
 * message naming `op`. */
static void expect_fail(nd_status got, nd_status want, const char *op, const char *what)
{
    CHECK(got == want, "%s returned %s, expected %s%s%s", what, nd_status_name(got),
          nd_status_name(want), got == ND_OK ? "" : ": ", got == ND_OK ? "" : nd_last_error());
    CHECK(strstr(nd_last_error(), op) != NULL, "%s failed as it should, but its message "
          "\"%s\" does not name the operation \"%s\"", what, nd_last_error(), op);
}

#define COMPACT_HINT "walk a's positions in row-major order and read data[offset + " \
    "sum(index[k]*strides[k])]: strides may be negative or 0 and the offset need not be 0"
#define SETITEM_HINT "write through dst's own offset and signed strides, numel(dst) " \
    "elements and no others; read src through its own offset and strides, repeating a " \
    "broadcast axis (size 1, or missing on the left)"

/* ---------------------------------------------------------------------- */
/* Small helpers                                                          */
/* A 1-D array of `size` floats: i + 0.5, or -(i + 0.25) when `neg` (so
 * that a value copied from the wrong array shows). */
static nd_array buffer_of(int64_t size, bool neg)
{
    float *v = t_alloc((size_t)size * sizeof(float));
    for (int64_t i = 0; i < size; i++)
        v[i] = neg ? -(float)i - 0.25f : (float)i + 0.5f;
    nd_array a;
    nd_status s = nd_from_host(T_DEV, 1, &size, v, &a);
    free(v);
    CHECK(s == ND_OK, "test setup: nd_from_host: %s", nd_last_error());
    return a;
}

/* A view (nd_as_strided) of a fresh buffer of `size`. */
static nd_array strided(int64_t size, bool neg, int ndim, const int64_t *shape,
                        const int64_t *strides, int64_t offset)
{
    nd_array base = buffer_of(size, neg), v;
    nd_status s = nd_as_strided(&base, ndim, shape, strides, offset, &v);
    CHECK(s == ND_OK, "test setup: nd_as_strided: %s", nd_last_error());
    nd_release(&base);
    return v;
}

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

/* A random view of `shape` over a buffer of at most about `cap` elements:
 * kind 0 a fresh compact array; 1 a permuted, sliced view (steps +-1,
 * +-2, an offset; no element twice, so it may be written); 2 the same with
 * some axes of stride 0 (read only); 3 a compact window at an offset whose
 * size-1 axes (all axes, when empty) have arbitrary strides; 4 like 1 with
 * every step negative. */
static nd_array gen_view(t_rng *r, int ndim, const int64_t *shape, int kind, int64_t cap,
                         bool neg)
{
    int64_t n = t_numel(ndim, shape), strides[ND_MAX_DIMS];
    if (kind == 0) {
        t_row_major(ndim, shape, strides);
        return strided(n, neg, ndim, shape, strides, 0);
    }
    if (kind == 3) {
        t_row_major(ndim, shape, strides);
        for (int k = 0; k < ndim; k++)
            if (shape[k] == 1 || n == 0)
                strides[k] = t_int(r, -40, 40);
        int64_t pad = t_int(r, 1, 9);
        return strided(pad + n + t_int(r, 0, 7), neg, ndim, shape, strides, pad);
    }
    int perm[ND_MAX_DIMS];
    int64_t b[ND_MAX_DIMS], step[ND_MAX_DIMS], bs[ND_MAX_DIMS], total = 1;
    random_perm(r, ndim, perm);
    for (int k = 0; k < ndim; k++) {
        int64_t m = t_int(r, 0, 2) == 0 ? 2 : 1, slack = t_int(r, 0, 3) == 0 ? 1 : 0;
        int64_t need = shape[k] > 0 ? (shape[k] - 1) * m + 1 : 0;
        if ((need + slack) * total > cap) {
            m = 1;
            slack = 0;
            need = shape[k];
        }
        step[k] = kind == 4 || t_int(r, 0, 2) == 0 ? -m : m;
        b[k] = need + slack;
        total *= b[k] > 0 ? b[k] : 1;
    }
    int64_t s = 1;
    for (int j = ndim - 1; j >= 0; j--) {
        bs[perm[j]] = s;
        s *= b[perm[j]] > 0 ? b[perm[j]] : 1;
    }
    int64_t pad = t_int(r, 0, 3), offset = pad;
    for (int k = 0; k < ndim; k++) {
        strides[k] = step[k] * bs[k];
        if (kind == 2 && shape[k] > 1 && t_int(r, 0, 3) == 0)
            strides[k] = 0;
        if (shape[k] == 0 || b[k] == 0)
            continue;
        int64_t span = (shape[k] - 1) * llabs(step[k]);
        int64_t first = t_int(r, 0, b[k] - 1 - span);
        offset += (step[k] < 0 ? b[k] - 1 - first : first) * bs[k];
    }
    return strided(pad + total + t_int(r, 0, 3), neg, ndim, shape, strides, offset);
}

static int gen_shape(t_rng *r, int lo, int hi, int64_t max, int64_t cap, int64_t *shape)
{
    int ndim = (int)t_int(r, lo, hi);
    return t_random_shape(r, ndim, max, t_int(r, 0, 4) == 0, cap, shape);
}

/* A's elements in row-major order from a host copy of its buffer, walked
 * with an odometer (fast for 2^22 elements); malloc'd. */
static float *gather_ref(const nd_array *a)
{
    int64_t size, n = t_numel(a->ndim, a->shape);
    float *buf = t_buffer(a, &size), *out = t_alloc((size_t)n * sizeof(float));
    int64_t idx[ND_MAX_DIMS] = { 0 }, off = a->offset;
    for (int64_t i = 0; i < n; i++) {
        CHECK(off >= 0 && off < size, "test setup: a view reaches outside its buffer");
        out[i] = buf[off];
        for (int k = a->ndim - 1; k >= 0; k--) {
            off += a->strides[k];
            if (++idx[k] < a->shape[k])
                break;
            off -= idx[k] * a->strides[k];
            idx[k] = 0;
        }
    }
    free(buf);
    return out;
}

/* ---------------------------------------------------------------------- */
/* nd_iter                                                                 */
/* ---------------------------------------------------------------------- */

static void iter_poison(nd_iter *it) { memset(it, 0xAB, sizeof *it); }

/* Visit every position of shape with nd_iter: t_unravel's order, count
 * and total right, the shape kept, then nothing more. */
static void check_iter(int ndim, const int64_t *shape, const char *what)
{
    nd_iter it;
    iter_poison(&it);
    nd_status s = nd_iter_init(&it, ndim, shape);
    CHECK(s == ND_OK, "%s: nd_iter_init returned %s: %s", what, nd_status_name(s),
          nd_last_error());
    int64_t n = t_numel(ndim, shape), i = 0, want[ND_MAX_DIMS] = { 0 };
    CHECK(it.ndim == ndim && it.total == n && it.count == 0, "%s: after nd_iter_init, ndim=%d "
          "total=%" PRId64 " count=%" PRId64 ", expected ndim=%d total=%" PRId64 " count=0",
          what, it.ndim, it.total, it.count, ndim, n);
    for (int k = 0; k < ndim; k++)
        CHECK(it.shape[k] == shape[k], "%s: it.shape[%d] is %" PRId64 " after init, expected %"
              PRId64 ": init copies the shape", what, k, it.shape[k], shape[k]);
    while (nd_iter_next(&it)) {
        CHECK(i < n, "%s: nd_iter_next gave more than the %" PRId64 " positions", what, n);
        /* the expected index, as an odometer of our own */
        if (i > 0)
            for (int k = ndim - 1; k >= 0; k--) {
                if (++want[k] < shape[k])
                    break;
                want[k] = 0;
            }
        if (memcmp(it.index, want, (size_t)ndim * sizeof(int64_t)) != 0 || it.count != i + 1) {
            char w[200], g[200];
            ck_abort_msg("%s: position %" PRId64 " should be index %s with count %" PRId64
                         ", got %s with count %" PRId64 ". Hint: the last axis moves fastest; "
                         "past its end it goes back to 0 and carries into the axis before it",
                         what, i, nd_shape_str(ndim, want, w, sizeof w), i + 1,
                         nd_shape_str(ndim, it.index, g, sizeof g), it.count);
        }
        i++;
    }
    CHECK(i == n && it.count == n, "%s: nd_iter_next gave %" PRId64 " positions (count %" PRId64
          "), expected %" PRId64, what, i, it.count, n);
    /* past the end: false again, and nothing moves */
    nd_iter after = it;
    for (int again = 0; again < 5; again++)
        CHECK(!nd_iter_next(&it) && memcmp(&it, &after, sizeof it) == 0, "%s: nd_iter_next "
              "after the last position returned true or changed the iterator (call %d past "
              "the end). Hint: once count == total, return false and touch nothing", what,
              again + 1);
}

START_TEST(iter_order_8d)
{
    int64_t first[2] = { 2, 3 };
    nd_iter it;
    T_OK(nd_iter_init(&it, 2, first));

    /* every shape of 8 axes with sizes 1..3: 6561 shapes, 1.7M positions */
    for (int c = 0; c < 6561; c++) {
        int64_t shape[ND_MAX_DIMS];
        for (int k = 0, x = c; k < 8; k++, x /= 3)
            shape[k] = 1 + x % 3;
        char what[100], sh[100];
        snprintf(what, sizeof what, "nd_iter over shape %s", nd_shape_str(8, shape, sh,
                                                                          sizeof sh));
        check_iter(8, shape, what);
    }
    /* random shapes of 0..8 axes, sizes 0..7 */
    t_rng r = t_rng_new(31001);
    for (int c = 0; c < 1000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 7, 5000, shape);
        char what[100], sh[100];
        snprintf(what, sizeof what, "nd_iter case %d, shape %s", c,
                 nd_shape_str(ndim, shape, sh, sizeof sh));
        check_iter(ndim, shape, what);
    }

    /* totals past 2^32 and 2^56: int64_t counts; the first positions */
    static const struct { int ndim; int64_t shape[8]; } big[] = {
        { 3, { 65536, 65536, 16 } },
        { 8, { 128, 128, 128, 128, 128, 128, 128, 128 } },
        { 2, { 3, (INT64_C(1) << 33) + 5 } },
    };
    for (size_t c = 0; c < sizeof big / sizeof big[0]; c++) {
        int nd = big[c].ndim;
        T_OK(nd_iter_init(&it, nd, big[c].shape));
        char sh[200];
        nd_shape_str(nd, big[c].shape, sh, sizeof sh);
        CHECK(it.total == t_numel(nd, big[c].shape), "nd_iter_init over %s: total %" PRId64
              ", expected %" PRId64 " (use int64_t)", sh, it.total, t_numel(nd, big[c].shape));
        int64_t last = big[c].shape[nd - 1];
        for (int64_t i = 0; i < 40; i++) {
            CHECK(nd_iter_next(&it), "nd_iter over %s stopped after %" PRId64 " positions", sh,
                  i);
            int64_t want_last = i % last, want_prev = i / last;
            CHECK(it.index[nd - 1] == want_last && it.index[nd - 2] == want_prev &&
                  it.count == i + 1, "nd_iter over %s: position %" PRId64 " is %s, count %"
                  PRId64, sh, i, t_index_str(nd, it.index), it.count);
        }
    }

    /* init copies the shape; re-init restarts; two iterators are independent */
    int64_t shape[3] = { 2, 3, 2 }, other[2] = { 3, 1 };
    nd_iter a, b;
    T_OK(nd_iter_init(&a, 3, shape));
    shape[0] = 100;
    shape[2] = 0;
    int64_t count = 0;
    while (nd_iter_next(&a))
        count++;
    CHECK(count == 12, "nd_iter over (2,3,2) gave %" PRId64 " positions after the caller's "
          "shape array changed: nd_iter_init must copy the shape, not keep the pointer", count);
    shape[0] = 2;
    shape[2] = 2;
    T_OK(nd_iter_init(&a, 3, shape));
    T_OK(nd_iter_init(&b, 2, other));
    for (int64_t i = 0; i < 12; i++) {
        CHECK(nd_iter_next(&a), "nd_iter over (2,3,2) after re-init stopped at %" PRId64, i);
        bool more = nd_iter_next(&b);
        CHECK(more == (i < 3), "a second iterator over (3,1) interleaved with the first: "
              "step %" PRId64 " returned %s", i, more ? "true" : "false");
        int64_t want[3];
        t_unravel(i, 3, shape, want);
        CHECK(memcmp(a.index, want, sizeof want) == 0, "two iterators at once: the first "
              "is at %s at step %" PRId64 ", expected %s: keep all state in the struct "
              "(no static variables)", t_index_str(3, a.index), i,
              t_index_str(3, want));
    }
}
END_TEST

START_TEST(iter_stops_and_empty)
{
    int64_t first[1] = { 3 };
    nd_iter it;
    T_OK(nd_iter_init(&it, 1, first));

    /* a 0 on any axis of 8 (others 2): no position at all, index stays 0 */
    for (int z = 0; z < 8; z++) {
        int64_t shape[8] = { 2, 2, 2, 2, 2, 2, 2, 2 };
        shape[z] = 0;
        char what[200], sh[100];
        snprintf(what, sizeof what, "nd_iter over %s (a size 0 on axis %d)",
                 nd_shape_str(8, shape, sh, sizeof sh), z);
        check_iter(8, shape, what);
        T_OK(nd_iter_init(&it, 8, shape));
        nd_iter before = it;
        for (int again = 0; again < 3; again++)
            CHECK(!nd_iter_next(&it) && memcmp(&it, &before, sizeof it) == 0, "%s: "
                  "nd_iter_next returned true or changed the iterator: there is no position",
                  what);
    }
    /* ndim 0: exactly one position, then nothing */
    int64_t unused = 5;
    check_iter(0, &unused, "nd_iter over a scalar (ndim 0)");
    /* all size 1, on 8 axes: one position */
    int64_t ones[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    check_iter(8, ones, "nd_iter over (1,1,1,1,1,1,1,1)");
    /* a long last axis: 100000 positions, then 100 calls past the end */
    int64_t longer[2] = { 1, 100000 };
    T_OK(nd_iter_init(&it, 2, longer));
    int64_t n = 0;
    while (nd_iter_next(&it) && n < 200000)
        n++;
    CHECK(n == 100000, "nd_iter over (1,100000) gave %" PRId64 " positions", n);
    nd_iter end = it;
    CHECK(it.index[0] == 0 && it.index[1] == 99999, "nd_iter over (1,100000) ends at %s, "
          "expected the last position (0,99999): the index stays there after the end",
          t_index_str(2, it.index));
    for (int again = 0; again < 100; again++)
        CHECK(!nd_iter_next(&it) && memcmp(&it, &end, sizeof it) == 0, "nd_iter_next past "
              "the end (call %d) returned true or changed the iterator", again + 1);
}
END_TEST

START_TEST(iter_errors)
{
    int64_t shape[ND_MAX_DIMS + 1] = { 2, 3, 1, 2, 1, 1, 2, 1, 1 };
    nd_iter it, poison;
    T_OK(nd_iter_init(&it, 8, shape));
    iter_poison(&poison);

    for (int k = 0; k < 8; k++) {
        int64_t bad[8] = { 2, 3, 1, 2, 1, 1, 2, 1 };
        bad[k] = k % 2 ? -1 : INT64_MIN;
        iter_poison(&it);
        char what[200], sh[200];
        snprintf(what, sizeof what, "nd_iter_init(&it, 8, %s)", nd_shape_str(8, bad, sh,
                                                                            sizeof sh));
        nd_clear_error();
        nd_status s = nd_iter_init(&it, 8, bad);
        CHECK(s == ND_ERR_ARG && memcmp(&it, &poison, sizeof it) == 0, "%s returned %s and %s "
              "the iterator; expected ND_ERR_ARG and the iterator untouched (check every size "
              "before writing anything)", what, nd_status_name(s),
              memcmp(&it, &poison, sizeof it) ? "changed" : "left");
        CHECK(nd_last_error()[0] != '\0', "%s failed without a message", what);
    }
    static const int bad_ndim[] = { ND_MAX_DIMS + 1, -1, INT32_MAX, INT32_MIN };
    for (size_t c = 0; c < sizeof bad_ndim / sizeof bad_ndim[0]; c++) {
        iter_poison(&it);
        nd_status s = nd_iter_init(&it, bad_ndim[c], shape);
        CHECK(s == ND_ERR_ARG && memcmp(&it, &poison, sizeof it) == 0, "nd_iter_init with ndim "
              "%d returned %s (expected ND_ERR_ARG) or changed the iterator", bad_ndim[c],
              nd_status_name(s));
    }
    iter_poison(&it);
    T_ERR(nd_iter_init(&it, 3, NULL), ND_ERR_ARG);
    CHECK(memcmp(&it, &poison, sizeof it) == 0, "nd_iter_init with a NULL shape changed the "
          "iterator");
    T_ERR(nd_iter_init(NULL, 3, shape), ND_ERR_ARG);
    CHECK(!nd_iter_next(NULL), "nd_iter_next(NULL) must return false");
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_simplify_dims                                                        */
/* ---------------------------------------------------------------------- */

/* THE simplified layout: drop size-1 axes; merge each remaining axis into
 * the kept one before it when every operand has stride(prev) ==
 * size(k) * stride(k).  (The result is unique: a run of axes merges
 * exactly when each neighbouring pair in it does.)  Returns the ndim. */
static int ref_simplify(int ndim, const int64_t *shape, const int64_t *sa, const int64_t *sb,
                        int64_t *osh, int64_t *oa, int64_t *ob)
{
    int m = 0;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] == 1)
            continue;
        if (m > 0 && oa[m - 1] == shape[k] * sa[k] && (sb == NULL || ob[m - 1] == shape[k] * sb[k])) {
            osh[m - 1] *= shape[k];
            oa[m - 1] = sa[k];
            if (sb != NULL)
                ob[m - 1] = sb[k];
            continue;
        }
        osh[m] = shape[k];
        oa[m] = sa[k];
        if (sb != NULL)
            ob[m] = sb[k];
        m++;
    }
    return m;
}

/* "shape=(2,3) strides_a=(3,1) strides_b=(1,2)" */
static const char *layout_str(char *dst, size_t cap, int ndim, const int64_t *shape,
                              const int64_t *sa, const int64_t *sb)
{
    char s1[200], s2[200], s3[200];
    snprintf(dst, cap, "shape=%s strides_a=%s%s%s", nd_shape_str(ndim, shape, s1, sizeof s1),
             nd_shape_str(ndim, sa, s2, sizeof s2), sb ? " strides_b=" : "",
             sb ? nd_shape_str(ndim, sb, s3, sizeof s3) : "");
    return dst;
}

#define SENT INT64_C(-424242)

/* nd_simplify_dims on copies of the layout: exactly the reference, the
 * offsets of both operands kept in order, nothing past ndim touched.
 * With `heap`, the arrays are malloc'd with exactly ndim entries. */
static void check_simplify(int ndim, const int64_t *shape, const int64_t *sa, const int64_t *sb,
                           bool heap, const char *what)
{
    const size_t room = ND_MAX_DIMS + 2;
    int64_t *sh = t_alloc((heap ? (size_t)ndim : room) * sizeof(int64_t));
    int64_t *a = t_alloc((heap ? (size_t)ndim : room) * sizeof(int64_t));
    int64_t *b = sb ? t_alloc((heap ? (size_t)ndim : room) * sizeof(int64_t)) : NULL;
    for (size_t k = 0; !heap && k < room; k++) {
        sh[k] = a[k] = SENT;
        if (b)
            b[k] = SENT;
    }
    memcpy(sh, shape, (size_t)ndim * sizeof(int64_t));
    memcpy(a, sa, (size_t)ndim * sizeof(int64_t));
    if (b)
        memcpy(b, sb, (size_t)ndim * sizeof(int64_t));
    int nd = ndim;
    char in[700], got[700], want[700];
    layout_str(in, sizeof in, ndim, shape, sa, sb);
    nd_status s = nd_simplify_dims(&nd, sh, a, b);
    CHECK(s == ND_OK, "%s: nd_simplify_dims(%s) returned %s: %s", what, in, nd_status_name(s),
          nd_last_error());
    CHECK(nd >= 0 && nd <= ndim, "%s: %s became %d axes", what, in, nd);
    layout_str(got, sizeof got, nd, sh, a, b);
    for (size_t k = (size_t)ndim; !heap && k < room; k++)
        CHECK(sh[k] == SENT && a[k] == SENT && (b == NULL || b[k] == SENT), "%s: nd_simplify_dims"
              "(%s) wrote past the %d entries of its arrays (entry %zu)", what, in, ndim, k);
    int64_t n = t_numel(ndim, shape);
    CHECK(t_numel(nd, sh) == n, "%s: %s became %s: %" PRId64 " positions instead of %" PRId64,
          what, in, got, t_numel(nd, sh), n);
    if (n > 0) {
        /* the offsets of both operands, position by position */
        int64_t i1[ND_MAX_DIMS], i2[ND_MAX_DIMS];
        for (int64_t i = 0; i < n; i++) {
            t_unravel(i, ndim, shape, i1);
            t_unravel(i, nd, sh, i2);
            int64_t oa = 0, ob = 0, ga = 0, gb = 0;
            for (int k = 0; k < ndim; k++) {
                oa += i1[k] * sa[k];
                ob += sb ? i1[k] * sb[k] : 0;
            }
            for (int k = 0; k < nd; k++) {
                ga += i2[k] * a[k];
                gb += b ? i2[k] * b[k] : 0;
            }
            CHECK(oa == ga && ob == gb, "%s: %s became %s; at position %" PRId64 " (index %s) "
                  "operand %c reaches offset %" PRId64 ", the simplified layout %" PRId64
                  ". Hint: merge axes only where EVERY operand has strides[k] == "
                  "shape[k+1]*strides[k+1]; the merged axis keeps the inner stride", what, in,
                  got, i, t_index_str(ndim, i1), oa != ga ? 'a' : 'b', oa != ga ? oa : ob,
                  oa != ga ? ga : gb);
        }
        /* and exactly the simplest such layout */
        int64_t wsh[ND_MAX_DIMS], wa[ND_MAX_DIMS], wb[ND_MAX_DIMS];
        int wn = ref_simplify(ndim, shape, sa, sb, wsh, wa, wb);
        bool same = nd == wn;
        for (int k = 0; same && k < wn; k++)
            same = sh[k] == wsh[k] && a[k] == wa[k] && (b == NULL || b[k] == wb[k]);
        CHECK(same, "%s: nd_simplify_dims(%s) gave %s, expected %s. Hint: drop every size-1 "
              "axis, then merge each neighbouring pair that every operand allows; leave no "
              "pair that could still merge", what, in, got,
              layout_str(want, sizeof want, wn, wsh, wa, sb ? wb : NULL));
    }
    free(sh);
    free(a);
    free(b);
}

/* Random strides of the kinds a loop meets: the row-major strides of a
 * base, its axes padded (breaks one merge), some swapped, some reversed
 * (all: still merges), some 0 (broadcast); size-1 axes get junk. */
static void random_strides(t_rng *r, int ndim, const int64_t *shape, int64_t *strides)
{
    int kind = (int)t_int(r, 0, 5);
    if (kind == 0) {
        for (int k = 0; k < ndim; k++)
            strides[k] = t_int(r, -8, 8);
        return;
    }
    int perm[ND_MAX_DIMS];
    for (int k = 0; k < ndim; k++)
        perm[k] = k;
    if (ndim > 1 && kind == 1) {
        int i = (int)t_int(r, 0, ndim - 1), j = (int)t_int(r, 0, ndim - 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    int64_t s = t_int(r, 0, 3) == 0 ? t_int(r, 2, 3) : 1;
    for (int j = ndim - 1; j >= 0; j--) {
        int k = perm[j];
        strides[k] = s;
        s *= (shape[k] > 0 ? shape[k] : 1) + (t_int(r, 0, 5) == 0 ? t_int(r, 1, 2) : 0);
    }
    bool flip_all = kind == 2;
    for (int k = 0; k < ndim; k++) {
        if (flip_all || t_int(r, 0, 9) == 0)
            strides[k] = -strides[k];
        if (kind == 3 && t_int(r, 0, 3) == 0)
            strides[k] = 0;
        if (shape[k] == 1 && t_int(r, 0, 1))
            strides[k] = t_int(r, -1000, 1000);
    }
}

START_TEST(simplify_exact)
{
    int nd = 2;
    int64_t s0[2] = { 3, 4 }, a0[2] = { 4, 1 };
    T_OK(nd_simplify_dims(&nd, s0, a0, NULL));

    t_rng r = t_rng_new(32001);
    for (int c = 0; c < 10000; c++) {
        int64_t shape[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        int ndim = (int)t_int(&r, 0, ND_MAX_DIMS);
        t_random_shape(&r, ndim, 5, c % 10 == 0, 3000, shape);
        random_strides(&r, ndim, shape, sa);
        int mode = c % 4; /* 0 one operand; 1 b == a; 2 b its own; 3 b = a changed once */
        if (mode == 1 || mode == 3)
            memcpy(sb, sa, sizeof sb);
        else
            random_strides(&r, ndim, shape, sb);
        if (mode == 3 && ndim > 0) {
            int k = (int)t_int(&r, 0, ndim - 1);
            switch (t_int(&r, 0, 2)) {
            case 0: sb[k] = -sb[k]; break;
            case 1: sb[k] += t_int(&r, 0, 1) ? 1 : -1; break;
            default: sb[k] *= 2; break;
            }
        }
        char what[100];
        snprintf(what, sizeof what, "nd_simplify_dims case %d", c);
        check_simplify(ndim, shape, sa, mode ? sb : NULL, c % 3 == 0, what);
    }
}
END_TEST

START_TEST(simplify_one_operand_allows)
{
    int nd = 3;
    int64_t s0[3] = { 2, 3, 4 }, a0[3] = { 12, 4, 1 }, b0[3] = { 12, 4, 1 };
    T_OK(nd_simplify_dims(&nd, s0, a0, b0));

    /* merges that one operand allows and the other does not */
    static const struct {
        const char *why;
        int ndim;
        int64_t shape[5], sa[5], sb[5];
    } cases[] = {
        { "a merges (0,1), b only (1,2): nothing merges", 3, { 2, 3, 4 }, { 20, 4, 1 },
          { 15, 5, 2 } },
        { "a merges everything, b is a transpose", 2, { 4, 5 }, { 5, 1 }, { 1, 4 } },
        { "b merges everything, a is a transpose", 2, { 4, 5 }, { 1, 4 }, { 5, 1 } },
        { "a compact, b reversed on the last axis only", 3, { 2, 3, 4 }, { 12, 4, 1 },
          { 12, 4, -1 } },
        { "a compact, b with a broadcast middle axis", 3, { 2, 3, 4 }, { 12, 4, 1 },
          { 4, 0, 1 } },
        { "size-1 axes between: a merges across them, b does not", 5, { 2, 1, 3, 1, 4 },
          { 12, 7, 4, -9, 1 }, { 24, 3, 4, 3, 1 } },
        { "both merge (1,2), only a merges (0,1), only b (2,3)", 4, { 2, 3, 4, 5 },
          { 60, 20, 5, 2 }, { 70, 20, 5, 1 } },
        { "stride 0 in a everywhere, compact b", 3, { 2, 3, 4 }, { 0, 0, 0 }, { 12, 4, 1 } },
        { "both reversed compact: one backward run", 3, { 2, 3, 4 }, { -12, -4, -1 },
          { -12, -4, -1 } },
        { "a reversed compact, b compact: nothing merges", 3, { 2, 3, 4 }, { -12, -4, -1 },
          { 12, 4, 1 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char what[200];
        snprintf(what, sizeof what, "nd_simplify_dims (%s)", cases[c].why);
        check_simplify(cases[c].ndim, cases[c].shape, cases[c].sa, cases[c].sb, false, what);
        snprintf(what, sizeof what, "nd_simplify_dims, a and b swapped (%s)", cases[c].why);
        check_simplify(cases[c].ndim, cases[c].shape, cases[c].sb, cases[c].sa, true, what);
    }

    /* random: a compact layout of a padded base, and b the same with one
     * different axis padded, so that each operand blocks one merge the
     * other allows */
    t_rng r = t_rng_new(32501);
    for (int c = 0; c < 2000; c++) {
        int64_t shape[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        int ndim = (int)t_int(&r, 2, ND_MAX_DIMS);
        t_random_shape(&r, ndim, 4, false, 3000, shape);
        int pa = (int)t_int(&r, 0, ndim - 1), pb = (int)t_int(&r, 0, ndim - 1);
        int64_t s1 = t_int(&r, 1, 2), s2 = t_int(&r, 1, 2) * (t_int(&r, 0, 3) ? 1 : -1);
        for (int k = ndim - 1; k >= 0; k--) {
            sa[k] = s1;
            sb[k] = s2;
            s1 *= shape[k] + (k == pa);
            s2 *= shape[k] + (k == pb);
        }
        char what[100];
        snprintf(what, sizeof what, "nd_simplify_dims random case %d", c);
        check_simplify(ndim, shape, sa, sb, c % 2 == 0, what);
    }
}
END_TEST

START_TEST(simplify_errors)
{
    int nd = 2;
    int64_t shape[ND_MAX_DIMS + 1] = { 3, 4, 1, 1, 1, 1, 1, 1, 1 };
    int64_t sa[ND_MAX_DIMS + 1] = { 4, 1, 1, 1, 1, 1, 1, 1, 1 };
    int64_t sb[ND_MAX_DIMS + 1] = { 1, 3, 1, 1, 1, 1, 1, 1, 1 };
    T_OK(nd_simplify_dims(&nd, shape, sa, sb));

    /* ndim 0: fine, nothing to do */
    nd = 0;
    T_OK(nd_simplify_dims(&nd, shape, sa, NULL));
    CHECK(nd == 0, "nd_simplify_dims with ndim 0 made it %d", nd);

    /* refused calls leave every argument as it was */
    int64_t sh0[ND_MAX_DIMS + 1], a0[ND_MAX_DIMS + 1], b0[ND_MAX_DIMS + 1];
    static const struct { int ndim; int neg_at; int null_which; const char *what; } bad[] = {
        { 8, 7, 0, "a negative size on the last of 8 axes" },
        { 8, 0, 0, "a negative size on the first axis" },
        { 3, -1, 1, "a NULL shape" },
        { 3, -1, 2, "a NULL strides_a" },
        { ND_MAX_DIMS + 1, -1, 0, "ndim 9" },
        { -1, -1, 0, "ndim -1" },
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        for (int k = 0; k <= ND_MAX_DIMS; k++) {
            sh0[k] = shape[k] = 2;
            a0[k] = sa[k] = 1;
            b0[k] = sb[k] = 2;
        }
        if (bad[c].neg_at >= 0)
            sh0[bad[c].neg_at] = shape[bad[c].neg_at] = -2;
        nd = bad[c].ndim;
        nd_status s = nd_simplify_dims(&nd, bad[c].null_which == 1 ? NULL : shape,
                                       bad[c].null_which == 2 ? NULL : sa, sb);
        CHECK(s == ND_ERR_ARG, "nd_simplify_dims with %s returned %s, expected ND_ERR_ARG",
              bad[c].what, nd_status_name(s));
        CHECK(nd == bad[c].ndim && memcmp(shape, sh0, sizeof shape) == 0 &&
              memcmp(sa, a0, sizeof sa) == 0 && memcmp(sb, b0, sizeof sb) == 0,
              "nd_simplify_dims with %s failed but changed its arguments: check everything "
              "before rewriting anything", bad[c].what);
    }
    T_ERR(nd_simplify_dims(NULL, shape, sa, NULL), ND_ERR_ARG);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_compact                                                              */
/* ---------------------------------------------------------------------- */

/* nd_compact(a) (or nd_compact(a, a) when `in_place`, on a second
 * reference) must give a NEW compact array of a's values, leaving a, its
 * buffer and its refcount as they were. */
static void check_compact(const nd_array *a, const char *what)
{
    int64_t size, n = t_numel(a->ndim, a->shape), refs = a->buf->refcount;
    float *before = t_buffer(a, &size), *want = gather_ref(a);
    nd_array copy = *a, out;
    nd_status s = nd_compact(a, &out);
    CHECK(s == ND_OK, "%s: nd_compact returned %s: %s", what, nd_status_name(s),
          nd_last_error());
    t_assert_shape(&out, a->ndim, a->shape, what);
    CHECK(out.buf != NULL && out.buf != a->buf, "%s: nd_compact must copy into a NEW buffer, "
          "even when a is compact", what);
    CHECK(out.buf->device == a->buf->device, "%s: the result lives on %s, a on %s", what,
          nd_device_name(out.buf->device), nd_device_name(a->buf->device));
    CHECK(out.buf->refcount == 1, "%s: the new buffer has refcount %" PRId64 ", expected 1",
          what, out.buf->refcount);
    CHECK(out.buf->nbytes == (size_t)n * sizeof(float), "%s: the new buffer has %zu bytes, "
          "expected exactly numel = %" PRId64 " floats", what, out.buf->nbytes, n);
    CHECK(out.offset == 0, "%s: the result has offset %" PRId64 ", expected 0", what,
          out.offset);
    int64_t st[ND_MAX_DIMS];
    t_row_major(out.ndim, out.shape, st);
    for (int k = 0; k < out.ndim && n > 0; k++)
        CHECK(out.shape[k] == 1 || out.strides[k] == st[k], "%s: the result %s is not "
              "compact: axis %d has stride %" PRId64 ", expected %" PRId64, what,
              t_describe(&out), k, out.strides[k], st[k]);
    t_assert_values(&out, want, what, COMPACT_HINT);
    float *after = t_buffer(a, NULL);
    char in_buf[900];
    snprintf(in_buf, sizeof in_buf, "%s: the input's buffer", what);
    t_assert_floats(after, before, 1, &size, in_buf, "compact reads a and never writes it");
    CHECK(t_same_struct(a, &copy) && a->buf->refcount == refs, "%s: nd_compact changed its input "
          "view (now %s) or its buffer's refcount (%" PRId64 ", was %" PRId64 ")", what,
          t_describe(a), a->buf->refcount, refs);
    nd_release(&out);
    /* nd_compact gives transposed planes to the given fast path: check the
     * student's own gather_cpu on the same view (version 1) */
    char plain[900];
    snprintf(plain, sizeof plain, "%s, by nd_compact_version(a, 1) (gather_cpu alone)", what);
    s = nd_compact_version(a, 1, &out, NULL);
    CHECK(s == ND_OK, "%s returned %s: %s", plain, nd_status_name(s), nd_last_error());
    t_assert_values(&out, want, plain, COMPACT_HINT);
    nd_release(&out);
    free(before);
    free(after);
    free(want);
}

START_TEST(compact_random_8d)
{
    int64_t s23[2] = { 2, 3 }, st[2] = { 1, 2 };
    nd_array first = strided(6, false, 2, s23, st, 0), out;
    T_OK(nd_compact(&first, &out));
    nd_release(&out);
    nd_release(&first);

    t_rng r = t_rng_new(33001);
    for (int c = 0; c < 5000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 6, 1500, shape);
        nd_array a = gen_view(&r, ndim, shape, (int)t_int(&r, 0, 4), 1 << 15, false);
        char what[400];
        snprintf(what, sizeof what, "nd_compact case %d, a: %s", c, t_describe(&a));
        check_compact(&a, what);
        nd_release(&a);
    }
}
END_TEST

START_TEST(compact_offset_windows)
{
    int64_t s3 = 3, one = 1;
    nd_array first = strided(10, false, 1, &s3, &one, 4), out;
    T_OK(nd_compact(&first, &out));
    nd_release(&out);
    nd_release(&first);

    /* hand-made windows of a (4,5) array and friends */
    static const struct {
        const char *what;
        int ndim; int64_t shape[3], strides[3], offset, size;
    } cases[] = {
        { "row a[2] of a (4,5) array", 1, { 5 }, { 1 }, 10, 20 },
        { "rows a[1:3] of a (4,5) array", 2, { 2, 5 }, { 5, 1 }, 5, 20 },
        { "a[3] of a (4,5) array, kept 2-D as (1,5)", 2, { 1, 5 }, { 5, 1 }, 15, 20 },
        { "the last element, as a scalar", 0, { 0 }, { 0 }, 19, 20 },
        { "a (2,1,3) window with junk strides on the size-1 axis", 3, { 2, 1, 3 },
          { 3, -77, 1 }, 7, 20 },
        { "an empty (0,5) window at the buffer's end", 2, { 0, 5 }, { 5, 1 }, 20, 20 },
        { "a (1,1,1) element in the middle", 3, { 1, 1, 1 }, { 9, 9, 9 }, 11, 20 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array a = strided(cases[c].size, false, cases[c].ndim, cases[c].shape,
                             cases[c].strides, cases[c].offset);
        char what[300];
        snprintf(what, sizeof what, "nd_compact of %s: %s", cases[c].what, t_describe(&a));
        check_compact(&a, what);
        nd_release(&a);
    }
    /* random compact windows, 0..8 axes, at offsets 1..9 */
    t_rng r = t_rng_new(33501);
    for (int c = 0; c < 1500; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 6, 2000, shape);
        nd_array a = gen_view(&r, ndim, shape, 3, 0, c % 2);
        char what[300];
        snprintf(what, sizeof what, "nd_compact of a compact window, case %d: %s", c,
                 t_describe(&a));
        check_compact(&a, what);
        nd_release(&a);
    }
}
END_TEST

START_TEST(compact_negative_strides)
{
    int64_t s4 = 4, m1 = -1;
    nd_array first = strided(4, false, 1, &s4, &m1, 3), out;
    T_OK(nd_compact(&first, &out));
    nd_release(&out);
    nd_release(&first);

    /* reversed runs of every length 1..300 (stride -1 and -2), reversed
     * compact arrays of 2..4 axes: one backward run */
    for (int64_t len = 1; len <= 300; len++)
        for (int64_t step = 1; step <= 2; step++) {
            int64_t st = -step;
            nd_array a = strided(len * step + 3, false, 1, &len, &st, (len - 1) * step + 1);
            char what[200];
            snprintf(what, sizeof what, "nd_compact of a reversed run: %s", t_describe(&a));
            check_compact(&a, what);
            nd_release(&a);
        }
    static const struct { int ndim; int64_t shape[4], strides[4], offset, size; } rev[] = {
        { 2, { 3, 4 }, { -4, -1 }, 11, 12 },        { 2, { 3, 4 }, { 4, -1 }, 3, 12 },
        { 2, { 3, 4 }, { -4, 1 }, 8, 12 },          { 2, { 4, 3 }, { -1, -4 }, 11, 12 },
        { 3, { 2, 3, 4 }, { -12, -4, -1 }, 23, 24 }, { 3, { 2, 3, 4 }, { 12, -4, 1 }, 8, 24 },
        { 4, { 2, 2, 2, 2 }, { -8, 4, -2, 1 }, 10, 16 },
        { 2, { 64, 64 }, { -64, -1 }, 4095, 4096 },   { 2, { 64, 64 }, { -1, -64 }, 4095, 4096 },
    };
    for (size_t c = 0; c < sizeof rev / sizeof rev[0]; c++) {
        nd_array a = strided(rev[c].size, false, rev[c].ndim, rev[c].shape, rev[c].strides,
                             rev[c].offset);
        char what[300];
        snprintf(what, sizeof what, "nd_compact of %s", t_describe(&a));
        check_compact(&a, what);
        nd_release(&a);
    }
    /* random views of 1..8 axes, every step negative */
    t_rng r = t_rng_new(33701);
    for (int c = 0; c < 1500; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 1, ND_MAX_DIMS, 6, 2000, shape);
        nd_array a = gen_view(&r, ndim, shape, 4, 1 << 15, false);
        char what[300];
        snprintf(what, sizeof what, "nd_compact case %d, every stride negative: %s", c,
                 t_describe(&a));
        check_compact(&a, what);
        nd_release(&a);
    }
}
END_TEST

START_TEST(compact_large)
{
    int64_t s2 = 2, one = 1;
    nd_array first = strided(2, false, 1, &s2, &one, 0), out;
    T_OK(nd_compact(&first, &out));
    nd_release(&out);
    nd_release(&first);

    const int64_t n = INT64_C(1) << 22;
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[8], strides[8], offset;
    } cases[] = {
        { "a 2048x2048 transpose", 2, { 2048, 2048 }, { 1, 2048 }, 0 },
        { "a 2048x2048 transpose, both axes reversed", 2, { 2048, 2048 }, { -1, -2048 },
          (INT64_C(1) << 22) - 1 },
        { "a (2000,2096) transpose window at an offset", 2, { 2000, 2096 }, { 1, 2001 }, 3 },
        { "(8,8,8,8,8,8,4,4), axes reversed in order and direction", 8,
          { 4, 4, 8, 8, 8, 8, 8, 8 }, { -1, -4, -16, -128, -1024, -8192, -65536, -524288 },
          (INT64_C(1) << 22) - 1 },
        { "(4,1024,1024) planes transposed, every second column", 3, { 4, 1024, 512 },
          { 1048576, 1, 2048 }, 0 },
        { "a (1024,2048) every-other-row view, rows reversed", 2, { 1024, 2048 }, { -4096, 1 },
          (INT64_C(1) << 22) - 4096 },
        { "(2048,4,512): one plane broadcast 4 times, transposed", 3, { 2048, 4, 512 },
          { 1, 0, 2048 }, 0 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array a = strided(n, false, cases[c].ndim, cases[c].shape, cases[c].strides,
                             cases[c].offset);
        char what[300];
        snprintf(what, sizeof what, "nd_compact of %s: %s", cases[c].what, t_describe(&a));
        check_compact(&a, what);
        nd_release(&a);
    }
}
END_TEST

START_TEST(compact_alias_and_errors)
{
    int64_t shape[2] = { 3, 4 }, st[2] = { 1, 3 };
    nd_array a = strided(12, false, 2, shape, st, 0), out;
    T_OK(nd_compact(&a, &out));
    nd_release(&out);

    /* nd_compact(&x, &x) on random views: x becomes the copy, the old
     * reference goes (when x held the last one, the buffer is freed) */
    t_rng r = t_rng_new(33901);
    for (int c = 0; c < 300; c++) {
        int64_t sh[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 5, 600, sh);
        nd_array x = gen_view(&r, ndim, sh, (int)t_int(&r, 0, 4), 1 << 14, false), keep;
        bool hold = c % 2 == 0;
        if (hold)
            T_OK(nd_share(&x, &keep));
        nd_array before = x;
        nd_buffer *old = x.buf;
        float *want = gather_ref(&x);
        char what[300];
        snprintf(what, sizeof what, "case %d: nd_compact(&x, &x) with x %s", c,
                 t_describe(&before));
        nd_status s = nd_compact(&x, &x);
        CHECK(s == ND_OK, "%s returned %s: %s", what, nd_status_name(s), nd_last_error());
        CHECK(x.buf != old, "%s: x still has its old buffer", what);
        if (hold)
            CHECK(old->refcount == 1, "%s: the old buffer has refcount %" PRId64 ", expected 1 "
                  "(ours): x's old reference must be released", what, old->refcount);
        t_assert_shape(&x, before.ndim, before.shape, what);
        CHECK(x.offset == 0, "%s: offset %" PRId64, what, x.offset);
        t_assert_values(&x, want, what, "gather into a new array first, then release a's old "
                        "reference and store the result in *out");
        free(want);
        nd_release(&x);
        if (hold)
            nd_release(&keep);
    }

    /* errors: out untouched; with out == a, a untouched */
    nd_array gone = strided(12, false, 2, shape, st, 0), bad = a;
    nd_release(&gone);
    const nd_array *inputs[3] = { NULL, &gone, &bad };
    const char *names[3] = { "NULL", "a released array", "an array with ndim 9" };
    bad.ndim = ND_MAX_DIMS + 1;
    for (int k = 0; k < 3; k++) {
        t_poison(&out);
        nd_clear_error();
        nd_status s = nd_compact(inputs[k], &out);
        CHECK(s == ND_ERR_ARG && strstr(nd_last_error(), "compact"), "nd_compact of %s returned "
              "%s with message \"%s\", expected ND_ERR_ARG naming \"compact\"", names[k],
              nd_status_name(s), nd_last_error());
        t_assert_untouched(&out, names[k]);
    }
    bad.ndim = -1;
    nd_array b2 = bad;
    CHECK(nd_compact(&bad, &bad) == ND_ERR_ARG && t_same_struct(&bad, &b2), "nd_compact(&x, &x) "
          "of an array with ndim -1 must fail with ND_ERR_ARG and leave x as it was");
    T_ERR(nd_compact(&a, NULL), ND_ERR_ARG);
    CHECK(a.buf->refcount == 1, "failed nd_compact calls changed a's refcount to %" PRId64,
          a.buf->refcount);
    nd_release(&a);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_setitem and nd_setitem_scalar                                        */
/* ---------------------------------------------------------------------- */

/* Whether src's shape may be assigned to dst's by NumPy's rule: extra
 * leading size-1 axes of src are dropped, then broadcasting (from the
 * right, size 1 or equal). */
static bool setitem_fits(int dn, const int64_t *dsh, int sn, const int64_t *ssh)
{
    int skip = 0;
    while (sn - skip > dn && ssh[skip] == 1)
        skip++;
    if (sn - skip > dn)
        return false;
    for (int j = skip; j < sn; j++) {
        int64_t from = ssh[j], to = dsh[dn - (sn - j)];
        if (from != to && from != 1)
            return false;
    }
    return true;
}

/* dst[...] = src (src NULL: = value) done on host copies: `buf` (dst's
 * buffer before, updated in place) and the view's values, row-major. */
static void reference_setitem(const nd_array *dst, const nd_array *src, float value,
                              const float *src_buf, float *buf, float *view_vals)
{
    int64_t n = t_numel(dst->ndim, dst->shape);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[ND_MAX_DIMS], off = dst->offset;
        t_unravel(i, dst->ndim, dst->shape, idx);
        for (int k = 0; k < dst->ndim; k++)
            off += idx[k] * dst->strides[k];
        float v = value;
        if (src != NULL) {
            int64_t so = src->offset, lead = src->ndim - dst->ndim;
            for (int j = 0; j < src->ndim; j++)
                if (j >= lead && src->shape[j] != 1)
                    so += idx[j - lead] * src->strides[j];
            v = src_buf[so];
        }
        view_vals[i] = v;
        buf[off] = v;
    }
}

/* nd_setitem(dst, src) (nd_setitem_scalar when src is NULL) against the
 * reference: the whole of dst's buffer, src's buffer, both structs and
 * both refcounts. */
static void check_setitem(const nd_array *dst, const nd_array *src, float value,
                          const char *what)
{
    int64_t size, src_size = 0, n = t_numel(dst->ndim, dst->shape);
    int64_t drefs = dst->buf->refcount, srefs = src ? src->buf->refcount : 0;
    nd_array dcopy = *dst, scopy = src ? *src : *dst;
    float *before = t_buffer(dst, &size), *want = t_buffer(dst, NULL);
    float *src_before = src ? t_buffer(src, &src_size) : NULL;
    float *vals = t_alloc((size_t)n * sizeof(float));
    reference_setitem(dst, src, value, src_before, want, vals);

    nd_status s = src ? nd_setitem(dst, src) : nd_setitem_scalar(dst, value);
    CHECK(s == ND_OK, "%s: returned %s: %s", what, nd_status_name(s), nd_last_error());
    t_assert_values(dst, vals, what, SETITEM_HINT);
    t_assert_outside_unchanged(dst, before, dst, what);
    float *after = t_buffer(dst, NULL);
    char msg[1200];
    snprintf(msg, sizeof msg, "%s: dst's whole buffer", what);
    t_assert_floats(after, want, 1, &size, msg, SETITEM_HINT);
    if (src != NULL && src->buf != dst->buf) {
        float *src_after = t_buffer(src, NULL);
        snprintf(msg, sizeof msg, "%s: src's buffer", what);
        t_assert_floats(src_after, src_before, 1, &src_size, msg, "setitem never writes src");
        free(src_after);
    }
    CHECK(t_same_struct(dst, &dcopy) && (src == NULL || t_same_struct(src, &scopy)), "%s: setitem "
          "changed the dst or src struct: they are const", what);
    CHECK(dst->buf->refcount == drefs && (src == NULL || src->buf->refcount == srefs ||
                                          src->buf == dst->buf),
          "%s: setitem changed a refcount (dst's is %" PRId64 ", was %" PRId64 "): any view "
          "made inside must be released", what, dst->buf->refcount, drefs);
    free(before);
    free(want);
    free(src_before);
    free(vals);
    free(after);
}

/* A random shape that may be assigned to (ndim, shape): the same, leading
 * axes dropped, some axes 1, sometimes extra leading size-1 axes (up to 8
 * axes in all).  Returns its ndim. */
static int assignable_shape(t_rng *r, int ndim, const int64_t *shape, int64_t *out)
{
    int mode = (int)t_int(r, 0, 3);
    int drop = mode & 1 ? (int)t_int(r, 0, ndim) : 0;
    int room = ND_MAX_DIMS - (ndim - drop);
    int lead = room > 0 && t_int(r, 0, 3) == 0 ? (int)t_int(r, 1, room < 3 ? room : 3) : 0;
    int nd = 0;
    for (int j = 0; j < lead; j++)
        out[nd++] = 1;
    for (int k = drop; k < ndim; k++)
        out[nd++] = mode & 2 && t_int(r, 0, 1) ? 1 : shape[k];
    return nd;
}

START_TEST(setitem_random_in_place)
{
    int64_t s34[2] = { 3, 4 }, st[2] = { 4, 1 }, four = 4, one = 1;
    nd_array d0 = strided(12, false, 2, s34, st, 0), s0 = strided(4, true, 1, &four, &one, 0);
    T_OK(nd_setitem(&d0, &s0));
    nd_release(&d0);
    nd_release(&s0);

    t_rng r = t_rng_new(34001);
    for (int c = 0; c < 5000; c++) {
        int64_t shape[ND_MAX_DIMS], ss[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 5, 800, shape);
        static const int dst_kinds[4] = { 0, 1, 3, 4 };
        nd_array dst = gen_view(&r, ndim, shape, dst_kinds[t_int(&r, 0, 3)], 1 << 14, false);
        int sn = assignable_shape(&r, ndim, shape, ss);
        nd_array src = gen_view(&r, sn, ss, (int)t_int(&r, 0, 4), 1 << 14, true);
        char what[800];
        snprintf(what, sizeof what, "nd_setitem case %d: dst %s, src %s", c, t_describe(&dst),
                 t_describe2(&src));
        check_setitem(&dst, &src, 0, what);
        nd_release(&dst);
        nd_release(&src);
    }
}
END_TEST

START_TEST(setitem_leading_ones)
{
    int64_t d34[2] = { 3, 4 }, st[2] = { 4, 1 }, s114[3] = { 1, 1, 4 }, st3[3] = { 4, 4, 1 };
    nd_array dst = strided(12, false, 2, d34, st, 0);
    nd_array src = strided(4, true, 3, s114, st3, 0);
    T_OK(nd_setitem(&dst, &src));
    nd_release(&src);
    nd_release(&dst);

    /* hand cases: src shape -> dst shape (dst a reversed view of its buffer) */
    static const struct {
        int dn; int64_t dsh[4];
        int sn; int64_t ssh[8];
        bool ok;
    } cases[] = {
        { 2, { 3, 4 }, 3, { 1, 1, 4 }, true },          { 2, { 3, 4 }, 3, { 1, 3, 4 }, true },
        { 2, { 3, 4 }, 4, { 1, 1, 3, 1 }, true },       { 2, { 3, 4 }, 8, { 1, 1, 1, 1, 1, 1, 1, 4 }, true },
        { 0, { 0 }, 3, { 1, 1, 1 }, true },             { 0, { 0 }, 1, { 1 }, true },
        { 1, { 0 }, 2, { 1, 1 }, true },                { 3, { 2, 0, 3 }, 4, { 1, 1, 1, 3 }, true },
        { 2, { 3, 4 }, 3, { 2, 1, 4 }, false },         { 2, { 3, 4 }, 4, { 1, 2, 3, 4 }, false },
        { 2, { 3, 4 }, 3, { 1, 1, 5 }, false },         { 0, { 0 }, 2, { 1, 2 }, false },
        { 1, { 4 }, 3, { 1, 2, 1 }, false },            { 2, { 3, 4 }, 3, { 3, 1, 1 }, false },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t dst_strides[4], n = t_numel(cases[c].dn, cases[c].dsh);
        t_row_major(cases[c].dn, cases[c].dsh, dst_strides);
        int64_t off = 0;
        for (int k = 0; k < cases[c].dn; k++) { /* reverse every axis */
            off += cases[c].dsh[k] > 0 ? (cases[c].dsh[k] - 1) * dst_strides[k] : 0;
            dst_strides[k] = -dst_strides[k];
        }
        if (n == 0)
            off = 0;
        dst = strided(n + 2, false, cases[c].dn, cases[c].dsh, dst_strides, off + 1);
        int64_t src_strides[8], sn = t_numel(cases[c].sn, cases[c].ssh);
        t_row_major(cases[c].sn, cases[c].ssh, src_strides);
        src = strided(sn + 3, true, cases[c].sn, cases[c].ssh, src_strides, 3);
        char what[500], a[200], b[200];
        snprintf(what, sizeof what, "nd_setitem of src shape %s into dst shape %s (dst %s)",
                 nd_shape_str(cases[c].sn, cases[c].ssh, a, sizeof a),
                 nd_shape_str(cases[c].dn, cases[c].dsh, b, sizeof b), t_describe(&dst));
        if (cases[c].ok) {
            check_setitem(&dst, &src, 0, what);
        } else {
            float *before = t_buffer(&dst, NULL);
            int64_t size = (int64_t)(dst.buf->nbytes / sizeof(float));
            expect_fail(nd_setitem(&dst, &src), ND_ERR_SHAPE, "setitem", what);
            float *after = t_buffer(&dst, NULL);
            t_assert_floats(after, before, 1, &size, what, "only LEADING size-1 axes of src "
                            "are dropped; refuse the rest before writing anything");
            free(before);
            free(after);
        }
        nd_release(&dst);
        nd_release(&src);
    }

    /* random: src = extra leading ones + a shape assignable to dst */
    t_rng r = t_rng_new(34501);
    for (int c = 0; c < 1500; c++) {
        int64_t shape[ND_MAX_DIMS], ss[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS - 1, 5, 800, shape);
        int lead = (int)t_int(&r, 1, ND_MAX_DIMS - ndim);
        int sn = lead;
        for (int k = 0; k < lead; k++)
            ss[k] = 1;
        for (int k = 0; k < ndim; k++)
            ss[sn++] = t_int(&r, 0, 2) == 0 ? 1 : shape[k];
        dst = gen_view(&r, ndim, shape, t_int(&r, 0, 1) ? 4 : 1, 1 << 14, false);
        src = gen_view(&r, sn, ss, (int)t_int(&r, 0, 4), 1 << 14, true);
        char what[800];
        snprintf(what, sizeof what, "nd_setitem case %d, src with %d extra leading size-1 "
                 "axes: dst %s, src %s", c, lead, t_describe(&dst), t_describe2(&src));
        check_setitem(&dst, &src, 0, what);
        nd_release(&dst);
        nd_release(&src);
    }
}
END_TEST

/* A view of `shape` over block `slot` of a buffer holding two blocks of
 * numel(shape) elements each: halves (block 0 or 1) or interleaved (even
 * or odd positions), its axes permuted and reversed at random. */
static nd_array block_view(t_rng *r, const nd_array *base, int ndim, const int64_t *shape,
                           int slot, bool interleave)
{
    int perm[ND_MAX_DIMS];
    random_perm(r, ndim, perm);
    int64_t bshape[ND_MAX_DIMS], bs[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    for (int k = 0; k < ndim; k++)
        bshape[perm[k]] = shape[k];
    t_row_major(ndim, bshape, bs);
    int64_t scale = interleave ? 2 : 1, n = t_numel(ndim, shape);
    int64_t offset = interleave ? slot : slot * n;
    for (int k = 0; k < ndim; k++) {
        strides[k] = bs[perm[k]] * scale;
        if (t_int(r, 0, 1) && shape[k] > 0) {
            offset += (shape[k] - 1) * strides[k];
            strides[k] = -strides[k];
        }
    }
    if (n == 0)
        offset = 0;
    nd_array v;
    T_OK(nd_as_strided(base, ndim, shape, strides, offset, &v));
    return v;
}

START_TEST(setitem_aliasing)
{
    int64_t s5 = 5, one = 1;
    nd_array v0 = strided(5, false, 1, &s5, &one, 0);
    T_OK(nd_setitem(&v0, &v0));
    nd_release(&v0);

    t_rng r = t_rng_new(34701);
    for (int c = 0; c < 2000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 5, 600, shape);
        int64_t n = t_numel(ndim, shape);
        char what[800];

        /* setitem(v, v) and setitem(v, w), w another reference to v */
        static const int kinds[4] = { 0, 1, 3, 4 };
        nd_array v = gen_view(&r, ndim, shape, kinds[t_int(&r, 0, 3)], 1 << 14, false), w;
        snprintf(what, sizeof what, "case %d: nd_setitem(&v, &v), v %s", c, t_describe(&v));
        check_setitem(&v, &v, 0, what);
        T_OK(nd_share(&v, &w));
        snprintf(what, sizeof what, "case %d: nd_setitem(&v, &w), w a copy of v %s", c,
                 t_describe(&v));
        check_setitem(&v, &w, 0, what);
        nd_release(&w);
        nd_release(&v);

        /* two disjoint views of one buffer, each permuted and reversed */
        bool inter = t_int(&r, 0, 1);
        nd_array base = buffer_of(2 * n + 1, false);
        int slot = (int)t_int(&r, 0, 1);
        nd_array dst = block_view(&r, &base, ndim, shape, slot, inter);
        nd_array src = block_view(&r, &base, ndim, shape, 1 - slot, inter);
        snprintf(what, sizeof what, "case %d: nd_setitem in one buffer of %" PRId64 ", %s: "
                 "dst %s, src %s", c, 2 * n + 1, inter ? "interleaved" : "two halves",
                 t_describe(&dst), t_describe2(&src));
        check_setitem(&dst, &src, 0, what);
        /* and a broadcast of one element of the other block */
        if (n > 0) {
            int64_t zeros[ND_MAX_DIMS] = { 0 };
            nd_array one_el;
            T_OK(nd_as_strided(&base, ndim, shape, zeros, src.offset, &one_el));
            snprintf(what, sizeof what, "case %d: nd_setitem(dst, one element of the same "
                     "buffer broadcast, %s): dst %s", c, t_describe(&one_el), t_describe2(&dst));
            check_setitem(&dst, &one_el, 0, what);
            nd_release(&one_el);
        }
        nd_release(&dst);
        nd_release(&src);
        nd_release(&base);
    }
}
END_TEST

START_TEST(setitem_scalar_views)
{
    int64_t s3 = 3, m1 = -1;
    nd_array v0 = strided(5, false, 1, &s3, &m1, 4);
    T_OK(nd_setitem_scalar(&v0, 2.5f));
    nd_release(&v0);

    static const float specials[] = { 0.0f, -0.0f, INFINITY, -INFINITY, 1e30f, -1e-40f,
                                      3.25f, NAN };
    t_rng r = t_rng_new(34901);
    for (int c = 0; c < 2000; c++) {
        int64_t shape[ND_MAX_DIMS];
        int ndim = gen_shape(&r, 0, ND_MAX_DIMS, 6, 1500, shape);
        static const int kinds[4] = { 1, 3, 4, 4 };
        nd_array dst = gen_view(&r, ndim, shape, kinds[c % 4], 1 << 15, false);
        float value = specials[c % 8];
        char what[400];
        snprintf(what, sizeof what, "nd_setitem_scalar case %d: dst %s, value %g", c,
                 t_describe(&dst), (double)value);
        check_setitem(&dst, NULL, value, what);
        if (value == 0.0f && nd_numel(&dst) > 0) { /* the sign of zero is kept */
            float *got = gather_ref(&dst);
            CHECK(signbit(got[0]) == signbit(value), "%s: wrote %g, not %g", what,
                  (double)got[0], (double)value);
            free(got);
        }
        nd_release(&dst);
    }
    /* a scalar view at an offset: exactly that element */
    nd_array sc = strided(9, false, 0, NULL, NULL, 7);
    check_setitem(&sc, NULL, -1.0f, "nd_setitem_scalar of a scalar view at offset 7");
    nd_release(&sc);
}
END_TEST

START_TEST(setitem_large)
{
    int64_t s2 = 2, one = 1;
    nd_array v0 = strided(2, false, 1, &s2, &one, 0);
    T_OK(nd_setitem_scalar(&v0, 1.0f));
    nd_release(&v0);

    const int64_t n = INT64_C(1) << 22;
    int64_t sq[2] = { 2048, 2048 }, tr[2] = { 1, 2048 }, rm[2] = { 2048, 1 };
    /* dst a transpose, src a compact array: the buffer becomes the transpose */
    nd_array dst = strided(n, false, 2, sq, tr, 0), src = strided(n, true, 2, sq, rm, 0);
    check_setitem(&dst, &src, 0, "nd_setitem of a compact (2048,2048) src into a transposed "
                  "dst");
    nd_release(&src);
    /* a broadcast row and a broadcast column */
    int64_t row = 2048, col[2] = { 2048, 1 };
    src = strided(2048, true, 1, &row, &one, 0);
    check_setitem(&dst, &src, 0, "nd_setitem of a (2048,) row into a transposed (2048,2048) "
                  "dst");
    nd_release(&src);
    int64_t col_st[2] = { 1, 1 };
    src = strided(2048, true, 2, col, col_st, 0);
    check_setitem(&dst, &src, 0, "nd_setitem of a (2048,1) column into a transposed "
                  "(2048,2048) dst");
    nd_release(&src);
    nd_release(&dst);
    /* 8 axes, every axis reversed and the last one with step 2: half the
     * buffer written, by nd_setitem_scalar */
    int64_t s8[8] = { 8, 8, 8, 8, 8, 8, 4, 2 }, st8[8] = { -524288, -65536, -8192, -1024, -128,
                                                          -16, -4, -2 };
    dst = strided(n, false, 8, s8, st8, n - 1);
    check_setitem(&dst, NULL, 7.0f, "nd_setitem_scalar of a reversed 8-D view of half a "
                  "2^22-element buffer");
    nd_release(&dst);
}
END_TEST

START_TEST(setitem_shape_rules)
{
    int64_t s3 = 3, one = 1;
    nd_array d0 = strided(3, false, 1, &s3, &one, 0), s0 = strided(1, true, 1, &one, &one, 0);
    T_OK(nd_setitem(&d0, &s0));
    nd_release(&d0);
    nd_release(&s0);

    /* every dst of 0..2 axes and src of 0..3 axes, sizes 0..3 */
    enum { NSHAPES = 85 };
    int nd[NSHAPES];
    int64_t sh[NSHAPES][3];
    for (int i = 0, c = 0; c < 4; c++) {
        int count = c == 0 ? 1 : c == 1 ? 4 : c == 2 ? 16 : 64;
        for (int x = 0; x < count; x++, i++) {
            nd[i] = c;
            for (int k = 0, y = x; k < c; k++, y /= 4)
                sh[i][k] = y % 4;
        }
    }
    t_rng r = t_rng_new(35001);
    for (int i = 0; i < 21; i++) { /* dst: the shapes of 0..2 axes */
        for (int j = 0; j < NSHAPES; j++) {
            nd_array dst = gen_view(&r, nd[i], sh[i], 4, 1 << 10, false);
            nd_array src = gen_view(&r, nd[j], sh[j], (int)t_int(&r, 0, 3), 1 << 10, true);
            char what[600], a[100], b[100];
            nd_shape_str(nd[j], sh[j], a, sizeof a);
            nd_shape_str(nd[i], sh[i], b, sizeof b);
            snprintf(what, sizeof what, "nd_setitem of src %s into dst %s (dst %s, src %s)", a,
                     b, t_describe(&dst), t_describe2(&src));
            if (setitem_fits(nd[i], sh[i], nd[j], sh[j])) {
                check_setitem(&dst, &src, 0, what);
            } else {
                float *before = t_buffer(&dst, NULL);
                int64_t size = (int64_t)(dst.buf->nbytes / sizeof(float));
                expect_fail(nd_setitem(&dst, &src), ND_ERR_SHAPE, "setitem", what);
                CHECK(strstr(nd_last_error(), a) && strstr(nd_last_error(), b), "%s: the "
                      "message \"%s\" should name both shapes, %s and %s", what,
                      nd_last_error(), a, b);
                float *after = t_buffer(&dst, NULL);
                t_assert_floats(after, before, 1, &size, what, "check that src broadcasts to "
                                "dst before writing anything");
                free(before);
                free(after);
            }
            nd_release(&dst);
            nd_release(&src);
        }
    }

    /* bad arrays: ND_ERR_ARG, nothing written */
    int64_t s34[2] = { 3, 4 }, st[2] = { 4, 1 };
    nd_array dst = strided(12, false, 2, s34, st, 0), src = strided(4, true, 1, &s34[1], &one, 0);
    nd_array gone = strided(4, true, 1, &s34[1], &one, 0), bad = dst;
    nd_release(&gone);
    bad.ndim = ND_MAX_DIMS + 1;
    float *before = t_buffer(&dst, NULL);
    EXPECT_FAIL(ND_ERR_ARG, "setitem", nd_setitem(NULL, &src));
    EXPECT_FAIL(ND_ERR_ARG, "setitem", nd_setitem(&dst, NULL));
    EXPECT_FAIL(ND_ERR_ARG, "setitem", nd_setitem(&gone, &src));
    EXPECT_FAIL(ND_ERR_ARG, "setitem", nd_setitem(&dst, &gone));
    EXPECT_FAIL(ND_ERR_ARG, "setitem", nd_setitem(&bad, &src));
    EXPECT_FAIL(ND_ERR_ARG, "setitem", nd_setitem_scalar(NULL, 1.0f));
    EXPECT_FAIL(ND_ERR_ARG, "setitem", nd_setitem_scalar(&gone, 1.0f));
    EXPECT_FAIL(ND_ERR_ARG, "setitem", nd_setitem_scalar(&bad, 1.0f));
    bad.ndim = -1;
    EXPECT_FAIL(ND_ERR_ARG, "setitem", nd_setitem(&dst, &bad));
    float *after = t_buffer(&dst, NULL);
    int64_t size = 12;
    t_assert_floats(after, before, 1, &size, "dst's buffer after failed setitem calls",
                    "check every argument before writing anything");
    free(before);
    free(after);
    nd_release(&src);
    nd_release(&dst);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The suite: points and hints                                            */
/* ---------------------------------------------------------------------- */

Suite *hidden_02_compact(void);

Suite *hidden_02_compact(void)
{
    Suite *s = g_suite(2, "02_compact");
    G_ADD_HOST(s, iter_order_8d, 3,
               "turn the last digit first; past its size reset it to 0 and carry into the "
               "axis before it; copy the shape at init and keep all state in the struct; "
               "total is the product of the sizes, in int64_t");
    G_ADD_HOST(s, iter_stops_and_empty, 2,
               "once count == total return false and change nothing, however often you are "
               "called; a 0 anywhere in the shape means no position at all; a scalar has one");
    G_ADD_HOST(s, iter_errors, 1,
               "check ndim and every size (the last one too) before writing anything into "
               "the iterator");
    G_ADD_HOST(s, simplify_exact, 5,
               "drop every size-1 axis first (its stride is junk), then merge neighbours "
               "wherever every operand has strides[k] == shape[k+1]*strides[k+1] (negative and "
               "0 strides included); the merged axis keeps the inner stride");
    G_ADD_HOST(s, simplify_one_operand_allows, 3,
               "a merge needs strides_a AND strides_b to allow it: one operand being "
               "contiguous is not enough");
    G_ADD_HOST(s, simplify_errors, 1,
               "validate ndim, shape and strides_a before rewriting anything; read and write "
               "only the first *ndim entries");
    G_ADD(s, compact_random_8d, 4,
          "a fresh buffer of exactly numel floats, offset 0, row-major strides, filled in "
          "row-major order from data[offset + sum(index[k]*strides[k])]; a is never modified");
    G_ADD(s, compact_offset_windows, 3,
          "a compact view may start anywhere in its buffer: copy from data + offset, not from "
          "the buffer's start");
    G_ADD(s, compact_negative_strides, 3,
          "a negative stride walks backwards from the offset: never take |stride|, and a run "
          "with stride -1 is not a forward memcpy");
    G_ADD_CPU(s, compact_large, 3,
          "2^22-element transposes, reversed and 8-D views must be gathered in one pass of "
          "int64_t offsets; check the edges of any blocked copy");
    G_ADD(s, compact_alias_and_errors, 2,
          "with out == a, gather into a new array first, then release a's old reference and "
          "store the result; on an error leave *out (even a itself) as it was");
    G_ADD(s, setitem_random_in_place, 5, SETITEM_HINT);
    G_ADD(s, setitem_leading_ones, 3,
          "as NumPy, drop src's extra LEADING size-1 axes before broadcasting: (1,1,4) fits "
          "(3,4); (2,1,4) does not, and neither does a non-1 leading axis");
    G_ADD(s, setitem_aliasing, 3,
          "setitem(v, v) must leave v as it is; a src elsewhere in dst's buffer is read "
          "through its own offset and strides (a stride-0 src repeats one element)");
    G_ADD(s, setitem_scalar_views, 3,
          "write the value through dst's offset and signed strides, to numel(dst) elements "
          "and no others; NaN, inf and -0.0 are values like any other");
    G_ADD_CPU(s, setitem_large, 3,
          "a transposed 2^22-element dst and 8-D reversed views: int64_t offsets, one pass");
    G_ADD(s, setitem_shape_rules, 2,
          "check that src fits dst (from the right: equal or 1; extra leading 1s dropped) "
          "before writing anything; ND_ERR_SHAPE names both shapes; a NULL, released or "
          "broken array is ND_ERR_ARG");
    return s;
}
