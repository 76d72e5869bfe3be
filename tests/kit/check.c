/*
 * check.c -- the comparison: the reference's answer against the executor's
 * raw result, and every message a test shows.  A message names the call
 * and its inputs by layout (k_describe), says what was wrong (the first
 * wrong element by multi-index, expected and got), and ends with the hint
 * of the check that failed: the test's own for a wrong value, the rule nd.h
 * states for a wrong status, a fixed one for the contract every function
 * shares (new buffers, references, untouched outputs on failure).
 */
#include "kit_impl.h"

#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* Describing calls                                                       */
/* ---------------------------------------------------------------------- */

static const char *const op_names[K_NOPS] = {
    "compact_strides", "is_compact", "offset_of", "reshape", "permute", "broadcast_to",
    "slice", "diagonal", "iter_init", "simplify_dims", "compact", "setitem",
    "setitem_scalar", "binary", "binary_into", "scalar", "scalar_into", "unary", "unary_into",
    "reduce", "matmul", "matmul_naive", "index_to_offset", "simplify_permutation",
    "permute_bytes", "device",
};

static const char *op_name(k_op op)
{
    return op >= 0 && op < K_NOPS ? op_names[op] : "?";
}

static const char *const binop_names[] = { "ND_ADD", "ND_SUB", "ND_MUL", "ND_DIV", "ND_POW",
                                           "ND_MAXIMUM", "ND_EQ", "ND_GE" };
static const char *const unop_names[] = { "ND_NEG", "ND_LOG", "ND_EXP", "ND_TANH", "ND_ABS" };

/* nd_status_name's words, without the library (the grader's side never
 * links it). */
static const char *status_name(nd_status s)
{
    static const char *const names[] = {
        "ND_OK", "ND_ERR_ARG", "ND_ERR_SHAPE", "ND_ERR_AXIS", "ND_ERR_INDEX",
        "ND_ERR_LAYOUT", "ND_ERR_NOMEM", "ND_ERR_DEVICE", "ND_ERR_NOT_IMPLEMENTED",
    };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "ND_ERR_(unknown)";
}

/* kit.h: the student's runner quotes the library's messages; the grader's
 * verdict relays none of their text unless told to. */
bool k_quote_messages = true;
bool k_output_alone = false;

/* "its message \"...\"", or "its message" when the text is not quoted. */
static const char *its_message(const k_res *r, char *t, size_t cap)
{
    if (!k_quote_messages)
        return "its message";
    snprintf(t, cap, "its message \"%s\"", r->msg);
    return t;
}

/* What a CUDA device's failure (ND_ERR_DEVICE) said, in the kit's words
 * when the message is not quoted: the cudaError name it gives, if this
 * table has it, and the kind of fault the CUDA emulator names, by a phrase
 * of its message (grader/emu/emu.cpp): never the message's text. */
static const char *const cuda_errors[] = {
    "cudaErrorInvalidValue", "cudaErrorMemoryAllocation", "cudaErrorInitializationError",
    "cudaErrorCudartUnloading", "cudaErrorInvalidConfiguration", "cudaErrorInvalidPitchValue",
    "cudaErrorInvalidSymbol", "cudaErrorInvalidHostPointer", "cudaErrorInvalidDevicePointer",
    "cudaErrorInvalidMemcpyDirection", "cudaErrorInvalidDeviceFunction", "cudaErrorNoDevice",
    "cudaErrorInvalidDevice", "cudaErrorInvalidResourceHandle", "cudaErrorNotReady",
    "cudaErrorIllegalAddress", "cudaErrorLaunchOutOfResources", "cudaErrorLaunchTimeout",
    "cudaErrorAssert", "cudaErrorIllegalInstruction", "cudaErrorMisalignedAddress",
    "cudaErrorLaunchFailure", "cudaErrorNotSupported", "cudaErrorUnknown",
    "cudaErrorInsufficientDriver", "cudaErrorNoKernelImageForDevice",
    "cudaErrorInvalidKernelImage", "cudaErrorUnsupportedPtxVersion",
    "cudaErrorInvalidPtx", "cudaErrorHardwareStackError", "cudaErrorInvalidPc",
    "cudaErrorIllegalState", "cudaErrorDevicesUnavailable",
};
static const struct { const char *phrase, *words; } emu_faults[] = {
    { "divergent warp operation", "a shuffle, vote or ballot that lanes of one mask reach at two "
      "different lines (on two sides of a branch): every lane of the mask must execute the same one" },
    { "a global-memory race between blocks", "a race between blocks (racecheck): two blocks of one "
      "launch touch the same global memory, one of them storing, with no atomic (or "
      "__threadfence() and then an atomic) ordering them; make cuda-sanitize names both lines" },
    { "racecheck: a shared-memory race", "a race on shared memory (racecheck): a thread reads or "
      "writes what another wrote with no __syncthreads() between; make cuda-sanitize names both "
      "lines" },
    { "misaligned address in kernel", "a misaligned access: a vector (float4) load or store at an "
      "address that is not a multiple of its size" },
    { "is declared __launch_bounds__", "a launch with more threads per block than the kernel's "
      "__launch_bounds__" },
    { "of static __shared__ memory", "more than 48 KiB of static __shared__ memory in one kernel" },
    { "returned without reaching it, while other lanes", "a warp operation that other lanes "
      "of its mask wait at: a lane returned without reaching it" },
    { "returned without reaching it; every thread", "a __syncthreads() the rest of its block "
      "waits at: a thread returned without reaching it (every thread of a block must reach "
      "each barrier)" },
    { "waits at __syncthreads()", "a deadlock: threads wait at __syncthreads() while lanes of "
      "their warp wait at a warp operation" },
    { "with different masks", "a deadlock: lanes of one warp wait at warp operations with "
      "different masks" },
    { "divergent __syncthreads()", "a divergent __syncthreads(): threads of one block wait at "
      "different barriers" },
    { "the width must be a power", "a shuffle's width is not a power of 2 from 1 to 32" },
    { "names lanes that do not exist", "a warp operation's mask names lanes that do not exist" },
    { "a thread must be in the mask", "a thread passes a mask that does not name it" },
    { "a shuffle may read only lanes", "a shuffle reads a lane outside its mask" },
    { "dynamic parallelism", "a kernel launched from inside a kernel" },
    { "no dimension may be 0", "a kernel launch with a grid or block dimension of 0" },
    { "a block has at most 1024 threads", "a kernel launch with too many threads per block" },
    { "gridDim.x is at most", "a kernel launch with too large a grid" },
    { "bytes of dynamic shared memory", "a kernel launch asking for too much dynamic shared "
      "memory" },
    { "registers per thread", "a kernel launch whose block needs more registers than an SM has" },
    { "not a live stream", "a stream that is not live" },
    { "out of memory", "device memory ran out" },
    { "cudaFree(", "a cudaFree of a pointer cudaMalloc did not return" },
    { "cudaMemcpy", "a cudaMemcpy with a bad pointer, size or kind" },
    { "cudaMemset", "a cudaMemset with a bad pointer or size" },
};

static const char *device_words(const char *msg, char *t, size_t cap)
{
    const char *name = NULL, *fault = NULL;
    for (size_t i = 0; i < sizeof cuda_errors / sizeof cuda_errors[0] && name == NULL; i++) {
        char paren[64];
        snprintf(paren, sizeof paren, "(%s)", cuda_errors[i]);
        if (strstr(msg, paren) != NULL)
            name = cuda_errors[i];
    }
    for (size_t i = 0; i < sizeof emu_faults / sizeof emu_faults[0] && fault == NULL; i++)
        if (strstr(msg, emu_faults[i].phrase) != NULL)
            fault = emu_faults[i].words;
    snprintf(t, cap, "%s%s%s%s%s", name || fault ? " (" : "", name ? name : "",
             name && fault ? ": " : "", fault ? fault : "", name || fault ? ")" : "");
    return t;
}

/* " (...)", the message after a status it returned, or when the text is
 * not quoted "" (a device's failure: device_words). */
static const char *paren_message(const k_res *r, char *t, size_t cap)
{
    if (!k_quote_messages)
        return r->status == ND_ERR_DEVICE ? device_words(r->msg, t, cap) : "";
    snprintf(t, cap, " (%s)", r->msg);
    return t;
}

/* ", (2,3) and (4,)": the two shapes a message had to give, said by the
 * kit when the message itself is not quoted ("" when it is). */
static const char *the_shapes(int n1, const int64_t *v1, int n2, const int64_t *v2, char *t,
                              size_t cap)
{
    char a[300], b[300];
    t[0] = '\0';
    if (!k_quote_messages)
        snprintf(t, cap, ", %s and %s", k_ints(n1, v1, a, sizeof a), k_ints(n2, v2, b, sizeof b));
    return t;
}

/* The skeleton's stubs (skeleton/src: nd_not_implemented(NAME, LESSON)),
 * whose message is "not implemented: NAME (lesson N)".  When messages are
 * not quoted, the kit repeats one of these in its own words if the
 * library's message is exactly that, and otherwise says "not implemented
 * yet": a name from this table, never the library's text. */
static const struct { const char *name; int lesson; } stubs[] = {
    { "nd_compact_strides", 1 }, { "nd_is_compact", 1 }, { "nd_offset_of", 1 },
    { "nd_reshape", 1 }, { "nd_permute", 1 }, { "nd_broadcast_to", 1 }, { "nd_slice", 1 },
    { "nd_diagonal", 1 }, { "nd_iter_init", 2 }, { "nd_simplify_dims", 2 },
    { "nd_compact", 2 }, { "nd_setitem", 2 }, { "nd_setitem_scalar", 2 },
    { "nd_binary", 3 }, { "nd_unary", 3 }, { "nd_reduce", 4 }, { "nd_matmul", 5 },
    { "nd_matmul_naive", 5 }, { "for_each_matrix", 5 }, { "launch_fill", 6 },
    { "launch_compact", 6 }, { "launch_setitem", 6 }, { "launch_binary", 6 },
    { "launch_unary", 6 }, { "launch_reduce", 6 }, { "launch_matmul", 6 },
    { "nd_simplify_permutation", 7 }, { "nd_permute_bytes", 7 },
};

/* What follows "it returned ND_ERR_NOT_IMPLEMENTED: ". */
static const char *not_implemented(const k_res *r, char *t, size_t cap)
{
    if (k_quote_messages)
        return r->msg;
    for (size_t i = 0; i < sizeof stubs / sizeof stubs[0]; i++) {
        snprintf(t, cap, "not implemented: %s (lesson %d)", stubs[i].name, stubs[i].lesson);
        if (strcmp(t, r->msg) == 0)
            return t;
    }
    return "not implemented yet";
}

char *k_ints(int n, const int64_t *v, char *dst, size_t cap)
{
    size_t len = (size_t)snprintf(dst, cap, "(");
    for (int i = 0; i < n && i < K_LIST && len < cap; i++)
        len += (size_t)snprintf(dst + len, cap - len, "%s%" PRId64, i ? "," : "", v[i]);
    if (len < cap)
        snprintf(dst + len, cap - len, n == 1 ? ",)" : ")");
    return dst;
}

/* A small string builder over a caller's buffer. */
typedef struct { char *s; size_t cap, len; } sb;

static void put(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sb *b, const char *fmt, ...)
{
    if (b->len >= b->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += n > 0 ? (size_t)n : 0;
}

/* c's first `count` int lists, n entries each: "(1,2), NULL". */
static void put_lists(sb *b, const k_call *c, int count, int n)
{
    char t[300];
    n = n < 0 ? 0 : n > K_LIST ? K_LIST : n;
    for (int i = 0; i < count; i++)
        put(b, "%s%s", i ? ", " : "",
            c->list_null[i] ? "NULL" : k_ints(n, c->list[i], t, sizeof t));
}

static void put_index(sb *b, const nd_index *ix)
{
    if (ix->kind == ND_INDEX_INT) {
        put(b, "%" PRId64, ix->i);
        return;
    }
    if (ix->kind != ND_INDEX_SLICE) {
        put(b, "<kind %d>", (int)ix->kind);
        return;
    }
    if (ix->start != ND_NONE)
        put(b, "%" PRId64, ix->start);
    put(b, ":");
    if (ix->stop != ND_NONE)
        put(b, "%" PRId64, ix->stop);
    if (ix->step != 1)
        put(b, ":%" PRId64, ix->step);
}

static const char *const arg_names[K_NOPS][K_ARGS] = {
    [K_SETITEM] = { "dst", "src" }, [K_SETITEM_SCALAR] = { "dst" },
    [K_BINARY_INTO] = { "a", "b", "dst" }, [K_SCALAR_INTO] = { "a", "dst" },
    [K_UNARY_INTO] = { "a", "dst" },
};

static const char *arg_name(const k_call *c, int i)
{
    const char *n = arg_names[c->op][i];
    return n != NULL ? n : i == 0 ? "a" : i == 1 ? "b" : "c";
}

/* "shape=(..) strides=(..) offset=n", as a message shows a view. */
static char *layout(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                    char *dst, size_t cap)
{
    char sh[300], st[300];
    snprintf(dst, cap, "shape=%s strides=%s offset=%" PRId64, k_ints(ndim, shape, sh, sizeof sh),
             k_ints(ndim, strides, st, sizeof st), offset);
    return dst;
}

static void put_arr(sb *b, const k_call *c, int i)
{
    const k_arr *a = &c->args[i];
    char t[700];
    switch (a->kind) {
    case K_NULLPTR: put(b, "NULL"); return;
    case K_RELEASED: put(b, "a released array (no buffer)"); return;
    default: break;
    }
    if (a->ndim < 0 || a->ndim > ND_MAX_DIMS) {
        put(b, "a broken array with ndim %d", a->ndim);
        return;
    }
    put(b, "%s", layout(a->ndim, a->shape, a->strides, a->offset, t, sizeof t));
    for (int j = 0; j < i; j++)
        if (c->args[j].kind == K_VIEW && c->args[j].buf == a->buf) {
            put(b, " in %s's buffer", arg_name(c, j));
            return;
        }
    put(b, " over a buffer of %" PRId64 " float%s", c->bufs[a->buf].n,
        c->bufs[a->buf].n == 1 ? "" : "s");
}

const char *k_describe(const k_call *c, char *dst, size_t cap)
{
    sb b = { dst, cap, 0 };
    dst[0] = '\0';
    const char *name = op_name(c->op);
    switch (c->op) {
    case K_COMPACT_STRIDES:
        put(&b, "nd_compact_strides(%d, ", c->n);
        put_lists(&b, c, 1, c->n);
        put(&b, ", %s)", c->out == K_OUT_NULL ? "NULL" : "strides");
        return dst;
    case K_ITER:
        put(&b, "nd_iter_init(%s, %d, ", c->out == K_OUT_NULL ? "NULL" : "&it", c->n);
        put_lists(&b, c, 1, c->n);
        put(&b, ") and nd_iter_next to the end");
        return dst;
    case K_SIMPLIFY_DIMS:
        put(&b, "nd_simplify_dims(%s%d, ", c->out == K_OUT_NULL ? "NULL: " : "&ndim=", c->n);
        put_lists(&b, c, 3, c->n);
        put(&b, ")");
        return dst;
    case K_INDEX_TO_OFFSET: {   /* one position, or at[2] of them */
        int64_t step = c->at[3] > 0 ? c->at[3] : 1;
        if (c->at[2] > 1)
            put(&b, "nd_index_to_offset(i, %d, ", c->n);
        else
            put(&b, "nd_index_to_offset(%" PRId64 ", %d, ", c->at[0], c->n);
        put_lists(&b, c, 2, c->n);
        put(&b, ", %" PRId64 ")", c->at[1]);
        if (c->at[2] > 1)
            put(&b, " for i = %" PRId64 ", %" PRId64 ", ..., %" PRId64, c->at[0],
                c->at[0] + step, c->at[0] + (c->at[2] - 1) * step);
        return dst;
    }
    case K_SIMPLIFY_PERM:
        put(&b, "nd_simplify_permutation(%d, ", c->n);
        put_lists(&b, c, 2, c->n);
        if (c->at[0])
            put(&b, ", %s, shape, perm) (in place)", c->list_null[2] ? "NULL" : "&ndim");
        else
            put(&b, ", %s, %s, %s)", c->list_null[2] ? "NULL" : "&ndim",
                c->at[1] & 1 ? "NULL" : "shape2", c->at[1] & 2 ? "NULL" : "perm2");
        return dst;
    case K_PERMUTE_BYTES:
        put(&b, "nd_permute_bytes%s(%s, %s, %s, %" PRId64 ", %d, ", c->code >= 0 ? "_version" : "",
            c->dev == ND_CUDA ? "ND_CUDA" : c->dev == ND_CPU ? "ND_CPU" : "a bad device",
            c->at[3] & 1 ? "NULL" : c->at[1] ? "src+bytes" : "src",
            c->at[3] & 2 ? "NULL" : c->at[3] & 4 ? "a pointer into src" : "dst", c->at[0], c->n);
        put_lists(&b, c, 2, c->n);
        if (c->code >= 0)
            put(&b, ", %d, &ran", c->code);
        put(&b, ")");
        if (c->at[1] || c->at[2])
            put(&b, " with src and dst %" PRId64 " and %" PRId64 " bytes past 16-byte aligned "
                "addresses", c->at[1], c->at[2]);
        return dst;
    default:
        break;
    }
    put(&b, c->op == K_COMPACT && c->code > 0 ? "nd_%s_version(" : "nd_%s(", name);
    if (c->op >= K_BINARY && c->op <= K_UNARY_INTO) {
        bool un = c->op >= K_UNARY;
        if (c->code >= 0 && c->code <= (un ? ND_ABS : ND_GE))
            put(&b, "%s, ", (un ? unop_names : binop_names)[c->code]);
        else
            put(&b, "(nd_%s)%d, ", un ? "unop" : "binop", c->code);
    } else if (c->op == K_REDUCE) {
        put(&b, "%s, ", c->code == ND_SUM ? "ND_SUM" : c->code == ND_MAX ? "ND_MAX" : "op?");
    }
    for (int i = 0; i < c->nargs; i++) {
        put(&b, "%s%s", i ? ", " : "", arg_name(c, i));
        if (c->op == K_SCALAR_INTO && i == 0)
            put(&b, ", %.9g", (double)c->scalar);
    }
    switch (c->op) {
    case K_OFFSET_OF: case K_PERMUTE:   /* a list of a's ndim entries */
        put(&b, ", ");
        put_lists(&b, c, 1, c->args[0].ndim);
        if (c->op == K_OFFSET_OF)
            put(&b, ", %s", c->out == K_OUT_NULL ? "NULL" : "&offset");
        break;
    case K_IS_COMPACT: put(&b, ", %s", c->out == K_OUT_NULL ? "NULL" : "&result"); break;
    case K_RESHAPE: case K_BROADCAST_TO: case K_REDUCE:
        put(&b, ", %d, ", c->n);
        put_lists(&b, c, 1, c->n);
        if (c->op == K_REDUCE)
            put(&b, ", %s", c->keepdims ? "true" : "false");
        break;
    case K_SLICE:
        put(&b, ", [");
        for (int i = 0; i < c->n && i < K_LIST; i++) {
            put(&b, i ? ", " : "");
            put_index(&b, &c->idx[i]);
        }
        put(&b, "]");
        break;
    case K_DIAGONAL:
        put(&b, ", %" PRId64 ", %" PRId64 ", %" PRId64, c->at[0], c->at[1], c->at[2]);
        break;
    case K_COMPACT:   /* nd_compact_version(a, version, &out, NULL) */
        if (c->code > 0)
            put(&b, ", %d", c->code);
        break;
    case K_SETITEM_SCALAR: case K_SCALAR: put(&b, ", %.9g", (double)c->scalar); break;
    default:
        break;
    }
    if (k_takes_out(c->op) && c->out == K_OUT_NULL)
        put(&b, ", NULL");
    else if (k_takes_out(c->op))
        put(&b, ", &%s", c->out >= 0 ? arg_name(c, c->out) : "out");
    if (c->op == K_COMPACT && c->code > 0)   /* nd_compact_version's last: NULL */
        put(&b, ", NULL");
    put(&b, ")");
    for (int i = 0; i < c->nargs; i++) {
        put(&b, "%s%s = ", i ? ", " : " with ", arg_name(c, i));
        put_arr(&b, c, i);
    }
    return dst;
}

/* ---------------------------------------------------------------------- */
/* Comparing                                                              */
/* ---------------------------------------------------------------------- */

/* While shrinking, a failure is caught here instead of ending the test. */
static jmp_buf *capture;
static char captured[5000];

/* The test whose calls are being checked (each entry point sets it). */
static k_ctx *judging;

/* End the test with call c's failure, message msg: with k_output_alone,
 * c runs again first, alone, so that the test's output is c's alone. */
static void end_test(const k_call *c, const char *msg) __attribute__((noreturn));
static void end_test(const k_call *c, const char *msg)
{
    if (judging != NULL)
        k_output_of(judging, c);
    ck_abort_msg("%s", msg);
    abort();   /* not reached */
}

/* Fail with the call, what was wrong, and a hint. */
static void wrong(const k_call *c, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
static void wrong(const k_call *c, const char *hint, const char *fmt, ...)
{
    char call[2000], what[2400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    k_describe(c, call, sizeof call);
    snprintf(captured, sizeof captured, "%s: %s%s%s", call, what,
             hint && hint[0] ? " Hint: " : "", hint ? hint : "");
    if (capture != NULL)
        longjmp(*capture, 1);
    end_test(c, captured);
}

static int64_t ordered(float x)
{
    int32_t i;
    memcpy(&i, &x, sizeof i);
    return i < 0 ? -(int64_t)(i & 0x7fffffff) : (int64_t)i;
}

static bool close_enough(float got, float want, const k_want *w, int64_t i)
{
    if (w->tol == K_BOUND && isinf(w->bound[i]))   /* it may overflow: any value */
        return true;
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    switch (w->tol) {
    case K_EXACT:
        return memcmp(&got, &want, sizeof got) == 0;
    case K_EXACT_ZERO:
        return got == want;
    case K_ULPS:   /* infinities and the sign of a zero exactly */
        if (isinf(want) || isinf(got) || (want == 0 && got == 0))
            return memcmp(&got, &want, sizeof got) == 0;
        return llabs(ordered(got) - ordered(want)) <= w->ulps;
    default:
        if (isinf(want) || w->bound[i] == 0)
            return got == want;
        return isfinite(got) && fabs((double)got - (double)want) <= w->bound[i];
    }
}

static const char *tol_text(const k_want *w, int64_t i, float want, char *t, size_t cap)
{
    switch (w->tol) {
    case K_EXACT: snprintf(t, cap, " (exactly, bit for bit)"); break;
    case K_EXACT_ZERO: snprintf(t, cap, " (exactly)"); break;
    case K_ULPS:
        snprintf(t, cap, " (within %d ulp; infinities and the sign of a zero exactly)", w->ulps);
        break;
    default:
        if (w->bound[i] == 0 && isfinite(want))
            snprintf(t, cap, " (exactly: every partial sum is a float, in any order)");
        else
            snprintf(t, cap, " (within %.3g)", w->bound[i]);
    }
    return t;
}

/* For an elementwise call, its inputs at result index idx: " (a = 1, b =
 * nan there)"; "" for other calls. */
static const char *ewise_inputs(const k_call *c, const int64_t *idx, int ndim, char *t,
                                size_t cap)
{
    t[0] = '\0';
    if (c->op == K_BINARY || c->op == K_BINARY_INTO)
        snprintf(t, cap, " (a = %.9g, b = %.9g there)", (double)k_input_at(c, 0, ndim, idx),
                 (double)k_input_at(c, 1, ndim, idx));
    else if (c->op > K_BINARY_INTO && c->op <= K_UNARY_INTO)
        snprintf(t, cap, " (a = %.9g there)", (double)k_input_at(c, 0, ndim, idx));
    return t;
}

/* Values of the result (read through layout `at` from data) against want's
 * row-major values.  `before` (or NULL): dst's data before the call, to
 * tell an element never written; each element judged is then taken into
 * the reference's buffer after, which compare_buffer judges next. */
static void compare_values(const k_call *c, k_want *w, const float *data, int64_t size,
                           const k_arr *at, const float *before, const char *what,
                           const char *hint)
{
    int64_t n = k_numel(w->ndim, w->shape), idx[ND_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        k_unravel(i, w->ndim, w->shape, idx);
        int64_t off = k_offset(at, idx);
        if (off < 0 || off >= size)
            wrong(c, hint, "%s reaches outside its buffer", what);
        float got = data[off], want = w->vals[i];
        if (close_enough(got, want, w, i)) {
            if (before != NULL)
                w->after[at->buf].v[off] = got;
            continue;
        }
        char ix[300], t[100], in[200];
        bool stale = before != NULL && memcmp(&got, &before[off], sizeof got) == 0;
        wrong(c, hint, "element %s of %s is %.9g, expected %.9g%s%s%s.",
             k_ints(w->ndim, idx, ix, sizeof ix), what, (double)got,
             isnan(want) ? NAN : (double)want,   /* any NaN will do: no sign */
             ewise_inputs(c, idx, w->ndim, in, sizeof in), tol_text(w, i, want, t, sizeof t),
             stale ? ", the value dst held before the call (not written, or written with "
                     "that same value)"
             : isnan(got) && before == NULL
                 ? c->dev == ND_CUDA ? " (NaN: never written? or, on the emulator, computed from "
                                       "a __shared__ slot no thread wrote: it fills them with NaN)"
                                     : " (NaN: was it ever written?)"
                 : "");
    }
}

/* Buffer i after the call against `want` (the reference's, or as before). */
static void compare_buffer(const k_call *c, const k_res *r, int i, const float *want,
                           const k_arr *dst, const char *hint)
{
    if (r->after[i].n != c->bufs[i].n)
        wrong(c, NULL, "the test could not read buffer %d back after the call", i);
    for (int64_t j = 0; j < c->bufs[i].n; j++) {
        float got = r->after[i].v[j];
        if (memcmp(&got, &want[j], sizeof got) == 0 ||
            (isnan(got) && isnan(want[j]) && c->op != K_PERMUTE_BYTES))   /* bytes: exact */
            continue;
        const char *whose = "an input's";
        for (int a = c->nargs - 1; a >= 0; a--)
            if (c->args[a].kind != K_NULLPTR && c->args[a].buf == i)
                whose = arg_name(c, a);
        if (dst == NULL)
            wrong(c, "a function reads its inputs and never writes them; work on copies or on "
                 "the result", "it changed element %" PRId64 " of %s buffer from %.9g to %.9g.",
                 j, whose, (double)want[j], (double)got);
        wrong(c, hint, "element %" PRId64 " of %s's buffer is %.9g after the call, expected %.9g "
             "(%s).", j, whose, (double)got, (double)want[j],
             c->bufs[i].v[j] == want[j] || (isnan(want[j]) && isnan(c->bufs[i].v[j]))
                 ? "it must not change: the view does not reach it"
                 : "the view reaches it");
    }
}

static void compare_refcounts(const k_call *c, const k_res *r, int view_buf)
{
    for (int i = 0; i < c->nbufs; i++) {
        int64_t want = i == view_buf ? 1 : 0;
        if (r->refcount[i] == want)
            continue;
        if (r->refcount[i] > want)
            wrong(c, "release every temporary view or array you made (nd_release), and never "
                 "take a reference you do not hand back", "afterwards a buffer has %" PRId64
                 " more reference%s than it should: a reference leaked.",
                 r->refcount[i] - want, r->refcount[i] - want == 1 ? "" : "s");
        wrong(c, "only release what you own: the inputs belong to the caller (when out is an "
             "input, replace it once, as nd_replace does)", "afterwards a buffer has %" PRId64
             " reference%s fewer than it should: the call released one it did not own.",
             want - r->refcount[i], want - r->refcount[i] == 1 ? "" : "s");
    }
}


static void compare_ints(const k_call *c, const k_want *w, const k_res *r, const char *hint);

/* The shape string the library's messages use, to look for in them. */
static bool names_list(const char *msg, int n, const int64_t *v)
{
    char t[300];
    return strstr(msg, k_ints(n, v, t, sizeof t)) != NULL ||
           (n == 1 && (snprintf(t, sizeof t, "(%" PRId64 ")", v[0]), strstr(msg, t)));
}

static bool names_shape(const char *msg, const k_arr *a)
{
    return names_list(msg, a->ndim, a->shape);
}

static void compare_error(const k_call *c, const k_want *w, const k_res *r)
{
    const char *name = op_name(c->op);
    char m[K_MSG + 20], sh[700];
    if (r->msg[0] == '\0')
        wrong(c, "call nd_fail(status, \"op: ...\") to say what was wrong", "it failed with %s "
             "as it should, but nd_last_error() is empty.", status_name(r->status));
    if (strstr(r->msg, name) == NULL)
        wrong(c, "a message starts with the operation's name, e.g. \"reshape: ...\"",
             "it failed with %s as it should, but %s does not name the operation \"%s\".",
             status_name(r->status), its_message(r, m, sizeof m), name);
    if (w->status == ND_ERR_SHAPE && (c->op == K_BINARY || c->op == K_MATMUL ||
                                      c->op == K_MATMUL_NAIVE) &&
        !(names_shape(r->msg, &c->args[0]) && names_shape(r->msg, &c->args[1])))
        wrong(c, "nd.h: the message gives both shapes, as nd_shape_str writes them",
             "it failed with ND_ERR_SHAPE as it should, but %s does not give both shapes%s.",
             its_message(r, m, sizeof m), the_shapes(c->args[0].ndim, c->args[0].shape,
             c->args[1].ndim, c->args[1].shape, sh, sizeof sh));
    if (w->status == ND_ERR_SHAPE && (c->op == K_RESHAPE || c->op == K_BROADCAST_TO) &&
        !(names_shape(r->msg, &c->args[0]) && names_list(r->msg, c->n, c->list[0])))
        wrong(c, "the message gives a's shape and the shape asked for, as nd_shape_str "
             "writes them", "it failed with ND_ERR_SHAPE as it should, but %s does not give "
             "both shapes%s.", its_message(r, m, sizeof m), the_shapes(c->args[0].ndim,
             c->args[0].shape, c->n, c->list[0], sh, sizeof sh));
    if (w->status == ND_ERR_LAYOUT && c->op == K_RESHAPE && !strstr(r->msg, "compact"))
        wrong(c, "say why: the array is not compact (and nd_compact makes a copy that is)",
             "it failed with ND_ERR_LAYOUT as it should, but %s does not say that the array "
             "is not compact.", its_message(r, m, sizeof m));
    if (w->status == ND_ERR_SHAPE && c->nargs > 1 &&
        (c->op == K_BINARY_INTO || c->op == K_SCALAR_INTO || c->op == K_UNARY_INTO)) {
        /* a and b do not broadcast, or dst does not have the result's shape */
        const k_arr *a = &c->args[0], *b = &c->args[1], *dst = &c->args[c->nargs - 1];
        k_arr res = *a;
        bool dst_wrong = c->op != K_BINARY_INTO ||
                         k_broadcast_shape(a->ndim, a->shape, b->ndim, b->shape, &res.ndim,
                                           res.shape);
        if (dst_wrong ? !(names_shape(r->msg, dst) && names_shape(r->msg, &res))
                      : !(names_shape(r->msg, a) && names_shape(r->msg, b)))
            wrong(c, dst_wrong ? "nd.h: a dst of another shape than the result's is refused with "
                 "a message that gives both, as nd_shape_str writes them" : "nd.h: the message "
                 "gives both shapes, as nd_shape_str writes them", "it failed with ND_ERR_SHAPE "
                 "as it should, but %s does not give %s%s.", its_message(r, m, sizeof m),
                 dst_wrong ? "dst's shape and the result's" : "both shapes",
                 dst_wrong ? the_shapes(dst->ndim, dst->shape, res.ndim, res.shape, sh, sizeof sh)
                           : the_shapes(a->ndim, a->shape, b->ndim, b->shape, sh, sizeof sh));
    }
    if (k_takes_out(c->op) && c->out != K_OUT_NULL && !r->out_untouched)
        wrong(c, "check every argument before writing anything: on failure every output is "
             "left exactly as it was", "it failed with %s as it should%s, but it wrote to "
             "%s.", status_name(r->status), paren_message(r, m, sizeof m),
             c->out >= 0 ? "its input" : "out");
    if (c->op == K_ITER && c->out != K_OUT_NULL && !r->out_untouched)
        wrong(c, "check every argument before writing anything", "it failed as it should, but "
             "wrote to the iterator.");
    for (int i = 0; i < c->nbufs; i++)
        compare_buffer(c, r, i, c->bufs[i].v, NULL, NULL);
    compare_refcounts(c, r, -1);   /* a failed call takes no reference and drops none */
    compare_ints(c, w, r, NULL);
}

/* Whether the result's shape is the reference's. */
static bool same_shape(const k_res *r, const k_want *w)
{
    return r->ndim == w->ndim &&
           memcmp(r->shape, w->shape, (size_t)w->ndim * sizeof *w->shape) == 0;
}

static void compare_view(const k_call *c, const k_want *w, const k_res *r, const char *hint)
{
    char got[700], want[700];
    layout(r->ndim, r->shape, r->strides, r->offset, got, sizeof got);
    layout(w->ndim, w->shape, w->strides, w->offset, want, sizeof want);
    if (r->out_buf != w->buf)
        wrong(c, "a view never copies data: make the result with nd_as_strided on a's buffer",
             "the result %s.", r->out_buf == K_NOBUF ? "has no buffer" : "has a buffer of "
             "its own");
    if (!same_shape(r, w))
        wrong(c, hint, "the result is %s, expected %s: the shape differs.", got, want);
    bool empty = k_numel(w->ndim, w->shape) == 0;
    if (!empty && r->offset != w->offset)
        wrong(c, hint, "the result is %s, expected %s: the offset (the buffer position of "
             "element (0,...,0)) differs.", got, want);
    if (empty && (r->offset < 0 || r->offset > c->bufs[w->buf].n))
        wrong(c, "nd.h, \"Valid arrays\", rule 3: a view with no elements reaches nothing, "
             "but its offset stays in 0..size", "the result is %s, whose offset is outside its "
             "buffer of %" PRId64 " floats.", got, c->bufs[w->buf].n);
    for (int d = 0; !empty && d < w->ndim; d++)
        if (w->shape[d] > 1 && r->strides[d] != w->strides[d])
            wrong(c, hint, "the result is %s, expected %s: axis %d's stride differs (strides of "
                 "size-1 axes, and everything of an empty view, may be anything).", got, want,
                 d);
    compare_refcounts(c, r, w->buf);
}

static void compare_new(const k_call *c, k_want *w, const k_res *r, const char *hint)
{
    char sh[300], ws[300];
    if (r->out_buf != K_NEWBUF)
        wrong(c, "the result is a NEW compact array (nd_empty), even when the input is compact",
             "the result %s.", r->out_buf == K_NOBUF ? "has no buffer"
                                                     : "shares a buffer with an input");
    if (!same_shape(r, w))
        wrong(c, hint, "the result has shape %s, expected %s.", k_ints(r->ndim, r->shape, sh,
             sizeof sh), k_ints(w->ndim, w->shape, ws, sizeof ws));
    int64_t n = k_numel(w->ndim, w->shape);
    if (r->out_device != (int)c->dev)
        wrong(c, "the result lives on the inputs' device", "the result lives on device %d, "
             "not %d.", r->out_device, (int)c->dev);
    if (r->out_refcount != 1)
        wrong(c, "a new array holds exactly one reference, out's", "the result's buffer has "
             "refcount %" PRId64 ", expected 1.", r->out_refcount);
    if (r->out_nbytes != n * (int64_t)sizeof(float))
        wrong(c, "allocate exactly the result's elements (nd_empty of its shape)", "the result's "
             "buffer has %" PRId64 " bytes, expected %" PRId64 ".", r->out_nbytes,
             n * (int64_t)sizeof(float));
    k_arr at = { .ndim = w->ndim, .offset = r->offset };
    memcpy(at.strides, r->strides, sizeof at.strides);
    for (int64_t d = w->ndim - 1, s = 1; n > 0 && d >= 0; s *= w->shape[d--])
        if ((w->shape[d] != 1 && r->strides[d] != s) || r->offset != 0)
            wrong(c, "the result is compact: offset 0, row-major strides (nd_empty makes it so)",
                 "the result has strides %s and offset %" PRId64 ".", k_ints(r->ndim,
                 r->strides, sh, sizeof sh), r->offset);
    compare_values(c, w, r->out_data.v, r->out_data.n, &at, NULL, "the result", hint);
    for (int i = 0; i < c->nbufs; i++)
        compare_buffer(c, r, i, c->bufs[i].v, NULL, NULL);
    compare_refcounts(c, r, -1);
}

static void compare_inplace(const k_call *c, k_want *w, const k_res *r, const char *hint)
{
    /* the destination's elements, with the op's tolerance; then every
     * element of every buffer as the reference has it */
    int d = c->op == K_BINARY_INTO ? 2 : c->op == K_SCALAR_INTO || c->op == K_UNARY_INTO ? 1 : 0;
    const k_arr *dst = &c->args[d];
    if (w->vals != NULL)
        compare_values(c, w, r->after[dst->buf].v, r->after[dst->buf].n, dst,
                       c->bufs[dst->buf].v, "dst", hint);
    for (int i = 0; i < c->nbufs; i++)
        compare_buffer(c, r, i, w->after[i].v, dst, hint);
    compare_refcounts(c, r, -1);
}

static void compare_ints(const k_call *c, const k_want *w, const k_res *r, const char *hint)
{
    if (w->nvals == 0)
        return;
    char a[400], b[400];
    if (c->op == K_ITER && w->status == ND_OK) {
        int nd = c->n;
        int64_t n = w->ivals[0], total = w->ivals[3];
        bool whole = n == total;   /* the walk reached the end */
        static const int64_t short_res[6] = { -1, -1, -1, -1, -1, -1 };
        const int64_t *g = r->nvals < 6 ? short_res : r->vals;
        if (g[2] != nd || g[3] != total || g[4] != 0)
            wrong(c, hint, "after nd_iter_init the iterator has ndim %" PRId64 ", total %" PRId64
                  " and count %" PRId64 ", expected %d, %" PRId64 " and 0.", g[2], g[3], g[4],
                  nd, total);
        if (g[0] != n)
            wrong(c, hint, "nd_iter_next returned true %" PRId64 " times, expected %" PRId64
                  " (once per position%s).", g[0], n, n == 1 && nd == 0 ? ": a scalar has one"
                                                                        : "");
        /* each position, then (once the walk ended) the index left unchanged */
        for (int64_t i = 0; nd > 0 && i < n + (whole && n > 0); i++) {
            const int64_t *p = g + 6 + i * nd, *x = w->ivals + 6 + i * nd;
            if (memcmp(p, x, (size_t)nd * sizeof *p) != 0)
                wrong(c, hint, i < n ? "call %" PRId64 " of nd_iter_next gave the position %s, "
                      "expected %s." : "after the last position (call %" PRId64 " returned "
                      "false) the index is %s, expected %s, unchanged.", i + 1,
                      k_ints(nd, p, a, sizeof a), k_ints(nd, x, b, sizeof b));
        }
        if (g[5] != n)
            wrong(c, hint, "count is %" PRId64 " after %" PRId64 " positions, expected %" PRId64
                  ".", g[5], n, n);
        if (whole && g[1] != 1)
            wrong(c, hint, "once every position has been visited, nd_iter_next must keep "
                  "returning false (and return false for NULL).");
        return;
    }
    if (w->status == ND_OK && (c->op == K_SIMPLIFY_DIMS || c->op == K_SIMPLIFY_PERM)) {
        /* the entries past the new ndim are free */
        int m = (int)w->ivals[0], lists = c->op == K_SIMPLIFY_DIMS ? 3 : 2;
        if (r->nvals < w->nvals || r->vals[0] != m)
            wrong(c, hint, "the new ndim is %" PRId64 ", expected %d.", r->nvals ? r->vals[0] : -1,
                 m);
        for (int l = 0; l < lists; l++) {
            if (l == 2 && c->list_null[2])
                continue;
            const int64_t *g = r->vals + 1 + l * K_LIST, *x = w->ivals + 1 + l * K_LIST;
            if (memcmp(g, x, (size_t)m * sizeof *g) != 0)
                wrong(c, hint, "the %s became %s, expected %s.",
                     l == 0 ? "shape" : c->op == K_SIMPLIFY_PERM ? "perm" : l == 1 ? "strides_a"
                                                                            : "strides_b",
                     k_ints(m, g, a, sizeof a), k_ints(m, x, b, sizeof b));
        }
        return;
    }
    for (int i = 0; i < w->nvals; i++) {
        int64_t g = i < r->nvals ? r->vals[i] : K_POISON64, x = w->ivals[i];
        if (g == x)
            continue;
        if (w->status != ND_OK)
            wrong(c, "check every argument before writing anything: on failure every output is "
                 "left exactly as it was", "it failed as it should, but wrote to an output.");
        if (x == K_POISON64)
            wrong(c, hint, "it wrote entry %d of its output, past the ndim it was given.", i);
        switch (c->op) {
        case K_IS_COMPACT:
            wrong(c, hint, "the result is %s, expected %s.", g == 0xAB ? "never written"
                 : g ? "true" : "false", x ? "true" : "false");
        case K_PERMUTE_BYTES: {
            static const char *const v[] = { "a copy", "naive", "generic", "transpose",
                                             "transpose2" };
            wrong(c, hint, "*ran is %" PRId64 " (%s), expected %" PRId64 " (%s).", g,
                  g >= 0 && g <= 4 ? v[g] : "no version", x, x >= 0 && x <= 4 ? v[x] : "?");
        }
        case K_INDEX_TO_OFFSET: {   /* entry i: position at[0] + i * at[3] */
            int64_t pos = c->at[0] + i * (c->at[3] > 0 ? c->at[3] : 1), idx[ND_MAX_DIMS];
            bool stub = r->nvals >= w->nvals;   /* the offset for every i, as the stub gives */
            for (int j = 0; j < w->nvals && stub; j++)
                stub = r->vals[j] == c->at[1];
            k_unravel(pos, c->n, c->list[0], idx);
            wrong(c, hint, "for i = %" PRId64 ", the multi-index %s, it returned %" PRId64
                  ", expected %" PRId64 "%s.", pos, k_ints(c->n, idx, a, sizeof a), g, x,
                  stub ? ": the offset itself for every i, as the stub of offset_of gives (not "
                  "implemented: offset_of (lesson 6))" : "");
        }
        default:
            if (g == K_POISON64)
                wrong(c, hint, "result entry %d was never written (expected %" PRId64 ").", i, x);
            wrong(c, hint, "result entry %d is %" PRId64 ", expected %" PRId64 ".", i, g, x);
        }
    }
}

/* An element's bytes as a little-endian number: "0x0a0b". */
static char *hex(const unsigned char *p, int64_t n, char *dst)
{
    dst[0] = '0';
    dst[1] = 'x';
    for (int64_t b = 0; b < n; b++)
        snprintf(dst + 2 + 2 * b, 3, "%02x", p[n - 1 - b]);
    return dst;
}

/* Lesson 7's byte data: every byte of every buffer against the reference's;
 * a wrong byte of dst is named by its result element, and the source
 * element it should have come from. */
static void compare_bytes(const k_call *c, const k_want *w, const k_res *r, const char *hint)
{
    int64_t e = c->at[0], start = c->at[2], n = k_numel(c->n, c->list[0]);
    int d = c->at[3] & 4 ? 0 : 1;
    for (int i = 0; i < c->nbufs; i++) {
        if (r->after[i].n != c->bufs[i].n)
            wrong(c, NULL, "the test could not read buffer %d back after the call", i);
        const unsigned char *got = (const void *)r->after[i].v, *want = (const void *)w->after[i].v;
        const unsigned char *was = (const void *)c->bufs[i].v;
        int64_t nb = c->bufs[i].n * (int64_t)sizeof(float), b = 0;
        while (b < nb && got[b] == want[b])
            b++;
        if (b == nb)
            continue;
        if (i != d || b < start || b >= start + n * e)
            wrong(c, i == d ? "write only the result's bytes: every store needs its bounds "
                  "test (r < rows && c < cols, or i < count)" : "a permute reads src and "
                  "never writes it", "it changed byte %" PRId64 " of %s from 0x%02x to "
                  "0x%02x.", i != d ? b : b < start ? start - b : b - start - n * e,
                  i != d ? "src's buffer" : b < start ? "the bytes before dst (counting back)"
                                                      : "the bytes after dst", was[b], got[b]);
        int64_t j = (b - start) / e, at = start + j * e, dshape[K_LIST], idx[K_LIST],
                src[K_LIST];
        for (int k = 0; k < c->n; k++)
            dshape[k] = c->list[0][c->list[1][k]];
        k_unravel(j, c->n, dshape, idx);
        for (int k = 0; k < c->n; k++)
            src[c->list[1][k]] = idx[k];
        char di[300], ds[300], si[300], hw[40], hg[40];
        wrong(c, hint, "element %s of the result (shape %s) must be source element %s, %s; it "
              "is %s%s.", k_ints(c->n, idx, di, sizeof di), k_ints(c->n, dshape, ds, sizeof ds),
              k_ints(c->n, src, si, sizeof si), hex(want + at, e, hw), hex(got + at, e, hg),
              memcmp(got + at, was + at, (size_t)e) == 0 ? " (the bytes dst held before the "
              "call: not written, or written with those same bytes)" : "");
    }
}

/* The reference's answer against the raw result. */
static void compare(const k_call *c, k_want *w, const k_res *r, const char *hint)
{
    char m[K_MSG + 20];
    if (r->setup_failed) {   /* ends the test, even while shrinking */
        static char setup[K_MSG + 2400];
        char call[2000];
        if (k_quote_messages)
            snprintf(setup, sizeof setup, "%s (the test's own setup failed: this is not your "
                     "code's fault)", r->msg);
        else
            snprintf(setup, sizeof setup, "test setup: the executor could not set up %s (its "
                     "words are not shown) (the test's own setup failed: this is not your "
                     "code's fault)", k_describe(c, call, sizeof call));
        capture = NULL;
        end_test(c, setup);
    }
    if (r->status != w->status) {
        if (r->status == ND_ERR_NOT_IMPLEMENTED)
            wrong(c, NULL, "it returned ND_ERR_NOT_IMPLEMENTED: %s",
                  not_implemented(r, m, sizeof m));
        char want[700] = "";
        if (w->status == ND_OK && w->view) {   /* the view it should have made */
            memcpy(want, " and the view ", 14);
            layout(w->ndim, w->shape, w->strides, w->offset, want + 14, sizeof want - 14);
        }
        if (w->status == ND_OK)
            wrong(c, hint, "it returned %s%s, expected ND_OK%s.", status_name(r->status),
                 paren_message(r, m, sizeof m), want);
        char rule[500];
        snprintf(rule, sizeof rule, "nd.h: %s is the error when %s", status_name(w->status),
                 w->why);
        if (r->status == ND_OK)
            wrong(c, rule, "it returned ND_OK, expected %s: %s.", status_name(w->status),
                 w->why);
        wrong(c, rule, "it returned %s%s, expected %s: %s.", status_name(r->status),
             paren_message(r, m, sizeof m), status_name(w->status), w->why);
    }
    for (int i = 0; i < c->nargs; i++)
        if (r->args_changed & (1 << i))
            wrong(c, "the array arguments are const: build the result in locals and write "
                 "only to the outputs", "it %s, but changed its argument %s itself (its "
                 "shape, strides, offset or buffer).", r->status == ND_OK ? "succeeded"
                 : "failed", arg_name(c, i));
    if (w->status != ND_OK) {
        compare_error(c, w, r);
        return;
    }
    if (c->op == K_PERMUTE_BYTES)
        compare_bytes(c, w, r, hint);
    else if (w->view)
        compare_view(c, w, r, hint);
    else if (w->inplace)
        compare_inplace(c, w, r, hint);
    else if (w->vals != NULL)
        compare_new(c, w, r, hint);
    if (w->view || (!w->inplace && w->vals == NULL))   /* views and host results */
        for (int i = 0; i < c->nbufs; i++)
            compare_buffer(c, r, i, c->bufs[i].v, NULL, NULL);
    compare_ints(c, w, r, hint);
}

/* ---------------------------------------------------------------------- */
/* The test's entry points                                                */
/* ---------------------------------------------------------------------- */

/* Run c and return the raw result, valid until the case ends. */
static const k_res *run(k_ctx *k, const k_call *c)
{
    k_drain(k);
    if (k->have_res)
        k_res_free(&k->res);
    k_dispatch(k, c, &k->res);
    k->have_res = true;
    return &k->res;
}

void k_output_of(k_ctx *k, const k_call *c)
{
    if (!k_output_alone || k->where != K_REMOTE)
        return;
    k->output_settled = true;
    k->npending = 0;   /* the calls in flight are dropped with their executor */
    k->pending_bytes = 0;
    k_abandon(k);
    if (k->exec_output != NULL && truncate(k->exec_output, 0) != 0) {
        /* (the launcher truncates it too) */
    }
    if (c == NULL || k_restart(k) != NULL)
        return;
    k_res r;
    uint32_t seq = k_write_call(k->to_exec, c);
    if (seq != 0 && k_read_res(k->from_exec, c, seq, &r) == NULL)
        k_res_free(&r);
    k_abandon(k);
}

/* The comparison, its failure message returned instead of raised. */
static const char *compared(const k_call *c, k_want *w, const k_res *r, const char *hint)
{
    jmp_buf here;
    if (setjmp(here) != 0) {
        capture = NULL;
        return captured;
    }
    capture = &here;
    compare(c, w, r, hint);
    capture = NULL;
    return NULL;
}

const char *k_judge(k_ctx *k, const k_call *c, const k_res *r)
{
    judging = k;
    k_want w = k_reference(k, c);
    return compared(c, &w, r, NULL);
}

/* Smaller calls like c: one axis of one array argument, or the same axis
 * (counted from the right) of every argument, halved, cut to 1 or dropped
 * when it is 1.  Views stay inside their buffers. */
static int smaller(const k_call *c, k_call *out, int cap)
{
    int n = 0;
    for (int joint = 0; joint < (c->nargs > 1 ? 2 : 1); joint++)
        for (int i = 0; i < c->nargs; i++)
            for (int d = 0; d < c->args[i].ndim && c->args[i].kind == K_VIEW; d++)
                for (int how = 0; how < 3 && n < cap; how++) {
                    k_call t = *c;
                    int from_right = c->args[i].ndim - d;
                    bool changed = false;
                    for (int j = 0; j < c->nargs; j++) {
                        k_arr *a = &t.args[j];
                        int e = a->ndim - from_right;
                        if ((joint ? a->kind != K_VIEW : j != i) || e < 0)
                            continue;
                        /* nd_offset_of's index follows a's axes (an entry
                         * per axis, kept inside the smaller shape); a
                         * permutation's axes cannot lose one */
                        int64_t *ix = t.op == K_OFFSET_OF && j == 0 ? t.list[0] : NULL;
                        /* nd_slice's index: an entry for each of the first t.n axes */
                        bool sl = t.op == K_SLICE && j == 0 && !t.list_null[0] && e < t.n;
                        if (how == 2 && a->shape[e] == 1 && (t.op != K_PERMUTE || j != 0)) {
                            for (int f = e; f + 1 < a->ndim; f++) {   /* drop it */
                                a->shape[f] = a->shape[f + 1];
                                a->strides[f] = a->strides[f + 1];
                                if (ix != NULL)
                                    ix[f] = ix[f + 1];
                            }
                            for (int f = e; sl && f + 1 < t.n; f++)
                                t.idx[f] = t.idx[f + 1];
                            t.n -= sl;
                            a->ndim--;
                            changed = true;
                        } else if (how < 2 && a->shape[e] > 1) {
                            a->shape[e] = how == 0 ? a->shape[e] / 2 : 1;
                            if (ix != NULL && ix[e] >= 0)
                                ix[e] %= a->shape[e];
                            changed = true;
                        }
                    }
                    if (changed)
                        out[n++] = t;
                }
    return n;
}

/* The smallest failing call found from c (which fails with msg), in a few
 * hundred calls at most: its failure message, or NULL if none is smaller;
 * *call: that call. */
static char *shrink(k_ctx *k, const k_call *c, nd_status status, const char *hint,
                    const k_call **call)
{
    static k_call best, cand[3 * 3 * K_ARGS * ND_MAX_DIMS * 2];
    static char found[5000];
    best = *c;
    bool any = false;
    for (int budget = 300; budget > 0;) {
        int n = smaller(&best, cand, (int)(sizeof cand / sizeof cand[0])), i;
        for (i = 0; i < n && budget > 0; i++) {
            k_want w = k_reference(k, &cand[i]);
            if (w.status != status)
                continue;
            budget--;
            const char *m = compared(&cand[i], &w, run(k, &cand[i]), hint);
            if (m != NULL) {
                snprintf(found, sizeof found, "%s", m);
                best = cand[i];
                any = true;
                k_abandon(k);   /* a failing call ends its executor (a CUDA fault
                                   leaves its device unusable): the next on a new one */
                break;
            }
        }
        if (i == n || budget <= 0)
            break;
    }
    *call = &best;
    return any ? found : NULL;
}

/* What a wrong result of a call on the CUDA device says when the same call
 * run again gives another one: the emulator runs a launch's blocks in an
 * order drawn from the launch's number in the process (grader/emu/README.md,
 * "Block order"), so the second run's blocks run in another order.  Whatever
 * the test's hint is about, the kernel then depends on that order. */
#define ORDER_NOTE " [The same call, run again with its blocks in another order, gave %s: " \
    "the result depends on the order the blocks run in. The blocks of a launch run in " \
    "any order, and at the same time: a block must not fold its result into one another " \
    "block of the launch wrote (block 0 storing its partial result, the others adding " \
    "theirs); each writes its own partial result and a second launch combines them, or " \
    "they combine them with atomicAdd.]"

/* Call c (on the CUDA device, status ND_OK as the reference wants) gave
 * the wrong result `first` (its hint left out): run it twice more, one
 * run after the other on one executor (the first may be a new executor's
 * first call, as c may have been: the same launch numbers, the same
 * order); the note above if a result differs, else "". */
static const char *order_note(k_ctx *k, const k_call *c, const char *first)
{
    static char note[1000];
    for (int again = 0; again < 2; again++) {
        k_want w = k_reference(k, c);
        const k_res *r = run(k, c);
        if (r->status != ND_OK)
            return "";   /* a fault, or a device left unusable: not a difference */
        const char *m = compared(c, &w, r, NULL);
        if (m != NULL && strcmp(m, first) == 0)
            continue;
        snprintf(note, sizeof note, ORDER_NOTE, m == NULL ? "the right result"
                                                          : "another wrong result");
        k_abandon(k);   /* the search for a smaller case starts on a new executor */
        return note;
    }
    return "";
}

/* Call c failed (r, message m): fail the test, with the smallest failing
 * case found from it. */
static void failed(k_ctx *k, const k_call *c, k_want *w, const k_res *r, const char *m,
                   const char *hint)
{
    static char first[5000], both[12000];
    snprintf(first, sizeof first, "%s", m);
    if (w->status != ND_OK || r->status == ND_ERR_NOT_IMPLEMENTED || c->nargs == 0)
        end_test(c, first);
    /* a case that fails: say so now (should a smaller one crash), then
     * look for the smallest failing case, as Hypothesis would */
    k_provisional(first);
    /* first without its hint (own: the check's, which may not be the test's) */
    char *h1 = strstr(first, " Hint: "), own[5000];
    snprintf(own, sizeof own, "%s", h1 != NULL ? h1 : "");
    if (h1 != NULL)
        *h1 = '\0';
    const char *note = c->dev == ND_CUDA && r->status == ND_OK ? order_note(k, c, first) : "";
    const k_call *best;
    char *small = shrink(k, c, w->status, hint, &best);
    if (small == NULL) {
        snprintf(both, sizeof both, "%s%s%s", first, note, own);
        end_test(c, both);
    }
    /* the smallest case first, then the test's own; the hint once */
    char *h = strstr(small, " Hint: ");
    if (h != NULL)
        *h = '\0';
    snprintf(both, sizeof both, "%s (the smallest failing case found; the case the test made: "
             "%s)%s%s%s", small, first, note, hint && hint[0] ? " Hint: " : "",
             hint ? hint : "");
    end_test(best, both);
}

/* In the grader (K_REMOTE) a checked call goes out ahead of its result
 * (README.md, "Where the verdict is taken"): results are judged in the
 * order of the calls when K_AHEAD are in flight (or K_AHEAD_BYTES of
 * buffers), when the pipe to the executor is full, and at the end of the
 * test.  Each call keeps its case's memory until it is judged. */
#define K_AHEAD 64
#define K_AHEAD_BYTES ((int64_t)16 << 20)

typedef struct k_pending {
    k_call c;
    k_want w;
    const char *hint;
    uint32_t seq;
    void **blocks;      /* the case memory of the call, its reference's */
    int nblocks;
    int64_t bytes;
} k_pending;

static k_ctx *sending;   /* whose calls are in flight */

static void judge_oldest(k_ctx *k)
{
    judging = k;
    k_pending *e = &k->pending[k->head];
    k->head = (k->head + 1) % K_AHEAD;
    k->npending--;
    k->pending_bytes -= e->bytes;
    k_res r;
    k_receive(k, &e->c, e->seq, &r);   /* fails the test if the executor died */
    const char *m = compared(&e->c, &e->w, &r, e->hint);
    if (m != NULL) {
        k_abandon(k);   /* the calls after it are not judged */
        k->npending = 0;
        failed(k, &e->c, &e->w, &r, m, e->hint);
    }
    k_res_free(&r);
    for (int i = 0; i < e->nblocks; i++)
        free(e->blocks[i]);
    free(e->blocks);
}

void k_drain(k_ctx *k)
{
    while (k->npending > 0)
        judge_oldest(k);
}

/* The pipe to the executor is full: judge a result, which lets the
 * executor go on; false with none in flight (the wire then waits). */
static bool wait_by_judging(int fd)
{
    (void)fd;
    if (sending == NULL || sending->npending == 0)
        return false;
    judge_oldest(sending);
    return true;
}

static void send_ahead(k_ctx *k, const k_call *c, const k_want *w, const char *hint)
{
    if (k->pending == NULL) {
        k->pending = calloc(K_AHEAD, sizeof *k->pending);
        K_REQUIRE(k->pending != NULL, "test setup: out of memory");
    }
    while (k->npending >= K_AHEAD)
        judge_oldest(k);
    sending = k;
    k_wire_wait = wait_by_judging;
    uint32_t seq = k_send(k, c);
    if (seq == 0) {   /* the executor is gone: the calls before this one first */
        k_drain(k);
        k_exec_failed(k, c, "the process ended");
    }
    k_pending *e = &k->pending[(k->head + k->npending) % K_AHEAD];
    e->c = *c;
    e->w = *w;
    e->seq = seq;
    e->hint = hint ? strcpy(k_mem(k, strlen(hint) + 1), hint) : NULL;
    e->bytes = (int64_t)sizeof *e;
    for (int i = 0; i < c->nbufs; i++)
        e->bytes += c->bufs[i].n * (int64_t)sizeof(float);
    e->blocks = k->blocks;
    e->nblocks = k->nblocks;
    k->blocks = NULL;
    k->nblocks = k->cap = 0;
    k->npending++;
    k->pending_bytes += e->bytes;
    k_case_end(k);
    while (k->pending_bytes > K_AHEAD_BYTES)
        judge_oldest(k);
}

/* k_check, and k_expect's `status` when it is not -1. */
static void check_as(k_ctx *k, k_call *c, int status, const char *hint)
{
    judging = k;
    if (c->op == K_ITER && c->at[0] == 0) {   /* the odometer's cap: a few calls past the end */
        int64_t n = c->n >= 0 && c->n <= ND_MAX_DIMS ? k_numel(c->n, c->list[0]) : 0;
        c->at[0] = (n >= 0 && n <= (1 << 20) ? n : 0) + 2;
    }
    k_want w = k_reference(k, c);
    if (status != -1 && w.status != (nd_status)status) {
        char call[2000];
        k_fail("test error: the reference expects %s for %s, the test %s (%s)",
               status_name(w.status), k_describe(c, call, sizeof call),
               status_name((nd_status)status), w.why ? w.why : "");
    }
    hint = hint ? hint : k->test->hint;
    if (k->where == K_REMOTE) {
        send_ahead(k, c, &w, hint);
        return;
    }
    const k_res *r = run(k, c);
    const char *m = compared(c, &w, r, hint);
    if (m != NULL)
        failed(k, c, &w, r, m, hint);   /* ends the test */
    k_case_end(k);
}

void k_check(k_ctx *k, k_call *c, const char *hint)
{
    check_as(k, c, -1, hint);
}

void k_expect(k_ctx *k, k_call *c, nd_status status, const char *hint)
{
    check_as(k, c, (int)status, hint);
}

/* Performance: the counters the instrumented executor appended to a
 * profiled call's raw result (exec.c), against each rule.  The executor
 * sends counts only; every judgement and message is made here. */
void k_check_perf(k_ctx *k, k_call *c, const k_perf *rules, int n, const char *hint)
{
    static const char *const kinds[] = { "global loads", "global stores", "shared loads",
                                         "shared stores" };
    judging = k;
    hint = hint ? hint : k->test->hint;
    c->profile = true;
    k_want w = k_reference(k, c);
    const k_res *r = run(k, c);
    const char *m = compared(c, &w, r, hint);
    if (m != NULL)
        end_test(c, m);   /* a wrong answer first: its speed means nothing */
    K_REQUIRE(w.status == ND_OK, "test setup: a performance check needs a valid call");
    if (r->nvals != w.nvals + K_PROF_VALS)
        wrong(c, NULL, "a malformed result: the kernels' counters are missing or the wrong "
              "size (%d values where %d were due)", r->nvals - w.nvals, K_PROF_VALS);
    const int64_t *p = r->vals + w.nvals;
    K_REQUIRE(p[0] >= 0, "test setup: %s; the performance checks need the CUDA emulator's "
              "instrumented build (the grader runs them there)",
              p[0] == K_PROF_OFF ? "this executor's CUDA emulator is not instrumented"
                                 : "this executor has no CUDA emulator");
    int64_t launches = p[0];
    for (int i = 0; i < n; i++) {
        const k_perf *rule = &rules[i];
        const int64_t *f = p + 1 + rule->kind * K_PROF_FIELDS;
        int64_t req = f[0], bytes = f[2], got = rule->kind < K_SHARED_LOAD ? f[3] : f[4];
        int64_t ideal = f[5], widths = 0;
        for (int b = 0; b < 5; b++) {
            K_REQUIRE(f[6 + b] >= 0, "a malformed result (its counters)");
            widths += f[6 + b];
        }
        if (req < 0 || bytes < 0 || got < 0 || ideal < 0 || ideal > got || widths != req ||
            (req == 0) != (bytes == 0))
            wrong(c, NULL, "a malformed result: the counters of its %s do not add up",
                  kinds[rule->kind]);
        if (bytes < rule->min_bytes)
            wrong(c, hint, "the CUDA emulator counted %" PRId64 " bytes of %s in its %" PRId64
                  " kernel launch%s, where the call moves %" PRId64 ": %s.", bytes,
                  kinds[rule->kind], launches, launches == 1 ? "" : "es", rule->min_bytes,
                  req == 0 ? (rule->kind >= K_SHARED_LOAD ? "this kernel must move its data "
                                                            "through a tile in shared memory"
                              : "did the work run on the device, in a kernel?")
                  : "every access of the kernel must be an ordinary load or store in its "
                    "own code");
        if (req == 0)
            continue;   /* nothing of this kind, and none was due */
        double measured, wanted;
        if (rule->width > 0) {
            int slot = rule->width >= 16 ? 4 : rule->width >= 8 ? 3 : rule->width >= 4 ? 2
                       : rule->width >= 2 ? 1 : 0;
            if (f[6 + slot] == req)
                continue;
            double sum = 0;
            for (int b = 0; b < 5; b++)
                sum += (double)(1 << b) * (double)f[6 + b];
            measured = sum / (double)req;
            wanted = rule->width;
        } else {
            if (got == ideal)
                continue;
            measured = rule->kind < K_SHARED_LOAD ? (double)got / (double)req
                       : (double)got / (double)ideal;
            wanted = rule->kind < K_SHARED_LOAD ? (double)ideal / (double)req : 1;
        }
        char what[600];
        snprintf(what, sizeof what, rule->what, measured, wanted);
        wrong(c, hint, "%s [the CUDA emulator's counts of its %s, %" PRId64 " kernel launch%s: "
              "%" PRId64 " requests, %" PRId64 " %s where %" PRId64 " would do, %" PRId64
              " bytes]", what, kinds[rule->kind], launches, launches == 1 ? "" : "es", req, got,
              rule->kind < K_SHARED_LOAD ? "sectors" : "wavefronts", ideal, bytes);
    }
    k_case_end(k);
}

/* A copy of call c whose buffers live in the current case's memory: for
 * checking several variants of one call (each check frees its case). */
static k_call fresh(k_ctx *k, const k_call *c, k_buf *keep)
{
    k_call f = *c;
    for (int i = 0; i < c->nbufs; i++) {
        f.bufs[i].v = k_floats(k, keep[i].n);
        memcpy(f.bufs[i].v, keep[i].v, (size_t)keep[i].n * sizeof(float));
    }
    return f;
}

void k_check_bad_arrays(k_ctx *k, const k_call *valid)
{
    static const struct { k_kind kind; int ndim; } bad[] = {
        { K_NULLPTR, 0 }, { K_RELEASED, 0 }, { K_RAW, ND_MAX_DIMS + 1 }, { K_RAW, -1 },
    };
    k_buf keep[K_BUFS];
    for (int i = 0; i < valid->nbufs; i++) {
        keep[i].n = valid->bufs[i].n;
        keep[i].v = malloc((size_t)(keep[i].n > 0 ? keep[i].n : 1) * sizeof(float));
        K_REQUIRE(keep[i].v != NULL, "test setup: out of memory");
        memcpy(keep[i].v, valid->bufs[i].v, (size_t)keep[i].n * sizeof(float));
    }
    k_call c = fresh(k, valid, keep);
    k_check(k, &c, NULL);   /* the valid call itself first: it must work */
    for (int i = 0; i < valid->nargs; i++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            c = fresh(k, valid, keep);
            c.args[i].kind = bad[b].kind;
            if (bad[b].kind == K_RAW)
                c.args[i].ndim = bad[b].ndim;
            if (c.out == i)
                c.out = K_OUT_NEW;
            k_expect(k, &c, ND_ERR_ARG, NULL);
        }
    for (int p = 0; p < 2; p++) {   /* a NULL out, a NULL list, where the call needs one */
        c = fresh(k, valid, keep);
        c.out = p == 0 ? K_OUT_NULL : c.out;
        c.list_null[0] = p == 1;
        if (k_reference(k, &c).status == ND_ERR_ARG)
            k_expect(k, &c, ND_ERR_ARG, NULL);
    }
    for (int i = 0; i < valid->nbufs; i++)
        free(keep[i].v);
}

void k_check_ewise_refusals(k_ctx *k, k_op op, int nmore, const int *more)
{
    int nops = op == K_UNARY || op == K_UNARY_INTO ? ND_ABS + 1 : ND_GE + 1;
    int ndim = (int)k_int(k, 0, 3);
    k_call c = k_ewise(k, op, (int)k_int(k, 0, nops - 1), ndim, 5, 256, 0);
    k_check_bad_arrays(k, &c);
    for (int i = -2; i < nmore; i++) {   /* ops that do not exist */
        c = k_ewise(k, op, i == -2 ? -1 : i == -1 ? nops : more[i], ndim, 5, 256, 0);
        k_expect(k, &c, ND_ERR_ARG, NULL);
    }
    if (k_dev(k) == ND_CUDA && op != K_SCALAR && op != K_UNARY) {
        c = k_ewise(k, op, 0, ndim, 5, 256, 0);
        c.bufs[0].on = ND_CPU + 1;   /* a on the CPU, b or dst on the device */
        k_expect(k, &c, ND_ERR_DEVICE, NULL);
    }
}
