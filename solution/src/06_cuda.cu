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
#include <string.h>

#include "nd_cuda.h"

/* Threads per block for the one-element-per-thread kernels: a multiple of
 * the warp (32), and enough warps per block to hide memory latency. */
#define THREADS 256

/* The most blocks one launch uses.  gridDim.x may go to 2^31 - 1, but a GPU
 * runs only a few thousand blocks at once anyway; grid-stride loops let
 * the blocks of a capped grid cover any number of elements.  65535 is also
 * the limit of gridDim.y and gridDim.z. */
#define MAX_BLOCKS 65535

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
    //@ solution offset_of
    int64_t off = v.offset;
    /* Unrolled over ND_MAX_DIMS with a test, not a loop to v.ndim: each
     * shape[k] and strides[k] is then a fixed kernel argument, not an
     * array indexed at run time (which the GPU would copy to slow local
     * memory). */
#pragma unroll
    for (int k = ND_MAX_DIMS - 1; k > 0; k--) {
        if (k < v.ndim) {
            int64_t n = v.shape[k];
            off += (i % n) * v.strides[k];
            i /= n;
        }
    }
    /* Axis 0 is left: i is its index, with no division. */
    return v.ndim > 0 ? off + i * v.strides[0] : off;
    //@ stub
    //> /* for k = ndim-1 down to 1: index k is i % shape[k]; i /= shape[k];
    //>  * then i is the index along axis 0. */
    //> (void)i;
    //> return v.offset;
    //@ end solution offset_of
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
    //@ solution blocks_for
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : b);
    //@ stub
    //> /* Round n / threads up; clamp to 1 .. MAX_BLOCKS. */
    //> (void)n; (void)threads;
    //> return 1;
    //@ end solution blocks_for
}
//@ end snippet grid

/* ------------------------------------------------------------------------ */
/* Compact, setitem and fill (lesson 2 on the GPU)                          */
/* ------------------------------------------------------------------------ */

//@ snippet copy_kernels
/* dst[i] = src's element i, for i in 0 .. n-1: a strided gather. */
static __global__ void compact_kernel(view src, float *dst, int64_t n)
{
    //@ solution compact_kernel
    /* A grid-stride loop: thread gid does gid, gid + all threads, ... */
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src.data[offset_of(i, src)];
    //@ stub
    //> /* A grid-stride loop over i = global thread id ..< n; write
    //>  * dst[i] from src's element i (offset_of). */
    //> (void)src; (void)dst; (void)n;
    //@ end solution compact_kernel
}

/* dst's element i = src's element i: a strided scatter through dst. */
static __global__ void setitem_kernel(view dst, view src, int64_t n)
{
    //@ solution setitem_kernel
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst.data[offset_of(i, dst)] = src.data[offset_of(i, src)];
    //@ stub
    //> /* As compact_kernel, but both sides go through offset_of. */
    //> (void)dst; (void)src; (void)n;
    //@ end solution setitem_kernel
}

/* dst's element i = value. */
static __global__ void fill_kernel(view dst, float value, int64_t n)
{
    //@ solution fill_kernel
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst.data[offset_of(i, dst)] = value;
    //@ stub
    //> (void)dst; (void)value; (void)n;
    //@ end solution fill_kernel
}
//@ end snippet copy_kernels

//@ snippet copy_launches
static nd_status launch_compact(const view &src, float *dst, int64_t n)
{
    //@ solution launch_compact
    compact_kernel<<<blocks_for(n, THREADS), THREADS>>>(src, dst, n);
    ND_CUDA_LAUNCHED("compact_kernel");
    return ND_OK;
    //@ stub
    //> /* kernel<<<blocks, threads>>>(args); then ND_CUDA_LAUNCHED("name")
    //>  * to turn a failed launch or a fault into an error; return ND_OK. */
    //> (void)src; (void)dst; (void)n; (void)compact_kernel; (void)blocks_for;
    //> return nd_not_implemented("launch_compact", 6);
    //@ end solution launch_compact
}

static nd_status launch_setitem(const view &dst, const view &src, int64_t n)
{
    //@ solution launch_setitem
    /* Over dst's elements (the view's), not its buffer's. */
    setitem_kernel<<<blocks_for(n, THREADS), THREADS>>>(dst, src, n);
    ND_CUDA_LAUNCHED("setitem_kernel");
    return ND_OK;
    //@ stub
    //> (void)dst; (void)src; (void)n; (void)setitem_kernel;
    //> return nd_not_implemented("launch_setitem", 6);
    //@ end solution launch_setitem
}

static nd_status launch_fill(const view &dst, float value, int64_t n)
{
    //@ solution launch_fill
    fill_kernel<<<blocks_for(n, THREADS), THREADS>>>(dst, value, n);
    ND_CUDA_LAUNCHED("fill_kernel");
    return ND_OK;
    //@ stub
    //> (void)dst; (void)value; (void)n; (void)fill_kernel;
    //> return nd_not_implemented("launch_fill", 6);
    //@ end solution launch_fill
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
    //@ solution binary_kernel
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst.data[offset_of(i, dst)] =
            binary_op(op, a.data[offset_of(i, a)], b.data[offset_of(i, b)]);
    //@ stub
    //> /* A grid-stride loop; binary_op(op, x, y) computes one element. */
    //> (void)op; (void)dst; (void)a; (void)b; (void)n; (void)binary_op;
    //@ end solution binary_kernel
}

/* dst's element i = OP(a's element i). */
static __global__ void unary_kernel(nd_unop op, view dst, view a, int64_t n)
{
    //@ solution unary_kernel
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst.data[offset_of(i, dst)] = unary_op(op, a.data[offset_of(i, a)]);
    //@ stub
    //> (void)op; (void)dst; (void)a; (void)n; (void)unary_op;
    //@ end solution unary_kernel
}
//@ end snippet ewise_kernels

static nd_status launch_binary(nd_binop op, const view &dst, const view &a, const view &b,
                               int64_t n)
{
    //@ solution launch_binary
    binary_kernel<<<blocks_for(n, THREADS), THREADS>>>(op, dst, a, b, n);
    ND_CUDA_LAUNCHED("binary_kernel");
    return ND_OK;
    //@ stub
    //> (void)op; (void)dst; (void)a; (void)b; (void)n; (void)binary_kernel;
    //> return nd_not_implemented("launch_binary", 6);
    //@ end solution launch_binary
}

static nd_status launch_unary(nd_unop op, const view &dst, const view &a, int64_t n)
{
    //@ solution launch_unary
    unary_kernel<<<blocks_for(n, THREADS), THREADS>>>(op, dst, a, n);
    ND_CUDA_LAUNCHED("unary_kernel");
    return ND_OK;
    //@ stub
    //> (void)op; (void)dst; (void)a; (void)n; (void)unary_kernel;
    //> return nd_not_implemented("launch_unary", 6);
    //@ end solution launch_unary
}

/* ------------------------------------------------------------------------ */
/* Reductions (lesson 4 on the GPU)                                         */
/* ------------------------------------------------------------------------ */

#define WARP 32
#define FULL_MASK 0xffffffffu

/* Lesson 4's max: NaN wins, as in np.max. */
static __device__ __forceinline__ float max2(float m, float x)
{
    return x > m || isnan(x) ? x : m;
}

//@ snippet reduce_kernel
/* Fold the values of the 32 lanes of a warp; lane 0 gets the result.
 * __shfl_down_sync reads a register of the lane `delta` above: after
 * strides 16, 8, 4, 2, 1 lane 0 has seen all 32 values. */
static __device__ __forceinline__ float warp_fold(nd_reduce_op op, float x)
{
    //@ solution warp_fold
#pragma unroll
    for (int delta = WARP / 2; delta > 0; delta /= 2) {
        float y = __shfl_down_sync(FULL_MASK, x, delta);
        x = op == ND_SUM ? x + y : max2(x, y);
    }
    return x;
    //@ stub
    //> /* for delta = 16, 8, 4, 2, 1: combine x with __shfl_down_sync(
    //>  * FULL_MASK, x, delta). */
    //> (void)op; (void)max2;
    //> return x;
    //@ end solution warp_fold
}

/* One block per output (a grid-stride loop over outputs): output o folds
 * the nred elements of its block, at kept.data + offset_of(o, kept) +
 * offset_of(j, red) for j in 0 .. nred-1.  blockDim.x is a multiple of 32,
 * at most 1024. */
static __global__ void reduce_kernel(nd_reduce_op op, view kept, view red, int64_t nout,
                                     int64_t nred, float *dst)
{
    //@ solution reduce_kernel
    __shared__ float partial[1024 / WARP];   /* one value per warp */
    int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    int nwarps = blockDim.x / WARP;
    for (int64_t o = blockIdx.x; o < nout; o += gridDim.x) {
        const float *block = kept.data + offset_of(o, kept);
        /* 1. Each thread folds every blockDim.x-th element.  Sums are
         * compensated (Kahan): a thread may add up thousands of values.
         * Once the sum is infinite there is nothing to compensate (and
         * inf - inf would turn the correction into NaN). */
        float acc = op == ND_SUM ? 0.0f : -INFINITY, lost = 0.0f;
        for (int64_t j = threadIdx.x; j < nred; j += blockDim.x) {
            float x = block[offset_of(j, red)];
            if (op == ND_SUM) {
                float y = x - lost, t = acc + y;
                lost = isfinite(t) ? (t - acc) - y : 0.0f;
                acc = t;
            } else {
                acc = max2(acc, x);
            }
        }
        /* 2. Each warp folds its 32 values with shuffles ... */
        acc = warp_fold(op, acc);
        if (lane == 0)
            partial[warp] = acc;
        __syncthreads();
        /* 3. ... and warp 0 folds the warps' values. */
        if (warp == 0) {
            acc = lane < nwarps ? partial[lane] : (op == ND_SUM ? 0.0f : -INFINITY);
            acc = warp_fold(op, acc);
            if (lane == 0)
                dst[o] = acc;
        }
        /* partial[] is written again for the next output: wait until
         * warp 0 has read it. */
        __syncthreads();
    }
    //@ stub
    //> /* For each output o of this block (o = blockIdx.x; o += gridDim.x):
    //>  * each thread folds elements threadIdx.x, + blockDim.x, ...; then
    //>  * warp_fold; lane 0 of each warp writes a __shared__ slot;
    //>  * __syncthreads(); warp 0 folds the slots and writes dst[o];
    //>  * __syncthreads() again before the slots are reused. */
    //> (void)op; (void)kept; (void)red; (void)nout; (void)nred; (void)dst; (void)warp_fold;
    //@ end solution reduce_kernel
}
//@ end snippet reduce_kernel

//@ snippet launch_reduce
static nd_status launch_reduce(nd_reduce_op op, const view &kept, const view &red,
                               int64_t nout, int64_t nred, float *dst)
{
    //@ solution launch_reduce
    /* Threads per output: the warps that nred can keep busy, 1 to 8. */
    int threads = WARP;
    while (threads < THREADS && threads < nred)
        threads *= 2;
    reduce_kernel<<<blocks_for(nout, 1), threads>>>(op, kept, red, nout, nred, dst);
    ND_CUDA_LAUNCHED("reduce_kernel");
    return ND_OK;
    //@ stub
    //> /* One block per output (blocks_for(nout, 1)); a power of two of
    //>  * threads, 32 to THREADS, no more than nred needs. */
    //> (void)op; (void)kept; (void)red; (void)nout; (void)nred; (void)dst;
    //> (void)reduce_kernel;
    //> return nd_not_implemented("launch_reduce", 6);
    //@ end solution launch_reduce
}
//@ end snippet launch_reduce

/* ------------------------------------------------------------------------ */
/* Matmul (lesson 5 on the GPU)                                             */
/* ------------------------------------------------------------------------ */

//@ snippet matrices
/* The operands of a batched matmul c = a @ b, c compact of shape
 * (batch..., m, n).  Matrix z of a starts at a.data + offset_of(z, abatch)
 * (abatch: c's batch shape with a's batch strides and a's offset), and its
 * element (i, p) is a further i * a_rs + p * a_cs floats on; b likewise. */
struct matmul_args {
    view abatch, bbatch;
    int64_t a_rs, a_cs, b_rs, b_cs;
    int64_t m, n, k, nbatch;
    float *c;
};
//@ end snippet matrices

//@ snippet matmul_naive_kernel
/* One thread per element of c: thread (x, y) of the grid computes
 * c[z][i][j] for i = y, j = x, z = blockIdx.z (+ gridDim.z ...). */
static __global__ void matmul_naive_kernel(matmul_args g)
{
    //@ solution matmul_naive_kernel
    int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= g.m || j >= g.n)
        return;   /* no barrier below: an early return is safe */
    for (int64_t z = blockIdx.z; z < g.nbatch; z += gridDim.z) {
        const float *a = g.abatch.data + offset_of(z, g.abatch) + i * g.a_rs;
        const float *b = g.bbatch.data + offset_of(z, g.bbatch) + j * g.b_cs;
        float acc = 0.0f;
        for (int64_t p = 0; p < g.k; p++)
            acc += a[p * g.a_cs] * b[p * g.b_rs];
        g.c[(z * g.m + i) * g.n + j] = acc;
    }
    //@ stub
    //> (void)g;
    //@ end solution matmul_naive_kernel
}
//@ end snippet matmul_naive_kernel

//@ snippet matmul_tiled_kernel
/* The tiled kernel: a block of 16 x 16 threads computes a 128 x 128 tile
 * of c, each thread an 8 x 8 square of it held in 64 registers (rows
 * 8 ty .. 8 ty + 7, columns 8 tx .. 8 tx + 7).  Step by step along k, the
 * block stages a 128 x 8 panel of a and an 8 x 128 panel of b in shared
 * memory; each value staged is then read by 16 threads, and each value
 * read into a register is used 8 times: 64 multiply-adds per 16 floats
 * read from shared memory. */
#define TM 128   /* tile rows */
#define TN 128   /* tile columns */
#define TK 8     /* panel depth */
#define TT 16    /* threads per tile side */
#define TR 8     /* outputs per thread side: TM / TT */

static __global__ void matmul_tiled_kernel(matmul_args g)
{
    //@ solution matmul_tiled_kernel
    /* as[p][i] holds a[i0 + i][p0 + p]: stored transposed, so a thread
     * reads the 8 values of its rows for step p as two float4 from one
     * row of as.  4 floats of padding per row spread the transposing
     * stores over all 32 banks, and keep rows 16-byte aligned. */
    __shared__ __align__(16) float as[TK][TM + 4];
    __shared__ __align__(16) float bs[TK][TN];
    int tx = threadIdx.x, ty = threadIdx.y, t = ty * TT + tx;
    int64_t i0 = (int64_t)blockIdx.y * TM, j0 = (int64_t)blockIdx.x * TN;
    for (int64_t z = blockIdx.z; z < g.nbatch; z += gridDim.z) {
        const float *a = g.abatch.data + offset_of(z, g.abatch);
        const float *b = g.bbatch.data + offset_of(z, g.bbatch);
        float acc[TR][TR];
#pragma unroll
        for (int r = 0; r < TR; r++)
#pragma unroll
            for (int c = 0; c < TR; c++)
                acc[r][c] = 0.0f;
        for (int64_t p0 = 0; p0 < g.k; p0 += TK) {
            /* Stage the panels: 1024 values each, 4 per thread, with
             * zeros outside the matrices, so edges need no special case.
             * Neighbouring threads read neighbouring addresses of a
             * row-major operand (along k for a, along n for b). */
#pragma unroll
            for (int r = 0; r < 4; r++) {
                int e = t + r * TT * TT;
                int ai = e / TK, ap = e % TK;
                int64_t gi = i0 + ai, gp = p0 + ap;
                as[ap][ai] = gi < g.m && gp < g.k ? a[gi * g.a_rs + gp * g.a_cs] : 0.0f;
                int bp = e / TN, bj = e % TN;
                int64_t gq = p0 + bp, gj = j0 + bj;
                bs[bp][bj] = gq < g.k && gj < g.n ? b[gq * g.b_rs + gj * g.b_cs] : 0.0f;
            }
            __syncthreads();   /* the panels are complete */
#pragma unroll
            for (int p = 0; p < TK; p++) {
                /* four 16-byte loads instead of sixteen 4-byte ones */
                float4 x0 = *(const float4 *)&as[p][ty * TR];
                float4 x1 = *(const float4 *)&as[p][ty * TR + 4];
                float4 y0 = *(const float4 *)&bs[p][tx * TR];
                float4 y1 = *(const float4 *)&bs[p][tx * TR + 4];
                float x[TR] = { x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w };
                float y[TR] = { y0.x, y0.y, y0.z, y0.w, y1.x, y1.y, y1.z, y1.w };
#pragma unroll
                for (int r = 0; r < TR; r++)
#pragma unroll
                    for (int c = 0; c < TR; c++)
                        acc[r][c] += x[r] * y[c];
            }
            __syncthreads();   /* everyone is done with the panels */
        }
        float *c = g.c + z * g.m * g.n;
#pragma unroll
        for (int r = 0; r < TR; r++)
#pragma unroll
            for (int cc = 0; cc < TR; cc++) {
                int64_t i = i0 + ty * TR + r, j = j0 + tx * TR + cc;
                if (i < g.m && j < g.n)
                    c[i * g.n + j] = acc[r][cc];
            }
    }
    //@ stub
    //> /* __shared__ panels of a (TK x TM, transposed) and b (TK x TN).
    //>  * For each matrix z of this block, for p0 = 0, TK, ...: stage both
    //>  * panels (zeros outside the matrices), __syncthreads(), accumulate
    //>  * the TR x TR outputs, __syncthreads(); then write the outputs that
    //>  * lie inside c. */
    //> (void)g;
    //@ end solution matmul_tiled_kernel
}
//@ end snippet matmul_tiled_kernel

//@ snippet launch_matmul
static nd_status launch_matmul(const matmul_args &g, bool tiled)
{
    //@ solution launch_matmul
    unsigned batch = (unsigned)(g.nbatch < MAX_BLOCKS ? g.nbatch : MAX_BLOCKS);
    /* A matrix of c smaller than one block of threads would leave a
     * 128 x 128 tile nearly empty: such batches go to the naive kernel. */
    if (tiled && g.m * g.n > TT * TT) {
        dim3 grid((unsigned)((g.n + TN - 1) / TN), (unsigned)((g.m + TM - 1) / TM), batch);
        matmul_tiled_kernel<<<grid, dim3(TT, TT)>>>(g);
        ND_CUDA_LAUNCHED("matmul_tiled_kernel");
    } else {
        dim3 block(16, 16);
        dim3 grid((unsigned)((g.n + 15) / 16), (unsigned)((g.m + 15) / 16), batch);
        matmul_naive_kernel<<<grid, block>>>(g);
        ND_CUDA_LAUNCHED("matmul_naive_kernel");
    }
    return ND_OK;
    //@ stub
    //> /* x covers n (columns), y covers m (rows), z the batch (at most
    //>  * MAX_BLOCKS).  Tiled: one block of TT x TT threads per TM x TN tile
    //>  * of c, unless a matrix of c has no more than TT * TT elements.
    //>  * Naive: 16 x 16 threads per 16 x 16 outputs. */
    //> (void)g; (void)tiled; (void)matmul_naive_kernel; (void)matmul_tiled_kernel;
    //> return nd_not_implemented("launch_matmul", 6);
    //@ end solution launch_matmul
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
    return launch_reduce(op, kept, red, nout, nred, (float *)dst->buf->ptr);
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
    return launch_matmul(g, tiled);
}
