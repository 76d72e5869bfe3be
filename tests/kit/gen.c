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
    free(k->pending);
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

int k_buffer_of(k_ctx *k, k_call *c, int64_t n, const float *v)
{
    int b = k_buffer(k, c, n, K_POISON);
    memcpy(c->bufs[b].v, v, (size_t)n * sizeof *v);
    return b;
}

int k_arg(k_call *c, k_arr a)
{
    K_REQUIRE(c->nargs < K_ARGS, "test setup: more than %d array arguments", K_ARGS);
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

void k_index(k_call *c, int n, const nd_index *idx)
{
    c->n = n;
    for (int d = 0; d < n && d < K_LIST; d++)
        c->idx[d] = idx[d];
}

/* Fisher-Yates: v in a random order. */
static void shuffle(k_ctx *k, int n, int64_t *v)
{
    for (int d = n - 1; d > 0; d--) {
        int j = (int)k_int(k, 0, d);
        int64_t t = v[d];
        v[d] = v[j];
        v[j] = t;
    }
}

void k_perm(k_ctx *k, int n, int64_t *perm)
{
    for (int d = 0; d < n; d++)
        perm[d] = d;
    shuffle(k, n, perm);
}

int k_shape(k_ctx *k, int ndim, int64_t lo, int64_t hi, int64_t max_numel, int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        /* size 1 often: it is where broadcasting and simplification bite */
        shape[d] = lo <= 1 && hi >= 1 && k_one_in(k, 4) ? 1 : k_int(k, lo, hi);
        while (shape[d] > 1 && shape[d] > max_numel / n)   /* n * shape[d] may overflow */
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
    shuffle(k, ndim, shape);
}

int k_broadcastable(k_ctx *k, int ndim, const int64_t *shape, int64_t *out)
{
    int drop = k_one_in(k, 3) ? (int)k_int(k, 0, ndim) : 0;
    for (int d = drop; d < ndim; d++)
        out[d - drop] = k_one_in(k, 3) ? 1 : shape[d];
    return ndim - drop;
}

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

int64_t k_wild(k_ctx *k)
{
    static const int64_t edge[] = { INT64_MIN, INT64_MAX, K_P2(62), -K_P2(62), INT64_MAX / 3,
                                    INT64_MIN / 2 + 1, K_P2(40), -1, 0, 1 };
    switch (k_int(k, 0, 3)) {
    case 0: return (int64_t)k_next(k);
    case 1: return k_int(k, -8, 8);
    default: return edge[k_int(k, 0, (int64_t)(sizeof edge / sizeof edge[0]) - 1)];
    }
}

/* ---------------------------------------------------------------------- */
/* Arrays                                                                 */
/* ---------------------------------------------------------------------- */

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

k_arr k_fit(k_ctx *k, k_call *c, int ndim, const int64_t *shape, const int64_t *strides,
            k_fill fill)
{
    int64_t lo = 0, hi = 0, pad = k_int(k, 0, 4);
    for (int d = 0; d < ndim && k_numel(ndim, shape) > 0; d++) {
        int64_t reach = (shape[d] - 1) * strides[d];
        lo += reach < 0 ? reach : 0;
        hi += reach > 0 ? reach : 0;
    }
    return k_strided(k, c, pad - lo + hi + 1 + k_int(k, 0, 4), ndim, shape, strides, pad - lo,
                     fill);
}

/* A compact view of `shape` over buffer `buf`, from `offset`. */
static k_arr row_major(int buf, int ndim, const int64_t *shape, int64_t offset)
{
    int64_t strides[ND_MAX_DIMS], s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d] > 0 ? shape[d] : 1;
    }
    return k_at(buf, ndim, shape, strides, offset);
}

k_arr k_compact(k_ctx *k, k_call *c, int ndim, const int64_t *shape, k_fill fill)
{
    return row_major(k_buffer(k, c, k_numel(ndim, shape), fill), ndim, shape, 0);
}

k_arr k_given(k_ctx *k, k_call *c, int ndim, const int64_t *shape, const float *v)
{
    return row_major(k_buffer_of(k, c, k_numel(ndim, shape), v), ndim, shape, 0);
}

/* Floats a stepped view's base may hold before its axes stop stepping. */
#define K_BASE_CAP (1 << 16)

/* A permuted, stepped view: the base has each axis long enough for its
 * steps, laid out row-major in a random axis order. */
static k_arr stepped(k_ctx *k, k_call *c, int ndim, const int64_t *shape, bool repeat,
                     k_fill fill)
{
    k_arr a = { .kind = K_VIEW, .ndim = ndim };
    int64_t b[ND_MAX_DIMS], bs[ND_MAX_DIMS], step[ND_MAX_DIMS], perm[ND_MAX_DIMS];
    k_perm(k, ndim, perm);
    int64_t room = 1;
    for (int d = 0; d < ndim; d++) {
        step[d] = k_int(k, 1, 3) * (k_one_in(k, 3) ? -1 : 1);
        b[d] = (shape[d] > 0 ? (shape[d] - 1) * llabs(step[d]) + 1 : 0) + k_int(k, 0, 2);
        int64_t rest = 1;   /* what the axes still to come need at least */
        for (int e = d + 1; e < ndim; e++)
            rest *= shape[e] > 1 ? shape[e] : 1;
        if (room * b[d] * rest > K_BASE_CAP) {   /* many axes: keep the base small */
            step[d] = step[d] < 0 ? -1 : 1;
            b[d] = shape[d];
        }
        room *= b[d] > 0 ? b[d] : 1;
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
        int64_t before = k_int(k, 0, 5);
        int b = k_buffer(k, c, before + k_numel(ndim, shape) + k_int(k, 0, 5), fill);
        a = row_major(b, ndim, shape, before);
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

k_arr k_empty_view(k_ctx *k, k_call *c, int ndim, int64_t size)
{
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    k_shape(k, ndim, 0, 4, 256, shape);
    int zero = (int)k_int(k, 0, ndim - 1), big = (int)k_int(k, 0, ndim - 1);
    shape[zero] = 0;
    if (big != zero && k_one_in(k, 2))   /* the rest multiply to at most 4^7 = 2^14 */
        shape[big] = K_P2(k_int(k, 20, 44));
    for (int d = 0; d < ndim; d++)
        strides[d] = k_wild(k);
    return k_strided(k, c, size, ndim, shape, strides, k_int(k, 0, size), K_DISTINCT);
}

k_call k_on_array(k_ctx *k, k_op op, int ndim, const int64_t *shape)
{
    k_call c = k_new(k, op);
    k_arg(&c, k_compact(k, &c, ndim, shape, K_DISTINCT));
    return c;
}

k_call k_on_view(k_ctx *k, k_op op, int64_t size, int ndim, const int64_t *shape,
                 const int64_t *strides, int64_t offset)
{
    k_call c = k_new(k, op);
    k_arg(&c, k_strided(k, &c, size, ndim, shape, strides, offset, K_DISTINCT));
    return c;
}

/* ---------------------------------------------------------------------- */
/* Lesson 1: arguments for the view functions                             */
/* ---------------------------------------------------------------------- */

/* A random divisor of n > 0 (small ones, or n itself). */
static int64_t divisor(k_ctx *k, int64_t n)
{
    int64_t d[64];
    int m = 0;
    for (int64_t i = 1; i <= n && i <= 1000 && m < 63; i++)
        if (n % i == 0)
            d[m++] = i;
    d[m++] = n;
    return d[k_int(k, 0, m - 1)];
}

/* A shape of n elements, 0..8 axes, in c->list[0]; sometimes one size -1
 * where it can be inferred. */
static void reshape_args(k_ctx *k, k_call *c, int64_t n)
{
    int nd = (int)k_int(k, n == 1 ? 0 : 1, ND_MAX_DIMS);
    int64_t *s = c->list[0], rest = n;
    for (int d = 0; d < nd; d++) {
        s[d] = n == 0 ? k_int(k, 0, 3) : d == nd - 1 ? rest : divisor(k, rest);
        rest = s[d] > 0 ? rest / s[d] : rest;
    }
    if (n == 0)
        s[k_int(k, 0, nd - 1)] = 0;
    shuffle(k, nd, s);   /* the remainder not always last */
    c->n = nd;
    if (nd > 0 && k_one_in(k, 3)) {
        int d = (int)k_int(k, 0, nd - 1);
        int64_t others = 1;
        for (int j = 0; j < nd; j++)
            others *= j == d ? 1 : s[j];
        if (others > 0)
            s[d] = -1;
    }
}

void k_view_args(k_ctx *k, k_call *c)
{
    const k_arr *a = &c->args[0];
    int nd = a->ndim;
    int64_t *l = c->list[0];
    switch (c->op) {
    case K_PERMUTE:
        k_perm(k, nd, l);
        for (int d = 0; d < nd; d++)
            l[d] -= k_one_in(k, 2) ? nd : 0;
        c->n = nd;
        break;
    case K_RESHAPE:
        reshape_args(k, c, k_numel(nd, a->shape));
        break;
    case K_BROADCAST_TO: {
        int lead = (int)k_int(k, 0, ND_MAX_DIMS - nd < 2 ? ND_MAX_DIMS - nd : 2);
        for (int d = 0; d < lead + nd; d++) {
            int64_t from = d < lead ? 1 : a->shape[d - lead];
            l[d] = from != 1 ? from : k_one_in(k, 7) ? 0 : k_int(k, 1, 4);
        }
        c->n = lead + nd;
        break;
    }
    case K_SLICE:
        c->n = (int)k_int(k, 0, nd);
        for (int d = 0; d < c->n; d++) {
            int64_t size = a->shape[d], step = k_one_in(k, 3) ? k_int(k, 2, 4) : 1;
            if (size > 0 && k_one_in(k, 4)) {
                c->idx[d] = ND_AT(k_int(k, -size, size - 1));
                continue;
            }
            c->idx[d] = ND_SLICE(k_one_in(k, 4) ? ND_NONE : k_int(k, -size - 3, size + 3),
                                 k_one_in(k, 4) ? ND_NONE : k_int(k, -size - 3, size + 3),
                                 k_one_in(k, 2) ? -step : step);
        }
        break;
    case K_DIAGONAL: {
        int x = (int)k_int(k, 0, nd - 1), y = (int)k_int(k, 0, nd - 2);
        y += y >= x;   /* another axis */
        c->at[0] = k_int(k, -a->shape[x] - 2, a->shape[y] + 2);
        c->at[1] = x - (k_one_in(k, 3) ? nd : 0);
        c->at[2] = y - (k_one_in(k, 3) ? nd : 0);
        break;
    }
    case K_OFFSET_OF:
        for (int d = 0; d < nd; d++)
            l[d] = k_int(k, 0, a->shape[d] - 1);
        break;
    case K_IS_COMPACT:
        break;
    default:
        k_fail("test setup: k_view_args of op %d", (int)c->op);
    }
}

k_call k_random_view_call(k_ctx *k, k_op op, int lo, int hi, int64_t max)
{
    int64_t shape[ND_MAX_DIMS];
    int nd = k_shape(k, (int)k_int(k, lo, hi), k_one_in(k, 3) ? 0 : 1, max, 4096, shape);
    k_call c = k_new(k, op);
    k_arg(&c, k_view(k, &c, nd, shape, K_ANY | K_REPEAT, K_DISTINCT));
    k_view_args(k, &c);
    return c;
}

void k_check_random_views(k_ctx *k, k_op op, int count, int lo, int hi, int64_t max,
                          bool twice, const char *hint)
{
    for (int i = 0; i < count; i++) {
        k_call c = k_random_view_call(k, op, lo, hi, max);
        if (twice)
            k_check_then(k, &c, op, hint);
        k_check(k, &c, hint);
    }
}

void k_check_view_chains(k_ctx *k, int count, int lo_steps, int hi_steps, int hi, int64_t max,
                         bool out_is_a, const char *hint)
{
    static const k_op ops[] = { K_PERMUTE, K_BROADCAST_TO, K_SLICE, K_DIAGONAL, K_RESHAPE };
    for (int i = 0; i < count; i++) {
        k_call c = k_random_view_call(k, K_SLICE, 0, hi, max);
        for (int n = (int)k_int(k, lo_steps, hi_steps); n > 0; n--) {
            c.op = ops[k_int(k, 0, 4)];
            if (c.op == K_DIAGONAL && c.args[0].ndim < 2)
                c.op = K_SLICE;
            if (c.op == K_RESHAPE && !k_compact_layout(&c.args[0]))
                c.op = K_PERMUTE;
            k_view_args(k, &c);
            c.out = out_is_a && k_one_in(k, 3) ? 0 : K_OUT_NEW;
            K_REQUIRE(k_check_then(k, &c, K_SLICE, hint), "test setup: a step failed");
        }
        k_check(k, &c, hint);
    }
}

bool k_check_then(k_ctx *k, k_call *c, k_op next, const char *hint)
{
    k_want w = k_reference(k, c);
    bool ok = w.status == ND_OK && w.view;
    /* an empty result reaches nothing: any offset in the buffer will do */
    k_arr res = k_at(w.buf, w.ndim, w.shape, w.strides,
                     k_numel(w.ndim, w.shape) > 0 ? w.offset : c->args[0].offset);
    /* the buffers' contents outlive the case k_check ends */
    k_buf keep[K_BUFS];
    int nbufs = c->nbufs;
    for (int i = 0; i < nbufs; i++) {
        keep[i].n = c->bufs[i].n;
        keep[i].v = malloc((size_t)(keep[i].n > 0 ? keep[i].n : 1) * sizeof(float));
        K_REQUIRE(keep[i].v != NULL, "test setup: out of memory");
        memcpy(keep[i].v, c->bufs[i].v, (size_t)keep[i].n * sizeof(float));
    }
    k_check(k, c, hint);
    *c = k_new(k, next);
    for (int i = 0; i < nbufs; i++) {
        k_buffer_of(k, c, keep[i].n, keep[i].v);
        free(keep[i].v);
    }
    if (ok) {
        k_arg(c, res);
        k_view_args(k, c);
    }
    return ok;
}

void k_expect_list(k_ctx *k, k_call c, int n, const int64_t *v, nd_status want,
                   const char *hint)
{
    k_list(&c, 0, n, v);
    k_expect(k, &c, want, hint);
}

/* ---------------------------------------------------------------------- */
/* Lesson 3: elementwise calls                                            */
/* ---------------------------------------------------------------------- */

static bool into_op(k_op op)
{
    return op == K_BINARY_INTO || op == K_SCALAR_INTO || op == K_UNARY_INTO;
}

/* A call of op with `code` and a scalar like the inputs' values: special,
 * a multiple of 1/2, or any. */
static k_call ewise_call(k_ctx *k, k_op op, int code)
{
    k_call c = k_new(k, op);
    c.code = code;
    c.scalar = k_one_in(k, 4) ? k_special(k) : k_one_in(k, 2) ? (float)k_int(k, -8, 8) / 2
                                                              : k_float(k, -4, 4);
    return c;
}

/* dst (the _into ops) or out is a, or b, as `how` says. */
static void ewise_out(k_ctx *k, k_call *c, int nd, const int64_t *shape, int how)
{
    int alias = how & K_OUT_IS_A ? 0 : how & K_OUT_IS_B ? 1 : -1;
    if (!into_op(c->op))
        c->out = alias >= 0 ? alias : K_OUT_NEW;
    else if (alias >= 0)
        k_arg(c, c->args[alias]);
    else
        k_arg(c, k_view(k, c, nd, shape, K_ANY, K_NEGATIVE));
}

k_call k_ewise(k_ctx *k, k_op op, int code, int ndim, int64_t hi, int64_t max_numel, int how)
{
    /* integers in [-8, 8] give ties (eq, ge, maximum), zeros (x/0, log 0,
     * 0^-1) and integer powers of negative numbers; specials give NaN,
     * infinities, signed zeros, denormals and overflow */
    static const k_fill fills[] = { K_INTEGERS, K_SPECIAL, K_RANDOM };
    bool binary = op == K_BINARY || op == K_BINARY_INTO;
    k_call c = ewise_call(k, op, code);
    int64_t shape[ND_MAX_DIMS], s[2][ND_MAX_DIMS];
    int nd = k_shape(k, ndim, k_one_in(k, 5) ? 0 : 1, hi, max_numel, shape), n[2];
    for (int i = 0; i < (binary && !(how & K_B_IS_A) ? 2 : 1); i++) {
        /* an operand that dst is, or that b is too, has the result's shape */
        bool full = !binary || (how & (K_B_IS_A | (i == 0 ? K_OUT_IS_A : K_OUT_IS_B)));
        bool writable = into_op(op) && (how & (i == 0 ? K_OUT_IS_A : K_OUT_IS_B));
        memcpy(s[i], shape, sizeof shape);
        n[i] = full ? nd : k_broadcastable(k, nd, shape, s[i]);
        if (binary && how == 0 && n[i] < ND_MAX_DIMS && k_one_in(k, 8)) {
            memmove(s[i] + 1, s[i], (size_t)n[i]++ * sizeof *s[i]);   /* a leading 1 */
            s[i][0] = 1;
        }
        k_arg(&c, k_view(k, &c, n[i], s[i], writable ? K_ANY : K_ANY | K_REPEAT,
                         fills[k_int(k, 0, 2)]));
    }
    if (binary && (how & K_B_IS_A))
        k_arg(&c, c.args[0]);
    else if (binary)
        k_broadcast_shape(n[0], s[0], n[1], s[1], &nd, shape);
    ewise_out(k, &c, nd, shape, how);
    return c;
}

/* A 1-D view of n elements with stride `step` (0 repeats one element) over
 * a new buffer with one element to spare on either side of what it reaches. */
static k_arr row(k_ctx *k, k_call *c, int64_t n, int64_t step, k_fill fill)
{
    int64_t reach = n > 0 ? (n - 1) * llabs(step) : 0;
    return k_strided(k, c, reach + 3, 1, &n, &step, step < 0 ? 1 + reach : 1, fill);
}

k_call k_ewise_row(k_ctx *k, k_op op, int code, int64_t n, int64_t sa, int64_t sb, int64_t sd,
                   int how)
{
    k_call c = ewise_call(k, op, code);
    k_arg(&c, row(k, &c, n, sa, K_INTEGERS));
    if (op == K_BINARY || op == K_BINARY_INTO)
        k_arg(&c, row(k, &c, n, sb, K_SPECIAL));
    if (into_op(op) && !(how & (K_OUT_IS_A | K_OUT_IS_B)))
        k_arg(&c, row(k, &c, n, sd, K_NEGATIVE));
    else
        ewise_out(k, &c, 1, &n, how);
    return c;
}

/* ---------------------------------------------------------------------- */
/* Lessons 4 and 5                                                        */
/* ---------------------------------------------------------------------- */

void k_reduce_of(k_call *c, int op, int naxes, const int64_t *axes, bool keepdims)
{
    c->code = op;
    c->keepdims = keepdims;
    if (axes != NULL)
        k_list(c, 0, naxes > 0 ? naxes : 0, axes);
    c->n = naxes;
    c->list_null[0] = axes == NULL;
}

int k_axes(k_ctx *k, int ndim, int64_t *axes)
{
    int mode = (int)k_int(k, 0, 4), n = 0;
    if (mode == 2 || (mode == 0 && ndim == 0))
        return ND_ALL_AXES;
    if (mode == 0)
        axes[n++] = k_int(k, 0, ndim - 1);
    for (int d = 0; d < ndim && (mode == 1 || mode == 3); d++)
        if (mode == 3 || k_one_in(k, 2))
            axes[n++] = d;
    shuffle(k, n, axes);   /* in any order */
    for (int i = 0; i < n; i++)
        if (k_one_in(k, 2))
            axes[i] -= ndim;
    return n;
}

/* A matrix size: 0 or 1 now and then, half the time one below, at or one
 * above a multiple of a register tile's size, else any up to max. */
static int64_t matrix_size(k_ctx *k, int64_t max)
{
    static const int64_t tiles[] = { 4, 8, 12, 16, 24, 32, 48, 64, 96, 128 };
    if (k_one_in(k, 10))
        return k_int(k, 0, 1);
    int64_t s = k_one_in(k, 2) ? tiles[k_int(k, 0, 9)] + k_int(k, -1, 1) : k_int(k, 1, max);
    return s < max ? s : max;
}

void k_matmul_shapes(k_ctx *k, int64_t max, int64_t max_macs, int *nda, int64_t *sa, int *ndb,
                     int64_t *sb)
{
    int64_t m = matrix_size(k, max), n = matrix_size(k, max), kk = matrix_size(k, max);
    int64_t batch[3];
    int nb = (int)k_int(k, 0, 3);
    for (int j = 0; j < nb; j++)
        batch[j] = k_one_in(k, 12) ? 0 : k_int(k, 1, 3);
    int keep_a = (int)k_int(k, 0, nb), keep_b = (int)k_int(k, 0, nb);
    if (k_one_in(k, 2))   /* often one input has every batch axis */
        *(k_one_in(k, 2) ? &keep_a : &keep_b) = nb;
    for (int j = 0; j < keep_a; j++)
        sa[j] = k_one_in(k, 3) ? 1 : batch[nb - keep_a + j];
    for (int j = 0; j < keep_b; j++)
        sb[j] = k_one_in(k, 3) ? 1 : batch[nb - keep_b + j];
    int64_t count = k_numel(nb, batch);
    while (count * m * n * kk > max_macs) {
        int64_t *big = m >= n && m >= kk ? &m : n >= kk ? &n : &kk;
        *big /= 2;
    }
    *nda = keep_a + 2;
    *ndb = keep_b + 2;
    sa[keep_a] = m;
    sa[keep_a + 1] = kk;
    sb[keep_b] = kk;
    sb[keep_b + 1] = n;
}

k_call k_product(k_ctx *k, k_op op, int nda, const int64_t *sa, int ndb, const int64_t *sb,
                 int how, k_fill fill)
{
    k_call c = k_new(k, op);
    k_arg(&c, k_view(k, &c, nda, sa, how, fill));
    k_arg(&c, k_view(k, &c, ndb, sb, how, fill));
    return c;
}

/* ---------------------------------------------------------------------- */
/* Lessons 6 and 7                                                        */
/* ---------------------------------------------------------------------- */

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
