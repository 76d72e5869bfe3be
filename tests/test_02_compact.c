/*
 * test_02_compact.c -- public tests of lesson 2: the odometer (nd_iter),
 * nd_simplify_dims, nd_compact (a strided gather) and nd_setitem /
 * nd_setitem_scalar (a strided scatter).
 *
 * The reference never calls lesson code.  Views are made with nd_as_strided
 * (through the t_random_* helpers, or directly for broadcast, reversed and
 * transposed views), never with lesson 1's functions, so that lesson 2 is
 * graded on its own.  Expected values come from t_gather, or from the loops
 * below, which visit every position with t_unravel and read or write a raw
 * host copy of the buffer at offset + sum(index[k] * strides[k]).
 *
 * Every test first calls a lesson-2 function on a valid input and requires
 * ND_OK, so that an unwritten lesson fails every test with "not
 * implemented", and an implementation that refuses everything cannot pass
 * an error test.  Random cases use fixed seeds: a failure repeats.
 */
#include "nd_test.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

#define COMPACT_HINT "walk a's positions in row-major order and read " \
    "data[offset + sum(index[k]*strides[k])]: strides may be negative or 0, " \
    "and the offset need not be 0"
#define SETITEM_HINT "setitem must write through dst's strides and offset, not " \
    "assume dst is compact; read src through its own strides, repeating a " \
    "broadcast axis (size 1, or missing on the left)"

/* Like T_OK, but the failure message starts with `what`, the case. */
#define T_OK_CASE(call, what)                                                   \
    do {                                                                        \
        nd_status s_ = (call);                                                  \
        ck_assert_msg(s_ == ND_OK, "%s: %s returned %s: %s", (what), #call,     \
                      nd_status_name(s_), nd_last_error());                     \
    } while (0)

/* Like T_ERR, and the message must name the operation `op`. */
/* The same view over a new buffer of the same size holding -0.25, -1.25,
 * ...: values no buffer of t_random_view holds (those are 0.5, 1.5, ...),
 * so a value copied from the wrong array shows.  Releases v. */
static nd_array relabel(nd_array v)
{
    int64_t size = (int64_t)(v.buf->nbytes / sizeof(float));
    float *vals = t_floats(size);
    for (int64_t i = 0; i < size; i++)
        vals[i] = -(float)i - 0.25f;
    nd_array out = t_view_of(size, vals, v.ndim, v.shape, v.strides, v.offset);
    free(vals);
    nd_release(&v);
    return out;
}

/* A view of a view, made as slicing would make it but with nd_as_strided:
 * per axis a step of +-1 or +-2 over part of the axis, and sometimes one
 * position only (the axis dropped).  Releases v. */
static nd_array sub_view(t_rng *r, nd_array v)
{
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS], offset = v.offset;
    bool empty = t_numel(v.ndim, v.shape) == 0; /* then only offset is safe */
    int nd = 0;
    for (int k = 0; k < v.ndim; k++) {
        int64_t n = v.shape[k];
        if (empty || n == 0) {
            shape[nd] = n;
            strides[nd++] = v.strides[k];
            continue;
        }
        if (t_int(r, 0, 4) == 0) { /* one position: the axis goes */
            offset += t_int(r, 0, n - 1) * v.strides[k];
            continue;
        }
        int64_t m = t_int(r, 1, 2), step = t_int(r, 0, 1) ? m : -m;
        int64_t count = t_int(r, 0, 7) == 0 ? 0 : t_int(r, 1, (n - 1) / m + 1);
        int64_t span = count > 0 ? (count - 1) * m : 0;
        int64_t start = step > 0 ? t_int(r, 0, n - 1 - span) : t_int(r, span, n - 1);
        offset += start * v.strides[k];
        shape[nd] = count;
        strides[nd++] = step * v.strides[k];
    }
    nd_array w;
    T_OK(nd_as_strided(&v, nd, shape, strides, offset, &w));
    nd_release(&v);
    return w;
}

/* nd_compact_version(a, version) (0: nd_compact itself) must give a NEW
 * compact array holding want (row-major), leaving a and its buffer as they
 * were. */
static void check_compact_version(const nd_array *a, int version, const float *want,
                                  const char *what)
{
    int64_t size, n = t_numel(a->ndim, a->shape), refs = a->buf->refcount;
    float *before = t_buffer(a, &size);
    nd_array copy = *a, out;
    if (version == 0)
        T_OK_CASE(nd_compact(a, &out), what);
    else
        T_OK_CASE(nd_compact_version(a, version, &out, NULL), what);

    t_assert_shape(&out, a->ndim, a->shape, what);
    ck_assert_msg(out.buf != NULL && out.buf != a->buf,
                  "%s: nd_compact must copy into a new buffer, even when a is compact", what);
    ck_assert_msg(out.buf->device == T_DEV, "%s: the result lives on %s, a on %s", what,
                  nd_device_name(out.buf->device), nd_device_name(T_DEV));
    ck_assert_msg(out.buf->refcount == 1, "%s: the new buffer has refcount %" PRId64
                  ", expected 1 (out's reference only)", what, out.buf->refcount);
    ck_assert_msg(out.buf->nbytes == (size_t)n * sizeof(float),
                  "%s: the new buffer has %zu bytes, expected exactly %" PRId64
                  " floats (%" PRId64 " bytes)", what, out.buf->nbytes, n,
                  n * (int64_t)sizeof(float));
    ck_assert_msg(out.offset == 0, "%s: the result has offset %" PRId64 ", expected 0",
                  what, out.offset);
    /* Row-major strides; those of size-1 axes, or of an empty array, are
     * never used, as nd_is_compact says. */
    for (int64_t k = out.ndim - 1, s = 1; k >= 0 && n > 0; s *= out.shape[k--])
        ck_assert_msg(out.shape[k] == 1 || out.strides[k] == s,
                      "%s: the result %s is not compact: stride %" PRId64 " on axis %d, "
                      "expected %" PRId64 " (row-major)", what, t_describe(&out),
                      out.strides[k], (int)k, s);
    t_assert_values(&out, want, what, COMPACT_HINT);

    float *after = t_buffer(a, NULL);
    char in_buf[800];
    snprintf(in_buf, sizeof in_buf, "%s: the input's buffer", what);
    t_assert_floats(after, before, 1, &size, in_buf, "compact reads its input and never "
                    "writes it");
    ck_assert_msg(t_same_view(a, &copy) && a->buf->refcount == refs,
                  "%s: nd_compact changed its input view or its buffer's refcount", what);
    nd_release(&out);
    free(before);
    free(after);
}

static void check_compact(const nd_array *a, const float *want, const char *what)
{
    check_compact_version(a, 0, want, what);
}

/* The host reference of dst[...] = src (or = value when src is NULL):
 * for every position of dst's shape, the value src has there under NumPy
 * broadcasting (src's axes aligned at the right; a size-1 or missing axis
 * repeats) goes to dst's offset of that position.  Writes the expected
 * buffer into `buf` (a copy of dst's buffer before) and the values dst
 * must show, row-major, into view_vals.  src_buf is src's buffer before. */
static void reference_setitem(const nd_array *dst, const nd_array *src, float value,
                              const float *src_buf, float *buf, float *view_vals)
{
    int64_t n = t_numel(dst->ndim, dst->shape);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[ND_MAX_DIMS], dst_off = dst->offset;
        t_unravel(i, dst->ndim, dst->shape, idx);
        for (int k = 0; k < dst->ndim; k++)
            dst_off += idx[k] * dst->strides[k];
        float v = value;
        if (src != NULL) {
            int64_t src_off = src->offset, lead = src->ndim - dst->ndim;
            for (int j = 0; j < src->ndim; j++)
                if (j >= lead && src->shape[j] != 1)
                    src_off += idx[j - lead] * src->strides[j];
            v = src_buf[src_off];
        }
        buf[dst_off] = v;
        view_vals[i] = v;
    }
}

/* Run nd_setitem(dst, src), or nd_setitem_scalar(dst, value) when src is
 * NULL, and require exactly the reference's buffer: dst's positions hold
 * src's values, every other element is as it was, and src is unchanged. */
static void check_setitem(const nd_array *dst, const nd_array *src, float value,
                          const char *what)
{
    int64_t size, src_size = 0, n = t_numel(dst->ndim, dst->shape);
    float *before = t_buffer(dst, &size), *want = t_buffer(dst, NULL);
    float *src_before = src != NULL ? t_buffer(src, &src_size) : NULL;
    float *view_vals = t_floats(n);
    reference_setitem(dst, src, value, src_before, want, view_vals);

    if (src != NULL)
        T_OK_CASE(nd_setitem(dst, src), what);
    else
        T_OK_CASE(nd_setitem_scalar(dst, value), what);

    t_assert_values(dst, view_vals, what, SETITEM_HINT);
    t_assert_outside_unchanged(dst, before, dst, what);
    float *after = t_buffer(dst, NULL);
    char buf_what[900];
    snprintf(buf_what, sizeof buf_what, "%s: dst's whole buffer", what);
    t_assert_floats(after, want, 1, &size, buf_what, SETITEM_HINT);
    if (src != NULL && src->buf != dst->buf) {
        float *src_after = t_buffer(src, NULL);
        snprintf(buf_what, sizeof buf_what, "%s: src's buffer", what);
        t_assert_floats(src_after, src_before, 1, &src_size, buf_what,
                        "setitem reads src and never writes it");
        free(src_after);
    }
    free(before);
    free(want);
    free(src_before);
    free(view_vals);
    free(after);
}

/* A random shape that broadcasts to dst's (ndim, shape), as NumPy's
 * setitem accepts: the same, or with leading axes dropped, some axes set
 * to 1, sometimes extra leading axes of size 1.  Returns its ndim. */
static int broadcastable_shape(t_rng *r, int ndim, const int64_t *shape, int64_t *out)
{
    int mode = (int)t_int(r, 0, 3); /* 0 same, 1 drop, 2 ones, 3 both */
    int drop = mode & 1 ? (int)t_int(r, 0, ndim) : 0;
    int lead = ndim - drop < ND_MAX_DIMS && t_int(r, 0, 5) == 0 ? (int)t_int(r, 1, 2) : 0;
    if (ndim - drop + lead > ND_MAX_DIMS)
        lead = ND_MAX_DIMS - (ndim - drop);
    int nd = 0;
    for (int j = 0; j < lead; j++)
        out[nd++] = 1;
    for (int k = drop; k < ndim; k++)
        out[nd++] = mode & 2 && t_int(r, 0, 1) ? 1 : shape[k];
    return nd;
}

/* The nd_iter struct is an output too: on an error it must stay as it was. */
static void iter_poison(nd_iter *it) { memset(it, 0xAB, sizeof *it); }

static void iter_assert_untouched(const nd_iter *it, const char *what)
{
    const unsigned char *p = (const unsigned char *)it;
    for (size_t i = 0; i < sizeof *it; i++)
        ck_assert_msg(p[i] == 0xAB, "%s failed but wrote to the iterator (byte %zu): "
                      "on an error, leave every output as it was", what, i);
}

/* Visit every position of shape with nd_iter; require t_unravel's order. */
static void check_iter(int ndim, const int64_t *shape, const char *what)
{
    nd_iter it;
    iter_poison(&it); /* garbage: init must set everything it uses */
    T_OK_CASE(nd_iter_init(&it, ndim, shape), what);
    int64_t n = t_numel(ndim, shape), i = 0;
    ck_assert_msg(it.ndim == ndim && it.total == n && it.count == 0,
                  "%s: after nd_iter_init, ndim=%d total=%" PRId64 " count=%" PRId64
                  ", expected ndim=%d total=%" PRId64 " count=0", what, it.ndim, it.total,
                  it.count, ndim, n);
    for (; nd_iter_next(&it); i++) {
        ck_assert_msg(i < n, "%s: nd_iter_next gave more than the %" PRId64 " positions",
                      what, n);
        int64_t want[ND_MAX_DIMS];
        t_unravel(i, ndim, shape, want);
        char w[200], g[200];
        ck_assert_msg(memcmp(it.index, want, (size_t)ndim * sizeof(int64_t)) == 0,
                      "%s: position %" PRId64 " should be index %s, got %s. Hint: the last "
                      "axis moves fastest; past its end it goes back to 0 and the axis "
                      "before it moves one", what, i, nd_shape_str(ndim, want, w, sizeof w),
                      nd_shape_str(ndim, it.index, g, sizeof g));
        ck_assert_msg(it.count == i + 1, "%s: count is %" PRId64 " after %" PRId64
                      " positions", what, it.count, i + 1);
    }
    ck_assert_msg(i == n, "%s: nd_iter_next gave %" PRId64 " positions, expected %" PRId64,
                  what, i, n);
    ck_assert_msg(it.count == n, "%s: count is %" PRId64 " at the end, expected %" PRId64,
                  what, it.count, n);
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

/* Every (offset_a, offset_b) pair a layout reaches, in row-major order:
 * 2 * numel entries, malloc'd (offset_b is 0 without strides_b). */
static int64_t *layout_offsets(int ndim, const int64_t *shape, const int64_t *sa,
                               const int64_t *sb)
{
    int64_t n = t_numel(ndim, shape);
    int64_t *offs = malloc((size_t)(2 * n + 1) * sizeof(int64_t));
    ck_assert(offs != NULL);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[ND_MAX_DIMS], a = 0, b = 0;
        t_unravel(i, ndim, shape, idx);
        for (int k = 0; k < ndim; k++) {
            a += idx[k] * sa[k];
            b += sb ? idx[k] * sb[k] : 0;
        }
        offs[2 * i] = a;
        offs[2 * i + 1] = b;
    }
    return offs;
}

/* nd_simplify_dims on a copy of the layout must reach the same offsets in
 * the same order, with no size-1 axis and no mergeable pair left. */
static void check_simplify(int ndim, const int64_t *shape, const int64_t *sa,
                           const int64_t *sb, const char *what)
{
    int nd = ndim;
    int64_t sh[ND_MAX_DIMS], a[ND_MAX_DIMS], b[ND_MAX_DIMS];
    memcpy(sh, shape, (size_t)ndim * sizeof *sh);
    memcpy(a, sa, (size_t)ndim * sizeof *a);
    if (sb != NULL)
        memcpy(b, sb, (size_t)ndim * sizeof *b);
    T_OK_CASE(nd_simplify_dims(&nd, sh, a, sb ? b : NULL), what);

    char in[700], got[700];
    layout_str(in, sizeof in, ndim, shape, sa, sb);
    ck_assert_msg(nd >= 0 && nd <= ndim, "%s: %s became %d axes", what, in, nd);
    layout_str(got, sizeof got, nd, sh, a, sb ? b : NULL);
    int64_t n = t_numel(ndim, shape);
    ck_assert_msg(t_numel(nd, sh) == n, "%s: %s became %s: %" PRId64 " positions instead "
                  "of %" PRId64, what, in, got, t_numel(nd, sh), n);
    for (int k = 0; k < nd; k++)
        ck_assert_msg(sh[k] != 1, "%s: %s became %s, which still has a size-1 axis (%d)",
                      what, in, got, k);
    for (int k = 0; k + 1 < nd; k++)
        ck_assert_msg(!(a[k] == sh[k + 1] * a[k + 1] &&
                        (sb == NULL || b[k] == sh[k + 1] * b[k + 1])),
                      "%s: %s became %s, whose axes %d and %d could still merge", what,
                      in, got, k, k + 1);
    int64_t *want = layout_offsets(ndim, shape, sa, sb);
    int64_t *have = layout_offsets(nd, sh, a, sb ? b : NULL);
    for (int64_t i = 0; i < 2 * n; i++) {
        if (want[i] != have[i]) {
            int64_t idx[ND_MAX_DIMS];
            t_unravel(i / 2, ndim, shape, idx);
            ck_abort_msg("%s: %s became %s; at position %" PRId64 " (index %s) operand %c "
                         "should reach offset %" PRId64 ", the simplified layout reaches %"
                         PRId64 ". Hint: merge axes k, k+1 only where strides[k] == "
                         "shape[k+1] * strides[k+1] for every operand; the merged axis "
                         "keeps strides[k+1]", what, in, got, i / 2,
                         t_index_str(ndim, idx), i % 2 ? 'b' : 'a', want[i], have[i]);
        }
    }
    free(want);
    free(have);
}

/* Random strides of the kinds a loop meets: a row-major layout of a base
 * that may be padded, permuted, reversed, or broadcast (stride 0), so that
 * some neighbours merge and some do not; sometimes arbitrary numbers. */
static void random_strides(t_rng *r, int ndim, const int64_t *shape, int64_t *strides)
{
    if (t_int(r, 0, 4) == 0) {
        for (int k = 0; k < ndim; k++)
            strides[k] = t_int(r, -6, 6);
        return;
    }
    int perm[ND_MAX_DIMS];
    for (int k = 0; k < ndim; k++)
        perm[k] = k;
    if (ndim > 1 && t_int(r, 0, 1)) { /* swap two axes */
        int i = (int)t_int(r, 0, ndim - 1), j = (int)t_int(r, 0, ndim - 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    int64_t s = t_int(r, 1, 2);
    for (int j = ndim - 1; j >= 0; j--) {
        int k = perm[j];
        strides[k] = s;
        s *= (shape[k] > 0 ? shape[k] : 1) + (t_int(r, 0, 4) == 0 ? 1 : 0);
    }
    bool flip_all = t_int(r, 0, 3) == 0;
    for (int k = 0; k < ndim; k++) {
        if (flip_all || t_int(r, 0, 7) == 0)
            strides[k] = -strides[k];
        if (t_int(r, 0, 7) == 0)
            strides[k] = 0;
    }
}

/* ---------------------------------------------------------------------- */
/* nd_iter                                                                */
/* ---------------------------------------------------------------------- */

START_TEST(iter_order)
{
    int64_t small[2] = { 2, 3 };
    check_iter(2, small, "nd_iter over shape (2,3)");

    t_rng r = t_rng_new(2);
    for (int c = 0; c < 300; c++) {
        int nd = c % (ND_MAX_DIMS + 1);
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 4, c % 5 == 0, 1000, shape);
        char what[300], sh[200];
        snprintf(what, sizeof what, "nd_iter case %d, shape %s", c,
                 nd_shape_str(nd, shape, sh, sizeof sh));
        check_iter(nd, shape, what);
    }
}
END_TEST

START_TEST(iter_scalar_and_empty)
{
    int64_t unused = 7; /* shape is not read when ndim is 0 */
    check_iter(0, &unused, "nd_iter over a scalar (ndim 0): exactly one position");
    int64_t ones[ND_MAX_DIMS] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    check_iter(ND_MAX_DIMS, ones, "nd_iter over shape (1,1,1,1,1,1,1,1)");

    static const struct { int ndim; int64_t shape[4]; } empty[] = {
        { 1, { 0 } }, { 2, { 3, 0 } }, { 3, { 0, 5, 2 } }, { 4, { 2, 3, 0, 4 } },
    };
    for (size_t c = 0; c < sizeof empty / sizeof empty[0]; c++) {
        char what[300], sh[200];
        snprintf(what, sizeof what, "nd_iter over shape %s: a size 0 gives no positions",
                 nd_shape_str(empty[c].ndim, empty[c].shape, sh, sizeof sh));
        check_iter(empty[c].ndim, empty[c].shape, what);
    }
}
END_TEST

START_TEST(iter_past_end)
{
    static const struct { int ndim; int64_t shape[3]; } cases[] = {
        { 3, { 2, 3, 4 } }, { 2, { 3, 0 } }, { 0, { 0 } }, { 1, { 1 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int nd = cases[c].ndim;
        char sh[200];
        nd_shape_str(nd, cases[c].shape, sh, sizeof sh);
        nd_iter it;
        T_OK(nd_iter_init(&it, nd, cases[c].shape));
        int64_t n = 0, last[ND_MAX_DIMS];
        memcpy(last, it.index, sizeof last);
        while (nd_iter_next(&it) && n <= it.total) {
            memcpy(last, it.index, sizeof last);
            n++;
        }
        for (int again = 0; again < 3; again++) {
            ck_assert_msg(!nd_iter_next(&it), "shape %s: nd_iter_next returned true again "
                          "after the last position", sh);
            ck_assert_msg(memcmp(it.index, last, (size_t)nd * sizeof(int64_t)) == 0,
                          "shape %s: nd_iter_next changed index after the end "
                          "(call %d past the end)", sh, again + 1);
            ck_assert_msg(it.count == n, "shape %s: count is %" PRId64 " after the end, "
                          "expected %" PRId64, sh, it.count, n);
        }
    }
}
END_TEST

START_TEST(iter_errors)
{
    int64_t shape[ND_MAX_DIMS + 1] = { 2, 3, 1, 1, 1, 1, 1, 1, 1 };
    nd_iter it;
    T_OK(nd_iter_init(&it, 2, shape));

    iter_poison(&it);
    T_ERR(nd_iter_init(&it, ND_MAX_DIMS + 1, shape), ND_ERR_ARG);
    iter_assert_untouched(&it, "nd_iter_init with ndim 9");
    T_ERR(nd_iter_init(&it, -1, shape), ND_ERR_ARG);
    iter_assert_untouched(&it, "nd_iter_init with ndim -1");
    int64_t negative[2] = { 2, -1 };
    T_ERR(nd_iter_init(&it, 2, negative), ND_ERR_ARG);
    iter_assert_untouched(&it, "nd_iter_init with shape (2,-1)");
    T_ERR(nd_iter_init(&it, 2, NULL), ND_ERR_ARG);
    iter_assert_untouched(&it, "nd_iter_init with a NULL shape");
    T_ERR(nd_iter_init(NULL, 2, shape), ND_ERR_ARG);
    ck_assert_msg(!nd_iter_next(NULL), "nd_iter_next(NULL) must return false");
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_simplify_dims                                                       */
/* ---------------------------------------------------------------------- */

START_TEST(simplify_cases)
{
    static const struct {
        const char *why;
        int ndim;
        int64_t shape[3], sa[3], sb[3];
        bool has_b;
        int want_ndim;
        int64_t want_shape[3], want_sa[3], want_sb[3];
    } cases[] = {
        { "a compact array is one run", 3, { 2, 3, 4 }, { 12, 4, 1 }, { 0 }, false,
          1, { 24 }, { 1 }, { 0 } },
        { "size-1 axes vanish, whatever their stride", 3, { 1, 5, 1 }, { 7, 1, 3 }, { 0 },
          false, 1, { 5 }, { 1 }, { 0 } },
        { "a size-1 axis in the middle does not stop a merge", 3, { 2, 1, 3 }, { 3, 99, 1 },
          { 0 }, false, 1, { 6 }, { 1 }, { 0 } },
        { "a transpose cannot merge", 2, { 4, 3 }, { 1, 4 }, { 0 }, false,
          2, { 4, 3 }, { 1, 4 }, { 0 } },
        { "every axis of size 1: a scalar", 3, { 1, 1, 1 }, { 1, 1, 1 }, { 0 }, false,
          0, { 0 }, { 0 }, { 0 } },
        { "ndim 0 stays 0", 0, { 0 }, { 0 }, { 0 }, false, 0, { 0 }, { 0 }, { 0 } },
        { "one axis stays", 1, { 5 }, { 2 }, { 0 }, false, 1, { 5 }, { 2 }, { 0 } },
        { "a reversed compact array is one backward run", 2, { 3, 4 }, { -4, -1 }, { 0 },
          false, 1, { 12 }, { -1 }, { 0 } },
        { "a full broadcast merges (stride 0 everywhere)", 2, { 3, 4 }, { 0, 0 }, { 0 },
          false, 1, { 12 }, { 0 }, { 0 } },
        { "a broadcast row does not merge with its columns", 2, { 3, 4 }, { 0, 1 }, { 0 },
          false, 2, { 3, 4 }, { 0, 1 }, { 0 } },
        { "rows of a padded base: only the inner axes merge", 3, { 2, 3, 4 }, { 20, 4, 1 },
          { 0 }, false, 2, { 2, 12 }, { 20, 1 }, { 0 } },
        { "two operands merge only where both allow it", 3, { 2, 3, 4 }, { 12, 4, 1 },
          { 40, 4, 1 }, true, 2, { 2, 12 }, { 12, 1 }, { 40, 1 } },
        { "b transposed: nothing merges", 3, { 2, 3, 4 }, { 12, 4, 1 }, { 1, 2, 6 }, true,
          3, { 2, 3, 4 }, { 12, 4, 1 }, { 1, 2, 6 } },
        { "size-1 axes drop from both operands", 3, { 2, 1, 3 }, { 3, 3, 1 }, { 1, 5, 2 },
          true, 2, { 2, 3 }, { 3, 1 }, { 1, 2 } },
        { "two compact operands are one run", 2, { 2, 3 }, { 3, 1 }, { 3, 1 }, true,
          1, { 6 }, { 1 }, { 1 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int nd = cases[c].ndim;
        int64_t sh[3], a[3], b[3];
        memcpy(sh, cases[c].shape, sizeof sh);
        memcpy(a, cases[c].sa, sizeof a);
        memcpy(b, cases[c].sb, sizeof b);
        const int64_t *sb = cases[c].has_b ? cases[c].sb : NULL;
        char what[800], in[700];
        snprintf(what, sizeof what, "nd_simplify_dims of %s (%s)",
                 layout_str(in, sizeof in, nd, sh, a, sb), cases[c].why);
        T_OK_CASE(nd_simplify_dims(&nd, sh, a, sb ? b : NULL), what);

        int wn = cases[c].want_ndim;
        bool same = nd == wn;
        for (int k = 0; same && k < wn; k++)
            same = sh[k] == cases[c].want_shape[k] && a[k] == cases[c].want_sa[k] &&
                   (sb == NULL || b[k] == cases[c].want_sb[k]);
        char want[700], got[700];
        ck_assert_msg(same, "%s: expected %s, got %s", what,
                      layout_str(want, sizeof want, wn, cases[c].want_shape, cases[c].want_sa,
                                 sb ? cases[c].want_sb : NULL),
                      layout_str(got, sizeof got, nd, sh, a, sb ? b : NULL));
    }
}
END_TEST

START_TEST(simplify_random)
{
    t_rng r = t_rng_new(3);
    for (int c = 0; c < 1000; c++) {
        int nd = (int)t_int(&r, 0, ND_MAX_DIMS);
        int64_t shape[ND_MAX_DIMS], sa[ND_MAX_DIMS], sb[ND_MAX_DIMS];
        t_random_shape(&r, nd, 5, c % 8 == 0, 2000, shape);
        random_strides(&r, nd, shape, sa);
        int mode = c % 3; /* 0: one operand, 1: b the same as a, 2: b its own */
        if (mode == 1)
            memcpy(sb, sa, sizeof sb);
        else
            random_strides(&r, nd, shape, sb);
        char what[100];
        snprintf(what, sizeof what, "nd_simplify_dims case %d", c);
        check_simplify(nd, shape, sa, mode ? sb : NULL, what);
    }
}
END_TEST

START_TEST(simplify_errors)
{
    /* ND_MAX_DIMS + 1 entries, so that no call here reads past an array */
    int nd = 2;
    int64_t shape[ND_MAX_DIMS + 1] = { 3, 4, 1, 1, 1, 1, 1, 1, 1 };
    int64_t sa[ND_MAX_DIMS + 1] = { 4, 1, 1, 1, 1, 1, 1, 1, 1 };
    int64_t sb[ND_MAX_DIMS + 1] = { 1, 3, 1, 1, 1, 1, 1, 1, 1 };
    T_OK(nd_simplify_dims(&nd, shape, sa, sb));

    /* Each refused call must leave its arguments as they were. */
    int64_t sh0[ND_MAX_DIMS + 1] = { 3, 4, 1, 1, 1, 1, 1, 1, 1 };
    int64_t a0[ND_MAX_DIMS + 1] = { 4, 1, 1, 1, 1, 1, 1, 1, 1 };
    static const struct {
        int ndim;
        int64_t size1;  /* shape[1] */
        bool null_shape, null_a;
        const char *what;
    } bad[] = {
        { 2, 4, true, false, "a NULL shape" },
        { 2, 4, false, true, "a NULL strides_a" },
        { ND_MAX_DIMS + 1, 4, false, false, "ndim 9" },
        { -1, 4, false, false, "ndim -1" },
        { 2, -4, false, false, "shape (3,-4)" },
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        sh0[1] = bad[c].size1;
        memcpy(shape, sh0, sizeof shape);
        memcpy(sa, a0, sizeof sa);
        nd = bad[c].ndim;
        T_ERR(nd_simplify_dims(&nd, bad[c].null_shape ? NULL : shape,
                               bad[c].null_a ? NULL : sa, c % 2 ? sb : NULL), ND_ERR_ARG);
        ck_assert_msg(nd == bad[c].ndim && memcmp(shape, sh0, sizeof shape) == 0 &&
                      memcmp(sa, a0, sizeof sa) == 0,
                      "nd_simplify_dims with %s failed but changed its arguments", bad[c].what);
    }
    T_ERR(nd_simplify_dims(NULL, shape, sa, NULL), ND_ERR_ARG);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_compact                                                             */
/* ---------------------------------------------------------------------- */

START_TEST(compact_special_views)
{
    /* Views of the buffer 0, 1, ..., 11, and the result written out. */
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[2], strides[2], offset;
        float want[12];
    } cases[] = {
        { "a compact array (copied all the same)", 2, { 3, 4 }, { 4, 1 }, 0,
          { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 } },
        { "a transpose", 2, { 4, 3 }, { 1, 4 }, 0, { 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11 } },
        { "both axes reversed", 2, { 3, 4 }, { -4, -1 }, 11,
          { 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 } },
        { "a broadcast row (stride 0)", 2, { 3, 4 }, { 0, 1 }, 4,
          { 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7 } },
        { "a broadcast column", 2, { 2, 3 }, { 1, 0 }, 9, { 9, 9, 9, 10, 10, 10 } },
        { "one element repeated", 2, { 2, 2 }, { 0, 0 }, 7, { 7, 7, 7, 7 } },
        { "a scalar (ndim 0) at offset 5", 0, { 0 }, { 0 }, 5, { 5 } },
        { "every other element, offset 1", 2, { 2, 2 }, { 6, 2 }, 1, { 1, 3, 7, 9 } },
        { "a size-1 axis with an unused stride", 2, { 1, 3 }, { 100, -2 }, 10, { 10, 8, 6 } },
        { "shape (0,3)", 2, { 0, 3 }, { 3, 1 }, 0, { 0 } },
        { "shape (3,0) with its offset at the buffer's end", 2, { 3, 0 }, { 4, 1 }, 12, { 0 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array a = t_view_of(12, t_iota(12), cases[c].ndim, cases[c].shape, cases[c].strides,
                             cases[c].offset);
        char what[600];
        snprintf(what, sizeof what, "nd_compact of %s, %s", cases[c].what, t_describe(&a));
        check_compact(&a, cases[c].want, what);
        nd_release(&a);
    }
}
END_TEST

START_TEST(compact_random_views)
{
    t_rng r = t_rng_new(4);
    for (int c = 0; c < 600; c++) {
        int nd = c % 7;
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 5, c % 4 == 0, 256, shape);
        nd_array a;
        switch (c % 3) {
        case 0: a = t_random_view(&r, nd, shape); break;
        case 1: a = t_random_read_view(&r, nd, shape); break; /* may repeat (stride 0) */
        default: a = sub_view(&r, t_random_read_view(&r, nd, shape)); break;
        }
        char what[600];
        snprintf(what, sizeof what, "nd_compact case %d, a: %s", c, t_describe(&a));
        float *want = t_gather(&a);
        check_compact(&a, want, what);
        free(want);
        nd_release(&a);
    }
}
END_TEST

START_TEST(compact_out_aliases_input)
{
    /* nd_compact(&x, &x): x becomes the copy and its old reference goes. */
    int64_t shape[2] = { 4, 3 }, strides[2] = { 1, 4 };
    nd_array base = t_view_of(12, t_iota(12), 1, (int64_t[]){ 12 }, (int64_t[]){ 1 }, 0), x;
    T_OK(nd_as_strided(&base, 2, shape, strides, 0, &x));
    T_OK(nd_compact(&x, &x));
    ck_assert_msg(x.buf != base.buf, "nd_compact(&x, &x) must give x a new buffer");
    ck_assert_msg(base.buf->refcount == 1, "after nd_compact(&x, &x) the old buffer has "
                  "refcount %" PRId64 ", expected 1: x's old reference must be released",
                  base.buf->refcount);
    static const float want[12] = { 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11 };
    t_assert_shape(&x, 2, shape, "nd_compact(&x, &x)");
    ck_assert_msg(x.strides[0] == 3 && x.strides[1] == 1 && x.offset == 0,
                  "nd_compact(&x, &x) gave %s, not a compact array", t_describe(&x));
    t_assert_values(&x, want, "nd_compact(&x, &x) of a transpose", COMPACT_HINT);
    nd_release(&x);
    nd_release(&base);
}
END_TEST

START_TEST(compact_large)
{
    /* 2^20 elements: a 1024x1024 transpose, and a (128,64,128) view that
     * permutes and reverses a (64,128,128) base.  Values are exact in float.
     * A gather that does much more than one pass times out.  Both views
     * have a transposed plane, which nd_compact gives to the fast path:
     * version 1 is your gather_cpu on them. */
    const int64_t n = (int64_t)1 << 20;
    float *v = t_floats(n), *want = t_floats(n);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)i;

    nd_array t = t_view_of(n, v, 2, (int64_t[]){ 1024, 1024 }, (int64_t[]){ 1, 1024 }, 0);
    for (int64_t i = 0; i < 1024; i++)
        for (int64_t j = 0; j < 1024; j++)
            want[i * 1024 + j] = (float)(j * 1024 + i);
    check_compact(&t, want, "nd_compact of a 1024x1024 transpose");
    check_compact_version(&t, 1, want, "nd_compact_version 1 of a 1024x1024 transpose");
    nd_release(&t);

    /* element (i,j,k) is base[63-j][k][i] */
    nd_array p = t_view_of(n, v, 3, (int64_t[]){ 128, 64, 128 },
                         (int64_t[]){ 1, -16384, 128 }, 63 * 16384);
    for (int64_t i = 0; i < 128; i++)
        for (int64_t j = 0; j < 64; j++)
            for (int64_t k = 0; k < 128; k++)
                want[(i * 64 + j) * 128 + k] = (float)((63 - j) * 16384 + k * 128 + i);
    check_compact(&p, want, "nd_compact of a permuted, reversed (128,64,128) view");
    check_compact_version(&p, 1, want, "nd_compact_version 1 of a permuted, reversed "
                          "(128,64,128) view");
    nd_release(&p);
    free(want);
    free(v);
}
END_TEST

/* Transposed views whose sizes are not multiples of any block size a
 * tiled gather might use (16, 32, 256...), with the dense axis reversed
 * (stride -1) or the plane repeated along a batch axis: the edges of a
 * blocked copy are where it goes wrong.  Checked against t_gather, for
 * nd_compact and for each version of nd_compact_version (1: your
 * gather_cpu; 2-4: the given fast path of the "going further" section). */
START_TEST(compact_transpose_edges)
{
    static const struct {
        int64_t rows, cols;  /* of the base; the view is its transpose */
        bool reverse;        /* also reverse the dense axis */
        int64_t batch;       /* planes stacked on a leading axis */
    } cases[] = {
        { 300, 17, false, 1 }, { 17, 300, false, 1 }, { 257, 513, false, 1 },
        { 1, 700, false, 1 },  { 700, 2, true, 1 },   { 33, 271, true, 3 },
        { 16, 16, false, 2 },  { 255, 257, true, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t r = cases[c].rows, k = cases[c].cols, b = cases[c].batch;
        int64_t base_shape[1] = { b * r * k };
        nd_array base = t_arange(1, base_shape), v;
        /* element (p, i, j) of the view is base[p][j][i], or base[p][j][k-1-i] */
        int64_t shape[3] = { b, k, r }, strides[3] = { r * k, cases[c].reverse ? -1 : 1, k };
        int64_t offset = cases[c].reverse ? k - 1 : 0;
        T_OK(nd_as_strided(&base, 3, shape, strides, offset, &v));
        float *want = t_gather(&v);
        for (int version = 0; version <= 4; version++) {
            char what[100];
            snprintf(what, sizeof what, "nd_compact_version %d of a transposed plane", version);
            check_compact_version(&v, version, want, version ? what : "nd_compact of a "
                                  "transposed plane");
            /* which copy ran: a plane has an outer axis denser than the last */
            int ran = -1, plane = r > 1 && k > 1, expect = T_DEV == ND_CUDA ? 0
                : version == 1 || !plane ? 1 : version ? version : -1;
            nd_array out;
            T_OK(nd_compact_version(&v, version, &out, &ran));
            nd_release(&out);
            ck_assert_msg(expect < 0 ? ran >= 3 : ran == expect,
                          "%s: *ran is %d, expected %s%d", what, ran, expect < 0 ? "3 or " : "",
                          expect < 0 ? 4 : expect);
        }
        free(want);
        nd_release(&v);
        nd_release(&base);
    }
}
END_TEST

START_TEST(compact_errors)
{
    int64_t shape[2] = { 3, 4 };
    nd_array a = t_arange(2, shape), out;
    T_OK(nd_compact(&a, &out));
    nd_release(&out);

    t_poison(&out);
    T_ERR_OP(nd_compact(NULL, &out), ND_ERR_ARG, "compact");
    t_assert_untouched(&out, "nd_compact(NULL, &out)");
    T_ERR_OP(nd_compact(&a, NULL), ND_ERR_ARG, "compact");
    T_ERR_OP(nd_compact_version(&a, 5, &out, NULL), ND_ERR_ARG, "compact");
    t_assert_untouched(&out, "nd_compact_version with version 5");
    T_ERR_OP(nd_compact_version(&a, -1, &out, NULL), ND_ERR_ARG, "compact");
    t_assert_untouched(&out, "nd_compact_version with version -1");

    nd_array gone = t_arange(2, shape);
    nd_release(&gone);
    T_ERR_OP(nd_compact(&gone, &out), ND_ERR_ARG, "compact");
    t_assert_untouched(&out, "nd_compact of a released array");

    nd_array bad = a;
    bad.ndim = ND_MAX_DIMS + 1;
    T_ERR_OP(nd_compact(&bad, &out), ND_ERR_ARG, "compact");
    t_assert_untouched(&out, "nd_compact of an array with ndim 9");
    bad.ndim = -1;
    T_ERR_OP(nd_compact(&bad, &out), ND_ERR_ARG, "compact");
    t_assert_untouched(&out, "nd_compact of an array with ndim -1");
    ck_assert_msg(a.buf->refcount == 1, "failed nd_compact calls changed a's refcount to %"
                  PRId64, a.buf->refcount);
    nd_release(&a);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* nd_setitem and nd_setitem_scalar                                       */
/* ---------------------------------------------------------------------- */

START_TEST(setitem_broadcast)
{
    /* dst[...] = src into the buffer 0..11, the result written out. */
    static const struct {
        const char *what;
        int dst_ndim;
        int64_t dst_shape[2], dst_strides[2];
        int src_ndim;
        int64_t src_shape[3];
        float src[4];
        float want[12];
    } cases[] = {
        { "same shape", 2, { 2, 2 }, { 4, 1 }, 2, { 2, 2 }, { 20, 21, 22, 23 },
          { 20, 21, 2, 3, 22, 23, 6, 7, 8, 9, 10, 11 } },
        { "a row into every row", 2, { 3, 4 }, { 4, 1 }, 1, { 4 }, { 20, 21, 22, 23 },
          { 20, 21, 22, 23, 20, 21, 22, 23, 20, 21, 22, 23 } },
        { "a column (3,1) into every column", 2, { 3, 4 }, { 4, 1 }, 2, { 3, 1 },
          { 20, 21, 22 }, { 20, 20, 20, 20, 21, 21, 21, 21, 22, 22, 22, 22 } },
        { "a scalar (ndim 0) everywhere", 2, { 3, 4 }, { 4, 1 }, 0, { 0 }, { 7 },
          { 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 } },
        { "extra leading size-1 axes (1,1,4)", 2, { 3, 4 }, { 4, 1 }, 3, { 1, 1, 4 },
          { 20, 21, 22, 23 }, { 20, 21, 22, 23, 20, 21, 22, 23, 20, 21, 22, 23 } },
        { "a row into a transposed dst: dst[i][j] is buffer[4j+i]", 2, { 4, 3 }, { 1, 4 },
          1, { 3 }, { 20, 21, 22 }, { 20, 20, 20, 20, 21, 21, 21, 21, 22, 22, 22, 22 } },
        { "into a reversed, strided dst (a column of it)", 2, { 3, 2 }, { -4, -2 }, 2,
          { 3, 1 }, { 20, 21, 22 }, { 0, 22, 2, 22, 4, 21, 6, 21, 8, 20, 10, 20 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t off = cases[c].dst_strides[0] < 0 ? 11 : 0;
        nd_array dst = t_view_of(12, t_iota(12), cases[c].dst_ndim, cases[c].dst_shape,
                               cases[c].dst_strides, off), src;
        T_OK(nd_from_host(T_DEV, cases[c].src_ndim, cases[c].src_shape, cases[c].src, &src));
        char what[800];
        snprintf(what, sizeof what, "nd_setitem, %s: dst %s, src %s", cases[c].what,
                 t_describe(&dst), t_describe2(&src));
        check_setitem(&dst, &src, 0, what);
        float *got = t_buffer(&dst, NULL);
        int64_t size = 12;
        t_assert_floats(got, cases[c].want, 1, &size, what, SETITEM_HINT);
        free(got);
        nd_release(&dst);
        nd_release(&src);
    }

    /* a broadcast src made by stride 0: (3,4) strides (0,1) of 20..23 */
    nd_array dst = t_view_of(12, t_iota(12), 2, (int64_t[]){ 3, 4 }, (int64_t[]){ 4, 1 }, 0);
    nd_array src = t_view_of(4, (float[]){ 20, 21, 22, 23 }, 2, (int64_t[]){ 3, 4 },
                           (int64_t[]){ 0, 1 }, 0);
    check_setitem(&dst, &src, 0, "nd_setitem of a stride-0 (3,4) src");
    nd_release(&dst);
    nd_release(&src);
}
END_TEST

START_TEST(setitem_random)
{
    t_rng r = t_rng_new(5);
    for (int c = 0; c < 500; c++) {
        int nd = c % 7;
        int64_t shape[ND_MAX_DIMS], src_shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 5, c % 5 == 0, 256, shape);
        nd_array dst = t_random_view(&r, nd, shape);
        int src_nd = broadcastable_shape(&r, nd, shape, src_shape);
        nd_array src = relabel(t_random_read_view(&r, src_nd, src_shape));
        char what[800];
        snprintf(what, sizeof what, "nd_setitem case %d: dst %s, src %s", c,
                 t_describe(&dst), t_describe2(&src));
        check_setitem(&dst, &src, 0, what);
        nd_release(&dst);
        nd_release(&src);
    }
}
END_TEST

START_TEST(setitem_scalar_random)
{
    t_rng r = t_rng_new(6);
    for (int c = 0; c < 300; c++) {
        int nd = c % 7;
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 5, c % 5 == 0, 256, shape);
        nd_array dst = t_random_view(&r, nd, shape);
        float value = -(float)c - 0.75f;
        char what[600];
        snprintf(what, sizeof what, "nd_setitem_scalar case %d: dst %s, value %g", c,
                 t_describe(&dst), (double)value);
        check_setitem(&dst, NULL, value, what);
        nd_release(&dst);
    }
}
END_TEST

START_TEST(setitem_same_view)
{
    /* dst[...] = dst: allowed, and changes nothing. */
    t_rng r = t_rng_new(7);
    for (int c = 0; c < 100; c++) {
        int nd = c % 7;
        int64_t shape[ND_MAX_DIMS];
        t_random_shape(&r, nd, 5, c % 5 == 0, 256, shape);
        nd_array v = t_random_view(&r, nd, shape), w;
        char what[600];
        snprintf(what, sizeof what, "nd_setitem(&v, &v) case %d: v %s", c, t_describe(&v));
        check_setitem(&v, &v, 0, what);
        T_OK(nd_share(&v, &w));
        snprintf(what, sizeof what, "nd_setitem(&v, &w), w a second reference to v, "
                 "case %d: v %s", c, t_describe(&v));
        check_setitem(&v, &w, 0, what);
        nd_release(&w);
        nd_release(&v);
    }
}
END_TEST

START_TEST(setitem_disjoint_same_buffer)
{
    /* dst and src in one (6,8) buffer of 0..47, reaching no common element. */
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[2], dst_strides[2], dst_offset, src_strides[2], src_offset;
    } cases[] = {
        { "left half = right half reversed", 2, { 6, 4 }, { 8, 1 }, 0, { 8, -1 }, 7 },
        { "even elements = odd elements", 1, { 24 }, { 2 }, 0, { 2 }, 1 },
        { "rows 0..4 = row 5, broadcast", 2, { 5, 8 }, { 8, 1 }, 0, { 0, 1 }, 40 },
        { "left half transposed = right half transposed and reversed", 2, { 4, 6 },
          { 1, 8 }, 0, { -1, 8 }, 7 },
        { "top-right block = bottom-left block, rows reversed", 2, { 3, 4 }, { 8, 1 }, 4,
          { -8, 1 }, 40 },
    };
    float values[48];
    for (int i = 0; i < 48; i++)
        values[i] = (float)i;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array base = t_view_of(48, values, 1, (int64_t[]){ 48 }, (int64_t[]){ 1 }, 0);
        nd_array dst, src;
        T_OK(nd_as_strided(&base, cases[c].ndim, cases[c].shape, cases[c].dst_strides,
                           cases[c].dst_offset, &dst));
        T_OK(nd_as_strided(&base, cases[c].ndim, cases[c].shape, cases[c].src_strides,
                           cases[c].src_offset, &src));
        char what[800];
        snprintf(what, sizeof what, "nd_setitem in one buffer, %s: dst %s, src %s",
                 cases[c].what, t_describe(&dst), t_describe2(&src));
        check_setitem(&dst, &src, 0, what);
        nd_release(&dst);
        nd_release(&src);
        nd_release(&base);
    }
}
END_TEST

START_TEST(setitem_zero_size)
{
    /* An empty dst: nothing is written, and that is no error. */
    static const struct {
        const char *what;
        int dst_ndim;
        int64_t dst_shape[3], dst_strides[3], dst_offset;
        int src_ndim;
        int64_t src_shape[2];
    } cases[] = {
        { "(0,3) = (3,)", 2, { 0, 3 }, { 3, 1 }, 5, 1, { 3 } },
        { "(3,0) = (1,), dst's offset at the buffer's end", 2, { 3, 0 }, { 4, 1 }, 12, 1, { 1 } },
        { "(3,0) = (3,0)", 2, { 3, 0 }, { 4, 1 }, 0, 2, { 3, 0 } },
        { "(0,) = a scalar", 1, { 0 }, { 1 }, 6, 0, { 0 } },
        { "(2,0,3) = (0,3)", 3, { 2, 0, 3 }, { 6, 3, 1 }, 0, 2, { 0, 3 } },
        { "(3,0) = (0,)", 2, { 3, 0 }, { 1, 3 }, 2, 1, { 0 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nd_array dst = t_view_of(12, t_iota(12), cases[c].dst_ndim, cases[c].dst_shape,
                               cases[c].dst_strides, cases[c].dst_offset);
        nd_array src = t_arange(cases[c].src_ndim, cases[c].src_shape);
        char what[600];
        snprintf(what, sizeof what, "nd_setitem %s: dst %s", cases[c].what, t_describe(&dst));
        check_setitem(&dst, &src, 0, what);
        snprintf(what, sizeof what, "nd_setitem_scalar into dst %s", t_describe(&dst));
        check_setitem(&dst, NULL, 42, what);
        nd_release(&dst);
        nd_release(&src);
    }
}
END_TEST

/* The failed call must have left dst's buffer as `before`: no half-written
 * output. */
static void assert_buffer_is(const nd_array *dst, const float *before, const char *what)
{
    int64_t size;
    float *now = t_buffer(dst, &size);
    t_assert_floats(now, before, 1, &size, what,
                    "check every argument, shapes included, before writing anything");
    free(now);
}

START_TEST(setitem_errors)
{
    int64_t shape[2] = { 3, 4 }, row[1] = { 4 };
    nd_array dst = t_arange(2, shape), src = t_arange(1, row);
    T_OK(nd_setitem(&dst, &src));
    T_OK(nd_setitem_scalar(&dst, 1.5f));
    nd_release(&src);
    float *before = t_buffer(&dst, NULL);

    /* shapes that do not broadcast to (3,4); the message names both */
    static const struct { int ndim; int64_t shape[3]; } bad[] = {
        { 2, { 3, 2 } }, { 3, { 2, 3, 4 } }, { 2, { 4, 3 } }, { 1, { 3 } },
        { 2, { 4, 1 } }, { 1, { 0 } }, { 3, { 2, 1, 4 } }, { 3, { 1, 3, 2 } },
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        src = t_arange(bad[c].ndim, bad[c].shape);
        char what[300], sh[200], dsh[200];
        nd_shape_str(bad[c].ndim, bad[c].shape, sh, sizeof sh);
        nd_shape_str(2, shape, dsh, sizeof dsh);
        snprintf(what, sizeof what, "nd_setitem of src %s into dst (3,4)", sh);
        T_ERR_OP(nd_setitem(&dst, &src), ND_ERR_SHAPE, "setitem");
        ck_assert_msg(strstr(nd_last_error(), sh) && strstr(nd_last_error(), dsh),
                      "%s: the message \"%s\" should name both shapes, %s and %s", what,
                      nd_last_error(), sh, dsh);
        assert_buffer_is(&dst, before, what);
        nd_release(&src);
    }

    /* an empty dst does not take a src of 2 elements */
    nd_array empty = t_arange(1, (int64_t[]){ 0 });
    src = t_arange(1, (int64_t[]){ 2 });
    T_ERR_OP(nd_setitem(&empty, &src), ND_ERR_SHAPE, "setitem");
    nd_release(&empty);

    /* NULL, released and broken arrays */
    nd_array gone = t_arange(2, shape), bad_ndim = dst;
    nd_release(&gone);
    bad_ndim.ndim = ND_MAX_DIMS + 1;
    T_ERR_OP(nd_setitem(NULL, &src), ND_ERR_ARG, "setitem");
    T_ERR_OP(nd_setitem(&dst, NULL), ND_ERR_ARG, "setitem");
    T_ERR_OP(nd_setitem(&gone, &src), ND_ERR_ARG, "setitem");
    T_ERR_OP(nd_setitem(&dst, &gone), ND_ERR_ARG, "setitem");
    T_ERR_OP(nd_setitem(&bad_ndim, &src), ND_ERR_ARG, "setitem");
    T_ERR_OP(nd_setitem_scalar(NULL, 1), ND_ERR_ARG, "setitem");
    T_ERR_OP(nd_setitem_scalar(&gone, 1), ND_ERR_ARG, "setitem");
    T_ERR_OP(nd_setitem_scalar(&bad_ndim, 1), ND_ERR_ARG, "setitem");
    assert_buffer_is(&dst, before, "a failed nd_setitem");
    nd_release(&src);

    /* arrays on two devices (only when the test runs on another device) */
    if (T_DEV != ND_CPU) {
        T_OK(nd_from_host(ND_CPU, 1, row, (float[]){ 1, 2, 3, 4 }, &src));
        T_ERR_OP(nd_setitem(&dst, &src), ND_ERR_DEVICE, "setitem");
        assert_buffer_is(&dst, before, "nd_setitem of a cpu src into a device dst");
        nd_release(&src);
    }
    free(before);
    nd_release(&dst);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* The suite                                                              */
/* ---------------------------------------------------------------------- */

Suite *suite_02_compact(void);

Suite *suite_02_compact(void)
{
    Suite *s = t_suite(2, "02_compact");
    T_ADD_HOST(s, iter_order);
    T_ADD_HOST(s, iter_scalar_and_empty);
    T_ADD_HOST(s, iter_past_end);
    T_ADD_HOST(s, iter_errors);
    T_ADD_HOST(s, simplify_cases);
    T_ADD_HOST(s, simplify_random);
    T_ADD_HOST(s, simplify_errors);
    T_ADD(s, compact_special_views);
    T_ADD(s, compact_random_views);
    T_ADD(s, compact_out_aliases_input);
    T_ADD(s, compact_large);
    T_ADD(s, compact_transpose_edges);
    T_ADD(s, compact_errors);
    T_ADD(s, setitem_broadcast);
    T_ADD(s, setitem_random);
    T_ADD(s, setitem_scalar_random);
    T_ADD(s, setitem_same_view);
    T_ADD(s, setitem_disjoint_same_buffer);
    T_ADD(s, setitem_zero_size);
    T_ADD(s, setitem_errors);
    return s;
}
