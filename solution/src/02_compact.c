/*
 * Lesson 2: compact and setitem.
 *
 * Views (lesson 1) only reinterpret a buffer.  Sooner or later the data
 * must move: nd_compact gathers a view's elements into a fresh row-major
 * buffer, and nd_setitem scatters values through a view into the buffer
 * under it.  Both are the same loop: visit every position of a shape, in
 * row-major order, and turn it into an offset with the view's strides.
 *
 * The odometer iterator visits the positions.  nd_simplify_dims makes the
 * loops cheap: it drops size-1 axes and merges axes that are adjacent in
 * memory, so a compact array becomes one long run moved with memcpy and a
 * transpose becomes a plain 2-D loop, however many axes they started with.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>   /* _mm_stream_ps: the streaming store of the fast path */
#endif

//@ snippet iter
nd_status nd_iter_init(nd_iter *it, int ndim, const int64_t *shape)
{
    nd_status s = nd_check_shape(ndim, shape, "iter_init");
    if (s != ND_OK)
        return s;
    if (it == NULL)
        return nd_fail(ND_ERR_ARG, "iter_init: argument 'it' is NULL");
    //@ solution nd_iter_init
    it->ndim = ndim;
    for (int k = 0; k < ndim; k++) {
        it->shape[k] = shape[k];
        it->index[k] = 0;
    }
    it->count = 0;
    it->total = nd_shape_numel(ndim, shape);
    return ND_OK;
    //@ stub
    //> /* Copy the shape, zero the index, count = 0, total = numel. */
    //> return nd_not_implemented("nd_iter_init", 2);
    //@ end solution nd_iter_init
}

bool nd_iter_next(nd_iter *it)
{
    if (it == NULL)
        return false;
    //@ solution nd_iter_next
    if (it->count >= it->total)
        return false;
    /* The first call stays on (0,...,0).  Later ones turn the last digit
     * and carry into the digit on its left, like a car's odometer. */
    if (it->count > 0) {
        for (int k = it->ndim - 1; k >= 0; k--) {
            if (++it->index[k] < it->shape[k])
                break;
            it->index[k] = 0;
        }
    }
    it->count++;
    return true;
    //@ stub
    //> /* The first call stays on (0,...,0); later calls add one to the
    //>  * last digit and carry leftwards.  false once count reaches total. */
    //> return false;
    //@ end solution nd_iter_next
}
//@ end snippet iter

//@ snippet simplify_dims
nd_status nd_simplify_dims(int *ndim, int64_t *shape, int64_t *strides_a, int64_t *strides_b)
{
    if (ndim == NULL)
        return nd_fail(ND_ERR_ARG, "simplify_dims: argument 'ndim' is NULL");
    nd_status s = nd_check_shape(*ndim, shape, "simplify_dims");
    if (s != ND_OK)
        return s;
    if (*ndim > 0 && strides_a == NULL)
        return nd_fail(ND_ERR_ARG, "simplify_dims: argument 'strides_a' is NULL");
    //@ solution nd_simplify_dims
    /* Axis k can join the kept axis before it (m-1) when one step along
     * m-1 is exactly one full run of k, in every operand: then the pair
     * walks memory like a single axis of shape[m-1] * shape[k].  A run
     * whose length overflows int64 (nd_mul_ok fails) equals no stride;
     * the strides of an array with no elements may be anything. */
    int m = 0;
    for (int k = 0; k < *ndim; k++) {
        int64_t run_a, run_b;
        if (shape[k] == 1)
            continue;   /* never stepped along: its stride is irrelevant */
        if (m > 0 && nd_mul_ok(shape[k], strides_a[k], &run_a) && strides_a[m - 1] == run_a &&
            (strides_b == NULL ||
             (nd_mul_ok(shape[k], strides_b[k], &run_b) && strides_b[m - 1] == run_b))) {
            shape[m - 1] *= shape[k];
            strides_a[m - 1] = strides_a[k];
            if (strides_b != NULL)
                strides_b[m - 1] = strides_b[k];
            continue;
        }
        shape[m] = shape[k];
        strides_a[m] = strides_a[k];
        if (strides_b != NULL)
            strides_b[m] = strides_b[k];
        m++;
    }
    *ndim = m;
    return ND_OK;
    //@ stub
    //> /* Drop size-1 axes; merge axis k into the kept axis before it
    //>  * when strides[prev] == shape[k] * strides[k] for every operand.
    //>  * Multiply with nd_mul_ok: the product can overflow int64. */
    //> (void)strides_b;
    //> return nd_not_implemented("nd_simplify_dims", 2);
    //@ end solution nd_simplify_dims
}
//@ end snippet simplify_dims

/* A view's layout, copied so that nd_simplify_dims may rewrite it. */
typedef struct {
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int64_t strides[ND_MAX_DIMS];
} layout;

static layout layout_of(const nd_array *a)
{
    layout l = { .ndim = a->ndim };
    memcpy(l.shape, a->shape, sizeof l.shape);
    memcpy(l.strides, a->strides, sizeof l.strides);
    return l;
}

/* Offset of the row at outer position `index` (all axes but the last). */
static int64_t row_offset(const int64_t *index, const int64_t *strides, int outer)
{
    int64_t off = 0;
    for (int k = 0; k < outer; k++)
        off += index[k] * strides[k];
    return off;
}

//@ snippet gather
/* dst[0 .. numel-1] = a's elements in row-major order (CPU): the plain
 * gather, one run of the last axis at a time. */
static nd_status gather_cpu(const nd_array *a, float *dst)
{
    //@ solution gather_cpu
    if (nd_numel(a) == 0)
        return ND_OK;
    layout l = layout_of(a);
    nd_status s = nd_simplify_dims(&l.ndim, l.shape, l.strides, NULL);
    if (s != ND_OK)
        return s;
    const float *src = nd_data(a) + a->offset;
    if (l.ndim == 0) {   /* one element */
        dst[0] = src[0];
        return ND_OK;
    }
    /* The iterator walks the outer axes but the one before the last; that
     * axis and the last are two loops, the last a tight one, or one memcpy
     * when its elements are contiguous.  (The iterator for every run costs
     * as much as a memcpy of a short run: a (0,2,1,3) permute of runs of
     * 63 floats ran 25% slower so; and 15% slower with the test of step
     * inside the loop over rows.) */
    int outer = l.ndim - 1, walked = outer > 0 ? outer - 1 : 0;
    int64_t run = l.shape[outer], step = l.strides[outer];
    int64_t rows = outer > 0 ? l.shape[outer - 1] : 1;
    int64_t row_step = outer > 0 ? l.strides[outer - 1] : 0;
    nd_iter it;
    if ((s = nd_iter_init(&it, walked, l.shape)) != ND_OK)
        return s;
    while (nd_iter_next(&it)) {
        const float *first = src + row_offset(it.index, l.strides, walked);
        if (step == 1) {
            for (int64_t r = 0; r < rows; r++)
                memcpy(dst + r * run, first + r * row_step, (size_t)run * sizeof(float));
        } else {
            for (int64_t r = 0; r < rows; r++)
                for (int64_t j = 0; j < run; j++)
                    dst[r * run + j] = first[r * row_step + j * step];
        }
        dst += rows * run;
    }
    return ND_OK;
    //@ stub
    //> /* Simplify a's layout; then iterate the outer axes with nd_iter and
    //>  * copy each last-axis run (one memcpy when its stride is 1). */
    //> (void)a; (void)dst; (void)row_offset; (void)layout_of;
    //> return nd_not_implemented("nd_compact", 2);
    //@ end solution gather_cpu
}
//@ end snippet gather

/* The fast path for transposed layouts, at the end of this file ("going
 * further" in the lesson): given code, not part of the exercise. */
static int transposed_axis(const layout *l);
static int plane_version(int64_t numel);
/* Not inlined into nd_compact_version: its loops' variables would crowd
 * out gather_cpu's, which then spill to the stack around every memcpy (a
 * permute of runs of 63 floats ran 20% slower so). */
__attribute__((noinline)) static nd_status gather_plane(const layout *l, int p,
                                                       const float *src, float *dst,
                                                       int version);

//@ snippet compact
nd_status nd_compact_version(const nd_array *a, int version, nd_array *out, int *ran)
{
    nd_status s = nd_check_array(a, "compact", "a");
    if (s != ND_OK)
        return s;
    if (out == NULL)
        return nd_fail(ND_ERR_ARG, "compact: argument 'out' is NULL");
    if (version < 0 || version > 4)
        return nd_fail(ND_ERR_ARG, "compact: version %d is out of range 0..4", version);
    nd_array made;
    if ((s = nd_empty_for("compact", a->buf->device, a->ndim, a->shape, &made)) != ND_OK)
        return s;
    int did = 0;
    if (a->buf->device == ND_CUDA) {
        s = nd_cuda_compact(a, &made);
    } else {
        /* A transposed plane goes to the fast path, unless version 1 asks
         * for the plain gather; every other layout to gather_cpu. */
        layout l = layout_of(a);
        int p = -1;
        if (version != 1 && nd_numel(a) > 0 &&
            (s = nd_simplify_dims(&l.ndim, l.shape, l.strides, NULL)) == ND_OK)
            p = transposed_axis(&l);
        if (s == ND_OK && p >= 0) {
            did = version > 1 ? version : plane_version(nd_numel(a));
            s = gather_plane(&l, p, nd_data(a) + a->offset, nd_data(&made), did);
        } else if (s == ND_OK) {
            did = 1;
            s = gather_cpu(a, nd_data(&made));
        }
    }
    if (s != ND_OK) {
        nd_release(&made);
        return s;
    }
    if (ran != NULL)
        *ran = did;
    nd_replace(a, out, &made);
    return ND_OK;
}

nd_status nd_compact(const nd_array *a, nd_array *out)
{
    return nd_compact_version(a, 0, out, NULL);
}
//@ end snippet compact

//@ snippet scatter
/* Write src's elements through the view dst; src has dst's shape (CPU). */
static nd_status scatter_cpu(const nd_array *dst, const nd_array *src)
{
    //@ solution scatter_cpu
    if (nd_numel(dst) == 0)
        return ND_OK;
    /* Simplify both layouts together: an axis pair merges only where it
     * is adjacent in memory in dst AND in src. */
    layout l = layout_of(dst);
    int64_t src_strides[ND_MAX_DIMS];
    memcpy(src_strides, src->strides, sizeof src_strides);
    nd_status s = nd_simplify_dims(&l.ndim, l.shape, l.strides, src_strides);
    if (s != ND_OK)
        return s;
    float *to = nd_data(dst) + dst->offset;
    const float *from = nd_data(src) + src->offset;
    if (l.ndim == 0) {
        to[0] = from[0];
        return ND_OK;
    }
    int outer = l.ndim - 1;
    int64_t run = l.shape[outer], to_step = l.strides[outer], from_step = src_strides[outer];
    nd_iter it;
    if ((s = nd_iter_init(&it, outer, l.shape)) != ND_OK)
        return s;
    while (nd_iter_next(&it)) {
        float *t = to + row_offset(it.index, l.strides, outer);
        const float *f = from + row_offset(it.index, src_strides, outer);
        if (to_step == 1 && from_step == 1) {
            memmove(t, f, (size_t)run * sizeof(float));   /* t == f if dst is src */
        } else {
            for (int64_t j = 0; j < run; j++)
                t[j * to_step] = f[j * from_step];
        }
    }
    return ND_OK;
    //@ stub
    //> /* Like gather_cpu, but simplify dst and src together and write
    //>  * through dst's strides: dst is a view, not a compact array. */
    //> (void)dst; (void)src;
    //> return nd_not_implemented("nd_setitem", 2);
    //@ end solution scatter_cpu
}
//@ end snippet scatter

nd_status nd_setitem(const nd_array *dst, const nd_array *src)
{
    nd_status s = nd_check_array(dst, "setitem", "dst");
    if (s == ND_OK)
        s = nd_check_array(src, "setitem", "src");
    if (s == ND_OK)
        s = nd_check_same_device(dst, src, "setitem");
    if (s != ND_OK)
        return s;
    /* As in NumPy, src may have extra leading axes of size 1: look past
     * them.  Then broadcasting is lesson 1's nd_broadcast_to, a view. */
    int skip = 0;
    while (src->ndim - skip > dst->ndim && src->shape[skip] == 1)
        skip++;
    nd_array b;
    s = nd_as_strided(src, src->ndim - skip, src->shape + skip, src->strides + skip,
                      src->offset, &b);
    if (s == ND_OK && (s = nd_broadcast_to(&b, dst->ndim, dst->shape, &b)) != ND_OK)
        nd_release(&b);   /* b still holds the stripped view */
    if (s != ND_OK) {
        char why[512], sh_src[200], sh_dst[200];
        snprintf(why, sizeof why, "%s", nd_last_error());
        return nd_fail(s, "setitem: cannot assign src of shape %s to dst of shape %s (%s)",
                       nd_shape_str(src->ndim, src->shape, sh_src, sizeof sh_src),
                       nd_shape_str(dst->ndim, dst->shape, sh_dst, sizeof sh_dst), why);
    }
    s = dst->buf->device == ND_CUDA ? nd_cuda_setitem(dst, &b) : scatter_cpu(dst, &b);
    nd_release(&b);
    return s;
}

//@ snippet fill
/* Write `value` at every element of the view dst (CPU). */
static nd_status fill_cpu(const nd_array *dst, float value)
{
    //@ solution fill_cpu
    if (nd_numel(dst) == 0)
        return ND_OK;
    layout l = layout_of(dst);
    nd_status s = nd_simplify_dims(&l.ndim, l.shape, l.strides, NULL);
    if (s != ND_OK)
        return s;
    float *to = nd_data(dst) + dst->offset;
    if (l.ndim == 0) {
        to[0] = value;
        return ND_OK;
    }
    int outer = l.ndim - 1;
    int64_t run = l.shape[outer], step = l.strides[outer];
    nd_iter it;
    if ((s = nd_iter_init(&it, outer, l.shape)) != ND_OK)
        return s;
    while (nd_iter_next(&it)) {
        float *t = to + row_offset(it.index, l.strides, outer);
        for (int64_t j = 0; j < run; j++)
            t[j * step] = value;
    }
    return ND_OK;
    //@ stub
    //> /* Like scatter_cpu with one value; only the elements of the view. */
    //> (void)dst; (void)value;
    //> return nd_not_implemented("nd_setitem_scalar", 2);
    //@ end solution fill_cpu
}
//@ end snippet fill

nd_status nd_setitem_scalar(const nd_array *dst, float value)
{
    nd_status s = nd_check_array(dst, "setitem_scalar", "dst");
    if (s != ND_OK)
        return s;
    return dst->buf->device == ND_CUDA ? nd_cuda_fill(dst, value) : fill_cpu(dst, value);
}

/* ------------------------------------------------------------------------ */
/* Going further: a transposed plane at the speed of a copy (given code)    */
/* ------------------------------------------------------------------------ */

//@ snippet transposed_axis
/* The layout has a transposed plane when, after simplification, some outer
 * axis p is denser in memory than the last axis (a smaller |stride|; the
 * densest such axis is p), and the last axis has more than one element:
 * then gather_cpu's runs along the last axis would jump through memory,
 * one cache line per float.  -1 when there is none. */
static int transposed_axis(const layout *l)
{
    int last = l->ndim - 1, p = -1;
    if (last < 1 || l->shape[last] < 2)
        return -1;
    for (int k = 0; k < last; k++)
        if (llabs(l->strides[k]) < llabs(l->strides[last]) &&
            (p < 0 || llabs(l->strides[k]) < llabs(l->strides[p])))
            p = k;
    return p;
}
//@ end snippet transposed_axis

//@ snippet transpose8
/* Eight floats that the compiler keeps in one vector register (AVX), or in
 * two (SSE, NEON): GCC's and Clang's portable vector extension.  A memcpy
 * to or from one compiles to a single unaligned vector load or store. */
typedef float vec8 __attribute__((vector_size(32)));

/* SHUFFLE8(a, b, i0, ..., i7): the vector (c[i0], ..., c[i7]) where c is a
 * and b side by side (indices 0-7 pick from a, 8-15 from b). */
#if defined(__clang__) || __GNUC__ >= 12
#define SHUFFLE8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
typedef int vec8i __attribute__((vector_size(32)));
#define SHUFFLE8(a, b, ...) __builtin_shuffle(a, b, (vec8i){ __VA_ARGS__ })
#endif

/* Transpose the 8x8 block whose row k is r[k], in registers: three rounds
 * of shuffles that interleave pairs of vectors, one float at a time, then
 * two, then four (24 shuffles; AVX does each in one instruction). */
static inline void transpose8(vec8 r[8])
{
    vec8 t[8], u[8];
    for (int k = 0; k < 8; k += 2) {   /* t[k]: r[k][0] r[k+1][0] r[k][1] r[k+1][1] ... */
        t[k] = SHUFFLE8(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[k + 1] = SHUFFLE8(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int k = 0; k < 8; k += 4) {   /* u[k]: column 0 of rows k..k+3, then column 4 */
        u[k] = SHUFFLE8(t[k], t[k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
        u[k + 1] = SHUFFLE8(t[k], t[k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        u[k + 2] = SHUFFLE8(t[k + 1], t[k + 3], 0, 1, 8, 9, 4, 5, 12, 13);
        u[k + 3] = SHUFFLE8(t[k + 1], t[k + 3], 2, 3, 10, 11, 6, 7, 14, 15);
    }
    for (int c = 0; c < 4; c++) {      /* rows 0-3 of column c, then rows 4-7 */
        r[c] = SHUFFLE8(u[c], u[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        r[c + 4] = SHUFFLE8(u[c], u[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
}
//@ end snippet transpose8

//@ snippet plane_blocked
/* The plane goes by blocks of 16 x 16 floats: 16 runs of the source along
 * p, 64 bytes of each (one cache line), become 16 destination rows of 64
 * bytes.  Every line a block reads or writes is used whole at once, so
 * nothing has to wait in the cache for later use, however the rows map to
 * cache sets (a power-of-two row length puts them all in the same few).
 * The blocks go by bands of BAND values of p: in a band, block after block
 * along p, so that each of the 16 source runs is read in order, which the
 * hardware prefetcher follows; then the band's next 16 runs.  Each pass
 * writes one line to each of the band's BAND destination rows, whose pages
 * stay in the TLB from pass to pass.  With ordinary stores those lines
 * also stay in the cache, dirty, and longer bands have more of them
 * competing for the same sets; streaming stores (step 4) leave nothing in
 * the cache, so they take bands of STREAM_BAND, runs of 4 KB (a page) that
 * the prefetcher follows at full speed.  (Measured, ordinary stores in
 * bands of 1024 ran 40% slower than in bands of 256 at 4096², though 30%
 * faster at 8192²; streaming stores in bands of 256, up to 7% slower.) */
#define BLOCK 16
#define BAND 256
#define STREAM_BAND 1024

/* The hardware prefetcher follows a run of the source only once the run
 * has begun, and the band's next 16 runs begin far from this pass's, in
 * 16 other pages.  So each block asks for the source lines of the block
 * one pass ahead (source rows j + 16 ..., the same columns), to wait for
 * that pass in the outer caches (L2, L3: a pass is a few 10 KB).  It made
 * the transposes 5-30% faster, at sizes other than powers of two (at
 * those, 0-3% slower).  `rows`: how many such rows there are, at most 16. */
static inline void prefetch_block(const float *from, int64_t sl, int64_t rows)
{
    for (int64_t k = 0; k < rows; k++)
        __builtin_prefetch(from + k * sl, 0, 1);   /* to read, not into L1 */
}

/* Step 2, blocked: an ni x nj block element by element.  Source element
 * (i, j) is from[i * sp + j * sl]; it goes to to[i * dp + j].  Row by row
 * of the destination: its lines are filled one after the other, while the
 * block's source lines, read down their columns, all stay in L1. */
static void block_scalar(const float *from, int64_t sp, int64_t sl, float *to, int64_t dp,
                         int64_t ni, int64_t nj)
{
    for (int64_t i = 0; i < ni; i++)
        for (int64_t j = 0; j < nj; j++)
            to[i * dp + j] = from[i * sp + j * sl];
}
//@ end snippet plane_blocked

//@ snippet plane_stream
/* Outputs at least this large are written with streaming stores (below):
 * with its input, such a copy fills the last-level cache of most machines
 * (8-32 MB) anyway, so keeping the output in the cache saves nothing. */
#define STREAM_BYTES (8 << 20)

/* The fastest version of the transposed copy for an output of numel floats
 * (nd_compact_version's numbering): streaming stores for large outputs,
 * ordinary ones for outputs that may stay in the cache for their next use. */
static int plane_version(int64_t numel)
{
    return (uint64_t)numel * sizeof(float) >= STREAM_BYTES ? 4 : 3;
}

/* Step 4: 16 floats, lo then hi, to the 64-byte line at `to`, with a
 * streaming (non-temporal) store: it goes to memory without first reading
 * the line into the cache, as an ordinary store must (the line's other
 * bytes are needed to fill it), and without evicting data in use.  x86
 * only (SSE or AVX); elsewhere an ordinary store. */
static inline void stream_line(float *to, const vec8 *lo, const vec8 *hi)
{
#if defined(__AVX__)
    _mm256_stream_ps(to, (__m256)*lo);
    _mm256_stream_ps(to + 8, (__m256)*hi);
#elif defined(__SSE2__)
    __m128 q[4];
    memcpy(q, lo, sizeof *lo);
    memcpy(q + 2, hi, sizeof *hi);
    for (int k = 0; k < 4; k++)
        _mm_stream_ps(to + 4 * k, q[k]);
#else
    memcpy(to, lo, sizeof *lo);
    memcpy(to + 8, hi, sizeof *hi);
#endif
}

/* One destination row of a block: 16 floats, lo then hi; with `stream`, by
 * stream_line when the row is a whole cache line (64-byte aligned). */
static inline void put_row16(float *row, const vec8 *lo, const vec8 *hi, bool stream)
{
    if (stream && (uintptr_t)row % 64 == 0) {
        stream_line(row, lo, hi);
    } else {
        memcpy(row, lo, sizeof *lo);
        memcpy(row + 8, hi, sizeof *hi);
    }
}
//@ end snippet plane_stream

//@ snippet plane_registers
/* Step 3, in registers: a whole 16 x 16 block (sp == 1) as four 8x8
 * quarters, each transposed in registers: a, b from source rows 0-7
 * (columns 0-7 and 8-15), c, d from rows 8-15.  Destination row k < 8 is
 * row k of transposed a then c; row 8 + k, row k of b then d. */
static inline void load_block(const float *from, int64_t sl, vec8 a[8], vec8 b[8], vec8 c[8],
                              vec8 d[8])
{
    for (int k = 0; k < 8; k++) {
        memcpy(&a[k], from + k * sl, sizeof a[k]);
        memcpy(&b[k], from + k * sl + 8, sizeof b[k]);
        memcpy(&c[k], from + (k + 8) * sl, sizeof c[k]);
        memcpy(&d[k], from + (k + 8) * sl + 8, sizeof d[k]);
    }
    transpose8(a);
    transpose8(b);
    transpose8(c);
    transpose8(d);
}

/* The block's destination rows start at to, to + dp, ...  Not inlined: in
 * a function of its own, the compiler keeps the 32 vectors in registers;
 * inlined in gather_plane's loops, it spilled them to the stack (20%
 * slower). */
__attribute__((noinline)) static void block_registers(const float *from, int64_t sl, float *to,
                                                      int64_t dp, bool stream)
{
    vec8 a[8], b[8], c[8], d[8];
    load_block(from, sl, a, b, c, d);
    for (int k = 0; k < 8; k++) {
        put_row16(to + k * dp, &a[k], &c[k], stream);
        put_row16(to + (k + 8) * dp, &b[k], &d[k], stream);
    }
}
//@ end snippet plane_registers

//@ snippet plane_carry
/* Floats from `row` to the first 64-byte boundary at or after it, 0-15. */
static inline int64_t line_gap(const float *row)
{
    return (int64_t)((64 - (uintptr_t)row % 64) % 64 / sizeof(float));
}

/* Streaming stores write whole lines only, and the lines of a row start
 * where the row does only when it starts on a line boundary: with 4100
 * floats a row, three rows in four do not, and each of their pieces of a
 * block, floats [j, j + 16), lies across two lines.  So such a row keeps
 * its last two pieces, floats [j - 32, j) of the row, in `carry` (32
 * floats of its own): they hold a whole line, carry[g .. g + 15] where g
 * is the row's line_gap, which is streamed when piece j arrives; then the
 * carry moves on by one piece.  The line is built from pieces stored one
 * pass earlier, never from the one just stored: a load across a store
 * that is still on its way to the cache waits for it, and those waits
 * cost more than streaming saved.  The row's first g floats, before its
 * first line, take ordinary stores; its last ones, flush_row. */
static inline void stream_row(float *row, int64_t j, float *carry, const vec8 *lo,
                              const vec8 *hi)
{
    int64_t g = line_gap(row);
    if (g == 0) {   /* this row is aligned after all */
        stream_line(row + j, lo, hi);
        return;
    }
    if (j >= 2 * BLOCK) {   /* floats [j - 32 + g, j - 16 + g): one line */
        vec8 a, b;
        memcpy(&a, carry + g, sizeof a);
        memcpy(&b, carry + g + 8, sizeof b);
        stream_line(row + j - 2 * BLOCK + g, &a, &b);
    }
    memmove(carry, carry + BLOCK, BLOCK * sizeof(float));
    memcpy(carry + BLOCK, lo, sizeof *lo);
    memcpy(carry + BLOCK + 8, hi, sizeof *hi);
    if (j == 0)
        memcpy(row, carry + BLOCK, (size_t)g * sizeof(float));
}

/* After a row's last whole piece, [j_full - 16, j_full): its floats from
 * the end of the last line streamed to j_full, from its carry. */
static void flush_row(float *row, int64_t j_full, const float *carry)
{
    int64_t g = line_gap(row);
    if (g == 0 || j_full == 0)
        return;
    if (j_full >= 2 * BLOCK)
        memcpy(row + j_full - 2 * BLOCK + g, carry + g, (size_t)(2 * BLOCK - g) * sizeof(float));
    else
        memcpy(row + g, carry + BLOCK + g, (size_t)(BLOCK - g) * sizeof(float));
}

/* Step 4, rows off line boundaries: block_registers' piece j of each row
 * goes through the row's carry; the 16 rows' carries follow each other
 * from `carry`.  `to`: the block's first row, at its column 0. */
__attribute__((noinline)) static void block_carry(const float *from, int64_t sl, float *to,
                                                  int64_t dp, int64_t j, float *carry)
{
    vec8 a[8], b[8], c[8], d[8];
    load_block(from, sl, a, b, c, d);
    for (int k = 0; k < 8; k++) {
        stream_row(to + k * dp, j, carry + k * 2 * BLOCK, &a[k], &c[k]);
        stream_row(to + (k + 8) * dp, j, carry + (k + 8) * 2 * BLOCK, &b[k], &d[k]);
    }
}
//@ end snippet plane_carry

//@ snippet gather_plane
/* dst = the layout l of src, made compact, where axis p is denser than the
 * last (transposed_axis): every (p, last) plane, by bands of BAND (step 4:
 * STREAM_BAND) rows of the destination, BLOCK x BLOCK blocks at a time.
 * version: 2 blocked, 3 in registers, 4 streaming (versions 3 and 4 move
 * a plane whose axis p has a stride other than 1, and the ragged edges of
 * any plane, element by element, as 2 does). */
static nd_status gather_plane(const layout *l, int p, const float *src, float *dst,
                              int version)
{
    int last = l->ndim - 1;
    int64_t dst_strides[ND_MAX_DIMS], rest[ND_MAX_DIMS], size = 1;
    for (int k = last; k >= 0; k--) {   /* dst is compact */
        dst_strides[k] = size;
        size *= l->shape[k];
        rest[k] = k == p || k == last ? 1 : l->shape[k];
    }
    /* plane element (i, j): source from[i * sp + j * sl], output to[i * dp + j] */
    int64_t np = l->shape[p], nl = l->shape[last];
    int64_t sp = l->strides[p], sl = l->strides[last], dp = dst_strides[p];
    bool registers = version >= 3 && sp == 1, stream = registers && version >= 4;
    /* whole blocks: rows [I, i_full) of a band, columns [0, j_full) */
    int64_t j_full = nl / BLOCK * BLOCK;
    int64_t band = stream ? STREAM_BAND : BAND;
    /* step 4: 32 floats per row of a band, for rows not on line boundaries
     * (stream_row); if these 128 KB cannot be had, such rows take ordinary
     * stores. */
    float *carry = stream ? aligned_alloc(64, STREAM_BAND * 2 * BLOCK * sizeof(float)) : NULL;
    nd_iter it;   /* over every axis but p and last */
    nd_status s = nd_iter_init(&it, l->ndim, rest);
    while (s == ND_OK && nd_iter_next(&it)) {
        const float *from = src + row_offset(it.index, l->strides, l->ndim);
        float *to = dst + row_offset(it.index, dst_strides, l->ndim);
        /* step 4 on rows off line boundaries: through their carries */
        bool carried = stream && carry != NULL && (dp % BLOCK != 0 || line_gap(to) != 0);
        for (int64_t I = 0; I < np; I += band) {
            int64_t i_end = I + band < np ? I + band : np;
            int64_t i_full = I + (i_end - I) / BLOCK * BLOCK;
            for (int64_t j = 0; j < nl; j += BLOCK)
                for (int64_t i = I; i < i_end; i += BLOCK) {
                    const float *f = from + i * sp + j * sl;
                    float *t = to + i * dp;
                    if (j + BLOCK < nl)
                        prefetch_block(f + BLOCK * sl, sl,
                                       nl - j - BLOCK < BLOCK ? nl - j - BLOCK : BLOCK);
                    if (registers && i < i_full && j < j_full && carried)
                        block_carry(f, sl, t, dp, j, carry + (i - I) * 2 * BLOCK);
                    else if (registers && i < i_full && j < j_full)
                        block_registers(f, sl, t + j, dp, stream);
                    else
                        block_scalar(f, sp, sl, t + j, dp, i_end - i < BLOCK ? i_end - i : BLOCK,
                                     nl - j < BLOCK ? nl - j : BLOCK);
                }
            for (int64_t i = I; i < i_full && carried; i++)
                flush_row(to + i * dp, j_full, carry + (i - I) * 2 * BLOCK);
        }
    }
#if defined(__SSE2__)
    if (stream)
        _mm_sfence();   /* streaming stores are weakly ordered: finish them */
#endif
    free(carry);
    return s;
}
//@ end snippet gather_plane
