/*
 * gen.c -- building calls: random numbers, shapes, buffers and views, all
 * as data.  Views are what a chain of permute and slicing of a larger
 * compact array gives (steps of +-1..3, any axis order, an offset), or a
 * compact window of a larger buffer; size-1 axes may carry junk strides
 * (they are never stepped along); read-only inputs may repeat elements
 * (stride 0).  Fixed seeds: the same test makes the same calls every run.
 */
#include "kit_impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Memory and random numbers                                              */
/* ---------------------------------------------------------------------- */

void *k_mem(k_ctx *k, size_t bytes)
{
    if (k->nblocks == k->cap) {
        int cap = k->cap ? 2 * k->cap : 64;
        void **b = realloc(k->blocks, (size_t)cap * sizeof *b);
        K_REQUIRE(b != NULL, "test setup: out of memory");
        k->blocks = b;
        k->cap = cap;
    }
    void *p = calloc(1, bytes > 0 ? bytes : 1);
    K_REQUIRE(p != NULL, "test setup: out of memory for %zu bytes", bytes);
    return k->blocks[k->nblocks++] = p;
}

float *k_floats(k_ctx *k, int64_t n)
{
    K_REQUIRE(n >= 0 && n < ((int64_t)1 << 32), "test setup: %lld floats", (long long)n);
    return k_mem(k, (size_t)n * sizeof(float));
}

void k_case_end(k_ctx *k)
{
    for (int i = 0; i < k->nblocks; i++)
        free(k->blocks[i]);
    k->nblocks = 0;
    if (k->have_res)
        k_res_free(&k->res);
    k->have_res = false;
}

k_ctx *k_ctx_new(nd_device dev)
{
    k_ctx *k = calloc(1, sizeof *k);
    K_REQUIRE(k != NULL, "out of memory");
    k->dev = dev;
    k->rng = 1;
    return k;
}

void k_ctx_free(k_ctx *k)
{
    k_case_end(k);
    free(k->blocks);
    free(k);
}

nd_device k_dev(const k_ctx *k)
{
    return k->dev;
}

/* splitmix64: small, fast and good enough for test data */
uint64_t k_next(k_ctx *k)
{
    uint64_t z = (k->rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int64_t k_int(k_ctx *k, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(k_next(k) % (uint64_t)(hi - lo + 1));
}

float k_float(k_ctx *k, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(k_next(k) >> 40) / (double)(1ULL << 24));
}

bool k_one_in(k_ctx *k, int n)
{
    return k_int(k, 1, n) == 1;
}

const float k_specials[K_NSPECIAL] = {
    NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.0f,
    FLT_MIN, -FLT_MIN, 1e-45f, -1e-45f, FLT_MAX, -FLT_MAX, 3.0f,
};

float k_special(k_ctx *k)
{
    return k_specials[k_int(k, 0, K_NSPECIAL - 1)];
}

/* ---------------------------------------------------------------------- */
/* Calls, buffers, shapes                                                 */
/* ---------------------------------------------------------------------- */

k_call k_new(k_ctx *k, k_op op)
{
    k_call c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.dev = k->dev;
    c.out = K_OUT_NEW;
    c.code = op == K_PERMUTE_BYTES ? -1 : 0;
    return c;
}

int k_buffer(k_ctx *k, k_call *c, int64_t n, k_fill fill)
{
    K_REQUIRE(c->nbufs < K_BUFS, "test setup: more than %d buffers in one call", K_BUFS);
    float *v = k_floats(k, n);
    for (int64_t i = 0; i < n; i++) {
        switch (fill) {
        case K_DISTINCT: v[i] = (float)i + 0.5f; break;
        case K_NEGATIVE: v[i] = -(float)i - 0.25f; break;
        case K_RANDOM: v[i] = k_float(k, -2, 2); break;
        case K_INTEGERS: v[i] = (float)k_int(k, -8, 8); break;
        case K_SPECIAL: v[i] = k_one_in(k, 3) ? k_special(k) : k_float(k, -4, 4); break;
        case K_POISON: v[i] = NAN; break;
        case K_BYTES: {
            uint32_t bits = (uint32_t)k_next(k);
            memcpy(&v[i], &bits, sizeof bits);
            break;
        }
        }
    }
    c->bufs[c->nbufs] = (k_buf){ .n = n, .v = v };
    return c->nbufs++;
}

int k_arg(k_call *c, k_arr a)
{
    if (c->nargs >= K_ARGS)
        k_fail("test setup: more than %d array arguments", K_ARGS);
    c->args[c->nargs] = a;
    return c->nargs++;
}

void k_list(k_call *c, int i, int n, const int64_t *v)
{
    for (int d = 0; d < n && d < K_LIST; d++)
        c->list[i][d] = v[d];
    if (i == 0)
        c->n = n;
}

void k_perm(k_ctx *k, int n, int64_t *perm)
{
    for (int d = 0; d < n; d++)
        perm[d] = d;
    for (int d = n - 1; d > 0; d--) {
        int j = (int)k_int(k, 0, d);
        int64_t t = perm[d];
        perm[d] = perm[j];
        perm[j] = t;
    }
}

int k_shape(k_ctx *k, int ndim, int64_t lo, int64_t hi, int64_t max_numel, int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        /* size 1 often: it is where broadcasting and simplification bite */
        shape[d] = lo <= 1 && hi >= 1 && k_one_in(k, 4) ? 1 : k_int(k, lo, hi);
        while (shape[d] > 1 && n * shape[d] > max_numel)
            shape[d] /= 2;
        if (shape[d] > 0)
            n *= shape[d];
    }
    return ndim;
}

void k_shape_of(k_ctx *k, int ndim, int64_t n, int64_t *shape)
{
    int64_t rest = n;
    for (int d = 0; d < ndim; d++)
        shape[d] = 1;
    for (int d = 0; d < ndim - 1 && rest > 1; d++) {
        int64_t f = k_int(k, 2, 7);
        if (rest % f == 0 && !k_one_in(k, 3)) {
            shape[d] = f;
            rest /= f;
        }
    }
    shape[ndim - 1] = rest;
    int64_t perm[ND_MAX_DIMS], t[ND_MAX_DIMS];
    k_perm(k, ndim, perm);
    for (int d = 0; d < ndim; d++)
        t[d] = shape[perm[d]];
    memcpy(shape, t, (size_t)ndim * sizeof *shape);
}

int k_broadcastable(k_ctx *k, int ndim, const int64_t *shape, int64_t *out)
{
    int drop = k_one_in(k, 3) ? (int)k_int(k, 0, ndim) : 0;
    for (int d = drop; d < ndim; d++)
        out[d - drop] = k_one_in(k, 3) ? 1 : shape[d];
    return ndim - drop;
}

/* ---------------------------------------------------------------------- */
/* Arrays                                                                 */
/* ---------------------------------------------------------------------- */

k_arr k_compact(k_ctx *k, k_call *c, int ndim, const int64_t *shape, k_fill fill)
{
    k_arr a = { .kind = K_VIEW, .ndim = ndim };
    int64_t n = k_numel(ndim, shape);
    a.buf = k_buffer(k, c, n, fill);
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        a.shape[d] = shape[d];
        a.strides[d] = s;
        s *= shape[d] > 0 ? shape[d] : 1;
    }
    return a;
}

/* A permuted, stepped view: the base has each axis long enough for its
 * steps, laid out row-major in a random axis order. */
static k_arr stepped(k_ctx *k, k_call *c, int ndim, const int64_t *shape, bool repeat,
                     k_fill fill)
{
    k_arr a = { .kind = K_VIEW, .ndim = ndim };
    int64_t b[ND_MAX_DIMS], bs[ND_MAX_DIMS], step[ND_MAX_DIMS], perm[ND_MAX_DIMS];
    k_perm(k, ndim, perm);
    for (int d = 0; d < ndim; d++) {
        step[d] = k_int(k, 1, 3) * (k_one_in(k, 3) ? -1 : 1);
        b[d] = (shape[d] > 0 ? (shape[d] - 1) * llabs(step[d]) + 1 : 0) + k_int(k, 0, 2);
    }
    int64_t total = 1;
    for (int j = ndim - 1; j >= 0; j--) {
        bs[perm[j]] = total;
        total *= b[perm[j]] > 0 ? b[perm[j]] : 1;
    }
    int64_t pad = k_int(k, 0, 3);
    a.offset = pad;
    for (int d = 0; d < ndim; d++) {
        a.shape[d] = shape[d];
        a.strides[d] = step[d] * bs[d];
        if (shape[d] > 1 && repeat && k_one_in(k, 4))
            a.strides[d] = 0;
        if (shape[d] == 0 || b[d] == 0)
            continue;
        int64_t span = (shape[d] - 1) * llabs(step[d]);
        int64_t first = k_int(k, 0, b[d] - 1 - span);
        a.offset += (step[d] < 0 ? b[d] - 1 - first : first) * bs[d];
    }
    a.buf = k_buffer(k, c, pad + total + k_int(k, 0, 3), fill);
    return a;
}

k_arr k_view(k_ctx *k, k_call *c, int ndim, const int64_t *shape, int how, k_fill fill)
{
    k_arr a;
    int pick = (int)k_int(k, 0, 3);
    if ((how & (K_STEPS | K_REPEAT)) && (pick > 0 || !(how & K_WINDOW))) {
        a = stepped(k, c, ndim, shape, (how & K_REPEAT) != 0, fill);
    } else if ((how & K_WINDOW) && pick != 3) {
        int64_t n = k_numel(ndim, shape), before = k_int(k, 0, 5);
        int b = k_buffer(k, c, before + n + k_int(k, 0, 5), fill);
        a = (k_arr){ .kind = K_VIEW, .buf = b, .ndim = ndim, .offset = before };
        int64_t s = 1;
        for (int d = ndim - 1; d >= 0; d--) {
            a.shape[d] = shape[d];
            a.strides[d] = s;
            s *= shape[d] > 0 ? shape[d] : 1;
        }
    } else {
        a = k_compact(k, c, ndim, shape, fill);
    }
    /* size-1 axes are never stepped along: any stride will do */
    if ((how & K_JUNK) && k_numel(ndim, shape) > 0)
        for (int d = 0; d < ndim; d++)
            if (shape[d] == 1 && k_one_in(k, 2))
                a.strides[d] = k_int(k, -1000, 1000);
    return a;
}

k_call k_offset_call(k_ctx *k, int ndim, const int64_t *shape, const int64_t *strides,
                     int64_t offset, int64_t i, int64_t n, int64_t step)
{
    k_call c = k_new(k, K_INDEX_TO_OFFSET);
    k_list(&c, 0, ndim, shape);
    k_list(&c, 1, ndim, strides);
    c.at[0] = i;
    c.at[1] = offset;
    c.at[2] = n;
    c.at[3] = step;
    return c;
}

k_call k_permute_call(k_ctx *k, int64_t e, int ndim, const int64_t *shape, const int64_t *perm,
                      int version, int64_t src_shift, int64_t dst_shift)
{
    k_call c = k_new(k, K_PERMUTE_BYTES);
    int64_t bytes = k_numel(ndim, shape) * e;
    k_buffer(k, &c, (src_shift + bytes + 3) / 4, K_BYTES);
    k_buffer(k, &c, (dst_shift + bytes + 64 + 3) / 4, K_POISON);
    k_list(&c, 0, ndim, shape);
    k_list(&c, 1, ndim, perm);
    c.at[0] = e;
    c.at[1] = src_shift;
    c.at[2] = dst_shift;
    c.code = version;
    return c;
}

k_arr k_at(int buf, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset)
{
    k_arr a = { .kind = K_VIEW, .buf = buf, .ndim = ndim, .offset = offset };
    for (int d = 0; d < ndim && d < ND_MAX_DIMS; d++) {
        a.shape[d] = shape[d];
        a.strides[d] = strides[d];
    }
    return a;
}

k_arr k_strided(k_ctx *k, k_call *c, int64_t size, int ndim, const int64_t *shape,
                const int64_t *strides, int64_t offset, k_fill fill)
{
    return k_at(k_buffer(k, c, size, fill), ndim, shape, strides, offset);
}

/* Strides of the kinds a loop meets: a row-major layout of a base that may
 * be padded, permuted, reversed or broadcast (stride 0), so that some
 * neighbours merge and some do not; sometimes arbitrary numbers. */
void k_strides(k_ctx *k, int ndim, const int64_t *shape, int64_t *strides)
{
    if (k_one_in(k, 5)) {
        for (int d = 0; d < ndim; d++)
            strides[d] = k_int(k, -6, 6);
        return;
    }
    int64_t perm[ND_MAX_DIMS];
    k_perm(k, ndim, perm);
    if (k_one_in(k, 2))   /* mostly in order: neighbours that may merge */
        for (int d = 0; d < ndim; d++)
            perm[d] = d;
    int64_t s = k_int(k, 1, 2);
    for (int j = ndim - 1; j >= 0; j--) {
        strides[perm[j]] = s;
        s *= (shape[perm[j]] > 0 ? shape[perm[j]] : 1) + (k_one_in(k, 5) ? 1 : 0);
    }
    bool flip = k_one_in(k, 4);
    for (int d = 0; d < ndim; d++) {
        if (flip || k_one_in(k, 8))
            strides[d] = -strides[d];
        if (k_one_in(k, 8))
            strides[d] = 0;
    }
}

