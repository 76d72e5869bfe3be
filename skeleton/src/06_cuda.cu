/*
 * 06_cuda.cu -- lesson 6: the operations of lessons 2-5 on a GPU.
 *
 * Every kernel here has the same shape: thread number gid (a flat position
 * in the output, in row-major order) -> multi-index -> memory offset in
 * each operand, through one helper, offset_of.  What changes from kernel to
 * kernel is what is done with the element: copied (compact, setitem),
 * combined (elementwise), folded (reductions) or multiplied (matmul).
 *
 * The public functions of lessons 2-5 call the nd_cuda_* functions at the
 * bottom when their arrays live on ND_CUDA.  Those are given: they simplify
 * the operands' layouts on the host and call a launch_* function, which
 * picks the grid and the block and launches a kernel.  You write the index
 * transform, the kernels and the launches.
 *
 * The same file builds with nvcc for a real GPU, and with g++ and the
 * emulator in grader/emu/ on any machine (each block's threads run as
 * cooperative fibers: a missing __syncthreads() gives wrong answers there
 * too).
 */
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>

#include "nd_cuda.h"

/* Threads per block for the one-element-per-thread kernels: a multiple of
 * the warp (32), and enough warps per block to hide memory latency. */
#define THREADS 256

/* The most blocks one launch uses along a grid's dimension.  gridDim.x may
 * go to 2^31 - 1, but a GPU runs only a few thousand blocks at once anyway;
 * grid-stride loops let the blocks of a capped grid cover any number of
 * elements.  65535 is also the limit of gridDim.y and gridDim.z, so the
 * matmul kernels loop over rows and batches the same way.  (A test build
 * sets it far lower, so that every such loop runs many rounds.) */
#ifndef MAX_BLOCKS
#define MAX_BLOCKS 65535
#endif

/* ------------------------------------------------------------------------ */
/* Views as kernels see them                                                */
/* ------------------------------------------------------------------------ */

//@ snippet view
/* A view passed to a kernel by value: kernel arguments are copied to the
 * GPU at launch, so a kernel cannot follow the nd_array's pointer to its
 * buffer header.  data is the buffer's first float (a device pointer). */
struct view {
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int64_t strides[ND_MAX_DIMS];
    int64_t offset;
    float *data;
};
//@ end snippet view

static view view_of(const nd_array *a)
{
    view v;
    memset(&v, 0, sizeof v);
    v.ndim = a->ndim;
    for (int k = 0; k < a->ndim; k++) {
        v.shape[k] = a->shape[k];
        v.strides[k] = a->strides[k];
    }
    v.offset = a->offset;
    v.data = (float *)a->buf->ptr;
    return v;
}

/* Simplify n views of one shape together, as lesson 2's nd_simplify_dims
 * does for two: drop size-1 axes, and merge an axis into the one before it
 * where every view steps over it contiguously.  Fewer axes make the index
 * transform cheaper: a compact array becomes 1-D. */
static void simplify(view *v, int n)
{
    int m = 0;
    for (int k = 0; k < v[0].ndim; k++) {
        int64_t size = v[0].shape[k];
        if (size == 1)
            continue;
        bool merge = m > 0;
        for (int i = 0; i < n && merge; i++)
            merge = v[i].strides[m - 1] == size * v[i].strides[k];
        int to = merge ? m - 1 : m++;
        for (int i = 0; i < n; i++) {
            v[i].shape[to] = merge ? v[i].shape[to] * size : size;
            v[i].strides[to] = v[i].strides[k];
        }
    }
    for (int i = 0; i < n; i++)
        v[i].ndim = m;
}

/* ------------------------------------------------------------------------ */
/* The index transform                                                      */
/* ------------------------------------------------------------------------ */

//@ snippet cuda_offset_of
/* The memory offset (in floats from v.data) of element number i of v, in
 * row-major order: peel the multi-index off i from the last axis, the
 * fastest-moving one, and add index * stride per axis.  One helper for the
 * host and every kernel. */
static __host__ __device__ __forceinline__ int64_t offset_of(int64_t i, const view &v)
{
    /* TODO (lesson 6): write offset_of. */
    /* for k = ndim-1 down to 1: index k is i % shape[k]; i /= shape[k];
     * then i is the index along axis 0. */
    (void)i;
    return v.offset;
}
//@ end snippet cuda_offset_of

extern "C" int64_t nd_index_to_offset(int64_t i, int ndim, const int64_t *shape,
                                      const int64_t *strides, int64_t offset)
{
    view v;
    memset(&v, 0, sizeof v);
    v.ndim = ndim < 0 ? 0 : ndim > ND_MAX_DIMS ? ND_MAX_DIMS : ndim;
    for (int k = 0; k < v.ndim; k++) {
        v.shape[k] = shape[k];
        v.strides[k] = strides[k];
    }
    v.offset = offset;
    return offset_of(i, v);
}

//@ snippet grid
/* Blocks for n elements at `threads` per block, one element per thread,
 * capped at MAX_BLOCKS (grid-stride loops do the rest).  At least 1: a
 * grid of 0 blocks is an invalid launch. */
static unsigned blocks_for(int64_t n, int threads)
{
    /* TODO (lesson 6): write blocks_for. */
    /* Round n / threads up; clamp to 1 .. MAX_BLOCKS. */
    (void)n; (void)threads;
    return 1;
}
//@ end snippet grid

/* ------------------------------------------------------------------------ */
/* Compact, setitem and fill (lesson 2 on the GPU)                          */
/* ------------------------------------------------------------------------ */

//@ snippet copy_kernels
/* dst[i] = src's element i, for i in 0 .. n-1: a strided gather. */
static __global__ void compact_kernel(view src, float *dst, int64_t n)
{
    /* TODO (lesson 6): write compact_kernel. */
    /* A grid-stride loop over i = global thread id ..< n; write
     * dst[i] from src's element i (offset_of). */
    (void)src; (void)dst; (void)n;
}

/* dst's element i = src's element i: a strided scatter through dst. */
static __global__ void setitem_kernel(view dst, view src, int64_t n)
{
    /* TODO (lesson 6): write setitem_kernel. */
    /* As compact_kernel, but both sides go through offset_of. */
    (void)dst; (void)src; (void)n;
}

/* dst's element i = value. */
static __global__ void fill_kernel(view dst, float value, int64_t n)
{
    /* TODO (lesson 6): write fill_kernel. */
    (void)dst; (void)value; (void)n;
}
//@ end snippet copy_kernels

//@ snippet copy_launches
static nd_status launch_compact(const view &src, float *dst, int64_t n)
{
    /* TODO (lesson 6): write launch_compact. */
    /* kernel<<<blocks, threads>>>(args); then ND_CUDA_LAUNCHED("name")
     * to turn a failed launch or a fault into an error; return ND_OK. */
    (void)src; (void)dst; (void)n; (void)compact_kernel; (void)blocks_for;
    return nd_not_implemented("launch_compact", 6);
}

static nd_status launch_setitem(const view &dst, const view &src, int64_t n)
{
    /* TODO (lesson 6): write launch_setitem. */
    (void)dst; (void)src; (void)n; (void)setitem_kernel;
    return nd_not_implemented("launch_setitem", 6);
}

static nd_status launch_fill(const view &dst, float value, int64_t n)
{
    /* TODO (lesson 6): write launch_fill. */
    (void)dst; (void)value; (void)n; (void)fill_kernel;
    return nd_not_implemented("launch_fill", 6);
}
//@ end snippet copy_launches

/* ------------------------------------------------------------------------ */
/* Elementwise (lesson 3 on the GPU)                                        */
/* ------------------------------------------------------------------------ */

/* The operations, exactly as lesson 3 defines them on the CPU. */
static __host__ __device__ __forceinline__ float binary_op(nd_binop op, float x, float y)
{
    switch (op) {
    case ND_ADD: return x + y;
    case ND_SUB: return x - y;
    case ND_MUL: return x * y;
    case ND_DIV: return x / y;
    case ND_POW: return powf(x, y);
    case ND_MAXIMUM: return (isnan(x) || x >= y) ? x : y;
    case ND_EQ: return x == y ? 1.0f : 0.0f;
    case ND_GE: return x >= y ? 1.0f : 0.0f;
    }
    return NAN;
}

static __host__ __device__ __forceinline__ float unary_op(nd_unop op, float x)
{
    switch (op) {
    case ND_NEG: return -x;
    case ND_LOG: return logf(x);
    case ND_EXP: return expf(x);
    case ND_TANH: return tanhf(x);
    case ND_ABS: return fabsf(x);
    }
    return NAN;
}

//@ snippet ewise_kernels
/* dst's element i = a's element i OP b's element i. */
static __global__ void binary_kernel(nd_binop op, view dst, view a, view b, int64_t n)
{
    /* TODO (lesson 6): write binary_kernel. */
    /* A grid-stride loop; binary_op(op, x, y) computes one element. */
    (void)op; (void)dst; (void)a; (void)b; (void)n; (void)binary_op;
}

/* dst's element i = OP(a's element i). */
static __global__ void unary_kernel(nd_unop op, view dst, view a, int64_t n)
{
    /* TODO (lesson 6): write unary_kernel. */
    (void)op; (void)dst; (void)a; (void)n; (void)unary_op;
}
//@ end snippet ewise_kernels

static nd_status launch_binary(nd_binop op, const view &dst, const view &a, const view &b,
                               int64_t n)
{
    /* TODO (lesson 6): write launch_binary. */
    (void)op; (void)dst; (void)a; (void)b; (void)n; (void)binary_kernel;
    return nd_not_implemented("launch_binary", 6);
}

static nd_status launch_unary(nd_unop op, const view &dst, const view &a, int64_t n)
{
    /* TODO (lesson 6): write launch_unary. */
    (void)op; (void)dst; (void)a; (void)n; (void)unary_kernel;
    return nd_not_implemented("launch_unary", 6);
}

/* ------------------------------------------------------------------------ */
/* Reductions (lesson 4 on the GPU)                                         */
/* ------------------------------------------------------------------------ */

#define WARP 32
#define FULL_MASK 0xffffffffu

//@ snippet reduce_constants
/* Elements a thread loads before it folds them: the loads do not depend on
 * each other, so all of them are in flight at once; the folds do (each
 * addition needs the last one's sum). */
#define REDUCE_UNROLL 4

/* When one output's elements are split over several blocks: a block folds
 * at least SPLIT_MIN elements (32 for each of 256 threads: fewer would
 * cost more in partial results than they save), and the split stops at
 * about SPLIT_BLOCKS blocks in all, enough for the whole GPU (an H100
 * holds 132 SMs x 8 blocks of 256 threads at once). */
#define SPLIT_MIN 8192
#define SPLIT_BLOCKS 1024
//@ end snippet reduce_constants

/* Lesson 4's max: NaN wins, as in np.max. */
static __device__ __forceinline__ float max2(float m, float x)
{
    return x > m || isnan(x) ? x : m;
}

//@ snippet reduce_fold
/* What a fold starts from, and what an idle thread or lane contributes. */
static __device__ __forceinline__ float identity(nd_reduce_op op)
{
    return op == ND_SUM ? 0.0f : -INFINITY;
}

/* Fold x into a thread's running result.  Sums are compensated (Kahan):
 * `lost` holds the rounding error of the last addition, and the next one
 * puts it back.  Once the sum is infinite there is nothing to compensate
 * (and inf - inf would turn the correction into NaN). */
static __device__ __forceinline__ void fold(nd_reduce_op op, float &acc, float &lost, float x)
{
    if (op == ND_SUM) {
        float y = x - lost, t = acc + y;
        lost = isfinite(t) ? (t - acc) - y : 0.0f;
        acc = t;
    } else {
        acc = max2(acc, x);
    }
}
//@ end snippet reduce_fold

//@ snippet reduce_kernel
/* Fold the values of the 32 lanes of a warp; lane 0 gets the result.
 * __shfl_down_sync reads a register of the lane `delta` above: after
 * strides 16, 8, 4, 2, 1 lane 0 has seen all 32 values. */
static __device__ __forceinline__ float warp_fold(nd_reduce_op op, float x)
{
    /* TODO (lesson 6): write warp_fold. */
    /* for delta = 16, 8, 4, 2, 1: combine x with __shfl_down_sync(
     * FULL_MASK, x, delta). */
    (void)op; (void)max2;
    return x;
}

/* Output o folds the nred elements at kept.data + offset_of(o, kept) +
 * offset_of(j, red), j in 0 .. nred-1.  The grid is 2-D: blockIdx.x picks
 * the output (a grid-stride loop over outputs), and the gridDim.y blocks
 * of one output split its elements, block y taking j = y * blockDim.x +
 * threadIdx.x, then every gridDim.y * blockDim.x-th.  Block (o, y) writes
 * its result to dst[o * gridDim.y + y]: the output itself when gridDim.y
 * is 1, else a partial result that a second pass folds.  blockDim.x is a
 * multiple of 32, at most 1024. */
static __global__ void reduce_kernel(nd_reduce_op op, view kept, view red, int64_t nout,
                                     int64_t nred, float *dst)
{
    /* TODO (lesson 6): write reduce_kernel. */
    /* For each output o of this block (o = blockIdx.x; o += gridDim.x):
     * each thread folds (fold) elements j = blockIdx.y * blockDim.x +
     * threadIdx.x, then + gridDim.y * blockDim.x, ..., REDUCE_UNROLL
     * loads at a time before their folds; then warp_fold; lane 0 of each
     * warp writes a __shared__ slot; __syncthreads(); warp 0 folds the
     * slots and writes dst[o * gridDim.y + blockIdx.y]; __syncthreads()
     * again before the slots are reused. */
    (void)op; (void)kept; (void)red; (void)nout; (void)nred; (void)dst; (void)warp_fold;
    (void)fold; (void)identity;
}
//@ end snippet reduce_kernel

/* The partial results of a split reduction live in one scratch buffer on
 * the device, allocated by the first split reduction and kept (as cuBLAS
 * keeps its workspace), so that a reduction allocates nothing.  Given.
 * It holds 2 * SPLIT_BLOCKS floats: a split reduction has fewer than
 * SPLIT_BLOCKS outputs (else split is 1) and split <= ceil(SPLIT_BLOCKS /
 * nout), so nout * split < SPLIT_BLOCKS + nout.  nd_cuda_reduce holds
 * reduce_lock while launch_reduce uses it: reductions on several host
 * threads take turns (their kernels would anyway, on the default stream). */
static pthread_mutex_t reduce_lock = PTHREAD_MUTEX_INITIALIZER;

static nd_status reduce_scratch(float **partials)
{
    static void *scratch;
    if (scratch == NULL) {
        nd_status s = nd_cuda_alloc(2 * SPLIT_BLOCKS * sizeof(float), &scratch, "nd_reduce");
        if (s != ND_OK)
            return s;
    }
    *partials = (float *)scratch;
    return ND_OK;
}

//@ snippet launch_reduce
static nd_status launch_reduce(nd_reduce_op op, const view &kept, const view &red,
                               int64_t nout, int64_t nred, float *dst)
{
    /* TODO (lesson 6): write launch_reduce. */
    /* threads: a power of two, 32 to THREADS, no more than nred needs.
     * split = blocks per output: ceil(nred / SPLIT_MIN), but no more
     * than ceil(SPLIT_BLOCKS / nout).  split 1: one launch, grid
     * blocks_for(nout, 1), writing dst.  Otherwise pass 1 with a grid of
     * (blocks_for(nout, 1), split) into reduce_scratch's buffer, then
     * pass 2: reduce that (nout, split) compact array over its last axis
     * into dst (launch_reduce again). */
    (void)op; (void)kept; (void)red; (void)nout; (void)nred; (void)dst;
    (void)reduce_kernel; (void)reduce_scratch;
    return nd_not_implemented("launch_reduce", 6);
}
//@ end snippet launch_reduce

/* ------------------------------------------------------------------------ */
/* Matmul (lesson 5 on the GPU)                                             */
/* ------------------------------------------------------------------------ */

//@ snippet matrices
/* The operands of a batched matmul c = a @ b, c compact of shape
 * (batch..., m, n).  Matrix z of a starts at a.data + offset_of(z, abatch)
 * (abatch: c's batch shape with a's batch strides and a's offset), and its
 * element (i, p) is a further i * a_rs + p * a_cs floats on; b likewise.
 * a_vec: every row of every matrix of a is contiguous (a_cs == 1) and
 * starts on a 16-byte boundary, so four neighbours along a row are one
 * float4 load; b_vec likewise for b. */
struct matmul_args {
    view abatch, bbatch;
    int64_t a_rs, a_cs, b_rs, b_cs;
    int64_t m, n, k, nbatch;
    bool a_vec, b_vec;
    float *c;
};
//@ end snippet matrices

//@ snippet matmul_naive_kernel
/* One thread per element of c: thread (x, y) of the grid computes
 * c[z][i][j] for j = x, rows i = y, y + all the grid's rows, ... (gridDim.y
 * stops at 65535), and z = blockIdx.z, + gridDim.z, ... */
static __global__ void matmul_naive_kernel(matmul_args g)
{
    /* TODO (lesson 6): write matmul_naive_kernel. */
    (void)g;
}
//@ end snippet matmul_naive_kernel

//@ snippet matmul_tiled_kernel
/* The tiled kernel: a block of 16 x 16 threads computes a 128 x 128 tile
 * of c, each thread 8 x 8 outputs of it held in 64 registers: rows
 * 8 ty .. 8 ty + 7, and columns in two runs of 4 half a tile apart,
 * 4 tx .. 4 tx + 3 and 64 + 4 tx .. 64 + 4 tx + 3 (so that the 16 threads
 * of a row of the block read 16 neighbouring float4 of the b-panel: 256
 * bytes, no bank conflict; runs of 8, 8 tx .., would put threads tx and
 * tx + 4 in the same banks).  Step by step along k, the
 * block stages a 128 x 8 panel of a and an 8 x 128 panel of b in shared
 * memory; each value staged is then read by 16 threads, and each value
 * read into a register is used 8 times: 64 multiply-adds per 16 floats
 * read from shared memory. */
#define TM 128   /* tile rows */
#define TN 128   /* tile columns */
#define TK 8     /* panel depth */
#define TT 16    /* threads per tile side */
#define TR 8     /* outputs per thread side: TM / TT */

/* Stage the panels at depth p0 of the tile at (i0, j0): as[p][i] =
 * a[i0 + i][p0 + p] (transposed) and bs[p][j] = b[p0 + p][j0 + j], zeros
 * outside the matrices, so that edges need no special case.  Each of the
 * 256 threads moves four neighbours along a row of each operand: thread t
 * takes row t / 2 of the a-panel, columns 4 (t % 2) .. + 3, and row t / 32
 * of the b-panel, columns 4 (t % 32) .. + 3; a warp then reads whole
 * 32-byte sectors.  Where the row allows (a_vec, b_vec, and all four
 * inside the matrix), the four are one 16-byte load. */
static __device__ __forceinline__ void stage_panels(const matmul_args &g, const float *a,
                                                    const float *b, int64_t i0, int64_t j0,
                                                    int64_t p0, float (*as)[TM + 4],
                                                    float (*bs)[TN])
{
    /* TODO (lesson 6): write stage_panels. */
    /* Thread t: a[i0 + t/2][p0 + 4 (t%2) + 0..3] into as[4 (t%2) + 0..3]
     * [t/2], and b[p0 + t/32][j0 + 4 (t%32) + 0..3] into bs[t/32][4 (t%32)
     * + 0..3]; 0.0f for positions outside a or b. */
    (void)g; (void)a; (void)b; (void)i0; (void)j0; (void)p0; (void)as; (void)bs;
}

/* __launch_bounds__: at most TT * TT threads per block, and registers
 * for 2 blocks on each SM at once (65536 / (2 * 256) = 128 a thread), so
 * that one block stages its panels while the other multiplies. */
static __global__ void __launch_bounds__(TT * TT, 2) matmul_tiled_kernel(matmul_args g)
{
    /* TODO (lesson 6): write matmul_tiled_kernel. */
    /* __shared__ panels of a (TK x TM, transposed) and b (TK x TN).
     * For each matrix z of this block, and each row tile i0 of it
     * (blockIdx.y * TM, + gridDim.y * TM, ...), for p0 = 0, TK, ...:
     * stage_panels, __syncthreads(), accumulate the TR x TR outputs,
     * __syncthreads(); then write the outputs that lie inside c. */
    (void)g; (void)stage_panels;
}
//@ end snippet matmul_tiled_kernel

//@ snippet launch_matmul
static nd_status launch_matmul(const matmul_args &g, bool tiled)
{
    /* TODO (lesson 6): write launch_matmul. */
    /* x covers n (columns), y covers m (rows), z the batch; y and z at
     * most MAX_BLOCKS (blocks_for), the kernels loop over the rest.  Tiled:
     * one block of TT x TT threads per TM x TN tile of c, unless a
     * matrix of c has no more than TT * TT elements.  Naive: 16 x 16
     * threads per 16 x 16 outputs. */
    (void)g; (void)tiled; (void)matmul_naive_kernel; (void)matmul_tiled_kernel;
    return nd_not_implemented("launch_matmul", 6);
}
//@ end snippet launch_matmul

/* ------------------------------------------------------------------------ */
/* The backend operations (given): called by lessons 2-5                    */
/* ------------------------------------------------------------------------ */

/* Whether a is a permutation of a compact block of memory: its axes,
 * sorted by stride, have the strides of a compact array.  If so, shape
 * and perm describe it as lesson 7 wants: a == compact(shape).permute(perm),
 * starting at a's offset. */
static bool as_permutation(const nd_array *a, int *ndim, int64_t *shape, int *perm)
{
    int axes[ND_MAX_DIMS], m = 0;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != 1)
            axes[m++] = k;
    /* order[j]: the view axis that is source axis j (largest stride first) */
    int order[ND_MAX_DIMS];
    for (int j = 0; j < m; j++)
        order[j] = j;
    for (int j = 1; j < m; j++)   /* insertion sort: at most 8 axes */
        for (int i = j; i > 0 && a->strides[axes[order[i]]] > a->strides[axes[order[i - 1]]]; i--) {
            int t = order[i];
            order[i] = order[i - 1];
            order[i - 1] = t;
        }
    int64_t expect = 1;
    for (int j = m - 1; j >= 0; j--) {
        int k = axes[order[j]];
        if (a->strides[k] != expect)
            return false;
        expect *= a->shape[k];
    }
    for (int j = 0; j < m; j++) {
        shape[j] = a->shape[axes[order[j]]];
        perm[order[j]] = j;
    }
    *ndim = m;
    return true;
}

extern "C" nd_status nd_cuda_compact(const nd_array *a, const nd_array *dst)
{
    int64_t n = nd_numel(a);
    if (n == 0)
        return ND_OK;
    /* A transpose or permute of compact memory: lesson 7's kernels move
     * it at close to copy speed.  Until lesson 7 is written, the general
     * gather below does it. */
    int ndim, perm[ND_MAX_DIMS];
    int64_t shape[ND_MAX_DIMS];
    if (as_permutation(a, &ndim, shape, perm)) {
        const float *src = (const float *)a->buf->ptr + a->offset;
        nd_status s = nd_permute_bytes(ND_CUDA, src, dst->buf->ptr, sizeof(float), ndim, shape,
                                       perm);
        if (s != ND_ERR_NOT_IMPLEMENTED)
            return s;
    }
    view v = view_of(a);
    simplify(&v, 1);
    return launch_compact(v, (float *)dst->buf->ptr, n);
}

extern "C" nd_status nd_cuda_setitem(const nd_array *dst, const nd_array *src)
{
    int64_t n = nd_numel(dst);
    if (n == 0)
        return ND_OK;
    view v[2] = { view_of(dst), view_of(src) };
    simplify(v, 2);
    return launch_setitem(v[0], v[1], n);
}

extern "C" nd_status nd_cuda_fill(const nd_array *dst, float value)
{
    int64_t n = nd_numel(dst);
    if (n == 0)
        return ND_OK;
    view v = view_of(dst);
    simplify(&v, 1);
    return launch_fill(v, value, n);
}

extern "C" nd_status nd_cuda_binary(nd_binop op, const nd_array *dst, const nd_array *a,
                                    const nd_array *b)
{
    int64_t n = nd_numel(dst);
    if (n == 0)
        return ND_OK;
    view v[3] = { view_of(dst), view_of(a), view_of(b) };
    simplify(v, 3);
    return launch_binary(op, v[0], v[1], v[2], n);
}

extern "C" nd_status nd_cuda_unary(nd_unop op, const nd_array *dst, const nd_array *a)
{
    int64_t n = nd_numel(dst);
    if (n == 0)
        return ND_OK;
    view v[2] = { view_of(dst), view_of(a) };
    simplify(v, 2);
    return launch_unary(op, v[0], v[1], n);
}

extern "C" nd_status nd_cuda_reduce(nd_reduce_op op, const nd_array *v, int nkept,
                                    const nd_array *dst)
{
    int64_t nout = nd_shape_numel(nkept, v->shape);
    if (nout == 0)
        return ND_OK;
    /* kept: v's first nkept axes, with v's offset; red: the rest, from 0. */
    view kept = view_of(v), red = view_of(v);
    kept.ndim = nkept;
    red.ndim = v->ndim - nkept;
    for (int k = 0; k < red.ndim; k++) {
        red.shape[k] = v->shape[nkept + k];
        red.strides[k] = v->strides[nkept + k];
    }
    red.offset = 0;
    int64_t nred = nd_shape_numel(red.ndim, red.shape);
    simplify(&kept, 1);
    simplify(&red, 1);
    pthread_mutex_lock(&reduce_lock);   /* the scratch buffer is ours */
    nd_status s = launch_reduce(op, kept, red, nout, nred, (float *)dst->buf->ptr);
    pthread_mutex_unlock(&reduce_lock);
    return s;
}

/* Whether every row of every matrix of an operand (its batch view, and its
 * row and column strides) is contiguous and starts on a 16-byte boundary:
 * matrix starts, row starts and the buffer all aligned to 4 floats. */
static bool rows_of_float4(const view &batch, int64_t rs, int64_t cs)
{
    bool ok = cs == 1 && rs % 4 == 0 && batch.offset % 4 == 0 &&
              (uintptr_t)batch.data % 16 == 0;
    for (int k = 0; k < batch.ndim; k++)
        ok = ok && batch.strides[k] % 4 == 0;
    return ok;
}

extern "C" nd_status nd_cuda_matmul(const nd_array *a, const nd_array *b, const nd_array *c,
                                    bool tiled)
{
    int d = c->ndim;
    matmul_args g;
    memset(&g, 0, sizeof g);
    g.m = c->shape[d - 2];
    g.n = c->shape[d - 1];
    g.k = a->shape[d - 1];
    g.nbatch = nd_shape_numel(d - 2, c->shape);
    if (g.m == 0 || g.n == 0 || g.nbatch == 0)
        return ND_OK;
    g.abatch = view_of(a);
    g.bbatch = view_of(b);
    g.abatch.ndim = g.bbatch.ndim = d - 2;   /* the batch axes only */
    g.a_rs = a->strides[d - 2];
    g.a_cs = a->strides[d - 1];
    g.b_rs = b->strides[d - 2];
    g.b_cs = b->strides[d - 1];
    g.c = (float *)c->buf->ptr;
    view batch[2] = { g.abatch, g.bbatch };
    simplify(batch, 2);
    g.abatch = batch[0];
    g.bbatch = batch[1];
    g.a_vec = rows_of_float4(g.abatch, g.a_rs, g.a_cs);
    g.b_vec = rows_of_float4(g.bbatch, g.b_rs, g.b_cs);
    return launch_matmul(g, tiled);
}
