/*
 * fuzz_nd.c -- a libFuzzer harness for the whole public API (issue #17).
 *
 * An input is a chain of calls: views (as_strided, reshape, permute,
 * broadcast_to, slice, diagonal, share), data movement (compact, setitem),
 * elementwise operations, reductions, matmul, printing, copies between
 * devices, the pure helpers (nd_iter, nd_simplify_dims, compact strides,
 * the permutation helpers of lesson 7) and lesson 7's permute_bytes, with
 * valid and invalid arguments and shapes, strides and offsets at the edges
 * of int64 and of the rules of "Valid arrays" in nd.h.  The calls work on
 * eight slots of arrays; slot 0 starts as arange(60).
 *
 * After every call it checks what needs no reference:
 *   - no crash and no sanitizer report (the build has ASan and UBSan);
 *   - a failing call returns an nd_status whose message starts with the
 *     name of the operation called, and leaves its outputs untouched (the
 *     out struct, and the buffer an in-place operation writes through);
 *   - a view shares its input's buffer; a computed result has a buffer of
 *     its own, compact, on its inputs' device;
 *   - every array a call makes is one nd_as_strided accepts (valid);
 *   - each buffer's refcount equals the number of slots holding it, and
 *     when the input ends every buffer is freed (LeakSanitizer).
 * Values are compared with the test kit's independent reference in ONE
 * place, compare_with_reference(), which the kit binds (issue #12).
 *
 * Input format, byte by byte (a missing byte reads as 0): an opcode, then
 * its arguments.  Sizes, strides and offsets are one byte each, mostly
 * small (sizes 0..8, strides -8..8), sometimes an edge value (INT64_MAX,
 * INT64_MIN, 2^62, ND_MAX_NUMEL, ND_MAX_NUMEL + 1, ...) or eight raw
 * bytes; see take_size and take_step.  ND_FUZZ_TRACE=1 prints each call
 * and its status, so any input reads as a program:
 *
 *     ND_FUZZ_TRACE=1 build/fuzz/solution/fuzz_nd tests/fuzz/regressions/FILE
 *
 * ND_FUZZ_DEVICE=cuda runs the chains on the CUDA device (the emulator, or
 * a GPU build): lesson 6's kernels, with smaller arrays.
 *
 * Operations whose work (elements touched) would pass a limit are skipped,
 * so that an input runs in milliseconds; views, which touch no element,
 * and results too large for any machine (their allocation fails at once)
 * are never skipped.
 */
#include "nd.h"
#include "kit_impl.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSLOTS 8

/* ---------------------------------------------------------------------- */
/* State                                                                  */
/* ---------------------------------------------------------------------- */

static struct {
    nd_device dev;      /* where arrays are made (ND_FUZZ_DEVICE) */
    int64_t limit;      /* the most elements one operation may touch */
    bool trace;         /* ND_FUZZ_TRACE: print each call */
    nd_array slot[NSLOTS];
    int step;           /* the number of the call running, for messages */
    char call[512];     /* its description */
    int64_t compared, skipped;
} S;

/* The input, read from the front. */
typedef struct {
    const uint8_t *p;
    size_t n;
} input;

static uint8_t u8(input *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

static int64_t raw64(input *in)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | u8(in);
    return (int64_t)v;
}

/* ---------------------------------------------------------------------- */
/* Findings                                                               */
/* ---------------------------------------------------------------------- */

/* Report a finding and abort: libFuzzer saves the input as a crash. */
static void finding(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void finding(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "\nfuzz_nd: FINDING at call %d, %s\nfuzz_nd: ", S.step, S.call);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nfuzz_nd: rerun with ND_FUZZ_TRACE=1 to see the whole chain\n");
    abort();
}

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...)
{
    if (!S.trace)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

/* "(2,3)" for messages. */
static const char *shape_text(int ndim, const int64_t *v, char *dst, size_t cap)
{
    if (ndim < 0 || ndim > ND_MAX_DIMS)
        snprintf(dst, cap, "(ndim %d)", ndim);
    else
        nd_shape_str(ndim, v, dst, cap);
    return dst;
}

/* An array as "(2,3)/(3,1)+0" (shape/strides+offset), or "released". */
static const char *desc(const nd_array *a, char *dst, size_t cap)
{
    if (a->buf == NULL) {
        snprintf(dst, cap, "released");
        return dst;
    }
    char sh[200], st[200];
    snprintf(dst, cap, "%s/%s+%" PRId64 "%s", shape_text(a->ndim, a->shape, sh, sizeof sh),
             shape_text(a->ndim, a->strides, st, sizeof st), a->offset,
             a->buf->device == ND_CUDA ? " cuda" : "");
    return dst;
}

/* Record the call about to run: "reshape(#1 (2,3)/(3,1)+0, ...)". */
static void begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void begin(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(S.call, sizeof S.call, fmt, ap);
    va_end(ap);
    S.step++;
    nd_clear_error();
}

static void skip(const char *why)
{
    S.skipped++;
    trace("%3d  %s: skipped (%s)\n", S.step, S.call, why);
}

/* ---------------------------------------------------------------------- */
/* Arguments                                                              */
/* ---------------------------------------------------------------------- */

/* Values at the edges of int64 and of the rules of "Valid arrays". */
static const int64_t edges[16] = {
    INT64_MAX, INT64_MIN, INT64_MAX / 2, -(INT64_MAX / 2),
    (int64_t)1 << 62, -((int64_t)1 << 62), ND_MAX_NUMEL, ND_MAX_NUMEL + 1,
    (int64_t)1 << 40, (int64_t)1 << 32, (int64_t)1 << 29, INT32_MAX,
    1000, 64, -1, INT64_MAX - 1,
};

/* A size: mostly 0..8, sometimes an edge or any int64. */
static int64_t take_size(input *in)
{
    uint8_t b = u8(in);
    return b < 224 ? b % 9 : b < 240 ? edges[b - 224] : raw64(in);
}

/* A stride, offset or index: mostly -8..8. */
static int64_t take_step(input *in)
{
    uint8_t b = u8(in);
    return b < 224 ? (int64_t)(b % 17) - 8 : b < 240 ? edges[b - 224] : raw64(in);
}

/* An axis number: -10..10, so some are out of range. */
static int take_axis(input *in) { return (int)(u8(in) % 21) - 10; }

/* ndim: mostly 0..4, sometimes up to ND_MAX_DIMS, rarely -1 or too many. */
static int take_ndim(input *in)
{
    uint8_t b = u8(in);
    return b < 200 ? b % 5 : b < 250 ? b % (ND_MAX_DIMS + 1) : b < 253 ? -1 : ND_MAX_DIMS + 1;
}

/* A count of list entries to read for ndim (ndim itself if in range). */
static int entries(int ndim) { return ndim < 0 ? 0 : ndim > ND_MAX_DIMS ? ND_MAX_DIMS : ndim; }

static float take_value(input *in)
{
    static const float v[16] = { 0.0f, 1.0f, -1.0f, 0.5f, -0.0f, 2.0f, -2.5f, 3.0f,
                                 1e20f, -1e-30f, 3.4e38f, 1e-45f, 7.0f, -7.0f,
                                 __builtin_nanf(""), __builtin_inff() };
    uint8_t b = u8(in);
    return b == 255 ? -__builtin_inff() : v[b % 16];
}

static int take_slot(input *in) { return u8(in) % NSLOTS; }

/* A permutation of 0..n-1 (shuffled by the input), sometimes with one
 * entry replaced by any axis number, which may break it. */
static void take_perm(input *in, int n, int *perm)
{
    for (int k = 0; k < n; k++)
        perm[k] = k;
    for (int k = n - 1; k > 0; k--) {
        int j = u8(in) % (k + 1), t = perm[k];
        perm[k] = perm[j];
        perm[j] = t;
    }
    if (n > 0 && u8(in) >= 224)
        perm[u8(in) % n] = take_axis(in);
}

/* An output slot, or (rarely) NULL for out. */
static int take_dst(input *in, bool *null_out)
{
    uint8_t b = u8(in);
    *null_out = b >= 248;
    return b % NSLOTS;
}

static nd_device take_device(input *in)
{
    uint8_t b = u8(in);
    return b < 240 ? S.dev : b < 250 ? ND_CPU : (nd_device)(b % 4 == 0 ? -1 : 2 + b % 4);
}

/* ---------------------------------------------------------------------- */
/* Sizes, as the rules define them (not as the library computes them)     */
/* ---------------------------------------------------------------------- */

/* Whether ndim and shape follow rule 1 of "Valid arrays"; *n gets the
 * element count. */
static bool shape_ok(int ndim, const int64_t *shape, int64_t *n)
{
    int64_t nonzero = 1;
    bool empty = false;
    if (ndim < 0 || ndim > ND_MAX_DIMS)
        return false;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] < 0)
            return false;
        if (shape[k] == 0)
            empty = true;
        else if (__builtin_mul_overflow(nonzero, shape[k], &nonzero) || nonzero > ND_MAX_NUMEL)
            return false;
    }
    *n = empty ? 0 : nonzero;
    return true;
}

/* The element count of a live array (0 for a released one). */
static int64_t count(const nd_array *a)
{
    int64_t n = 0;
    return a->buf != NULL && shape_ok(a->ndim, a->shape, &n) ? n : 0;
}

/* The work of a reduction: the elements of its input or of its result,
 * whichever is more (a sum over the empty axis of (2^20,2^20,0) makes 2^40
 * zeros); 0 when the axes are wrong and it fails before any work. */
static int64_t reduce_work(const nd_array *a, int naxes, const int *axes)
{
    bool reduced[ND_MAX_DIMS] = { false };
    if (a->buf == NULL || naxes < ND_ALL_AXES || naxes > a->ndim)
        return 0;
    for (int i = 0; i < naxes; i++) {
        int ax = axes[i] < 0 ? axes[i] + a->ndim : axes[i];
        if (ax < 0 || ax >= a->ndim || reduced[ax])
            return 0;
        reduced[ax] = true;
    }
    int64_t out = 1;
    for (int k = 0; k < a->ndim; k++)
        if (naxes != ND_ALL_AXES && !reduced[k])
            out *= a->shape[k];   /* kept sizes of a valid array: no overflow */
    return out > count(a) ? out : count(a);
}

/* More than the limit: skip.  More than 2^38 floats (2^40 bytes, more
 * than AddressSanitizer's largest allocation): its allocation fails at
 * once, so the call costs nothing and tests the out-of-memory path. */
static bool too_much(int64_t n) { return n > S.limit; }
static bool unallocatable(int64_t n) { return n > ((int64_t)1 << 38); }

/* The shape NumPy's broadcasting gives a and b, if any. */
static bool broadcast_shape(const nd_array *a, const nd_array *b, int *ndim, int64_t *shape)
{
    if (a->buf == NULL || b->buf == NULL)
        return false;
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int k = 0; k < nd; k++) {
        int ka = k - (nd - a->ndim), kb = k - (nd - b->ndim);
        int64_t na = ka >= 0 ? a->shape[ka] : 1, nb = kb >= 0 ? b->shape[kb] : 1;
        if (na != nb && na != 1 && nb != 1)
            return false;
        shape[k] = na == 1 ? nb : na;
    }
    *ndim = nd;
    return true;
}

/* ---------------------------------------------------------------------- */
/* Checks that need no reference                                          */
/* ---------------------------------------------------------------------- */

/* A failed call: a real status, and a message starting with the name of
 * the operation ("reshape: ..." or "reduce(sum): ...").  A student tree's
 * stubs (not implemented) are not findings. */
static bool failed(const char *op, nd_status s)
{
    if (s == ND_OK)
        return false;
    trace("%3d  %s: %s: %s\n", S.step, S.call, nd_status_name(s), nd_last_error());
    if (s == ND_ERR_NOT_IMPLEMENTED)
        return true;
    if ((int)s < (int)ND_ERR_ARG || (int)s > (int)ND_ERR_NOT_IMPLEMENTED)
        finding("%s returned %d, which is no nd_status", op, (int)s);
    const char *m = nd_last_error();
    size_t n = strlen(op);
    if (strncmp(m, op, n) != 0 || (m[n] != ':' && m[n] != '('))
        finding("%s failed with %s, but its message does not start with \"%s:\": \"%s\"", op,
                nd_status_name(s), op, m);
    return true;
}

/* Every array a call makes must be one that nd_as_strided accepts. */
static void check_valid(const char *op, const nd_array *a)
{
    char d[600];
    nd_array again;
    if (a->buf == NULL || a->ndim < 0 || a->ndim > ND_MAX_DIMS)
        finding("%s succeeded but made no valid array: %s", op, desc(a, d, sizeof d));
    if (nd_as_strided(a, a->ndim, a->shape, a->strides, a->offset, &again) != ND_OK)
        finding("%s made %s, which nd_as_strided refuses: %s", op, desc(a, d, sizeof d),
                nd_last_error());
    nd_release(&again);
}

/* A computed result: a compact array on `dev`, in a buffer no slot held. */
static void check_new_compact(const char *op, const nd_array *a, nd_device dev)
{
    char d[600];
    int64_t want = 1;
    for (int k = 0; k < NSLOTS; k++)
        if (S.slot[k].buf == a->buf && &S.slot[k] != a)
            finding("%s returned %s in a buffer that slot %d already holds: results are new "
                    "arrays", op, desc(a, d, sizeof d), k);
    /* Row-major strides where they are used: an array with no elements
     * is compact whatever its strides, and so is a size-1 axis. */
    for (int k = a->ndim - 1; k >= 0 && count(a) > 0; k--) {
        if (a->strides[k] != want && a->shape[k] > 1)
            finding("%s returned %s, not a compact array", op, desc(a, d, sizeof d));
        want *= a->shape[k];
    }
    if (a->offset != 0 || a->buf->device != dev)
        finding("%s returned %s: a new array starts at offset 0 on device %s", op,
                desc(a, d, sizeof d), nd_device_name(dev));
}

/* Each buffer's refcount is the number of slots that hold it. */
static void check_refcounts(void)
{
    for (int i = 0; i < NSLOTS; i++) {
        nd_buffer *b = S.slot[i].buf;
        int64_t holders = 0;
        if (b == NULL)
            continue;
        for (int j = 0; j < NSLOTS; j++)
            holders += S.slot[j].buf == b;
        if (b->refcount != holders)
            finding("the buffer of slot %d has refcount %" PRId64 ", but %" PRId64
                    " live views hold it", i, b->refcount, holders);
    }
}

/* ---------------------------------------------------------------------- */
/* The reference                                                          */
/* ---------------------------------------------------------------------- */

/* One successful call, as a reference needs to see it. */
typedef struct {
    const char *op;        /* the operation's name, as in its messages */
    int code;              /* the nd_binop, nd_unop or nd_reduce_op; the
                              version of permute_bytes */
    const nd_array *a, *b; /* its array inputs (NULL where it has fewer) */
    float value;           /* scalar operand, fill value */
    int n;                 /* ndim of a shape argument, slice entries, naxes */
    const int64_t *ints;   /* a shape argument; diagonal's offset */
    const int *axes;       /* permute, reduce and permute_bytes axes;
                              diagonal's axis1, axis2 */
    const nd_index *index; /* slice's entries */
    bool flag;             /* keepdims; matmul: naive */
    const nd_array *out;   /* the result, or the view written through */
    const float *host;     /* from_host's data, to_host's output, and for
                              in-place calls the buffer before (or NULL) */
} fz_call;

/* THE comparison of a successful call's result with the test kit's
 * independent reference (tests/kit/ref.c), through the kit's own executor
 * and comparison: the call becomes a k_call (its op, host copies of its
 * inputs' buffers, their layouts), the executor makes it again on fresh
 * copies on the same device, and k_judge holds the raw result to what the
 * reference says (layout, values, buffers untouched, refcounts), with the
 * kit's message (the call, the first wrong element by multi-index,
 * expected and got).  The library is deterministic, so that is this
 * call's answer.  Bound: the view functions, compact, the elementwise
 * functions that make a new array, reduce, matmul and compact_strides;
 * the in-place calls (setitem, *_into) may be given a dst that overlaps an
 * input, where nd.h promises no values, and the rest have no kit op. */
static k_ctx *K;

static const struct { const char *name; k_op op; } kit_ops[] = {
    { "reshape", K_RESHAPE }, { "permute", K_PERMUTE }, { "broadcast_to", K_BROADCAST_TO },
    { "slice", K_SLICE }, { "diagonal", K_DIAGONAL }, { "compact", K_COMPACT },
    { "binary", K_BINARY }, { "scalar", K_SCALAR }, { "unary", K_UNARY },
    { "reduce", K_REDUCE }, { "matmul", K_MATMUL }, { "matmul_naive", K_MATMUL_NAIVE },
    { "compact_strides", K_COMPACT_STRIDES },
};

/* Array x as argument of kc, over a host copy of its whole buffer (one
 * copy per buffer). */
static void kit_arg(k_call *kc, const nd_buffer **bufs, const nd_array *x)
{
    int b = 0;
    while (b < kc->nbufs && bufs[b] != x->buf)
        b++;
    if (b == kc->nbufs) {
        int64_t n = (int64_t)(x->buf->nbytes / sizeof(float));
        kc->bufs[b] = (k_buf){ .n = n, .v = k_floats(K, n) };
        if (nd_buffer_to_host(x, kc->bufs[b].v, (size_t)n * sizeof(float)) != ND_OK)
            finding("%s: nd_buffer_to_host of an input failed: %s", S.call, nd_last_error());
        bufs[kc->nbufs++] = x->buf;
    }
    k_arr a = { .kind = K_VIEW, .buf = b, .ndim = x->ndim, .offset = x->offset };
    memcpy(a.shape, x->shape, sizeof a.shape);
    memcpy(a.strides, x->strides, sizeof a.strides);
    k_arg(kc, a);
}

/* The kit's hooks into its runner (tests/kit/runner.c is not linked):
 * calls run in this process, and a failure is a finding at once. */
void k_dispatch(k_ctx *k, const k_call *c, k_res *r)
{
    (void)k;
    k_exec(c, r);
}

void k_provisional(const char *msg)
{
    (void)msg;
}

/* Calls sent ahead to an executor process (the grader's): never here,
 * where every context runs its calls in this process. */
uint32_t k_send(k_ctx *k, const k_call *c)
{
    (void)k;
    (void)c;
    abort();
}

void k_receive(k_ctx *k, const k_call *c, uint32_t seq, k_res *r)
{
    (void)k;
    (void)c;
    (void)seq;
    (void)r;
    abort();
}

void k_exec_failed(k_ctx *k, const k_call *c, const char *err)
{
    (void)k;
    (void)c;
    (void)err;
    abort();
}

void k_abandon(k_ctx *k)
{
    (void)k;
}

const char *k_restart(k_ctx *k)
{
    (void)k;
    abort();
}

static void compare_with_reference(const fz_call *c)
{
    size_t i = 0;
    while (i < sizeof kit_ops / sizeof kit_ops[0] && strcmp(kit_ops[i].name, c->op) != 0)
        i++;
    if (i == sizeof kit_ops / sizeof kit_ops[0])
        return;
    k_op op = kit_ops[i].op;
    k_call kc = { .op = op, .dev = c->a != NULL ? c->a->buf->device : S.dev, .out = K_OUT_NEW,
                  .code = c->code, .scalar = c->value, .keepdims = c->flag };
    const nd_buffer *bufs[K_BUFS];
    if (c->a != NULL)
        kit_arg(&kc, bufs, c->a);
    if (c->b != NULL)
        kit_arg(&kc, bufs, c->b);
    int n = op == K_PERMUTE ? c->a->ndim : c->n;
    for (int d = 0; d < n && d < K_LIST; d++) {
        if (op == K_SLICE)
            kc.idx[d] = c->index[d];
        else
            kc.list[0][d] = op == K_PERMUTE || op == K_REDUCE ? c->axes[d] : c->ints[d];
    }
    kc.n = n;
    if (op == K_DIAGONAL) {
        kc.at[0] = c->ints[0];
        kc.at[1] = c->axes[0];
        kc.at[2] = c->axes[1];
    }
    k_res r = { 0 };
    k_exec(&kc, &r);
    const char *m = k_judge(K, &kc, &r);
    if (m != NULL)
        finding("the test kit's reference disagrees (the call made again on copies of its "
                "inputs): %s", m);
    k_res_free(&r);
    k_case_end(K);
    S.compared++;
}

/* ---------------------------------------------------------------------- */
/* Outputs                                                                */
/* ---------------------------------------------------------------------- */

/* An `nd_array *out` argument: the slot itself when it is also an input
 * (the API allows f(&x, ..., &x)), otherwise a poisoned struct that moves
 * into the slot on success; NULL when asked. */
typedef struct {
    int dst;
    bool alias, null_out;
    nd_array tmp, before;
} outarg;

static nd_array *out_begin(outarg *o, int dst, bool null_out, int in1, int in2)
{
    o->dst = dst;
    o->null_out = null_out;
    o->alias = dst == in1 || dst == in2;
    if (null_out)
        return NULL;
    if (o->alias) {
        o->before = S.slot[dst];
        return &S.slot[dst];
    }
    memset(&o->tmp, 0xAB, sizeof o->tmp);
    o->before = o->tmp;
    return &o->tmp;
}

/* After the call: on failure the output must be as it was; on success the
 * result (valid) goes to the slot.  Returns the result, or NULL. */
static const nd_array *out_end(outarg *o, const char *op, nd_status s)
{
    nd_array *out = o->alias ? &S.slot[o->dst] : &o->tmp;
    if (o->null_out) {
        if (s == ND_OK)
            finding("%s succeeded with a NULL out", op);
        failed(op, s);
        return NULL;
    }
    if (failed(op, s)) {
        if (memcmp(out, &o->before, sizeof *out) != 0)
            finding("%s failed (%s) but changed its output argument", op, nd_status_name(s));
        return NULL;
    }
    check_valid(op, out);
    if (!o->alias) {
        nd_release(&S.slot[o->dst]);
        S.slot[o->dst] = o->tmp;
    }
    char d[600];
    trace("%3d  %s -> #%d %s\n", S.step, S.call, o->dst, desc(&S.slot[o->dst], d, sizeof d));
    return &S.slot[o->dst];
}

/* A reference of the harness's own to a slot's array while a call runs:
 * after f(&x, ..., &x) has replaced x, the input is still there for the
 * reference to read.  Released with nd_release before the refcounts are
 * checked. */
static nd_array hold(int k)
{
    nd_array h;
    memset(&h, 0, sizeof h);
    if (S.slot[k].buf != NULL && nd_share(&S.slot[k], &h) != ND_OK)
        finding("share of slot %d failed: %s", k, nd_last_error());
    return h;
}

/* A view's result shares the buffer its input had before the call. */
static void check_shares(const char *op, const nd_array *out, const nd_buffer *buf)
{
    if (out != NULL && out->buf != buf)
        finding("%s returned a view with a buffer of its own: views never copy", op);
}

/* In-place calls: the buffer under dst before the call, when small. */
static float *snapshot(const nd_array *dst)
{
    if (dst->buf == NULL || dst->buf->nbytes > (size_t)S.limit * sizeof(float))
        return NULL;
    float *copy = malloc(dst->buf->nbytes + sizeof(float));
    if (copy != NULL && nd_buffer_to_host(dst, copy, dst->buf->nbytes) != ND_OK) {
        free(copy);
        return NULL;
    }
    return copy;
}

/* After an in-place call: on failure, not one byte of the buffer changed. */
static bool inplace_end(const char *op, nd_status s, const nd_array *dst, const float *before)
{
    if (!failed(op, s)) {
        trace("%3d  %s: ND_OK\n", S.step, S.call);
        return true;
    }
    if (before != NULL) {
        float *now = snapshot(dst);
        if (now != NULL && memcmp(now, before, dst->buf->nbytes) != 0)
            finding("%s failed (%s) but wrote into dst's buffer", op, nd_status_name(s));
        free(now);
    }
    return false;
}

/* ---------------------------------------------------------------------- */
/* Operations: one function each, reading its arguments from the input    */
/* ---------------------------------------------------------------------- */

/* Room for the descriptions of two arrays and a shape. */
typedef struct {
    char a[600], b[600], s[200], t[200];
} texts;

static void op_create(input *in)
{
    static const char *const names[5] = { "zeros", "full", "empty", "arange", "from_host" };
    int kind = u8(in) % 5;
    nd_device dev = take_device(in);
    int ndim = kind == 3 ? 1 : take_ndim(in);
    int64_t shape[ND_MAX_DIMS] = { 0 }, n = 0;
    for (int k = 0; k < entries(ndim); k++)
        shape[k] = take_size(in);
    float value = take_value(in);
    bool null_out;
    int dst = take_dst(in, &null_out);
    texts t;
    begin("%s(dev %d, %s) -> #%d", names[kind], (int)dev, shape_text(ndim, shape, t.s, 200),
          dst);
    if (shape_ok(ndim, shape, &n) && too_much(n) && !unallocatable(n))
        return skip("too many elements");
    float *data = NULL;
    if (kind == 4 && !unallocatable(n)) {
        data = malloc((size_t)(n + 1) * sizeof(float));
        for (int64_t i = 0; i < n; i++)
            data[i] = take_value(in);
    } else if (kind == 4) {
        data = &value;   /* never read: the allocation fails first */
    }
    outarg o;
    nd_array *out = out_begin(&o, dst, null_out, -1, -1);
    nd_status s = kind == 0 ? nd_zeros(dev, ndim, shape, out)
                : kind == 1 ? nd_full(dev, ndim, shape, value, out)
                : kind == 2 ? nd_empty(dev, ndim, shape, out)
                : kind == 3 ? nd_arange(dev, shape[0], out)
                            : nd_from_host(dev, ndim, shape, data, out);
    const nd_array *r = out_end(&o, names[kind], s);
    if (r != NULL) {
        check_new_compact(names[kind], r, dev);
        if (kind != 2)
            compare_with_reference(&(fz_call){ .op = names[kind], .value = value,
                                               .n = ndim, .ints = shape, .out = r,
                                               .host = data });
    }
    if (data != &value)
        free(data);
}

/* The view operations: the input slot, its buffer before the call, and
 * after a success the check that the result shares it. */
typedef struct {
    int src;
    nd_buffer *buf;
    outarg o;
} viewcall;

static nd_array *view_begin(viewcall *v, input *in, int *dst_out)
{
    bool null_out;
    v->src = take_slot(in);
    v->buf = S.slot[v->src].buf;
    *dst_out = take_dst(in, &null_out);
    return out_begin(&v->o, *dst_out, null_out, v->src, -1);
}

/* After the call: the checks, then the reference sees call c (its op
 * and inputs; out is filled in here). */
static void view_end(viewcall *v, nd_status s, fz_call c)
{
    const nd_array *r = out_end(&v->o, c.op, s);
    check_shares(c.op, r, v->buf);
    if (r != NULL) {
        c.out = r;
        compare_with_reference(&c);
    }
}

static void op_as_strided(input *in)
{
    int dst, ndim = take_ndim(in);
    int64_t shape[ND_MAX_DIMS] = { 0 }, strides[ND_MAX_DIMS] = { 0 };
    for (int k = 0; k < entries(ndim); k++) {
        shape[k] = take_size(in);
        strides[k] = take_step(in);
    }
    int64_t offset = take_step(in);
    bool null_strides = u8(in) == 255;
    viewcall v;
    nd_array *out = view_begin(&v, in, &dst);
    texts t;
    begin("as_strided(#%d %s, %s, %s, %" PRId64 ")", v.src,
          desc(&S.slot[v.src], t.a, 600), shape_text(ndim, shape, t.s, 200),
          null_strides ? "NULL" : shape_text(ndim, strides, t.t, 200), offset);
    nd_status s = nd_as_strided(&S.slot[v.src], ndim, shape, null_strides ? NULL : strides,
                                offset, out);
    view_end(&v, s, (fz_call){ .op = "as_strided", .n = ndim, .ints = shape });
}

static void op_reshape(input *in)
{
    int dst, ndim = take_ndim(in);
    int64_t shape[ND_MAX_DIMS] = { 0 };
    for (int k = 0; k < entries(ndim); k++)
        shape[k] = take_size(in);
    viewcall v;
    nd_array *out = view_begin(&v, in, &dst);
    texts t;
    nd_array before = S.slot[v.src];
    begin("reshape(#%d %s, %s)", v.src, desc(&before, t.a, 600),
          shape_text(ndim, shape, t.s, 200));
    nd_status s = nd_reshape(&S.slot[v.src], ndim, shape, out);
    view_end(&v, s, (fz_call){ .op = "reshape", .a = &before, .n = ndim, .ints = shape });
}

static void op_permute(input *in)
{
    int dst, axes[ND_MAX_DIMS] = { 0 };
    viewcall v;
    nd_array *out = view_begin(&v, in, &dst);
    nd_array before = S.slot[v.src];
    int n = before.buf != NULL ? entries(before.ndim) : 0;
    take_perm(in, n, axes);
    bool null_axes = n > 0 && u8(in) == 255;
    texts t;
    int64_t wide[ND_MAX_DIMS];
    for (int k = 0; k < n; k++)
        wide[k] = axes[k];
    begin("permute(#%d %s, %s)", v.src, desc(&before, t.a, 600),
          null_axes ? "NULL" : shape_text(n, wide, t.s, 200));
    nd_status s = nd_permute(&S.slot[v.src], null_axes ? NULL : axes, out);
    view_end(&v, s, (fz_call){ .op = "permute", .a = &before, .axes = axes });
}

static void op_broadcast_to(input *in)
{
    int dst, ndim = take_ndim(in);
    viewcall v;
    nd_array *out = view_begin(&v, in, &dst);
    nd_array before = S.slot[v.src];
    int64_t shape[ND_MAX_DIMS] = { 0 };
    /* Mostly a's own size where a has the axis, so that many succeed. */
    for (int k = 0; k < entries(ndim); k++) {
        int j = k - (ndim - before.ndim);
        bool own = before.buf != NULL && j >= 0 && j < before.ndim && before.shape[j] != 1;
        shape[k] = own && u8(in) < 200 ? before.shape[j] : take_size(in);
    }
    texts t;
    begin("broadcast_to(#%d %s, %s)", v.src, desc(&before, t.a, 600),
          shape_text(ndim, shape, t.s, 200));
    nd_status s = nd_broadcast_to(&S.slot[v.src], ndim, shape, out);
    view_end(&v, s, (fz_call){ .op = "broadcast_to", .a = &before, .n = ndim, .ints = shape });
}

/* A slice bound: "not given" (ND_NONE) sometimes. */
static int64_t take_bound(input *in)
{
    uint8_t b = u8(in);
    return b < 32 ? ND_NONE : take_step(in);
}

static void op_slice(input *in)
{
    int dst;
    viewcall v;
    nd_array *out = view_begin(&v, in, &dst);
    nd_array before = S.slot[v.src];
    int n = u8(in) % (ND_MAX_DIMS + 2) - 1;
    nd_index idx[ND_MAX_DIMS + 1];
    int m = n < 0 ? 0 : n > ND_MAX_DIMS + 1 ? ND_MAX_DIMS + 1 : n;
    for (int k = 0; k < m; k++) {
        uint8_t kind = u8(in);
        if (kind < 100) {
            idx[k] = ND_AT(take_step(in));
        } else {
            int64_t start = take_bound(in), stop = take_bound(in), step = take_step(in);
            idx[k] = ND_SLICE(start, stop, step);
            if (kind == 255)
                idx[k].kind = (nd_index_kind)7;   /* an unknown kind */
        }
    }
    texts t;
    begin("slice(#%d %s, %d entries)", v.src, desc(&before, t.a, 600), n);
    nd_status s = nd_slice(&S.slot[v.src], n, m > 0 ? idx : NULL, out);
    view_end(&v, s, (fz_call){ .op = "slice", .a = &before, .n = n, .index = idx });
}

static void op_diagonal(input *in)
{
    int dst;
    int64_t offset = take_step(in);
    int axis1 = take_axis(in) % 4, axis2 = take_axis(in) % 4;
    viewcall v;
    nd_array *out = view_begin(&v, in, &dst);
    nd_array before = S.slot[v.src];
    texts t;
    begin("diagonal(#%d %s, %" PRId64 ", %d, %d)", v.src, desc(&before, t.a, 600), offset,
          axis1, axis2);
    nd_status s = nd_diagonal(&S.slot[v.src], offset, axis1, axis2, out);
    int axes[2] = { axis1, axis2 };
    view_end(&v, s, (fz_call){ .op = "diagonal", .a = &before, .ints = &offset, .axes = axes });
}

static void op_share(input *in)
{
    int dst;
    viewcall v;
    nd_array *out = view_begin(&v, in, &dst);
    texts t;
    begin("share(#%d %s)", v.src, desc(&S.slot[v.src], t.a, 600));
    nd_array before = S.slot[v.src];
    view_end(&v, nd_share(&S.slot[v.src], out), (fz_call){ .op = "share", .a = &before });
}

static void op_release(input *in)
{
    int k = take_slot(in);
    begin("release(#%d)", k);
    trace("%3d  %s\n", S.step, S.call);
    nd_release(&S.slot[k]);
}

static void op_compact(input *in)
{
    int a = take_slot(in);
    bool null_out;
    int dst = take_dst(in, &null_out);
    texts t;
    begin("compact(#%d %s)", a, desc(&S.slot[a], t.a, 600));
    int64_t n = count(&S.slot[a]);
    if (too_much(n) && !unallocatable(n))
        return skip("too many elements");
    nd_array before = hold(a);
    outarg o;
    nd_array *out = out_begin(&o, dst, null_out, a, -1);
    const nd_array *r = out_end(&o, "compact", nd_compact(&S.slot[a], out));
    if (r != NULL) {
        check_new_compact("compact", r, before.buf->device);
        compare_with_reference(&(fz_call){ .op = "compact", .a = &before,
                                           .out = r });
    }
    nd_release(&before);
}

static void op_setitem(input *in)
{
    int d = take_slot(in), src = take_slot(in);
    bool scalar = u8(in) < 64;
    float value = take_value(in);
    nd_array *dst = &S.slot[d];
    texts t;
    if (scalar)
        begin("setitem_scalar(#%d %s, %g)", d, desc(dst, t.a, 600), (double)value);
    else
        begin("setitem(#%d %s, #%d %s)", d, desc(dst, t.a, 600), src,
              desc(&S.slot[src], t.b, 600));
    if (too_much(count(dst)))
        return skip("too many elements");
    float *before = snapshot(dst);
    const char *op = scalar ? "setitem_scalar" : "setitem";
    nd_status s = scalar ? nd_setitem_scalar(dst, value) : nd_setitem(dst, &S.slot[src]);
    if (inplace_end(op, s, dst, before))
        compare_with_reference(&(fz_call){ .op = op, .a = scalar ? NULL : &S.slot[src],
                                           .value = value, .out = dst, .host = before });
    free(before);
}

/* The elementwise operations: binary, scalar and unary, each as a new
 * result or into a view. */
static void op_ewise(input *in)
{
    static const char *const names[3][2] = { { "binary", "binary_into" },
                                             { "scalar", "scalar_into" },
                                             { "unary", "unary_into" } };
    int family = u8(in) % 3, code = u8(in) % (family == 2 ? 7 : 10);  /* some unknown */
    bool into = u8(in) < 80;
    int a = take_slot(in), b = take_slot(in);
    float value = take_value(in);
    bool null_out;
    int dst = take_dst(in, &null_out);
    const char *op = names[family][into];
    texts t;
    begin("%s(op %d, #%d %s, %s #%d) -> #%d", op, code, a, desc(&S.slot[a], t.a, 600),
          family == 0 ? desc(&S.slot[b], t.b, 600) : "", family == 0 ? b : -1, dst);
    /* the work: the elements of the result */
    int ndim = 0;
    int64_t shape[ND_MAX_DIMS], n = 0;
    const nd_array *xa = &S.slot[a], *xb = &S.slot[b];
    bool shaped = family == 0 ? broadcast_shape(xa, xb, &ndim, shape) : xa->buf != NULL;
    if (family != 0 && shaped) {
        ndim = xa->ndim;
        memcpy(shape, xa->shape, sizeof shape);
    }
    if (shaped && shape_ok(ndim, shape, &n) && too_much(n) && (into || !unallocatable(n)))
        return skip("too many elements");
    if (into && too_much(count(&S.slot[dst])))
        return skip("too many elements");
    nd_array ca = hold(a), cb = hold(b);
    if (into) {
        nd_array *view = &S.slot[dst];
        float *before = snapshot(view);
        nd_status s = family == 0 ? nd_binary_into((nd_binop)code, &S.slot[a], &S.slot[b], view)
                    : family == 1 ? nd_scalar_into((nd_binop)code, &S.slot[a], value, view)
                                  : nd_unary_into((nd_unop)code, &S.slot[a], view);
        if (inplace_end(op, s, view, before))
            compare_with_reference(&(fz_call){ .op = op, .code = code, .a = &ca,
                                               .b = family == 0 ? &cb : NULL, .value = value,
                                               .out = view, .host = before });
        free(before);
    } else {
        outarg o;
        nd_array *out = out_begin(&o, dst, null_out, a, family == 0 ? b : -1);
        nd_status s = family == 0 ? nd_binary((nd_binop)code, &S.slot[a], &S.slot[b], out)
                    : family == 1 ? nd_scalar((nd_binop)code, &S.slot[a], value, out)
                                  : nd_unary((nd_unop)code, &S.slot[a], out);
        const nd_array *r = out_end(&o, op, s);
        if (r != NULL) {
            check_new_compact(op, r, ca.buf->device);
            compare_with_reference(&(fz_call){ .op = op, .code = code, .a = &ca,
                                               .b = family == 0 ? &cb : NULL, .value = value,
                                               .out = r });
        }
    }
    nd_release(&ca);
    nd_release(&cb);
}


static void op_reduce(input *in)
{
    int code = u8(in) % 3;   /* 2: unknown */
    int a = take_slot(in);
    int naxes = (int)(u8(in) % (ND_MAX_DIMS + 4)) - 2, axes[ND_MAX_DIMS + 2] = { 0 };
    for (int k = 0; k < naxes && k < ND_MAX_DIMS + 2; k++)
        axes[k] = take_axis(in) % 6;
    bool keepdims = u8(in) & 1, null_axes = u8(in) == 255;
    bool null_out;
    int dst = take_dst(in, &null_out);
    texts t;
    begin("reduce(op %d, #%d %s, naxes %d%s, keepdims %d)", code, a,
          desc(&S.slot[a], t.a, 600), naxes, null_axes ? " NULL" : "", (int)keepdims);
    int64_t n = reduce_work(&S.slot[a], naxes, axes);
    if (too_much(n) && !(naxes == 0 && unallocatable(n)))
        return skip("too many elements");
    nd_array before = hold(a);
    outarg o;
    nd_array *out = out_begin(&o, dst, null_out, a, -1);
    nd_status s = nd_reduce((nd_reduce_op)code, &S.slot[a], naxes, null_axes ? NULL : axes,
                            keepdims, out);
    const nd_array *r = out_end(&o, "reduce", s);
    if (r != NULL) {
        check_new_compact("reduce", r, before.buf->device);
        compare_with_reference(&(fz_call){ .op = "reduce", .code = code, .a = &before,
                                           .n = naxes, .axes = axes, .flag = keepdims,
                                           .out = r });
    }
    nd_release(&before);
}

/* The work of a @ b: the multiply-adds of the product, or the elements of
 * the result if more (with k == 0 it is all zeros); 0 if the shapes do not
 * fit together (the call fails before any work).  *result gets the result's
 * element count. */
static int64_t matmul_work(const nd_array *a, const nd_array *b, int64_t *result)
{
    int64_t work = 0, shape[ND_MAX_DIMS];
    *result = 0;
    if (a->buf == NULL || b->buf == NULL || a->ndim < 2 || b->ndim < 2 ||
        a->shape[a->ndim - 1] != b->shape[b->ndim - 2])
        return 0;
    nd_array ba = *a, bb = *b;   /* the batch axes alone */
    ba.ndim -= 2;
    bb.ndim -= 2;
    int nd = 0;
    if (!broadcast_shape(&ba, &bb, &nd, shape))
        return 0;
    shape[nd] = a->shape[a->ndim - 2];
    shape[nd + 1] = b->shape[b->ndim - 1];
    if (!shape_ok(nd + 2, shape, result))
        return 0;
    if (__builtin_mul_overflow(*result, a->shape[a->ndim - 1], &work))
        return INT64_MAX;
    return work > *result ? work : *result;
}

static void op_matmul(input *in)
{
    bool naive = u8(in) & 1;
    int a = take_slot(in), b = take_slot(in);
    bool null_out;
    int dst = take_dst(in, &null_out);
    const char *op = naive ? "matmul_naive" : "matmul";
    texts t;
    begin("%s(#%d %s, #%d %s) -> #%d", op, a, desc(&S.slot[a], t.a, 600), b,
          desc(&S.slot[b], t.b, 600), dst);
    int64_t result, work = matmul_work(&S.slot[a], &S.slot[b], &result);
    if (too_much(work / 8) && !unallocatable(result))
        return skip("too much work");
    nd_array ca = hold(a), cb = hold(b);
    outarg o;
    nd_array *out = out_begin(&o, dst, null_out, a, b);
    nd_status s = naive ? nd_matmul_naive(&S.slot[a], &S.slot[b], out)
                        : nd_matmul(&S.slot[a], &S.slot[b], out);
    const nd_array *r = out_end(&o, op, s);
    if (r != NULL) {
        check_new_compact(op, r, ca.buf->device);
        compare_with_reference(&(fz_call){ .op = op, .a = &ca, .b = &cb,
                                           .flag = naive, .out = r });
    }
    nd_release(&ca);
    nd_release(&cb);
}

static void op_format(input *in)
{
    int a = take_slot(in);
    bool null_out = u8(in) == 255;
    texts t;
    begin("format(#%d %s)", a, desc(&S.slot[a], t.a, 600));
    /* Its work: the elements shown.  Over 1000 elements, NumPy's summary
     * shows 3 + 3 per axis, which is still 6^8 for eight axes of 7. */
    const nd_array *x = &S.slot[a];
    int64_t shown = 1;
    for (int k = 0; x->buf != NULL && k < x->ndim && count(x) > 0; k++)
        shown *= count(x) > 1000 && x->shape[k] > 6 ? 6 : x->shape[k];
    if (too_much(shown / 4))
        return skip("too many elements shown");
    char *text = NULL;
    nd_status s = nd_format(&S.slot[a], null_out ? NULL : &text);
    if (null_out && s == ND_OK)
        finding("format succeeded with a NULL out");
    if (failed("format", s))
        return;
    if (strncmp(text, "array(", 6) != 0 || strstr(text, ", shape=") == NULL)
        finding("format gave a text that is not array(..., shape=...): %.200s", text);
    trace("%3d  %s: %.60s...\n", S.step, S.call, text);
    free(text);
}

static void op_to_host(input *in)
{
    int a = take_slot(in);
    uint8_t how = u8(in);
    const nd_array *x = &S.slot[a];
    int64_t n = count(x);
    texts t;
    begin("to_host(#%d %s)", a, desc(x, t.a, 600));
    if (too_much(n))
        return skip("too many elements");
    size_t cap = how < 200 ? (size_t)n : how < 250 ? (size_t)(n > 0 ? n - 1 : 0) : 0;
    float *dst = malloc((size_t)n * sizeof(float) + sizeof(float));
    nd_status s = nd_to_host(x, how == 255 ? NULL : dst, cap);
    if (!failed("to_host", s)) {
        trace("%3d  %s: ND_OK\n", S.step, S.call);
        compare_with_reference(&(fz_call){ .op = "to_host", .a = x,
                                           .host = dst });
    }
    free(dst);
}

/* nd_offset_of, and nd_index_to_offset (lesson 6) at the same element. */
static void op_offset_of(input *in)
{
    int a = take_slot(in);
    int64_t index[ND_MAX_DIMS] = { 0 }, off = -7, i = take_step(in);
    const nd_array *x = &S.slot[a];
    bool row_major = u8(in) < 128;
    int64_t n = count(x);
    if (row_major && n > 0 && x->ndim <= ND_MAX_DIMS) {
        /* index = the multi-index of row-major position i */
        int64_t rest = (i < 0 ? -(i + 1) : i) % n;
        i = rest;
        for (int k = x->ndim - 1; k >= 0; k--) {
            index[k] = rest % x->shape[k];
            rest /= x->shape[k];
        }
    } else {
        for (int k = 0; k < entries(x->buf != NULL ? x->ndim : 0); k++)
            index[k] = take_step(in);
    }
    texts t;
    begin("offset_of(#%d %s)", a, desc(x, t.a, 600));
    nd_status s = nd_offset_of(x, index, &off);
    if (failed("offset_of", s))
        return;
    trace("%3d  %s: %" PRId64 "\n", S.step, S.call, off);
    if (off < 0 || (size_t)off >= x->buf->nbytes / sizeof(float))
        finding("offset_of gave %" PRId64 ", outside the buffer of %zu floats", off,
                x->buf->nbytes / sizeof(float));
    if (row_major && n > 0) {
        int64_t there = nd_index_to_offset(i, x->ndim, x->shape, x->strides, x->offset);
        if (there != off)
            finding("nd_index_to_offset(%" PRId64 ") gave %" PRId64 ", nd_offset_of of the "
                    "same element %" PRId64, i, there, off);
    }
}

static void op_is_compact(input *in)
{
    int a = take_slot(in);
    bool result = false, null_out = u8(in) == 255;
    texts t;
    begin("is_compact(#%d %s)", a, desc(&S.slot[a], t.a, 600));
    nd_status s = nd_is_compact(&S.slot[a], null_out ? NULL : &result);
    if (null_out && s == ND_OK)
        finding("is_compact succeeded with a NULL result");
    if (!failed("is_compact", s))
        trace("%3d  %s: %d\n", S.step, S.call, (int)result);
}

/* The pure helpers, on raw shapes and strides. */
static void op_helpers(input *in)
{
    int which = u8(in) % 4, ndim = take_ndim(in), perm[ND_MAX_DIMS] = { 0 };
    int64_t shape[ND_MAX_DIMS] = { 0 }, sa[ND_MAX_DIMS] = { 0 }, sb[ND_MAX_DIMS] = { 0 };
    for (int k = 0; k < entries(ndim); k++) {
        shape[k] = take_size(in);
        sa[k] = take_step(in);
        sb[k] = take_step(in);
    }
    take_perm(in, entries(ndim), perm);
    bool with_b = u8(in) < 128;
    int64_t n = 0;
    bool valid = shape_ok(ndim, shape, &n);
    texts t;
    if (which == 0) {
        int64_t before[ND_MAX_DIMS];
        memcpy(before, shape, sizeof before);
        int m = ndim;
        begin("simplify_dims(%s, %s, %s)", shape_text(ndim, shape, t.s, 200),
              shape_text(ndim, sa, t.t, 200), with_b ? "b" : "NULL");
        if (failed("simplify_dims", nd_simplify_dims(&m, shape, sa, with_b ? sb : NULL)))
            return;
        int64_t after = 0;
        if (m < 0 || m > ndim || !shape_ok(m, shape, &after) || after != n)
            finding("simplify_dims of shape %s gave ndim %d and a shape of %" PRId64
                    " elements", shape_text(ndim, before, t.a, 600), m, after);
    } else if (which == 1) {
        nd_iter it;
        begin("iter_init(%s)", shape_text(ndim, shape, t.s, 200));
        if (failed("iter_init", nd_iter_init(&it, ndim, shape)))
            return;
        if (it.total != n)
            finding("iter_init gave total %" PRId64 " for %" PRId64 " elements", it.total, n);
        if (too_much(n))
            return;
        int64_t visited = 0;
        while (nd_iter_next(&it))
            visited++;
        if (visited != n)
            finding("nd_iter visited %" PRId64 " positions of %" PRId64, visited, n);
    } else if (which == 2) {
        int64_t strides[ND_MAX_DIMS + 1];
        strides[entries(ndim)] = -777;
        begin("compact_strides(%s)", shape_text(ndim, shape, t.s, 200));
        nd_status s = nd_compact_strides(ndim, shape, strides);
        if (s == ND_OK && !valid)
            finding("compact_strides accepted a shape the rules refuse");
        if (failed("compact_strides", s))
            return;
        if (strides[entries(ndim)] != -777)
            finding("compact_strides wrote past its ndim entries");
        compare_with_reference(&(fz_call){ .op = "compact_strides", .n = ndim,
                                           .ints = shape });
    } else {
        int out_ndim = -5, out_perm[ND_MAX_DIMS], poison_perm[ND_MAX_DIMS];
        int64_t out_shape[ND_MAX_DIMS], poison_shape[ND_MAX_DIMS];
        memset(out_perm, 0xAB, sizeof out_perm);
        memset(out_shape, 0xAB, sizeof out_shape);
        memcpy(poison_perm, out_perm, sizeof out_perm);
        memcpy(poison_shape, out_shape, sizeof out_shape);
        begin("simplify_permutation(%s)", shape_text(ndim, shape, t.s, 200));
        nd_status s = nd_simplify_permutation(ndim, shape, perm, &out_ndim, out_shape,
                                              out_perm);
        if (failed("simplify_permutation", s) &&
            (out_ndim != -5 || memcmp(out_perm, poison_perm, sizeof out_perm) != 0 ||
             memcmp(out_shape, poison_shape, sizeof out_shape) != 0))
            finding("simplify_permutation failed but wrote to its outputs");
        else if (s == ND_OK)
            compare_with_reference(&(fz_call){ .op = "simplify_permutation",
                                               .n = ndim, .ints = shape, .axes = perm });
    }
}

static void op_to_device(input *in)
{
    int a = take_slot(in);
    nd_device dev = take_device(in);
    bool null_out;
    int dst = take_dst(in, &null_out);
    texts t;
    begin("to_device(#%d %s, dev %d) -> #%d", a, desc(&S.slot[a], t.a, 600), (int)dev, dst);
    int64_t n = count(&S.slot[a]);
    if (too_much(n) && !unallocatable(n))
        return skip("too many elements");
    nd_array before = hold(a);
    outarg o;
    nd_array *out = out_begin(&o, dst, null_out, a, -1);
    const nd_array *r = out_end(&o, "to_device", nd_to_device(&S.slot[a], dev, out));
    if (r != NULL) {
        check_new_compact("to_device", r, dev);
        compare_with_reference(&(fz_call){ .op = "to_device", .a = &before,
                                           .out = r });
    }
    nd_release(&before);
}

/* Lesson 7's permute of raw memory, in buffers of two arrays on the
 * device (so that device pointers are real ones there). */
static void op_permute_bytes(input *in)
{
    static const size_t sizes[8] = { 1, 2, 4, 8, 16, 3, 0, 4 };
    size_t elem = sizes[u8(in) % 8];
    int ndim = take_ndim(in), perm[ND_MAX_DIMS] = { 0 }, version = u8(in) % 6, ran = -1;
    int64_t shape[ND_MAX_DIMS] = { 0 }, n = 0;
    for (int k = 0; k < entries(ndim); k++)
        shape[k] = take_size(in);
    take_perm(in, entries(ndim), perm);
    uint8_t how = u8(in);
    texts t;
    begin("permute_bytes(elem %zu, %s, version %d)", elem, shape_text(ndim, shape, t.s, 200),
          version);
    if (shape_ok(ndim, shape, &n) && too_much(n * 4))
        return skip("too many elements");
    int64_t floats = (n * (int64_t)(elem ? elem : 1) + 3) / 4 + 1;
    nd_array src, dst;
    if (nd_zeros(S.dev, 1, &floats, &src) != ND_OK || nd_zeros(S.dev, 1, &floats, &dst) != ND_OK)
        finding("cannot make two arrays of %" PRId64 " floats: %s", floats, nd_last_error());
    void *from = how == 255 ? NULL : src.buf->ptr, *to = how == 254 ? src.buf->ptr : dst.buf->ptr;
    /* 253: a device number outside the enum, as C may pass it; C++ must not
     * read it as an nd_device (clang's UBSan: enum) before refusing it */
    nd_device dev = how == 253 ? (nd_device)7 : S.dev;
    nd_status s = nd_permute_bytes_version(dev, from, to, elem, ndim, shape, perm, version,
                                           &ran);
    if (how == 253 && s != ND_ERR_ARG)
        finding("permute_bytes on device 7 returned %s, not ND_ERR_ARG", nd_status_name(s));
    if (!failed("permute_bytes", s))
        compare_with_reference(&(fz_call){ .op = "permute_bytes", .code = version, .a = &src,
                                           .n = ndim, .ints = shape, .axes = perm,
                                           .out = &dst });
    nd_release(&src);
    nd_release(&dst);
}

typedef void operation(input *in);
static operation *const ops[] = {
    op_create,  op_as_strided, op_reshape,  op_permute,   op_broadcast_to, op_slice,
    op_diagonal, op_share,     op_release,  op_compact,   op_setitem,      op_ewise,
    op_reduce,  op_matmul,     op_format,   op_to_host,   op_offset_of,    op_is_compact,
    op_helpers, op_to_device,  op_permute_bytes,
};
#define NOPS (int)(sizeof ops / sizeof ops[0])

/* ---------------------------------------------------------------------- */
/* libFuzzer's entry points                                               */
/* ---------------------------------------------------------------------- */

/* AddressSanitizer returns NULL for an allocation it cannot make (the
 * library must then fail with ND_ERR_NOMEM), instead of stopping: the
 * kit's executor (tests/kit/exec.c) sets allocator_may_return_null=1. */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dev = getenv("ND_FUZZ_DEVICE"), *tr = getenv("ND_FUZZ_TRACE");
    S.trace = tr != NULL && *tr != '\0' && *tr != '0';
    S.dev = ND_CPU;
    S.limit = (int64_t)1 << 12;
    if (dev != NULL && strcmp(dev, "cuda") == 0) {
        const char *name = NULL;
        if (nd_device_available(ND_CUDA, &name) != ND_OK) {
            fprintf(stderr, "fuzz_nd: no CUDA device: %s\n", nd_last_error());
            exit(2);
        }
        fprintf(stderr, "fuzz_nd: on the CUDA device (%s)\n", name);
        S.dev = ND_CUDA;
        S.limit = (int64_t)1 << 9;   /* the emulator runs every thread on the CPU */
    } else if (dev != NULL && strcmp(dev, "cpu") != 0) {
        fprintf(stderr, "fuzz_nd: ND_FUZZ_DEVICE=%s: it must be cpu or cuda\n", dev);
        exit(2);
    }
    K = k_ctx_new(S.dev);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = { data, size };
    S.step = 0;
    S.compared = S.skipped = 0;
    snprintf(S.call, sizeof S.call, "arange(60) -> #0");
    if (nd_arange(S.dev, 60, &S.slot[0]) != ND_OK)
        finding("arange(60) failed: %s", nd_last_error());
    while (in.n > 0) {
        ops[u8(&in) % NOPS](&in);
        check_refcounts();
    }
    for (int k = 0; k < NSLOTS; k++)
        nd_release(&S.slot[k]);
    if (S.trace)
        fprintf(stderr, "fuzz_nd: %d calls; %" PRId64 " results for the reference, %" PRId64
                " calls skipped as too large\n", S.step, S.compared, S.skipped);
    return 0;
}
