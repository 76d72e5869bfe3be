/*
 * test_00_array.c -- the framework (src/array.c, src/device.cu), which
 * every lesson uses: making arrays, nd_as_strided's bounds check, reference
 * counts, copying out, errors, printing, and the CUDA device's memory and
 * errors.  Students do not write this code, so these tests pass on the
 * skeleton too ("lesson 0").  They call the library themselves, so they
 * run in students' runs and in grader/coverage.sh, never in the grader.
 */
#include "kit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(call) ck_assert_msg((call) == ND_OK, "%s failed: %s", #call, nd_last_error())
/* The call fails with `want`, and its message names `op`. */
#define ERR(call, want, op)                                                                 \
    do {                                                                                    \
        nd_status s_ = (call);                                                              \
        ck_assert_msg(s_ == (want) && strstr(nd_last_error(), op) != NULL,                  \
                      "%s gave %s (\"%s\"), expected %s naming '%s'", #call,                \
                      nd_status_name(s_), nd_last_error(), #want, op);                      \
    } while (0)

/* a's elements in row-major order are want[0..n-1]. */
static void values(const nd_array *a, const float *want, int64_t n, const char *what)
{
    ck_assert_msg(nd_numel(a) == n, "%s: %lld elements, expected %lld", what,
                  (long long)nd_numel(a), (long long)n);
    float *got = malloc((size_t)(n + 1) * sizeof *got);
    OK(nd_to_host(a, got, (size_t)n));
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(memcmp(&got[i], &want[i], sizeof *got) == 0 ||
                      (isnan(got[i]) && isnan(want[i])), "%s: element %lld is %g, expected %g",
                      what, (long long)i, (double)got[i], (double)want[i]);
    free(got);
}

/* An output a failed call must not have touched: every byte 0xAB. */
static void untouched(const nd_array *out, const char *what)
{
    const unsigned char *p = (const void *)out;
    for (size_t i = 0; i < sizeof *out; i++)
        ck_assert_msg(p[i] == 0xAB, "%s: the output struct was written (byte %zu)", what, i);
}

static void status_names(k_ctx *k)
{
    (void)k;
    ck_assert_str_eq(nd_status_name(ND_OK), "ND_OK");
    ck_assert_str_eq(nd_status_name(ND_ERR_SHAPE), "ND_ERR_SHAPE");
    ck_assert_str_eq(nd_status_name(ND_ERR_NOT_IMPLEMENTED), "ND_ERR_NOT_IMPLEMENTED");
    ck_assert_str_eq(nd_status_name((nd_status)99), "ND_ERR_(unknown)");
    ck_assert_str_eq(nd_device_name(ND_CPU), "cpu");
    ck_assert_str_eq(nd_device_name(ND_CUDA), "cuda");
    ck_assert_str_eq(nd_device_name((nd_device)7), "(unknown)");
    const char *name = NULL;
    OK(nd_device_available(ND_CPU, &name));
    ck_assert_str_eq(name, "cpu");
    ERR(nd_device_available((nd_device)7, &name), ND_ERR_ARG, "device");
}

static void shape_str(k_ctx *k)
{
    (void)k;
    char buf[64];
    int64_t s2[2] = { 3, 4 }, s1[1] = { 5 };
    ck_assert_str_eq(nd_shape_str(2, s2, buf, sizeof buf), "(3,4)");
    ck_assert_str_eq(nd_shape_str(1, s1, buf, sizeof buf), "(5,)");
    ck_assert_str_eq(nd_shape_str(0, NULL, buf, sizeof buf), "()");
    ck_assert_str_eq(nd_shape_str(2, s2, buf, 4), "(3,");   /* truncated, terminated */
    ck_assert_ptr_null(nd_shape_str(1, NULL, NULL, 0));
}

/* from_host then to_host gives the data back; zeros, full, arange; the
 * layout of a new array. */
static void create_and_copy_out(k_ctx *k)
{
    nd_device dev = k_dev(k);
    for (int t = 0; t < 100; t++) {
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 0, 6), 0, 7, 4096, shape);
        int64_t n = k_numel(nd, shape);
        float *data = k_floats(k, n + 1);
        for (int64_t i = 0; i < n; i++)
            data[i] = k_float(k, -10, 10);
        nd_array a;
        OK(nd_from_host(dev, nd, shape, data, &a));
        for (int d = nd - 1, size = 1; d >= 0; size *= (int)shape[d--])
            ck_assert_int_eq(a.strides[d], size);   /* row-major */
        ck_assert_int_eq(a.offset, 0);
        ck_assert_int_eq(a.buf->refcount, 1);
        ck_assert_int_eq(a.buf->device, dev);
        values(&a, data, n, "nd_to_host after nd_from_host");
        nd_release(&a);
        k_case_end(k);
    }
    int64_t shape[3] = { 2, 3, 4 }, empty[2] = { 3, 0 };
    float full[24], ramp[24], zero = 0;
    for (int i = 0; i < 24; i++) {
        full[i] = -2.5f;
        ramp[i] = (float)i;
    }
    nd_array a;
    OK(nd_full(dev, 3, shape, -2.5f, &a));
    values(&a, full, 24, "nd_full");
    nd_release(&a);
    OK(nd_arange(dev, 24, &a));
    values(&a, ramp, 24, "nd_arange");
    nd_release(&a);
    OK(nd_zeros(dev, 0, NULL, &a));
    values(&a, &zero, 1, "nd_zeros of a scalar");
    nd_release(&a);
    OK(nd_empty(dev, 2, empty, &a));
    ck_assert_int_eq(nd_numel(&a), 0);
    nd_release(&a);
}

/* Bad shapes and pointers: ND_ERR_ARG naming the function, out untouched. */
static void create_errors(k_ctx *k)
{
    nd_device dev = k_dev(k);
    nd_array out;
    memset(&out, 0xAB, sizeof out);
    int64_t ok[2] = { 2, 2 }, neg[2] = { 2, -1 }, huge[3] = { 1 << 30, 1 << 30, 1 << 30 };
    float data[4] = { 0 };
    ERR(nd_zeros(dev, ND_MAX_DIMS + 1, ok, &out), ND_ERR_ARG, "zeros");
    ERR(nd_zeros(dev, -1, ok, &out), ND_ERR_ARG, "zeros");
    ERR(nd_zeros(dev, 2, neg, &out), ND_ERR_ARG, "zeros");
    ERR(nd_zeros(dev, 2, NULL, &out), ND_ERR_ARG, "zeros");
    ERR(nd_zeros(dev, 3, huge, &out), ND_ERR_ARG, "zeros");
    ERR(nd_full(dev, 2, neg, 1.0f, &out), ND_ERR_ARG, "full");
    ERR(nd_from_host(dev, 2, ok, NULL, &out), ND_ERR_ARG, "from_host");
    ERR(nd_arange(dev, -3, &out), ND_ERR_ARG, "arange");
    ERR(nd_share(NULL, &out), ND_ERR_ARG, "share");
    untouched(&out, "a function that makes an array, given bad arguments");
    ERR(nd_from_host(dev, 2, ok, data, NULL), ND_ERR_ARG, "from_host");
    ERR(nd_empty(dev, 2, ok, NULL), ND_ERR_ARG, "empty");
    nd_clear_error();
    ck_assert_str_eq(nd_last_error(), "");
}

/* as_strided: a view inside the buffer shares it; one reaching outside
 * (high, low, through a negative stride, by overflow) does not. */
static void as_strided_bounds(k_ctx *k)
{
    nd_array base, v, keep;
    OK(nd_arange(k_dev(k), 12, &base));
    int64_t shape[2] = { 3, 4 }, strides[2] = { 4, 1 }, rev[2] = { -4, 1 };
    OK(nd_as_strided(&base, 2, shape, rev, 8, &v));
    ck_assert_ptr_eq(v.buf, base.buf);
    ck_assert_int_eq(base.buf->refcount, 2);
    float want[12] = { 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3 };
    values(&v, want, 12, "rows reversed by nd_as_strided");
    nd_release(&v);
    ck_assert_int_eq(base.buf->refcount, 1);
    memset(&keep, 0xAB, sizeof keep);
    int64_t big[1] = { 13 }, one[1] = { 1 }, wild[1] = { INT64_MAX / 2 }, two[1] = { 2 };
    ERR(nd_as_strided(&base, 2, shape, strides, 1, &keep), ND_ERR_LAYOUT, "as_strided");
    ERR(nd_as_strided(&base, 2, shape, rev, 7, &keep), ND_ERR_LAYOUT, "as_strided");
    ERR(nd_as_strided(&base, 1, big, one, 0, &keep), ND_ERR_LAYOUT, "as_strided");
    ERR(nd_as_strided(&base, 1, two, wild, 0, &keep), ND_ERR_LAYOUT, "as_strided");
    ERR(nd_as_strided(&base, 2, shape, NULL, 0, &keep), ND_ERR_ARG, "as_strided");
    ERR(nd_as_strided(NULL, 2, shape, strides, 0, &keep), ND_ERR_ARG, "as_strided");
    untouched(&keep, "nd_as_strided of a view outside its buffer");
    OK(nd_as_strided(&base, 0, NULL, NULL, 11, &v));          /* a scalar view */
    want[0] = 11;
    values(&v, want, 1, "a scalar view of the last element");
    nd_release(&v);
    /* out may be the input itself: its reference is replaced */
    OK(nd_share(&base, &v));
    int64_t t[2] = { 1, 4 };
    OK(nd_as_strided(&v, 2, (int64_t[]){ 4, 3 }, t, 0, &v));
    ck_assert_int_eq(base.buf->refcount, 2);
    float tw[12] = { 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11 };
    values(&v, tw, 12, "nd_as_strided into its own input (a transpose)");
    nd_release(&v);
    nd_release(&v);   /* twice, or NULL: harmless */
    nd_release(NULL);
    ck_assert_int_eq(base.buf->refcount, 1);
    float host[12];
    OK(nd_buffer_to_host(&base, host, sizeof host));
    ck_assert(host[11] == 11.0f);
    ERR(nd_buffer_to_host(&base, host, sizeof host - 1), ND_ERR_ARG, "buffer_to_host");
    ERR(nd_to_host(&base, host, 11), ND_ERR_ARG, "to_host");
    ERR(nd_to_host(NULL, host, 12), ND_ERR_ARG, "to_host");
    ERR(nd_format(&base, NULL), ND_ERR_ARG, "format");
    nd_release(&base);
    ERR(nd_buffer_to_host(&base, host, sizeof host), ND_ERR_ARG, "buffer_to_host");
}

/* The text of a view, as NumPy prints the same data; `want` ends in
 * "device=cpu)", which the CUDA device's text says as cuda. */
static void expect_format(const nd_array *a, const char *want_cpu)
{
    char *text = NULL, want[2048];
    const char *tail = strstr(want_cpu, "device=cpu)");
    snprintf(want, sizeof want, "%.*sdevice=%s)", (int)(tail - want_cpu), want_cpu,
             nd_device_name(a->buf->device));
    OK(nd_format(a, &text));
    ck_assert_msg(strcmp(text, want) == 0, "nd_format gave\n%s\nexpected\n%s", text, want);
    free(text);
}

static void format_like_numpy(k_ctx *k)
{
    nd_array a, v;
    OK(nd_arange(k_dev(k), 24, &a));
    OK(nd_as_strided(&a, 3, (int64_t[]){ 2, 3, 4 }, (int64_t[]){ 12, 4, 1 }, 0, &v));
    expect_format(&v, "array([[[ 0.,  1.,  2.,  3.],\n"
                      "        [ 4.,  5.,  6.,  7.],\n"
                      "        [ 8.,  9., 10., 11.]],\n"
                      "\n"
                      "       [[12., 13., 14., 15.],\n"
                      "        [16., 17., 18., 19.],\n"
                      "        [20., 21., 22., 23.]]], shape=(2,3,4), strides=(12,4,1), "
                      "offset=0, device=cpu)");
    nd_release(&v);
    OK(nd_as_strided(&a, 2, (int64_t[]){ 3, 2 }, (int64_t[]){ 1, 3 }, 0, &v));
    expect_format(&v, "array([[0., 3.],\n"
                      "       [1., 4.],\n"
                      "       [2., 5.]], shape=(3,2), strides=(1,3), offset=0, device=cpu)");
    nd_release(&v);
    OK(nd_as_strided(&a, 0, NULL, NULL, 5, &v));
    expect_format(&v, "array(5., shape=(), strides=(), offset=5, device=cpu)");
    nd_release(&v);
    OK(nd_as_strided(&a, 2, (int64_t[]){ 0, 3 }, (int64_t[]){ 3, 1 }, 0, &v));
    expect_format(&v, "array([], shape=(0,3), strides=(3,1), offset=0, device=cpu)");
    nd_release(&v);
    expect_format(&a, "array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
                      "       14., 15., 16., 17., 18., 19., 20., 21., 22., 23.], shape=(24,), "
                      "strides=(1,), offset=0, device=cpu)");
    nd_release(&a);
    float odd[3] = { NAN, -INFINITY, 0.125f };
    OK(nd_from_host(k_dev(k), 1, (int64_t[]){ 3 }, odd, &a));
    expect_format(&a, "array([  nan,  -inf, 0.125], shape=(3,), strides=(1,), offset=0, "
                      "device=cpu)");
    nd_release(&a);
    OK(nd_arange(k_dev(k), 2000, &a));   /* over 1000 elements: "..." */
    expect_format(&a, "array([   0.,    1.,    2., ..., 1997., 1998., 1999.], shape=(2000,), "
                      "strides=(1,), offset=0, device=cpu)");
    OK(nd_print(&a));   /* to the test's own stdout */
    nd_release(&a);
    ERR(nd_print(NULL), ND_ERR_ARG, "format");
}

/* ---------------------------------------------------------------------- */
/* The CUDA device: memory, copies, errors (src/device.cu)                */
/* ---------------------------------------------------------------------- */

/* nd_to_device moves any view both ways and keeps its values; out may
 * alias the input. */
static void to_device_round_trip(k_ctx *k)
{
    for (int t = 0; t < 60; t++) {
        nd_device here = t % 2 ? ND_CUDA : ND_CPU, there = t % 2 ? ND_CPU : ND_CUDA;
        int64_t shape[ND_MAX_DIMS];
        int nd = k_shape(k, (int)k_int(k, 1, 5), 1, 6, 3000, shape);
        int64_t n = k_numel(nd, shape);
        k_call c = k_new(k, K_COMPACT);   /* only to hold the kit's random view and buffer */
        k_arr r = k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_DISTINCT);
        float *want = k_floats(k, n);
        nd_array base, v, moved, back;
        OK(nd_from_host(here, 1, &c.bufs[r.buf].n, c.bufs[r.buf].v, &base));
        OK(nd_as_strided(&base, nd, shape, r.strides, r.offset, &v));
        OK(nd_to_host(&v, want, (size_t)n));
        OK(nd_to_device(&v, there, &moved));
        ck_assert_int_eq(moved.buf->device, there);
        values(&moved, want, n, "nd_to_device of a view (permuted, stepped, broadcast, windowed)");
        OK(nd_to_device(&moved, here, &back));
        OK(nd_to_device(&back, there, &back));
        values(&back, want, n, "nd_to_device there, back, and into its own input");
        nd_release(&base);
        nd_release(&v);
        nd_release(&moved);
        nd_release(&back);
        k_case_end(k);
    }
    nd_array c, g, out;
    OK(nd_zeros(ND_CPU, 1, (int64_t[]){ 4 }, &c));
    OK(nd_zeros(ND_CUDA, 1, (int64_t[]){ 4 }, &g));
    ERR(nd_binary(ND_ADD, &c, &g, &out), ND_ERR_DEVICE, "device");
    ERR(nd_setitem(&g, &c), ND_ERR_DEVICE, "device");
    nd_release(&c);
    nd_release(&g);
}

/* Out of device memory is ND_ERR_NOMEM; a failed CUDA call is
 * ND_ERR_DEVICE naming the call, its file:line and CUDA's error; a failure
 * that is not sticky leaves the device usable. */
static void device_errors(k_ctx *k)
{
    (void)k;
    const char *name = NULL;
    OK(nd_device_available(ND_CUDA, &name));
    ck_assert_msg(name != NULL && name[0] != '\0', "nd_device_available(ND_CUDA) gave no name");
    int64_t huge = (int64_t)1 << 42, n = 1000;
    nd_array big, a, b;
#ifndef __SANITIZE_ADDRESS__   /* ASan stops a 2^44-byte allocation itself */
    ERR(nd_empty(ND_CUDA, 1, &huge, &big), ND_ERR_NOMEM, "empty");
#else
    (void)big;
    (void)huge;
#endif
    float host_src[64] = { 0 }, host_dst[64];
    nd_status s = nd_permute_bytes(ND_CUDA, host_src, host_dst, 4, 1, (int64_t[]){ 64 },
                                   (int[]){ 0 });
    if (s != ND_ERR_NOT_IMPLEMENTED && (strstr(name, "emulator") != NULL || s != ND_OK)) {
        ck_assert_msg(s == ND_ERR_DEVICE, "nd_permute_bytes on cuda between host pointers "
                      "returned %s (%s), not ND_ERR_DEVICE", nd_status_name(s), nd_last_error());
        const char *msg = nd_last_error();
        ck_assert_msg(strstr(msg, "cuda") != NULL && strstr(msg, ".cu:") != NULL &&
                      strstr(msg, "cudaError") != NULL, "the message of a failed CUDA call "
                      "names the call, its file:line and CUDA's error: '%s'", msg);
    }
    OK(nd_full(ND_CUDA, 1, &n, 4.0f, &a));   /* the device still works */
    OK(nd_to_device(&a, ND_CPU, &b));
    float want[1000];
    for (int i = 0; i < 1000; i++)
        want[i] = 4.0f;
    values(&b, want, n, "nd_full on cuda after a failed CUDA call");
    nd_release(&a);
    nd_release(&b);
}

/* ---------------------------------------------------------------------- */
/* Extreme shapes, strides and offsets (issue #17): the framework's part   */
/* of the rules of "Valid arrays" in nd.h                                  */
/* ---------------------------------------------------------------------- */

/* nd_as_strided's reach is computed without overflow: a view whose lowest
 * or highest element lies beyond int64 reaches outside every buffer (once,
 * offset INT64_MAX wrapped around and was accepted).  Strides never
 * stepped along (size-1 axes, empty views) may be anything, and are kept. */
static void extreme_as_strided_reach(k_ctx *k)
{
    nd_array base, keep, v;
    OK(nd_arange(k_dev(k), 3, &base));
    memset(&keep, 0xAB, sizeof keep);
    static const struct {
        int ndim;
        int64_t shape[3], strides[3], offset;
    } bad[] = {
        { 1, { 2 }, { 1 }, INT64_MAX },
        { 1, { 2 }, { -1 }, INT64_MIN },
        { 1, { 3 }, { K_P2(62) }, 0 },
        { 1, { 2 }, { INT64_MIN }, 1 },
        { 3, { 2, 2, 2 }, { -K_P2(62), -K_P2(62), -K_P2(62) }, 2 },
        { 2, { 2, 2 }, { INT64_MAX - 1, INT64_MAX - 1 }, 0 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ERR(nd_as_strided(&base, bad[i].ndim, bad[i].shape, bad[i].strides, bad[i].offset, &keep),
            ND_ERR_LAYOUT, "as_strided");
    untouched(&keep, "as_strided of a view beyond int64");
    int64_t ones[2] = { 1, 1 }, wild[2] = { INT64_MIN, INT64_MAX }, none[2] = { 0, K_P2(58) };
    OK(nd_as_strided(&base, 2, ones, wild, 2, &v));
    ck_assert_msg(v.strides[0] == INT64_MIN && v.strides[1] == INT64_MAX,
                  "as_strided changed the strides of size-1 axes");
    float two = 2;
    values(&v, &two, 1, "a (1,1) view at offset 2 with strides (INT64_MIN,INT64_MAX)");
    nd_release(&v);
    OK(nd_as_strided(&base, 2, none, wild, 3, &v));   /* offset 3: the end of the buffer */
    ck_assert_msg(v.strides[0] == INT64_MIN && v.strides[1] == INT64_MAX,
                  "as_strided changed the strides of an empty view");
    nd_release(&v);
    ERR(nd_as_strided(&base, 2, none, wild, 4, &keep), ND_ERR_LAYOUT, "as_strided");
    ERR(nd_as_strided(&base, 2, none, wild, -1, &keep), ND_ERR_LAYOUT, "as_strided");
    untouched(&keep, "as_strided of an empty view past the buffer");
    nd_release(&base);
}

/* The element count leaves zeros out, so the rule does not depend on the
 * order of the axes: (0,2^62,4) was once accepted and overflowed later;
 * (7,7,7,7,7,7,0,INT64_MAX) was made, but its permute failed.  The limit
 * itself: 2^58 elements, in any order, with 0s anywhere; one more is not. */
static void extreme_shape_rule(k_ctx *k)
{
    nd_device dev = k_dev(k);
    nd_array a, v, keep;
    memset(&keep, 0xAB, sizeof keep);
    int64_t wide[3] = { 0, K_P2(62), 4 };
    ERR(nd_empty(dev, 3, wide, &keep), ND_ERR_ARG, "too many elements");
    ERR(nd_zeros(dev, 3, wide, &keep), ND_ERR_ARG, "zeros");
    ERR(nd_full(dev, 3, wide, 1.0f, &keep), ND_ERR_ARG, "full");
    ERR(nd_from_host(dev, 3, wide, NULL, &keep), ND_ERR_ARG, "from_host");
    int64_t seven[8] = { 7, 7, 7, 7, 7, 7, 0, INT64_MAX };
    for (int r = 0; r < 8; r++) {   /* every rotation alike */
        int64_t rot[8];
        for (int j = 0; j < 8; j++)
            rot[j] = seven[(j + r) % 8];
        ERR(nd_empty(dev, 8, rot, &keep), ND_ERR_ARG, "empty");
    }
    untouched(&keep, "making an array of too many elements");
    OK(nd_arange(dev, 1, &a));
    int64_t most[4] = { K_P2(29), 0, K_P2(29), 0 }, zero4[4] = { 0 };
    for (int r = 0; r < 4; r++) {
        int64_t rot[4], step = 1;
        for (int j = 0; j < 4; j++)
            rot[j] = most[(j + r) % 4];
        OK(nd_as_strided(&a, 4, rot, zero4, 0, &v));
        nd_release(&v);
        OK(nd_empty(dev, 4, rot, &v));   /* no elements: no memory */
        for (int j = 3; j >= 0; step *= rot[j--])   /* row-major, a size 0 counted as 0 */
            ck_assert_msg(v.strides[j] == step, "nd_empty of a rotation of "
                          "(2^29,0,2^29,0): axis %d has stride %lld, expected the row-major %lld",
                          j, (long long)v.strides[j], (long long)step);
        nd_release(&v);
    }
    int64_t limit[2] = { K_P2(29), K_P2(29) }, past[2] = { K_P2(29), K_P2(29) + 1 };
    OK(nd_as_strided(&a, 2, limit, zero4, 0, &v));   /* a broadcast of one element */
    ck_assert_int_eq(nd_numel(&v), ND_MAX_NUMEL);
    nd_release(&v);
    ERR(nd_as_strided(&a, 2, past, zero4, 0, &keep), ND_ERR_ARG, "as_strided");
    int64_t empty_wide[3] = { K_P2(40), 0, K_P2(18) };
    int64_t empty_past[3] = { K_P2(40), 0, K_P2(18) + 1 };
    OK(nd_zeros(dev, 3, empty_wide, &v));
    nd_release(&v);
    ERR(nd_zeros(dev, 3, empty_past, &keep), ND_ERR_ARG, "zeros");
    untouched(&keep, "a shape past ND_MAX_NUMEL");
    nd_release(&a);
}

/* nd_format of an array with no elements prints "[]" at once
 * (zeros((2^40,0)) once looped 2^40 times), and a huge view prints its
 * summary from the elements shown alone. */
static void extreme_format(k_ctx *k)
{
    nd_array a, v;
    int64_t wide[2] = { K_P2(40), 0 }, one = 1, huge[2] = { K_P2(40), K_P2(18) }, zero[2] = { 0 };
    OK(nd_zeros(k_dev(k), 2, wide, &a));
    expect_format(&a, "array([], shape=(1099511627776,0), strides=(0,1), offset=0, device=cpu)");
    nd_release(&a);
    float seven = 7;
    OK(nd_from_host(k_dev(k), 1, &one, &seven, &a));
    OK(nd_as_strided(&a, 2, huge, zero, 0, &v));
    expect_format(&v, "array([[7., 7., 7., ..., 7., 7., 7.],\n"
                      "       [7., 7., 7., ..., 7., 7., 7.],\n"
                      "       [7., 7., 7., ..., 7., 7., 7.],\n"
                      "       ...,\n"
                      "       [7., 7., 7., ..., 7., 7., 7.],\n"
                      "       [7., 7., 7., ..., 7., 7., 7.],\n"
                      "       [7., 7., 7., ..., 7., 7., 7.]], shape=(1099511627776,262144), "
                      "strides=(0,0), offset=0, device=cpu)");
    nd_release(&v);
    nd_release(&a);
}

/* Every error names the operation that was called, not a framework
 * function it used: an unknown device, and running out of memory when a
 * result is made (2^58 floats: a valid shape no machine can allocate). */
static void extreme_messages_name_the_operation(k_ctx *k)
{
    nd_array keep;
    int64_t shape[1] = { 3 };
    float data[3] = { 0 };
    memset(&keep, 0xAB, sizeof keep);
    nd_device bogus = (nd_device)7;
    ERR(nd_zeros(bogus, 1, shape, &keep), ND_ERR_ARG, "zeros");
    ERR(nd_full(bogus, 1, shape, 1.0f, &keep), ND_ERR_ARG, "full");
    ERR(nd_empty(bogus, 1, shape, &keep), ND_ERR_ARG, "empty");
    ERR(nd_arange(bogus, 3, &keep), ND_ERR_ARG, "arange");
    ERR(nd_from_host(bogus, 1, shape, data, &keep), ND_ERR_ARG, "from_host");
    untouched(&keep, "making an array on an unknown device");
    /* a broadcast view of one element reaches 2^58 elements without memory
     * (the kit's executor lets ASan's allocator return NULL, as malloc does) */
    int64_t most[1] = { ND_MAX_NUMEL }, zero[1] = { 0 };
    nd_array one, a;
    nd_device dev = k_dev(k);
    OK(nd_zeros(dev, 0, NULL, &one));
    ERR(nd_from_host(dev, 1, most, data, &keep), ND_ERR_NOMEM, "from_host");
    ERR(nd_zeros(dev, 1, most, &keep), ND_ERR_NOMEM, "zeros");
    ERR(nd_arange(dev, ND_MAX_NUMEL, &keep), ND_ERR_NOMEM, "arange");
    OK(nd_as_strided(&one, 1, most, zero, 0, &a));
    ERR(nd_to_device(&a, dev == ND_CPU ? ND_CUDA : ND_CPU, &keep), ND_ERR_NOMEM, "to_device");
    untouched(&keep, "an operation out of memory");
    nd_release(&a);
    nd_release(&one);
}

static const k_test tests[] = {
    K_TEST(status_names, K_HOST, 0, NULL),
    K_TEST(shape_str, K_HOST, 0, NULL),
    K_TEST(create_and_copy_out, K_BOTH, 0, NULL),
    K_TEST(create_errors, K_BOTH, 0, NULL),
    K_TEST(as_strided_bounds, K_BOTH, 0, NULL),
    K_TEST(format_like_numpy, K_BOTH, 0, NULL),
    K_TEST(to_device_round_trip, K_CUDA, 0, NULL),
    K_TEST(device_errors, K_CUDA, 0, NULL),
    K_TEST(extreme_as_strided_reach, K_BOTH, 0, NULL),
    K_TEST(extreme_shape_rule, K_BOTH, 0, NULL),
    K_TEST(extreme_format, K_BOTH, 0, NULL),
    K_TEST(extreme_messages_name_the_operation, K_BOTH, 0, NULL),
};
K_SUITE(public_00, 0, "00_array", tests);
