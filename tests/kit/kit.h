/*
 * kit.h -- the test kit the public tests (tests/test_NN_*.c) and the
 * hidden tests (grader/hidden/) are short declarations over (README.md).
 *
 * A test builds CALLS: pure data.  Three independent pieces check one: the
 * reference (ref.c) says what it must do, from plain loops over host data;
 * the executor (exec.c), the only code that runs lesson code, reports a RAW
 * result; the comparison (check.c) judges it and writes the message.  The
 * grader runs the executor in a separate, sandboxed process (wire.c), so
 * nothing the submission does in its own process (exiting early, signal
 * handlers, printing) can make a test pass.
 */
#ifndef ND_KIT_H
#define ND_KIT_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nd.h"

/* ---------------------------------------------------------------------- */
/* Calls: an operation and its arguments, as data                          */
/* ---------------------------------------------------------------------- */

#define K_BUFS 3          /* buffers of one call */
#define K_ARGS 3          /* array arguments of one call */
#define K_LIST (ND_MAX_DIMS + 2)  /* entries of an int list: room for ndim 9 */

typedef enum k_op {
    /* lesson 1: views */
    K_COMPACT_STRIDES, K_IS_COMPACT, K_OFFSET_OF, K_RESHAPE, K_PERMUTE,
    K_BROADCAST_TO, K_SLICE, K_DIAGONAL,
    /* lesson 2: compact and setitem */
    K_ITER, K_SIMPLIFY_DIMS, K_COMPACT, K_SETITEM, K_SETITEM_SCALAR,
    /* lesson 3: elementwise */
    K_BINARY, K_BINARY_INTO, K_SCALAR, K_SCALAR_INTO, K_UNARY, K_UNARY_INTO,
    /* lesson 4 and 5 */
    K_REDUCE, K_MATMUL, K_MATMUL_NAIVE,
    /* lesson 6: the index transform (a host function) */
    K_INDEX_TO_OFFSET,
    /* lesson 7: permute as data movement */
    K_SIMPLIFY_PERM, K_PERMUTE_BYTES,
    /* the runner's: is the call's device usable (msg: its name, or why not) */
    K_DEVICE,
    K_NOPS
} k_op;

/* How an array argument is passed. */
typedef enum k_kind {
    K_VIEW = 0,     /* a view of buffer `buf` (made with nd_as_strided)     */
    K_NULLPTR,      /* a NULL pointer                                        */
    K_RELEASED,     /* a struct after nd_release (buf NULL, all zero)        */
    K_RAW           /* the fields as given, unchecked (ndim 9, say), over
                       buffer `buf`: for argument checks                    */
} k_kind;

typedef struct k_arr {
    k_kind kind;
    int buf;                                   /* index into the call's bufs */
    int ndim;
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS], offset;
} k_arr;

/* A buffer's contents.  For byte data (lesson 7) n counts floats and the
 * bytes live in the same memory. */
typedef struct k_buf {
    int64_t n;      /* floats */
    float *v;
    int on;         /* 0: on the call's device; else ND_CPU + 1 or ND_CUDA + 1 */
} k_buf;

/* Where the output struct is (the functions that fill an nd_array *out). */
enum {
    K_OUT_NEW = -1,   /* a separate struct, poisoned (every byte 0xAB)     */
    K_OUT_NULL = -2   /* a NULL out pointer                                */
    /* 0..K_ARGS-1: out points to that array argument (out aliases it)    */
};

typedef struct k_call {
    k_op op;
    nd_device dev;
    int nbufs;
    k_buf bufs[K_BUFS];
    int nargs;
    k_arr args[K_ARGS];     /* a, b; or dst, src for setitem; dst last for _into */
    int out;                /* K_OUT_NEW, K_OUT_NULL, or an argument index     */
    int code;               /* nd_binop, nd_unop, nd_reduce_op; permute_bytes
                               version (-1: nd_permute_bytes itself)         */
    float scalar;
    bool keepdims;
    int n;                  /* ndim or count given with the lists          */
    int64_t list[3][K_LIST];/* shape / index / axes / strides / perm        */
    bool list_null[3];      /* pass NULL instead of list[i]                 */
    nd_index idx[K_LIST];   /* nd_slice's index                             */
    int64_t at[4];          /* scalars: see each op in exec.c               */
    bool profile;           /* also send what the CUDA emulator's counters
                               saw of the call's kernels (k_check_perf)    */
    bool sampled;           /* the CUDA emulator runs only some blocks of
                               each launch, and guards every buffer
                               (grader/emu/README.md, "Sampled launches");
                               on a GPU, every block runs                 */
} k_call;

/* What the executor saw: raw facts, never a verdict. */
#define K_MSG 600
typedef struct k_res {
    nd_status status;
    bool setup_failed;              /* the kit could not build the inputs   */
    char msg[K_MSG];                /* nd_last_error() after the call       */
    /* the output struct after the call */
    bool out_untouched;             /* every byte still the poison          */
    int out_buf;                    /* which call buffer it views, or:      */
#define K_NEWBUF (-1)               /*   a buffer of its own                */
#define K_NOBUF (-2)                /*   buf is NULL                         */
    int ndim;
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS], offset;
    int64_t out_nbytes, out_refcount;
    int out_device;
    k_buf out_data;                 /* its whole buffer, when K_NEWBUF      */
    k_buf after[K_BUFS];            /* each call buffer after the call      */
    int64_t refcount[K_BUFS];       /* each call buffer's refcount, once
                                       every argument view is released     */
    int nvals;                      /* host results of the op (exec.c)      */
    int64_t *vals;
    int args_changed;               /* bit i: argument struct i differs after
                                       the call (not the one out replaced)  */
} k_res;

/* ---------------------------------------------------------------------- */
/* The test's context                                                     */
/* ---------------------------------------------------------------------- */

typedef struct k_ctx k_ctx;

/* A context outside the runner, for tools that use the kit's reference
 * (make show, the fuzzer); k_ctx_free frees it and its memory. */
k_ctx *k_ctx_new(nd_device dev);
void k_ctx_free(k_ctx *k);

/* The device of the running case (ND_CPU or ND_CUDA). */
nd_device k_dev(const k_ctx *k);

/* Memory that lives until the current case ends (k_check ends it, a tool
 * that asks k_reference alone calls k_case_end, which also frees the raw
 * result).  Never NULL: a test fails when out of memory. */
void *k_mem(k_ctx *k, size_t bytes);
float *k_floats(k_ctx *k, int64_t n);
void k_case_end(k_ctx *k);

/* Random numbers: every test has a fixed seed, so a failure repeats. */
uint64_t k_next(k_ctx *k);
int64_t k_int(k_ctx *k, int64_t lo, int64_t hi);      /* in [lo, hi]   */
float k_float(k_ctx *k, float lo, float hi);          /* in [lo, hi)   */
bool k_one_in(k_ctx *k, int n);                        /* chance 1/n    */

/* One of the special float values (NaN, +-inf, +-0, denormals, ...). */
float k_special(k_ctx *k);
#define K_NSPECIAL 16
extern const float k_specials[K_NSPECIAL];

/* ---------------------------------------------------------------------- */
/* Building calls (gen.c)                                                  */
/* ---------------------------------------------------------------------- */

/* A new call of `op` on the test's device, with out K_OUT_NEW. */
k_call k_new(k_ctx *k, k_op op);

/* Values for new buffers. */
typedef enum k_fill {
    K_DISTINCT,      /* 0.5, 1.5, 2.5, ...: every element traceable      */
    K_NEGATIVE,      /* -0.25, -1.25, ...: none equal to K_DISTINCT's    */
    K_RANDOM,        /* uniform in [-2, 2)                               */
    K_INTEGERS,      /* small integers in [-8, 8]: sums and products exact */
    K_SPECIAL,       /* random values mixed with NaN, +-inf, +-0, denormals,
                        FLT_MAX, FLT_MIN                                  */
    K_POISON,        /* all NaN: an element never written shows            */
    K_BYTES          /* random bytes (lesson 7's byte data): elements of 1 to
                        16 bytes all differ, whatever their size           */
} k_fill;

/* The parts of call c.  A new buffer of n floats, filled or holding
 * v[0..n-1], and an array argument: each returns its index.  The int
 * list i (and c->n when i is 0); nd_slice's index, n entries. */
int k_buffer(k_ctx *k, k_call *c, int64_t n, k_fill fill);
int k_buffer_of(k_ctx *k, k_call *c, int64_t n, const float *v);
int k_arg(k_call *c, k_arr a);
void k_list(k_call *c, int i, int n, const int64_t *v);
void k_index(k_call *c, int n, const nd_index *idx);

/* A compact array of `shape` over a new buffer of exactly its elements,
 * filled or holding the floats v (row-major). */
k_arr k_compact(k_ctx *k, k_call *c, int ndim, const int64_t *shape, k_fill fill);
k_arr k_given(k_ctx *k, k_call *c, int ndim, const int64_t *shape, const float *v);

/* A view with this layout: of buffer `buf` of call c; over a new buffer of
 * `size` floats; over a new buffer just large enough, at a random offset. */
k_arr k_at(int buf, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset);
k_arr k_strided(k_ctx *k, k_call *c, int64_t size, int ndim, const int64_t *shape,
                const int64_t *strides, int64_t offset, k_fill fill);
k_arr k_fit(k_ctx *k, k_call *c, int ndim, const int64_t *shape, const int64_t *strides,
            k_fill fill);

/* What random views may do (OR them). */
enum {
    K_STEPS = 1,     /* steps of +-1..3 in a larger base, any axis order   */
    K_REPEAT = 2,    /* stride 0 on some axes (read-only inputs)           */
    K_JUNK = 4,      /* size-1 axes carry arbitrary strides               */
    K_WINDOW = 8,    /* a compact window at an offset in a larger buffer   */
    K_ANY = K_STEPS | K_JUNK | K_WINDOW
};

/* A random view of `shape` over a new buffer, as `how` allows: what
 * permuting and slicing a larger compact array gives, a compact window or
 * the compact array.  Without K_REPEAT it never reaches an element twice,
 * so it may be written. */
k_arr k_view(k_ctx *k, k_call *c, int ndim, const int64_t *shape, int how, k_fill fill);

/* A view with no elements (ndim >= 1 axes, one of them 0, another now and
 * then up to 2^44), every stride k_wild, over a new buffer of `size`
 * floats at an offset in 0..size. */
k_arr k_empty_view(k_ctx *k, k_call *c, int ndim, int64_t size);

/* A call of `op` on a compact array of `shape` over a new buffer, or on a
 * view with this layout of a new buffer of `size` floats (K_DISTINCT). */
k_call k_on_array(k_ctx *k, k_op op, int ndim, const int64_t *shape);
k_call k_on_view(k_ctx *k, k_op op, int64_t size, int ndim, const int64_t *shape,
                 const int64_t *strides, int64_t offset);

/* A random shape of ndim axes with sizes in [lo, hi] (size 1 often), at
 * most max_numel elements; writes shape, returns ndim. */
int k_shape(k_ctx *k, int ndim, int64_t lo, int64_t hi, int64_t max_numel, int64_t *shape);

/* A random shape of ndim >= 1 axes with exactly n elements (n's factors
 * on random axes, the others 1): sizes around a warp or a block in any
 * layout. */
void k_shape_of(k_ctx *k, int ndim, int64_t n, int64_t *shape);

/* `shape` with each axis made 1, or dropped at the left, by chance: a
 * shape that broadcasts to it.  Returns its ndim. */
int k_broadcastable(k_ctx *k, int ndim, const int64_t *shape, int64_t *out);

/* Strides of the kinds a loop meets: a row-major layout of a base that
 * may be padded, permuted, reversed or broadcast (stride 0), so that some
 * neighbours merge and some do not; sometimes arbitrary numbers. */
void k_strides(k_ctx *k, int ndim, const int64_t *shape, int64_t *strides);

/* Any int64, as a stride that is never stepped along may be (nd.h, "Valid
 * arrays", rule 4): INT64_MIN, INT64_MAX, +-2^62, large, small or random. */
int64_t k_wild(k_ctx *k);

/* A random permutation of 0..n-1. */
void k_perm(k_ctx *k, int n, int64_t *perm);

/* Lesson 1: random valid arguments for view call c on c->args[0]:
 * K_PERMUTE axes (some negative); K_RESHAPE a shape of the same count,
 * sometimes with one -1; K_BROADCAST_TO a target (new leading axes, size-1
 * axes stretched, to 0 too); K_SLICE integers (either sign) and slices
 * (bounds inside, outside or absent, steps +-1..4); K_DIAGONAL two axes
 * (some negative; a needs 2) and an offset from past one edge to past the
 * other; K_OFFSET_OF an index in range (a needs an element). */
void k_view_args(k_ctx *k, k_call *c);

/* Lesson 1: a call of `op` with k_view_args on a random view (K_ANY |
 * K_REPEAT) of lo..hi axes of sizes 0..max (1..max for two shapes in
 * three).  K_DIAGONAL needs lo >= 2. */
k_call k_random_view_call(k_ctx *k, k_op op, int lo, int hi, int64_t max);

/* Lesson 1: `count` such calls, each checked (`hint`); with `twice`, each
 * result is then taken through `op` again: views of views. */
void k_check_random_views(k_ctx *k, k_op op, int count, int lo, int hi, int64_t max,
                          bool twice, const char *hint);

/* Lesson 1: `count` random views (k_random_view_call, hi axes and sizes
 * 0..max), each taken through lo_steps..hi_steps random view functions,
 * every call checked; with out_is_a, a third of the calls have out == a. */
void k_check_view_chains(k_ctx *k, int count, int lo_steps, int hi_steps, int hi, int64_t max,
                         bool out_is_a, const char *hint);

/* Views of views: check view call c, then make c a call of `next`, with
 * k_view_args, on its result as the reference has it (same buffer
 * contents).  False, c then without arguments, when c must fail. */
bool k_check_then(k_ctx *k, k_call *c, k_op next, const char *hint);

/* Check call c given the int list (n, v) as list 0, and require that the
 * reference expects `want` (k_expect). */
void k_expect_list(k_ctx *k, k_call c, int n, const int64_t *v, nd_status want,
                   const char *hint);

/* Lesson 3: a random call of op (K_BINARY ... K_UNARY_INTO) with code its
 * nd_binop or nd_unop.  The result has ndim axes (now and then one more,
 * an operand's leading size 1) of sizes up to hi, at most max_numel
 * elements, size 0 in one call of five; the inputs are random views (K_ANY
 * | K_REPEAT) of shapes that broadcast to it, holding integers, special
 * values or random ones, as the scalar does; dst (the _into ops) a
 * writable random view over K_NEGATIVE values.  `how`: */
enum {
    K_OUT_IS_A = 1,   /* dst (the _into ops: a has the result's shape and
                         reaches no element twice) or out is a itself    */
    K_OUT_IS_B = 2,   /* the same for b                                  */
    K_B_IS_A = 4      /* b is a's very view: a OP a                      */
};
k_call k_ewise(k_ctx *k, k_op op, int code, int ndim, int64_t hi, int64_t max_numel, int how);

/* Lesson 3: an elementwise call on rows of n elements, one to spare on
 * either side: a (integers) with stride sa (0 repeats one element), b
 * (special values) with sb, dst (the _into ops, K_NEGATIVE) with sd or, as
 * `how` says, a or b itself. */
k_call k_ewise_row(k_ctx *k, k_op op, int code, int64_t n, int64_t sa, int64_t sb, int64_t sd,
                   int how);

/* Make c, a K_REDUCE call whose argument a is set, nd_reduce(op, a, naxes,
 * axes, keepdims, &out); axes NULL passes NULL. */
void k_reduce_of(k_call *c, int op, int naxes, const int64_t *axes, bool keepdims);

/* Random axes of an ndim-axis array for nd_reduce: one, a subset in any
 * order, all listed, ND_ALL_AXES or none (naxes 0); each listed one
 * negative half of the time.  Writes axes (room for ND_MAX_DIMS), returns
 * naxes. */
int k_axes(k_ctx *k, int ndim, int64_t *axes);

/* The shapes of a random a @ b: m, n, k up to max (0 or 1 now and then,
 * often next to a multiple of a register tile), the largest halved until
 * batch * m * n * k <= max_macs; a batch of 0..3 axes (sizes 1..3, 0
 * rarely), a and b each keeping its last 0..all, each its size or 1. */
void k_matmul_shapes(k_ctx *k, int64_t max, int64_t max_macs, int *nda, int64_t *sa, int *ndb,
                     int64_t *sb);

/* A call of op (K_MATMUL or K_MATMUL_NAIVE) on random views of shapes sa
 * and sb with `how`'s options (k_view). */
k_call k_product(k_ctx *k, k_op op, int nda, const int64_t *sa, int ndb, const int64_t *sb,
                 int how, k_fill fill);

/* Lesson 6: a call of nd_index_to_offset for the n positions i, i + step,
 * ..., i + (n - 1) * step of a layout (n 1: position i alone). */
k_call k_offset_call(k_ctx *k, int ndim, const int64_t *shape, const int64_t *strides,
                     int64_t offset, int64_t i, int64_t n, int64_t step);

/* Lesson 7: nd_permute_bytes_version(version) (-1: nd_permute_bytes) of a
 * compact array of `shape`, elements of e random bytes, into NaN; src and
 * dst start src_shift and dst_shift bytes past 16-byte aligned addresses;
 * 64 guard bytes follow dst. */
k_call k_permute_call(k_ctx *k, int64_t e, int ndim, const int64_t *shape, const int64_t *perm,
                      int version, int64_t src_shift, int64_t dst_shift);

/* 2^e as an int64: sizes and strides of extreme shapes. */
#define K_P2(e) ((int64_t)1 << (e))

/* Element i of shape's row-major order, as a multi-index. */
void k_unravel(int64_t i, int ndim, const int64_t *shape, int64_t *index);
int64_t k_numel(int ndim, const int64_t *shape);

/* ---------------------------------------------------------------------- */
/* The reference (ref.c)                                                  */
/* ---------------------------------------------------------------------- */

/* How values are compared. */
typedef enum k_tol {
    K_EXACT,         /* bit for bit, signs of zero included; any NaN = NaN */
    K_EXACT_ZERO,    /* the same, but either sign of zero                   */
    K_ULPS,          /* within `ulps` representable floats                  */
    K_BOUND          /* |got - want| <= bound[i] (sums, products); a bound
                        of 0 is exact, an infinite one takes any value     */
} k_tol;

typedef struct k_want {
    nd_status status;
    const char *why;            /* the rule an error call broke            */
    /* on success: */
    bool view;                  /* out is a view of call buffer `buf`     */
    int buf;
    int ndim;
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS], offset;
    float *vals;                /* out's elements, row-major (new arrays) */
    k_tol tol;
    int ulps;
    double *bound;              /* K_BOUND: per element                  */
    bool inplace;               /* after[] holds the buffers expected     */
    k_buf after[K_BUFS];        /* ... otherwise every buffer unchanged   */
    int nvals;                  /* host results, laid out as exec.c does  */
    int64_t *ivals;
} k_want;

/* What call c must do. */
k_want k_reference(k_ctx *k, const k_call *c);

/* The broadcast shape of two shapes; false if they do not broadcast. */
bool k_broadcast_shape(int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                       int64_t *out);

/* Whether view a is compact (nd.h's definition: size-1 axes and empty
 * arrays aside, row-major strides; any offset). */
bool k_compact_layout(const k_arr *a);

/* The element of view a (over buffer data) at multi-index idx. */
int64_t k_offset(const k_arr *a, const int64_t *idx);

/* Array argument i of call c at position idx of an ndim-axis result, as
 * broadcasting reads it (aligned at the right, a size-1 axis at 0). */
float k_input_at(const k_call *c, int i, int ndim, const int64_t *idx);

/* ---------------------------------------------------------------------- */
/* Checking (check.c)                                                     */
/* ---------------------------------------------------------------------- */

/* Run call c through the executor and require exactly what the reference
 * says, with `hint` for a wrong value.  Frees the case's memory after. */
void k_check(k_ctx *k, k_call *c, const char *hint);

/* k_check, and also require that the reference expects `status`: for
 * tables of error cases, so a test says what it means. */
void k_expect(k_ctx *k, k_call *c, nd_status status, const char *hint);

/* The argument checks every function shares, from one valid call: each
 * array argument in turn passed as NULL, released, with ndim 9 and with
 * ndim -1, then the output and the first int list (shape, axes, index) as
 * NULL where the call needs them: each must fail with ND_ERR_ARG, name the
 * operation and change nothing. */
void k_check_bad_arrays(k_ctx *k, const k_call *valid);

/* Lesson 3: the refusals every elementwise function (op) shares, each
 * from a random valid call: k_check_bad_arrays, ops that do not exist (-1,
 * the count of ops, and the nmore codes in `more`), and, on the CUDA
 * device, a on the CPU with b or dst on the device: ND_ERR_DEVICE. */
void k_check_ewise_refusals(k_ctx *k, k_op op, int nmore, const int *more);

/* For tools outside the runner (the fuzzer): raw result r of call c (from
 * k_exec) against what the reference says; the failure message (valid
 * until the next judgement), or NULL when r is right. */
const char *k_judge(k_ctx *k, const k_call *c, const k_res *r);

/* Performance (README.md): rules on the CUDA emulator's counters, summed
 * over the kernels a call launched (grader/emu/README.md, "Profiling"). */
enum { K_GLOBAL_LOAD, K_GLOBAL_STORE, K_SHARED_LOAD, K_SHARED_STORE };
typedef struct k_perf {
    int kind;            /* K_GLOBAL_LOAD .. K_SHARED_STORE                    */
    int width;           /* 0: sectors (global) or wavefronts (shared) as few
                            as the bytes allow (the counters' "ideal");
                            1..16: every request moves `width` bytes a lane  */
    int64_t min_bytes;   /* the bytes of this kind the call must make at
                            least (the data it moves), or 0                 */
    const char *what;    /* the message when the rule fails: a printf format
                            given two doubles, the figure measured (sectors
                            or wavefronts per request over the ideal, e.g.
                            32 for a 32-way bank conflict, or bytes a lane)
                            and the one wanted                             */
} k_perf;

/* Check call c as k_check does; if it is right, each of the n rules on
 * the counters of the kernels it launched. */
void k_check_perf(k_ctx *k, k_call *c, const k_perf *rules, int n, const char *hint);

/* Fail the test with a printf-style message; K_REQUIRE: unless cond. */
#define k_fail(...) ck_abort_msg(__VA_ARGS__)
#define K_REQUIRE(cond, ...) \
    do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

/* What a failure message may carry of the code under test's own words
 * (check.c).  k_quote_messages: true (the default, the student's runner)
 * quotes its nd_last_error() where the message is about it ("it returned
 * ND_ERR_LAYOUT (reshape: ...), expected ND_OK"); false (the grader's
 * verdict, unless grader/weights.tsv says `messages quote`) relays none of
 * its text: the message says what was wrong in the kit's own words, from
 * the status and what was checked ("its message does not give both
 * shapes, (2,3) and (4,)"), while the checks still read the text.
 * k_output_alone (the grader's verdict, when the report quotes what a
 * failing test printed): the call a failure reports runs again, alone, on
 * a new executor whose output file starts empty, so that the output holds
 * what that call printed and nothing of the test's other calls. */
extern bool k_quote_messages;
extern bool k_output_alone;

/* "nd_reshape(a, 2, (6,4), &out) with a = shape=(2,3,4) strides=(12,4,1)
 * offset=0 over a buffer of 24 floats" */
const char *k_describe(const k_call *c, char *dst, size_t cap);
/* "(1,2,0)" */
char *k_ints(int n, const int64_t *v, char *dst, size_t cap);

/* ---------------------------------------------------------------------- */
/* Tests                                                                  */
/* ---------------------------------------------------------------------- */

typedef void k_body(k_ctx *k);

/* Where a test runs (OR them). */
enum {
    K_HOST = 0,      /* a host function: one case, "name"                  */
    K_CPU = 1,       /* "name[cpu]"                                        */
    K_CUDA = 2,      /* "name[cuda]"                                       */
    K_BOTH = K_CPU | K_CUDA,
    K_PLAIN = 4,     /* the grader's plain build only (too slow under the
                        sanitizers; the plain result stands for both)     */
    K_PROFILED = 16  /* k_check_perf: runs on the executor built with the
                        CUDA emulator's instrumentation (the grader's,
                        with or without a GPU); the plain build's only   */
};

typedef struct k_suite k_suite;

typedef struct k_test {
    const char *name;
    k_body *body;
    int where;
    double points;       /* hidden tests: the points of the [cpu] case */
    const char *hint;    /* shown when the test fails                  */
    /* K_AGAIN: body is NULL, and the test runs the test `again` of the
     * public suite `from`, every k_count times `scale` */
    const k_suite *from;
    const char *again;
    int scale;
} k_test;

struct k_suite {
    int lesson;
    const char *name;    /* "01_views" */
    const k_test *tests;
    int ntests;
};

#define K_TEST(fn, where, points, hint) { #fn, fn, (where), (points), (hint), NULL, NULL, 1 }
#define K_SUITE(var, lesson, name, table) \
    const k_suite var = { (lesson), (name), (table), (int)(sizeof(table) / sizeof((table)[0])) }

/* A hidden test that is a public test run again: under its own name, so
 * with other seeds, and with `scale` times the cases (k_count). */
#define K_AGAIN(name, suite, fn, scale, where, points, hint) \
    { #name, NULL, (where), (points), (hint), &(suite), #fn, (scale) }

/* The public suites (tests/test_NN_*.c), which hidden suites run again;
 * public_00 calls the library itself, so the grader links only 01..07. */
extern const k_suite public_00, public_01, public_02, public_03, public_04, public_05,
    public_06, public_07;

/* How many random cases a test makes: n in a public run, n times the
 * scale of a hidden K_AGAIN. */
int k_count(const k_ctx *k, int n);

/* The executor's side (exec.c, wire.c): run one call, fill r (vals and
 * buffers are malloc'd; k_res_free frees them). */
void k_exec(const k_call *c, k_res *r);
/* The same, freeing the call's input floats (setting them NULL) once its
 * buffers hold them: the grader's executor, whose calls it owns. */
void k_exec_owning(const k_call *c, k_res *r);
void k_res_free(k_res *r);

#endif /* ND_KIT_H */
