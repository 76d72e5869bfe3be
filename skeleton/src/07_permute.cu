/*
 * 07_permute.cu -- lesson 7: permute at close to the speed of a copy.
 *
 * nd_permute_bytes writes dst = src.permute(perm), made compact, for
 * elements of 1, 2, 4, 8 or 16 bytes.  A permute does no arithmetic: each
 * byte is read once and written once, so the most it can do is what a
 * plain copy of the same bytes does, and "% of copy" is how it is measured
 * (make bench; tests/bench/bench_gpu_permute.cu).
 *
 * The versions, one kernel each:
 *
 *   1  naive      one thread per element; lesson 6's index transform on
 *                 the shape as given; the element moved byte by byte.
 *   2  generic    on the simplified permutation; the index helper unrolled
 *                 for a fixed number of axes; 1 to 16 bytes per thread.
 *   3  transpose  for (1,0) and (0,2,1): a 32x32 tile staged in shared
 *                 memory, so that both the reads and the writes are
 *                 coalesced.
 *   4  transpose2 version 3 for 2-byte elements, moved in pairs as 4-byte
 *                 words through a 64x64 tile.
 *
 * nd_permute_bytes plans (simplify, pick the movement size, pick the
 * version) and runs the plan; nd_permute_bytes_version forces a version,
 * for the tests and the benchmark.  On ND_CPU the same plan runs as a
 * plain host loop over the same index helper, so that tests can compare
 * the devices.
 *
 * You write the simplification, the index helper, the kernels and the
 * plan; the argument checks and the launches are given.
 */
#include <stdint.h>
#include <string.h>

#include "nd_cuda.h"

/* Threads per block of the one-unit-per-thread kernels (versions 1, 2). */
#define THREADS 256

/* The most blocks one launch uses; grid-stride loops cover the rest.  An
 * H100 holds about 132 SMs x 8 blocks of 256 threads at once, so 4096
 * blocks keep any current GPU busy, and a launch never meets the 65535
 * limit of gridDim.y and z (the grids here are one-dimensional). */
#define MAX_BLOCKS 4096

/* The transpose tile: TILE x TILE elements, moved by TILE x TILE_ROWS
 * threads, each moving TILE / TILE_ROWS rows. */
#define TILE 32
#define TILE_ROWS 8

/* The versions; V_COPY is no kernel: one cudaMemcpy (or memcpy). */
enum { V_AUTO = 0, V_NAIVE = 1, V_GENERIC = 2, V_TRANSPOSE = 3, V_TRANSPOSE2 = 4, V_COPY = 5 };

static const char *const version_names[] = { "auto", "naive", "generic", "transpose",
                                             "transpose2", "copy" };

/* ------------------------------------------------------------------------ */
/* Simplifying the permutation                                              */
/* ------------------------------------------------------------------------ */

/* perm must name each of 0 .. ndim-1 once.  op names the caller. */
static nd_status check_perm(int ndim, const int *perm, const char *op)
{
    if (ndim > 0 && perm == NULL)
        return nd_fail(ND_ERR_ARG, "%s: argument 'perm' is NULL", op);
    bool seen[ND_MAX_DIMS] = { false };
    for (int i = 0; i < ndim; i++) {
        char p[64];
        if (perm[i] < 0 || perm[i] >= ndim)
            return nd_fail(ND_ERR_AXIS, "%s: perm %s is not a permutation: axis %d is out of "
                           "range for %d axes", op, nd_axes_str(ndim, perm, p, sizeof p),
                           perm[i], ndim);
        if (seen[perm[i]])
            return nd_fail(ND_ERR_AXIS, "%s: perm %s is not a permutation: axis %d appears "
                           "twice", op, nd_axes_str(ndim, perm, p, sizeof p), perm[i]);
        seen[perm[i]] = true;
    }
    return ND_OK;
}

extern "C" nd_status nd_simplify_permutation(int ndim, const int64_t *shape, const int *perm,
                                             int *out_ndim, int64_t *out_shape, int *out_perm)
{
    static const char op[] = "simplify_permutation";
    nd_status s = nd_check_shape(ndim, shape, op);
    if (s == ND_OK)
        s = check_perm(ndim, perm, op);
    if (s != ND_OK)
        return s;
    if (out_ndim == NULL || out_shape == NULL || out_perm == NULL)
        return nd_fail(ND_ERR_ARG, "%s: argument '%s' is NULL", op,
                       out_ndim == NULL ? "out_ndim" : out_shape == NULL ? "out_shape"
                                                                         : "out_perm");
    //@ snippet simplify_permutation
    /* TODO (lesson 7): write nd_simplify_permutation. */
    /* Drop size-1 axes (renumbering perm); then merge source axes a-1, a
     * wherever the result has a right after a-1; write the outputs last. */
    return nd_not_implemented("nd_simplify_permutation", 7);
    //@ end snippet simplify_permutation
}

/* ------------------------------------------------------------------------ */
/* The index helper                                                         */
/* ------------------------------------------------------------------------ */

//@ snippet index_helper
/* Position <-> multi-index for a row-major shape of N axes, N fixed when
 * compiling: every loop below unrolls, and index[] and stride[] live in
 * registers (an array indexed by a run-time number would go to local
 * memory on a GPU).  I is the index type: 32-bit arithmetic, divisions
 * above all, is several times cheaper than 64-bit on a GPU. */
template <int N, typename I>
struct index_helper {
    I stride[N];   /* row-major strides of the shape, in units; stride[N-1] == 1 */

    /* The row-major strides of shape[0..N-1]. */
    __host__ void init(const int64_t *shape)
    {
        /* TODO (lesson 7): write index_helper_init. */
        (void)shape;
        for (int k = 0; k < N; k++)
            stride[k] = 0;
    }

    /* The multi-index of row-major position pos: the first N-1 entries by
     * division, the last is what remains. */
    __host__ __device__ __forceinline__ void index_of(I pos, I *index) const
    {
        /* TODO (lesson 7): write index_of. */
        for (int k = 0; k < N; k++)
            index[k] = 0;
        (void)pos;
    }
};

/* What the generic kernel needs: the result's shape (its helper), and for
 * each result axis k the row-major stride in the source of the source
 * axis it is, perm[k].  The permuted multi-index is never built: the
 * source offset is sum(index[k] * src_stride[k]) over the result's index. */
template <int N, typename I>
struct permute_args {
    index_helper<N, I> dst;
    I src_stride[N];
    I count;   /* units to move */
};

/* Move unit number i of the result (row-major) from where it is in src. */
template <int N, typename T, typename I>
static __host__ __device__ __forceinline__ void permute_one(const permute_args<N, I> &a,
                                                           const T *src, T *dst, I i)
{
    /* TODO (lesson 7): write permute_one. */
    (void)a; (void)src; (void)dst; (void)i;
}
//@ end snippet index_helper

/* ------------------------------------------------------------------------ */
/* The kernels                                                              */
/* ------------------------------------------------------------------------ */

/* Version 1's arguments: the shape as given (result axes), the source
 * stride of each result axis, in elements. */
struct naive_args {
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    int64_t src_stride[ND_MAX_DIMS];
    int64_t count;
    int elem_bytes;
};

//@ snippet naive_kernel
/* Version 1: one thread per element, lesson 6's loop over the axes, bytes
 * one at a time.  Correct for any shape and any alignment; slow. */
static __host__ __device__ __forceinline__ void naive_one(const naive_args &a,
                                                         const unsigned char *src,
                                                         unsigned char *dst, int64_t i)
{
    /* TODO (lesson 7): write naive_one. */
    (void)a; (void)src; (void)dst; (void)i;
}

static __global__ void naive_kernel(naive_args a, const unsigned char *src, unsigned char *dst)
{
    /* TODO (lesson 7): write naive_kernel. */
    /* A grid-stride loop over the a.count elements; naive_one moves one. */
    (void)a; (void)src; (void)dst; (void)naive_one;
}
//@ end snippet naive_kernel

//@ snippet permute_kernel
/* Version 2: one unit of T (1 to 16 bytes) per thread, on the simplified
 * axes, through the unrolled index helper. */
template <int N, typename T, typename I>
static __global__ void permute_kernel(permute_args<N, I> a, const T *__restrict__ src,
                                      T *__restrict__ dst)
{
    /* TODO (lesson 7): write permute_kernel. */
    /* A grid-stride loop over the a.count units; permute_one moves one. */
    (void)a; (void)src; (void)dst;
}
//@ end snippet permute_kernel

//@ snippet transpose_kernel
/* Version 3: src is (batch, rows, cols), dst (batch, cols, rows).  A block
 * of TILE x TILE_ROWS threads moves one TILE x TILE tile at a time: it
 * reads the tile row by row (a warp reads 32 neighbours in src), then
 * writes it column by column (a warp writes 32 neighbours in dst).  Each
 * row of the tile is padded by one 4-byte word (TILE_PAD(T) elements): a
 * warp reading one column of tile[32][32] would hit one bank 32 times;
 * with rows of 33 words, 32 different banks.  (A pad of one element of 1
 * or 2 bytes shifts a row by part of a word: a column's reads then share
 * banks, 1.75 or 1.5 wavefronts per request where 1 would do.) */
#define TILE_PAD(T) (sizeof(T) >= 4 ? 1 : 4 / (int)sizeof(T))
template <typename T>
static __global__ void transpose_kernel(const T *__restrict__ src, T *__restrict__ dst,
                                        int64_t batch, int64_t rows, int64_t cols)
{
    /* TODO (lesson 7): write transpose_kernel. */
    /* __shared__ T tile[TILE][TILE + TILE_PAD(T)].  For each tile t of
     * this block (t = blockIdx.x; t += gridDim.x): read it row by row
     * into the tile, __syncthreads(), write it column by column,
     * __syncthreads(). */
    (void)src; (void)dst; (void)batch; (void)rows; (void)cols;
}
//@ end snippet transpose_kernel

//@ snippet transpose2_kernel
/* Version 4: version 3 for 2-byte elements, rows and cols even.  A thread
 * moves two neighbours as one 4-byte word each way: the tile is 64 x 64
 * elements, a warp reads and writes 32 words (128 bytes) per row instead
 * of 64 bytes.  Reading it down a column needs the two halves of a word
 * from two rows of the tile, so the tile is stored as 2-byte elements,
 * padded by 2 (one word) per row. */
static __global__ void transpose2_kernel(const unsigned int *__restrict__ src,
                                         unsigned int *__restrict__ dst, int64_t batch,
                                         int64_t rows, int64_t cols)
{
    /* TODO (lesson 7): write transpose2_kernel. */
    /* As transpose_kernel with a (2 * TILE) x (2 * TILE + 2) tile of
     * unsigned short: each thread reads a word (two neighbours of a row)
     * and stores its halves; writes pack two neighbours of a column. */
    (void)src; (void)dst; (void)batch; (void)rows; (void)cols;
}
//@ end snippet transpose2_kernel

/* ------------------------------------------------------------------------ */
/* The plan                                                                 */
/* ------------------------------------------------------------------------ */

//@ snippet permute_plan_struct
/* What nd_permute_bytes will do.  Axes are counted in units of `unit`
 * bytes, the bytes a thread moves as one. */
struct plan {
    int version;                  /* V_NAIVE .. V_COPY                    */
    int ndim;                     /* simplified axes                      */
    int64_t shape[ND_MAX_DIMS];   /* simplified source shape, in units    */
    int perm[ND_MAX_DIMS];        /* simplified permutation               */
    int unit;                     /* 1, 2, 4, 8 or 16 bytes               */
    int64_t batch, rows, cols;    /* versions 3, 4: src is (batch, rows,
                                     cols), dst (batch, cols, rows)      */
};
//@ end snippet permute_plan_struct

/* Refuse a forced version that cannot do this permutation. */
static nd_status cannot(int version, const char *why)
{
    return nd_fail(ND_ERR_ARG, "permute_bytes: version %d (%s) cannot do this permutation: %s",
                   version, version_names[version], why);
}

//@ snippet permute_plan
/* Plan dst = src.permute(perm): `want` is V_AUTO (choose) or a version to
 * force.  src and dst are only looked at for their alignment. */
static nd_status make_plan(int want, const void *src, const void *dst, size_t elem_bytes,
                           int ndim, const int64_t *shape, const int *perm, plan *p)
{
    /* TODO (lesson 7): write permute_plan. */
    /* nd_simplify_permutation; then the unit (the widest of 16, 8, 4,
     * 2, 1 bytes dividing the bytes that move together and both
     * addresses); then the version, or refuse a forced one that cannot
     * do it (cannot(want, why)). */
    (void)want; (void)src; (void)dst; (void)elem_bytes; (void)ndim; (void)shape;
    (void)perm; (void)cannot;
    memset(p, 0, sizeof *p);
    return nd_not_implemented("nd_permute_bytes", 7);
}
//@ end snippet permute_plan

/* ------------------------------------------------------------------------ */
/* Running a plan (given)                                                   */
/* ------------------------------------------------------------------------ */

static unsigned blocks_for(int64_t n, int64_t per_block)
{
    int64_t b = (n + per_block - 1) / per_block;
    return (unsigned)(b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : b);
}

template <int N, typename T, typename I>
static nd_status run_generic_as(nd_device dev, const plan &p, const void *src, void *dst)
{
    permute_args<N, I> a;
    memset(&a, 0, sizeof a);
    int64_t src_shape[N], dst_shape[N];
    for (int k = 0; k < N; k++) {
        src_shape[k] = p.ndim == 0 ? 1 : p.shape[k];
        dst_shape[k] = p.ndim == 0 ? 1 : p.shape[p.perm[k]];
    }
    index_helper<N, I> in;
    in.init(src_shape);
    a.dst.init(dst_shape);
    for (int k = 0; k < N; k++)
        a.src_stride[k] = in.stride[p.ndim == 0 ? k : p.perm[k]];
    a.count = (I)nd_shape_numel(N, dst_shape);
    if (dev == ND_CPU) {
        for (I i = 0; i < a.count; i++)
            permute_one(a, (const T *)src, (T *)dst, i);
        return ND_OK;
    }
    permute_kernel<N, T, I><<<blocks_for(a.count, THREADS), THREADS>>>(a, (const T *)src,
                                                                        (T *)dst);
    ND_CUDA_LAUNCHED("permute_kernel");
    return ND_OK;
}

/* 32-bit indices when every position and the grid-stride step fit. */
template <int N, typename T>
static nd_status run_generic_t(nd_device dev, const plan &p, const void *src, void *dst)
{
    if (nd_shape_numel(p.ndim, p.shape) <= INT32_MAX / 2)
        return run_generic_as<N, T, int32_t>(dev, p, src, dst);
    return run_generic_as<N, T, int64_t>(dev, p, src, dst);
}

/* The movement types: CUDA's vector types load and store 8 and 16 bytes
 * in one instruction. */
template <int N>
static nd_status run_generic_n(nd_device dev, const plan &p, const void *src, void *dst)
{
    switch (p.unit) {
    case 1: return run_generic_t<N, unsigned char>(dev, p, src, dst);
    case 2: return run_generic_t<N, unsigned short>(dev, p, src, dst);
    case 4: return run_generic_t<N, unsigned int>(dev, p, src, dst);
    case 8: return run_generic_t<N, uint2>(dev, p, src, dst);
    default: return run_generic_t<N, uint4>(dev, p, src, dst);
    }
}

static nd_status run_generic(nd_device dev, const plan &p, const void *src, void *dst)
{
    switch (p.ndim) {
    case 0:
    case 1: return run_generic_n<1>(dev, p, src, dst);
    case 2: return run_generic_n<2>(dev, p, src, dst);
    case 3: return run_generic_n<3>(dev, p, src, dst);
    case 4: return run_generic_n<4>(dev, p, src, dst);
    case 5: return run_generic_n<5>(dev, p, src, dst);
    case 6: return run_generic_n<6>(dev, p, src, dst);
    case 7: return run_generic_n<7>(dev, p, src, dst);
    default: return run_generic_n<8>(dev, p, src, dst);
    }
}

/* Version 1 works on the permutation as given, in elements. */
static nd_status run_naive(nd_device dev, const void *src, void *dst, size_t elem_bytes,
                           int ndim, const int64_t *shape, const int *perm)
{
    naive_args a;
    memset(&a, 0, sizeof a);
    a.ndim = ndim;
    a.elem_bytes = (int)elem_bytes;
    int64_t src_strides[ND_MAX_DIMS], s = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        src_strides[k] = s;
        s *= shape[k];
    }
    for (int k = 0; k < ndim; k++) {
        a.shape[k] = shape[perm[k]];
        a.src_stride[k] = src_strides[perm[k]];
    }
    a.count = s;
    if (dev == ND_CPU) {
        for (int64_t i = 0; i < a.count; i++)
            naive_one(a, (const unsigned char *)src, (unsigned char *)dst, i);
        return ND_OK;
    }
    naive_kernel<<<blocks_for(a.count, THREADS), THREADS>>>(a, (const unsigned char *)src,
                                                            (unsigned char *)dst);
    ND_CUDA_LAUNCHED("naive_kernel");
    return ND_OK;
}

static nd_status run_transpose(const plan &p, const void *src, void *dst)
{
    dim3 block(TILE, TILE_ROWS);
    if (p.version == V_TRANSPOSE2) {
        int64_t tiles = p.batch * ((p.rows + 2 * TILE - 1) / (2 * TILE)) *
                        ((p.cols + 2 * TILE - 1) / (2 * TILE));
        transpose2_kernel<<<blocks_for(tiles, 1), block>>>(
            (const unsigned int *)src, (unsigned int *)dst, p.batch, p.rows, p.cols);
        ND_CUDA_LAUNCHED("transpose2_kernel");
        return ND_OK;
    }
    int64_t tiles = p.batch * ((p.rows + TILE - 1) / TILE) * ((p.cols + TILE - 1) / TILE);
    unsigned grid = blocks_for(tiles, 1);
    switch (p.unit) {
    case 1:
        transpose_kernel<unsigned char><<<grid, block>>>(
            (const unsigned char *)src, (unsigned char *)dst, p.batch, p.rows, p.cols);
        break;
    case 2:
        transpose_kernel<unsigned short><<<grid, block>>>(
            (const unsigned short *)src, (unsigned short *)dst, p.batch, p.rows, p.cols);
        break;
    case 4:
        transpose_kernel<unsigned int><<<grid, block>>>(
            (const unsigned int *)src, (unsigned int *)dst, p.batch, p.rows, p.cols);
        break;
    case 8:
        transpose_kernel<uint2><<<grid, block>>>((const uint2 *)src, (uint2 *)dst, p.batch,
                                                 p.rows, p.cols);
        break;
    default:
        transpose_kernel<uint4><<<grid, block>>>((const uint4 *)src, (uint4 *)dst, p.batch,
                                                 p.rows, p.cols);
        break;
    }
    ND_CUDA_LAUNCHED("transpose_kernel");
    return ND_OK;
}

/* ------------------------------------------------------------------------ */
/* The public functions                                                     */
/* ------------------------------------------------------------------------ */

/* A device number from C, checked before C++ reads it as an nd_device: a
 * value outside the enum (device 7) may not even be loaded as one in C++
 * (UBSan's enum check stops there), so its bytes are read as the int they
 * are. */
static nd_status check_device(const nd_device *dev, const char *op)
{
    int d;
    static_assert(sizeof d == sizeof *dev, "an nd_device is an int");
    memcpy(&d, dev, sizeof d);
    if (d != ND_CPU && d != ND_CUDA)
        return nd_fail(ND_ERR_ARG, "%s: unknown device %d", op, d);
    return ND_OK;
}

extern "C" nd_status nd_permute_bytes_version(nd_device dev, const void *src_ptr, void *dst_ptr,
                                              size_t elem_bytes, int ndim,
                                              const int64_t *shape, const int *perm,
                                              int version, int *ran)
{
    static const char op[] = "permute_bytes";
    nd_status known = check_device(&dev, op);
    if (known != ND_OK)
        return known;
    if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8 &&
        elem_bytes != 16)
        return nd_fail(ND_ERR_ARG, "%s: elem_bytes is %zu; it must be 1, 2, 4, 8 or 16", op,
                       elem_bytes);
    if (version < V_AUTO || version > V_TRANSPOSE2)
        return nd_fail(ND_ERR_ARG, "%s: version %d is not 0 (auto) to 4", op, version);
    nd_status s = nd_check_shape(ndim, shape, op);
    if (s == ND_OK)
        s = check_perm(ndim, perm, op);
    if (s != ND_OK)
        return s;
    int64_t n = nd_shape_numel(ndim, shape);
    uintptr_t bytes = (uintptr_t)n * elem_bytes, a = (uintptr_t)src_ptr, b = (uintptr_t)dst_ptr;
    if (n > 0 && (src_ptr == NULL || dst_ptr == NULL))
        return nd_fail(ND_ERR_ARG, "%s: argument '%s' is NULL", op,
                       src_ptr == NULL ? "src_ptr" : "dst_ptr");
    if (n > 0 && a < b + bytes && b < a + bytes)
        return nd_fail(ND_ERR_ARG, "%s: src and dst overlap (%zu bytes each, %td apart)", op,
                       (size_t)bytes, (ptrdiff_t)(b - a));

    plan p;
    s = make_plan(version, src_ptr, dst_ptr, elem_bytes, ndim, shape, perm, &p);
    if (s != ND_OK)
        return s;
    if (ran != NULL)
        *ran = p.version == V_COPY ? 0 : p.version;
    if (n == 0)
        return ND_OK;
    switch (p.version) {
    case V_COPY:
        if (dev == ND_CPU)
            memcpy(dst_ptr, src_ptr, (size_t)bytes);
        else
            ND_CUDA_TRY(cudaMemcpy(dst_ptr, src_ptr, (size_t)bytes, cudaMemcpyDeviceToDevice));
        return ND_OK;
    case V_NAIVE:
        return run_naive(dev, src_ptr, dst_ptr, elem_bytes, ndim, shape, perm);
    case V_TRANSPOSE:
    case V_TRANSPOSE2:
        if (dev == ND_CUDA)
            return run_transpose(p, src_ptr, dst_ptr);
        return run_generic(dev, p, src_ptr, dst_ptr);   /* the CPU's one loop */
    default:
        return run_generic(dev, p, src_ptr, dst_ptr);
    }
}

extern "C" nd_status nd_permute_bytes(nd_device dev, const void *src_ptr, void *dst_ptr,
                                      size_t elem_bytes, int ndim, const int64_t *shape,
                                      const int *perm)
{
    nd_status known = check_device(&dev, "permute_bytes");
    if (known != ND_OK)
        return known;
    return nd_permute_bytes_version(dev, src_ptr, dst_ptr, elem_bytes, ndim, shape, perm,
                                    V_AUTO, NULL);
}
