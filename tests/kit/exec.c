/*
 * exec.c -- the executor: turn a call (data) into calls of the library on
 * the call's device, and report what happened as raw facts (k_res).  The
 * only file of the kit that calls lesson code; it judges nothing.
 *
 * For every call: each buffer is made with nd_from_host and each K_VIEW
 * argument with nd_as_strided (framework functions, never lesson code); an
 * output struct starts poisoned (every byte 0xAB) so that a function that
 * writes it on failure shows; afterwards every argument view is released
 * and each buffer's refcount read, so that a leaked or a lost reference
 * shows too.  What each op puts in r->vals:
 *
 *   K_COMPACT_STRIDES  strides[0..K_LIST-1] (K_POISON64 where not written)
 *   K_IS_COMPACT       the result's byte: 0, 1, or 0xAB if not written
 *   K_OFFSET_OF        the offset (K_POISON64 if not written)
 *   K_ITER             see iter() below
 *   K_SIMPLIFY_DIMS    ndim, shape[K_LIST], strides_a[K_LIST], strides_b[K_LIST]
 *   K_INDEX_TO_OFFSET  the offsets of positions at[0] + j * at[3] (at[3] 0:
 *                      1), j < at[2] (at[2] 0: one position)
 *   K_SIMPLIFY_PERM    out_ndim, out_shape[K_LIST], out_perm[K_LIST] (at[0]: in
 *                      place; at[1]: 1 out_shape NULL, 2 out_perm NULL)
 *   K_PERMUTE_BYTES    the version that ran (K_POISON64 if not written)
 *
 * A call with `profile` set is followed in r->vals by what the CUDA
 * emulator's counters saw of the kernels it launched (profile() below):
 * counts only, which the parent judges.  A call with `sampled` set runs,
 * buffers and launches, in the emulator's sampled mode (sample() below).
 */
#include "kit_impl.h"

#include "../../grader/emu/include/ndemu_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const k_call *c;
    k_res *r;
    nd_array base[K_BUFS];
    nd_array arr[K_ARGS];
    nd_array before[K_ARGS];   /* the argument structs before the call */
    nd_array out_new;
    nd_array *out;             /* what the call was given as out, or NULL */
    /* the int lists as the call passes them: heap copies of exactly the
     * len entries the function may read, so AddressSanitizer sees a read
     * past them (NULL where the call passes NULL) */
    int len;
    int64_t *l64[3];
    int *l32[3];
} job;

static void setup_failed(k_res *r, const char *what)
{
    r->status = ND_ERR_ARG;
    r->setup_failed = true;
    snprintf(r->msg, sizeof r->msg, "test setup: %s failed: %s", what, nd_last_error());
}

/* Room for n result values in r->vals.  Out of memory, the test fails as a
 * setup failure, none are sent, and the caller writes into scratch: room
 * for the fixed-size results (the walk and the offsets write nvals). */
static int64_t *vals(k_res *r, int n)
{
    static int64_t scratch[1 + 3 * K_LIST];
    r->nvals = n;
    r->vals = calloc((size_t)(n > 0 ? n : 1), sizeof(int64_t));
    if (r->vals != NULL)
        return r->vals;
    r->nvals = 0;
    setup_failed(r, "memory for the results");
    return scratch;
}

/* Whether the call's input floats are the executor's to free once its
 * buffers hold them (k_exec_owning: the grader's executor, whose calls
 * come off the wire; not a student's run, whose calls are the test's). */
static bool own_inputs;

/* Make the buffers and the argument views. */
static bool build(job *j)
{
    const k_call *c = j->c;
    for (int i = 0; i < c->nbufs; i++) {
        int64_t n = c->bufs[i].n;
        nd_device dev = c->bufs[i].on ? (nd_device)(c->bufs[i].on - 1) : c->dev;
        if (nd_from_host(dev, 1, &n, c->bufs[i].v, &j->base[i]) != ND_OK) {
            setup_failed(j->r, "nd_from_host");
            return false;
        }
        if (own_inputs) {   /* the buffer holds them now: the call's copy can go */
            free(((k_call *)c)->bufs[i].v);
            ((k_call *)c)->bufs[i].v = NULL;
        }
        /* the reference takes buffers to start 16-byte aligned (lesson 7) */
        if ((uintptr_t)j->base[i].buf->ptr % 16 != 0) {
            setup_failed(j->r, "a 16-byte aligned buffer");
            return false;
        }
    }
    for (int i = 0; i < c->nargs; i++) {
        const k_arr *a = &c->args[i];
        nd_array *v = &j->arr[i];
        memset(v, 0, sizeof *v);
        if (a->kind == K_VIEW) {
            if (nd_as_strided(&j->base[a->buf], a->ndim, a->shape, a->strides, a->offset, v) !=
                ND_OK) {
                setup_failed(j->r, "nd_as_strided");
                return false;
            }
        } else if (a->kind == K_RAW) {
            v->buf = j->base[a->buf].buf;
            v->ndim = a->ndim;
            memcpy(v->shape, a->shape, sizeof v->shape);
            memcpy(v->strides, a->strides, sizeof v->strides);
            v->offset = a->offset;
        }
        j->before[i] = *v;
    }
    return true;
}

static const nd_array *in(job *j, int i)
{
    return i < j->c->nargs && j->c->args[i].kind != K_NULLPTR ? &j->arr[i] : NULL;
}

static bool lists(job *j)
{
    const k_call *c = j->c;
    /* n, or for nd_permute and nd_offset_of the array's ndim */
    int n = (c->op == K_PERMUTE || c->op == K_OFFSET_OF) && c->nargs > 0 ? c->args[0].ndim : c->n;
    n = j->len = n < 0 ? 0 : n > K_LIST ? K_LIST : n;
    for (int l = 0; l < 3; l++) {
        j->l64[l] = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
        j->l32[l] = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
        if (j->l64[l] == NULL || j->l32[l] == NULL) {
            setup_failed(j->r, "memory for the int lists");
            return false;
        }
        for (int d = 0; d < n; d++) {
            j->l64[l][d] = c->list[l][d];
            j->l32[l][d] = (int)c->list[l][d];
        }
    }
    return true;
}

static int64_t *list(const job *j, int l)
{
    return j->c->list_null[l] ? NULL : j->l64[l];
}

static const int *list32(const job *j, int l)
{
    return j->c->list_null[l] ? NULL : j->l32[l];
}

/* The odometer, as vals: [0] positions visited (calls of nd_iter_next
 * that returned true, at most at[0], the cap the test gives: the
 * reference's count + 2), [1] whether the next call returned false again,
 * [2..4] ndim, total and count after nd_iter_init, [5] count at the end,
 * then each position (ndim values), then the index after the end. */
#define K_ITER_HEAD 6
static void iter(job *j)
{
    const k_call *c = j->c;
    k_res *r = j->r;
    nd_iter it;
    memset(&it, 0xAB, sizeof it);
    nd_iter before = it;
    if (c->at[2] > 0 && nd_iter_init(&it, (int)c->at[2], c->list[1]) == ND_OK) {
        for (int i = 0; i < 3; i++)   /* an iterator used before, then re-initialised */
            nd_iter_next(&it);
        before = it;
    }
    r->status = nd_iter_init(c->out == K_OUT_NULL ? NULL : &it, c->n, list(j, 0));
    r->out_untouched = memcmp(&it, &before, sizeof it) == 0;
    if (c->at[1] && j->l64[0] != NULL)   /* the caller reuses its shape array */
        for (int d = 0; d < j->len; d++)
            j->l64[0][d] = 1000003;
    int nd = c->n >= 0 && c->n <= ND_MAX_DIMS ? c->n : 0;
    int64_t cap = c->at[0];
    int64_t *v = vals(r, (int)(K_ITER_HEAD + (cap + 1) * nd));
    if (r->status != ND_OK || r->nvals == 0)
        return;
    v[2] = it.ndim;
    v[3] = it.total;
    v[4] = it.count;
    int64_t steps = 0;
    while (steps < cap && nd_iter_next(&it)) {
        memcpy(v + K_ITER_HEAD + steps * nd, it.index, (size_t)nd * sizeof(int64_t));
        steps++;
    }
    v[0] = steps;
    v[5] = it.count;
    if (steps < cap) {
        memcpy(v + K_ITER_HEAD + steps * nd, it.index, (size_t)nd * sizeof(int64_t));
        v[1] = !nd_iter_next(&it) && !nd_iter_next(&it) && !nd_iter_next(NULL);
    }
}

static void simplify_dims(job *j)
{
    const k_call *c = j->c;
    int n = c->n;
    j->r->status = nd_simplify_dims(c->out == K_OUT_NULL ? NULL : &n, list(j, 0), list(j, 1),
                                    list(j, 2));
    int64_t *v = vals(j->r, 1 + 3 * K_LIST);
    v[0] = n;
    for (int l = 0; l < 3; l++)
        for (int d = 0; d < K_LIST; d++)
            v[1 + l * K_LIST + d] = d < j->len ? j->l64[l][d] : c->list[l][d];
}

/* An int output the call left alone reads back as K_POISON64. */
static int64_t widen(int x)
{
    return x == (int)K_POISON64 ? K_POISON64 : x;
}

static void simplify_perm(job *j)
{
    const k_call *c = j->c;
    int64_t shape[K_LIST], oshape[K_LIST];
    int perm[K_LIST], operm[K_LIST], ondim = (int)K_POISON64;
    for (int k = 0; k < K_LIST; k++) {
        shape[k] = c->list[0][k];
        perm[k] = (int)c->list[1][k];
        oshape[k] = K_POISON64;
        operm[k] = (int)K_POISON64;
    }
    bool in_place = c->at[0] != 0;   /* the outputs are shape and perm themselves */
    int64_t *os = in_place ? shape : oshape;
    int *op = in_place ? perm : operm;
    j->r->status = nd_simplify_permutation(c->n, c->list_null[0] ? NULL : shape,
                                           c->list_null[1] ? NULL : perm,
                                           c->list_null[2] ? NULL : &ondim,
                                           c->at[1] & 1 ? NULL : os, c->at[1] & 2 ? NULL : op);
    int64_t *v = vals(j->r, 1 + 2 * K_LIST);
    v[0] = widen(ondim);
    for (int k = 0; k < K_LIST; k++) {
        v[1 + k] = os[k];
        v[1 + K_LIST + k] = in_place ? op[k] : widen(op[k]);
    }
}

/* at[0] elem_bytes, at[1] src byte offset, at[2] dst byte offset,
 * at[3] flags: 1 src NULL, 2 dst NULL, 4 dst lies in src's buffer. */
static void permute_bytes(job *j)
{
    const k_call *c = j->c;
    int64_t flags = c->at[3];
    char *src = (char *)j->base[0].buf->ptr + c->at[1];
    char *dst = (char *)j->base[flags & 4 ? 0 : 1].buf->ptr + c->at[2];
    const void *s = flags & 1 ? NULL : src;
    void *d = flags & 2 ? NULL : dst;
    int ran = (int)K_POISON64;
    const int64_t *shape = list(j, 0);
    const int *p = list32(j, 1);
    if (c->code < 0)
        j->r->status = nd_permute_bytes(c->dev, s, d, (size_t)c->at[0], c->n, shape, p);
    else
        j->r->status = nd_permute_bytes_version(c->dev, s, d, (size_t)c->at[0], c->n, shape, p,
                                                c->code, &ran);
    vals(j->r, 1)[0] = widen(ran);
}

/* The call itself. */
static void call(job *j)
{
    const k_call *c = j->c;
    k_res *r = j->r;
    const nd_array *a = in(j, 0), *b = in(j, 1), *d = in(j, 2);
    nd_array *out = j->out;
    switch (c->op) {
    case K_COMPACT_STRIDES: {
        int64_t *v = vals(r, K_LIST), *st = j->l64[1];   /* exactly n entries */
        for (int k = 0; k < j->len; k++)
            st[k] = K_POISON64;
        r->status = nd_compact_strides(c->n, list(j, 0), c->out == K_OUT_NULL ? NULL : st);
        for (int k = 0; k < K_LIST; k++)
            v[k] = k < j->len ? st[k] : K_POISON64;
        break;
    }
    case K_IS_COMPACT: {
        union { bool b; unsigned char byte; } res = { .byte = 0xAB };
        r->status = nd_is_compact(a, c->out == K_OUT_NULL ? NULL : &res.b);
        vals(r, 1)[0] = res.byte;
        break;
    }
    case K_OFFSET_OF: {
        int64_t off = K_POISON64;
        r->status = nd_offset_of(a, list(j, 0), c->out == K_OUT_NULL ? NULL : &off);
        vals(r, 1)[0] = off;
        break;
    }
    case K_RESHAPE: r->status = nd_reshape(a, c->n, list(j, 0), out); break;
    case K_PERMUTE: r->status = nd_permute(a, list32(j, 0), out); break;
    case K_BROADCAST_TO: r->status = nd_broadcast_to(a, c->n, list(j, 0), out); break;
    case K_SLICE: r->status = nd_slice(a, c->n, c->list_null[0] ? NULL : c->idx, out); break;
    case K_DIAGONAL:
        r->status = nd_diagonal(a, c->at[0], (int)c->at[1], (int)c->at[2], out);
        break;
    case K_ITER: iter(j); break;
    case K_SIMPLIFY_DIMS: simplify_dims(j); break;
    case K_COMPACT:   /* code > 0: that step of nd_compact_version (1: gather_cpu alone) */
        r->status = c->code > 0 ? nd_compact_version(a, c->code, out, NULL) : nd_compact(a, out);
        break;
    case K_SETITEM: r->status = nd_setitem(a, b); break;
    case K_SETITEM_SCALAR: r->status = nd_setitem_scalar(a, c->scalar); break;
    case K_BINARY: r->status = nd_binary((nd_binop)c->code, a, b, out); break;
    case K_BINARY_INTO: r->status = nd_binary_into((nd_binop)c->code, a, b, d); break;
    case K_SCALAR: r->status = nd_scalar((nd_binop)c->code, a, c->scalar, out); break;
    case K_SCALAR_INTO:
        r->status = nd_scalar_into((nd_binop)c->code, a, c->scalar, b);
        break;
    case K_UNARY: r->status = nd_unary((nd_unop)c->code, a, out); break;
    case K_UNARY_INTO: r->status = nd_unary_into((nd_unop)c->code, a, b); break;
    case K_REDUCE:
        r->status = nd_reduce((nd_reduce_op)c->code, a, c->n, list32(j, 0), c->keepdims, out);
        break;
    case K_MATMUL: r->status = nd_matmul(a, b, out); break;
    case K_MATMUL_NAIVE: r->status = nd_matmul_naive(a, b, out); break;
    case K_INDEX_TO_OFFSET: {
        int64_t n = c->at[2] > 0 ? c->at[2] : 1, step = c->at[3] > 0 ? c->at[3] : 1;
        int64_t *v = vals(r, (int)n);
        r->status = ND_OK;
        for (int64_t i = 0; i < r->nvals; i++)
            v[i] = nd_index_to_offset(c->at[0] + i * step, c->n, j->l64[0], j->l64[1], c->at[1]);
        break;
    }
    case K_SIMPLIFY_PERM: simplify_perm(j); break;
    case K_PERMUTE_BYTES: permute_bytes(j); break;
    case K_DEVICE: {
        const char *name = NULL;
        r->status = nd_device_available(c->dev, &name);
        if (r->status == ND_OK)
            snprintf(r->msg, sizeof r->msg, "%s", name);
        break;
    }
    default:
        r->status = ND_ERR_ARG;
        r->setup_failed = true;
        snprintf(r->msg, sizeof r->msg, "test setup: unknown op %d", (int)c->op);
    }
}

/* The output struct, as the call left it. */
static void read_out(job *j)
{
    k_res *r = j->r;
    const nd_array *o = j->out;
    nd_array poison;
    memset(&poison, 0xAB, sizeof poison);
    int alias = j->c->out;
    r->out_untouched = memcmp(o, alias >= 0 ? &j->before[alias] : &poison, sizeof *o) == 0;
    r->out_buf = K_NOBUF;
    if (r->status != ND_OK)
        return;
    r->ndim = o->ndim;
    if (o->ndim >= 0 && o->ndim <= ND_MAX_DIMS) {
        memcpy(r->shape, o->shape, sizeof r->shape);
        memcpy(r->strides, o->strides, sizeof r->strides);
    }
    r->offset = o->offset;
    if (o->buf == NULL)
        return;
    for (int i = 0; i < j->c->nbufs; i++)
        if (o->buf == j->base[i].buf)
            r->out_buf = i;
    if (r->out_buf != K_NOBUF)
        return;
    /* a buffer of its own */
    r->out_buf = K_NEWBUF;
    r->out_nbytes = (int64_t)o->buf->nbytes;
    r->out_refcount = o->buf->refcount;
    r->out_device = (int)o->buf->device;
    int64_t n = r->out_nbytes / (int64_t)sizeof(float);
    if (r->out_nbytes < 0 || r->out_nbytes > ((int64_t)1 << 34))
        return;
    r->out_data.v = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (r->out_data.v != NULL && nd_buffer_to_host(o, r->out_data.v, (size_t)n * sizeof(float)) ==
                                     ND_OK)
        r->out_data.n = n;
}

/* The emulator's counters, weak: a GPU build, and the student's runner
 * without the emulator, have none (the addresses are then NULL). */
#pragma weak ndemu_profile_enabled
#pragma weak ndemu_profile_reset
#pragma weak ndemu_launch_count
#pragma weak ndemu_launch_get

/* Append the K_PROF_VALS counters to r->vals (their layout: kit_impl.h). */
static void profile(k_res *r)
{
    int64_t head = ndemu_launch_count == NULL || ndemu_launch_get == NULL ||
                   ndemu_profile_enabled == NULL ? K_PROF_NONE
                   : !ndemu_profile_enabled() ? K_PROF_OFF : ndemu_launch_count();
    int64_t *v = realloc(r->vals, (size_t)(r->nvals + K_PROF_VALS) * sizeof *v);
    if (v == NULL)
        return;   /* the parent finds the counts missing */
    r->vals = v;
    v += r->nvals;
    r->nvals += K_PROF_VALS;
    memset(v, 0, K_PROF_VALS * sizeof *v);
    v[0] = head;
    for (int64_t i = 0; i < head; i++) {
        ndemu_launch_stats s;
        memset(&s, 0, sizeof s);
        if (ndemu_launch_get((int)i, &s) != 0)
            continue;
        for (int kind = 0; kind < NDEMU_ACCESS_KINDS; kind++) {
            const ndemu_access_stats *a = &s.access[kind];
            int64_t f[K_PROF_FIELDS] = { (int64_t)a->requests, (int64_t)a->lanes,
                                         (int64_t)a->bytes, (int64_t)a->sectors,
                                         (int64_t)a->wavefronts, (int64_t)a->ideal };
            for (int w = 0; w < 5; w++)
                f[6 + w] = (int64_t)a->by_width[w];
            for (int j = 0; j < K_PROF_FIELDS; j++)
                v[1 + kind * K_PROF_FIELDS + j] += f[j];
        }
    }
}

/* The emulator's sampled launches, weak as the counters are: on a GPU
 * every block runs. */
void ndemu_sample_launches(int on);
#pragma weak ndemu_sample_launches

static void sample(const k_call *c, int on)
{
    if (c->sampled && ndemu_sample_launches != NULL)
        ndemu_sample_launches(on);
}

void k_exec(const k_call *c, k_res *r)
{
    memset(r, 0, sizeof *r);
    r->out_buf = K_NOBUF;
    job j = { .c = c, .r = r };
    memset(&j.out_new, 0xAB, sizeof j.out_new);
    sample(c, 1);   /* from the first buffer on: each is guarded */
    bool built = build(&j) && lists(&j);
    if (!built) {
        sample(c, 0);
        goto done;
    }
    if (k_takes_out(c->op))
        j.out = c->out == K_OUT_NEW ? &j.out_new : c->out >= 0 ? &j.arr[c->out] : NULL;
    nd_clear_error();
    if (c->profile && ndemu_profile_reset != NULL)
        ndemu_profile_reset();
    call(&j);
    sample(c, 0);
    if (c->profile)
        profile(r);
    for (int i = 0; i < c->nargs; i++)   /* every argument is const */
        if (j.out != &j.arr[i] && memcmp(&j.arr[i], &j.before[i], sizeof j.arr[i]) != 0)
            r->args_changed |= 1 << i;
    if (r->status != ND_OK && !r->setup_failed)
        snprintf(r->msg, sizeof r->msg, "%s", nd_last_error());
    if (j.out != NULL)
        read_out(&j);
    /* release the argument views (not one the output replaced), then read
     * what every buffer holds */
    for (int i = 0; i < c->nargs; i++)
        if (c->args[i].kind == K_VIEW && !(j.out == &j.arr[i] && r->status == ND_OK))
            nd_release(&j.arr[i]);
    for (int i = 0; i < c->nbufs; i++)
        if (j.base[i].buf != NULL)
            r->refcount[i] = j.base[i].buf->refcount - 1;   /* not counting ours */
    if (j.out != NULL && r->status == ND_OK && j.out->ndim >= 0 && j.out->ndim <= ND_MAX_DIMS)
        nd_release(j.out);
    /* each buffer copied out, then let go: a large call holds one host
     * copy at a time beside its buffers, not all of them */
    for (int i = 0; i < c->nbufs; i++) {
        if (j.base[i].buf == NULL)
            continue;
        int64_t n = c->bufs[i].n;
        r->after[i].v = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
        if (r->after[i].v != NULL &&
            nd_buffer_to_host(&j.base[i], r->after[i].v, (size_t)n * sizeof(float)) == ND_OK)
            r->after[i].n = n;
        nd_release(&j.base[i]);
    }
done:
    for (int i = 0; i < c->nbufs; i++)
        nd_release(&j.base[i]);
    for (int l = 0; l < 3; l++) {
        free(j.l64[l]);
        free(j.l32[l]);
    }
}

/* AddressSanitizer stops the program at an allocation larger than it
 * supports (a result of 2^58 floats) unless allocator_may_return_null=1;
 * with it, malloc returns NULL as it does without the sanitizer, and the
 * library's ND_ERR_NOMEM is tested in both builds.  ASAN_OPTIONS in the
 * environment still sets the other options (and may override this one). */
void k_exec_owning(const k_call *c, k_res *r)
{
    own_inputs = true;
    k_exec(c, r);
    own_inputs = false;
}

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
