/* Self-test of the CUDA emulator: what correct kernels compute. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <vector>

#include "check.h"

/* ---- vector add, sizes not a multiple of the block ---------------------- */
__global__ void vec_add(const float *__restrict__ a, const float *__restrict__ b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

static void test_vec_add(int n)
{
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i + 1.0f;
    }
    float *da, *db, *dc;
    CUDA_OK(cudaMalloc(&da, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&db, n * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&dc, n * sizeof(float)));
    CUDA_OK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    vec_add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (c[i] != 3.0f * (float)i + 1.0f) bad++;
    char name[64];
    snprintf(name, sizeof name, "vector add, n = %d", n);
    CHECK(name, bad == 0, "%d wrong elements", bad);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
}

/* ---- 2-D and 3-D grids and blocks --------------------------------------- */
__global__ void record_ids(uint4 *out)
{
    unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
    unsigned g = block * per_block + t;
    out[g] = make_uint4(threadIdx.x | threadIdx.y << 10 | threadIdx.z << 20,
                        blockIdx.x | blockIdx.y << 10 | blockIdx.z << 20,
                        blockDim.x | blockDim.y << 10 | blockDim.z << 20,
                        gridDim.x | gridDim.y << 10 | gridDim.z << 20);
}

static void test_ids(dim3 grid, dim3 block, const char *name)
{
    size_t n = (size_t)grid.x * grid.y * grid.z * block.x * block.y * block.z;
    uint4 *d;
    CUDA_OK(cudaMalloc(&d, n * sizeof(uint4)));
    record_ids<<<grid, block>>>(d);
    CUDA_OK(cudaGetLastError());
    std::vector<uint4> h(n);
    CUDA_OK(cudaMemcpy(h.data(), d, n * sizeof(uint4), cudaMemcpyDeviceToHost));
    int bad = 0;
    size_t g = 0;
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++)
                for (unsigned tz = 0; tz < block.z; tz++)
                    for (unsigned ty = 0; ty < block.y; ty++)
                        for (unsigned tx = 0; tx < block.x; tx++, g++) {
                            uint4 v = h[g];
                            if (v.x != (tx | ty << 10 | tz << 20) || v.y != (bx | by << 10 | bz << 20) ||
                                v.z != (block.x | block.y << 10 | block.z << 20) ||
                                v.w != (grid.x | grid.y << 10 | grid.z << 20))
                                bad++;
                        }
    CHECK(name, bad == 0, "%d threads saw wrong builtins", bad);
    cudaFree(d);
}

/* ---- shared-memory tree reduction with __syncthreads --------------------- */
template <int BLOCK>
__global__ void reduce_sum(const float *in, float *out, int n)
{
    __shared__ float s[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

/* a 3-D block: lanes are linear ids x + y*Dx + z*Dx*Dy; a barrier between shuffles */
__global__ void block3d_sum(const int *in, int *out)
{
    __shared__ int warp_sums[32];
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    int v = in[t];
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
    if (t % 32 == 0) warp_sums[t / 32] = v;
    __syncthreads();
    if (t < 32) {
        int nw = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
        int w = t < nw ? warp_sums[t] : 0;
        for (int off = 16; off > 0; off >>= 1) w += __shfl_down_sync(0xffffffff, w, off);
        if (t == 0) *out = w;
    }
}

/* ---- warp-shuffle reductions --------------------------------------------- */
__global__ void warp_sums(const int *in, int *down, int *xr, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    int d = v;
    for (int off = 16; off > 0; off /= 2) d += __shfl_down_sync(0xffffffff, d, off);
    int x = v;
#pragma unroll
    for (int m = 1; m < 32; m <<= 1) x += __shfl_xor_sync(0xffffffffu, x, m);
    int lane = threadIdx.x % warpSize;
    if (lane == 0) down[i / 32] = d;
    xr[i] = x; /* every lane has the warp's sum */
}

__global__ void warp_misc(unsigned *out)
{
    int lane = threadIdx.x & 31;
    float f = (float)lane;
    double dv = 2.0 * lane;
    long long ll = 1000000000000LL + lane;
    unsigned long long ull = 5ull << 40 | (unsigned)lane;
    /* broadcast, up, width 16, other types, ballot/any/all */
    out[lane * 8 + 0] = (unsigned)__shfl_sync(0xffffffff, lane * 3, 7);
    out[lane * 8 + 1] = (unsigned)__shfl_up_sync(0xffffffff, lane, 2);
    out[lane * 8 + 2] = (unsigned)__shfl_down_sync(0xffffffff, lane, 4, 16);
    out[lane * 8 + 3] = (unsigned)__shfl_xor_sync(0xffffffff, f, 1);
    out[lane * 8 + 4] = (unsigned)(__shfl_sync(0xffffffff, dv, 31) + (double)(__shfl_sync(0xffffffff, ll, 0) - 1000000000000LL));
    out[lane * 8 + 5] = __ballot_sync(0xffffffff, lane % 3 == 0);
    out[lane * 8 + 6] = (unsigned)(__any_sync(0xffffffff, lane == 5) + 2 * __all_sync(0xffffffff, lane < 40) +
                                   4 * __all_sync(0xffffffff, lane < 31));
    out[lane * 8 + 7] = (unsigned)(__shfl_down_sync(0xffffffff, ull, 1) >> 40);
    __syncwarp();
}

/* ---- atomics -------------------------------------------------------------- */
__global__ void atomics(int *ci, unsigned *cu, unsigned long long *cull, float *cf, double *cd, int *mx, int *mn,
                        unsigned *cas_wins, int *exch)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(ci, 1);
    atomicAdd(cu, 2u);
    atomicAdd(cull, 3ull);
    atomicAdd(cf, 0.5f);
    atomicAdd(cd, 0.25);
    atomicMax(mx, (i * 7919) % 1000);
    atomicMin(mn, 1000 - (i * 7919) % 1000);
    if (atomicCAS(cas_wins + 1, 0u, 1u) == 0u) atomicAdd(cas_wins, 1u);
    atomicExch(exch, i);
}

/* ---- vector types: CUDA's sizes and alignments, float4 loads -------------- */
static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4");
static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2");
static_assert(sizeof(int4) == 16 && alignof(int4) == 16, "int4");
static_assert(sizeof(int2) == 8 && alignof(int2) == 8, "int2");
static_assert(sizeof(uint4) == 16 && alignof(uint4) == 16, "uint4");
static_assert(sizeof(uint2) == 8 && alignof(uint2) == 8, "uint2");
static_assert(sizeof(double2) == 16 && alignof(double2) == 16, "double2");
static_assert(sizeof(longlong2) == 16 && alignof(longlong2) == 16, "longlong2");
static_assert(sizeof(ulonglong2) == 16 && alignof(ulonglong2) == 16, "ulonglong2");
static_assert(sizeof(char2) == 2 && alignof(char2) == 2, "char2");
static_assert(sizeof(char4) == 4 && alignof(char4) == 4, "char4");
static_assert(sizeof(uchar2) == 2 && alignof(uchar2) == 2, "uchar2");
static_assert(sizeof(uchar4) == 4 && alignof(uchar4) == 4, "uchar4");
static_assert(sizeof(short2) == 4 && alignof(short2) == 4, "short2");
static_assert(sizeof(short4) == 8 && alignof(short4) == 8, "short4");
static_assert(sizeof(ushort2) == 4 && alignof(ushort2) == 4, "ushort2");
static_assert(sizeof(ushort4) == 8 && alignof(ushort4) == 8, "ushort4");
static_assert(sizeof(float3) == 12 && alignof(float3) == 4, "float3");
static_assert(sizeof(dim3) == 12, "dim3");

struct __align__(16) Pair16 {
    float a, b;
};
static_assert(alignof(Pair16) == 16, "__align__");

__global__ void scale4(const float4 *in, float4 *out, int n4, float k)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
        float4 v = __ldg(&in[i]);
        out[i] = make_float4(v.x * k, v.y * k, v.z * k, v.w * k);
    }
}

/* ---- templates, qualified names, shmem and stream arguments --------------- */
namespace kernels {
template <int N, typename T>
__global__ void fill(T *out, T value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value * (T)N;
}
} // namespace kernels

__global__ void dyn_shared_reverse(const int *in, int *out)
{
    extern __shared__ int buf[];
    int t = threadIdx.x;
    buf[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = buf[blockDim.x - 1 - t];
}

__global__ void count_barrier(int *out)
{
    int c = __syncthreads_count(threadIdx.x % 3 == 0);
    int a = __syncthreads_and(threadIdx.x < 1000);
    int o = __syncthreads_or(threadIdx.x == 77);
    if (threadIdx.x == 0) {
        out[0] = c;
        out[1] = a;
        out[2] = o;
    }
}

__device__ __forceinline__ float twice(float x) { return 2.0f * x; }
__device__ __noinline__ float plus_one(float x) { return x + 1.0f; }

__global__ void __launch_bounds__(128) math_funcs(float *out, int *iout)
{
    if (threadIdx.x != 0) return;
    out[0] = rsqrtf(4.0f);
    out[1] = __expf(0.0f) + __logf(1.0f);
    out[2] = __fdividef(1.0f, 4.0f);
    out[3] = __int_as_float(__float_as_int(1.5f));
    out[4] = min(2.5f, 1.5f) + max(2.5f, 1.5f);
    out[5] = twice(plus_one(1.0f));
    iout[0] = min(3, 4) + max(3, 4);
    iout[1] = (int)min(3u, 4u);
    iout[2] = (int)max(-3LL, 4LL);
    iout[3] = __popc(0xF0u) + __clz(1);
}

int main(void)
{
    test_vec_add(1);
    test_vec_add(1000);
    test_vec_add((1 << 20) + 3);

    test_ids(dim3(3, 2), dim3(8, 4), "2-D grid, 2-D block builtins");
    test_ids(dim3(2, 3, 2), dim3(4, 2, 3), "3-D grid, 3-D block builtins");
    test_ids(dim3(5), dim3(33), "1-D grid of 33-thread blocks builtins");

    { /* shared-memory reduction */
        const int n = 100000, B = 256, nb = (n + B - 1) / B;
        std::vector<float> h(n);
        double want = 0;
        for (int i = 0; i < n; i++) {
            h[i] = (float)(i % 17);
            want += h[i];
        }
        float *din, *dout;
        CUDA_OK(cudaMalloc(&din, n * sizeof(float)));
        CUDA_OK(cudaMalloc(&dout, nb * sizeof(float)));
        CUDA_OK(cudaMemcpy(din, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        reduce_sum<B><<<nb, B>>>(din, dout, n);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaDeviceSynchronize());
        std::vector<float> part(nb);
        CUDA_OK(cudaMemcpy(part.data(), dout, nb * sizeof(float), cudaMemcpyDeviceToHost));
        double got = 0;
        for (float p : part) got += p;
        CHECK("shared-memory tree reduction with __syncthreads", got == want, "got %.1f, want %.1f", got, want);
        const int nb2 = (n + 1023) / 1024;
        reduce_sum<1024><<<nb2, 1024>>>(din, dout, n);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpy(part.data(), dout, nb2 * sizeof(float), cudaMemcpyDeviceToHost));
        got = 0;
        for (int b = 0; b < nb2; b++) got += part[b];
        CHECK("1024-thread blocks, every thread waiting at each barrier", got == want, "got %.1f, want %.1f", got,
              want);
        cudaFree(din);
        cudaFree(dout);
    }

    { /* warp shuffles: 3 blocks of 96 threads */
        const int n = 288;
        std::vector<int> h(n);
        for (int i = 0; i < n; i++) h[i] = i * i % 101;
        int *din, *ddown, *dxor;
        CUDA_OK(cudaMalloc(&din, n * sizeof(int)));
        CUDA_OK(cudaMalloc(&ddown, n / 32 * sizeof(int)));
        CUDA_OK(cudaMalloc(&dxor, n * sizeof(int)));
        CUDA_OK(cudaMemcpy(din, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
        warp_sums<<<3, 96>>>(din, ddown, dxor, n);
        CUDA_OK(cudaGetLastError());
        std::vector<int> down(n / 32), xr(n);
        CUDA_OK(cudaMemcpy(down.data(), ddown, n / 32 * sizeof(int), cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(xr.data(), dxor, n * sizeof(int), cudaMemcpyDeviceToHost));
        int bad_down = 0, bad_xor = 0;
        for (int w = 0; w < n / 32; w++) {
            int s = 0;
            for (int l = 0; l < 32; l++) s += h[w * 32 + l];
            if (down[w] != s) bad_down++;
            for (int l = 0; l < 32; l++)
                if (xr[w * 32 + l] != s) bad_xor++;
        }
        CHECK("warp reduction with __shfl_down_sync", bad_down == 0, "%d wrong warps", bad_down);
        CHECK("warp all-reduce with __shfl_xor_sync", bad_xor == 0, "%d wrong lanes", bad_xor);

        unsigned *dm;
        CUDA_OK(cudaMalloc(&dm, 32 * 8 * sizeof(unsigned)));
        warp_misc<<<1, 32>>>(dm);
        CUDA_OK(cudaGetLastError());
        unsigned m[256];
        CUDA_OK(cudaMemcpy(m, dm, sizeof m, cudaMemcpyDeviceToHost));
        int bad = 0;
        unsigned ballot = 0;
        for (int l = 0; l < 32; l += 3) ballot |= 1u << l;
        for (int l = 0; l < 32; l++) {
            unsigned *o = m + l * 8;
            int down16 = (l % 16) + 4 < 16 ? l + 4 : l;
            if (o[0] != 21) bad++;
            if (o[1] != (unsigned)(l >= 2 ? l - 2 : l)) bad++;
            if (o[2] != (unsigned)down16) bad++;
            if (o[3] != (unsigned)(l ^ 1)) bad++;
            if (o[4] != 62) bad++;
            if (o[5] != ballot) bad++;
            if (o[6] != 3) bad++;
            if (o[7] != 5) bad++;
        }
        int *d3;
        CUDA_OK(cudaMalloc(&d3, (n + 1) * sizeof(int)));
        CUDA_OK(cudaMemcpy(d3, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
        block3d_sum<<<1, dim3(8, 4, 9)>>>(d3, d3 + n); /* 288 threads, 9 warps */
        CUDA_OK(cudaGetLastError());
        int got3 = 0, want3 = 0;
        for (int i = 0; i < n; i++) want3 += h[i];
        CUDA_OK(cudaMemcpy(&got3, d3 + n, sizeof(int), cudaMemcpyDeviceToHost));
        CHECK("warps of a 3-D block, shuffles around a barrier", got3 == want3, "got %d, want %d", got3, want3);
        cudaFree(d3);
        CHECK("__shfl_sync/__shfl_up_sync/width 16/float, double, long long/__ballot_sync/__any_sync/__all_sync",
              bad == 0, "%d wrong values", bad);
        cudaFree(din);
        cudaFree(ddown);
        cudaFree(dxor);
        cudaFree(dm);
    }

    { /* atomics */
        int *ci, *mx, *mn, *ex;
        unsigned *cu, *cas;
        unsigned long long *cull;
        float *cf;
        double *cd;
        CUDA_OK(cudaMalloc(&ci, sizeof(int)));
        CUDA_OK(cudaMalloc(&mx, sizeof(int)));
        CUDA_OK(cudaMalloc(&mn, sizeof(int)));
        CUDA_OK(cudaMalloc(&ex, sizeof(int)));
        CUDA_OK(cudaMalloc(&cu, sizeof(unsigned)));
        CUDA_OK(cudaMalloc(&cas, 2 * sizeof(unsigned)));
        CUDA_OK(cudaMalloc(&cull, sizeof(unsigned long long)));
        CUDA_OK(cudaMalloc(&cf, sizeof(float)));
        CUDA_OK(cudaMalloc(&cd, sizeof(double)));
        CUDA_OK(cudaMemset(ci, 0, sizeof(int)));
        CUDA_OK(cudaMemset(mx, 0, sizeof(int)));
        int big = 1 << 30;
        CUDA_OK(cudaMemcpy(mn, &big, sizeof(int), cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(cu, 0, sizeof(unsigned)));
        CUDA_OK(cudaMemset(cas, 0, 2 * sizeof(unsigned)));
        CUDA_OK(cudaMemset(cull, 0, sizeof(unsigned long long)));
        CUDA_OK(cudaMemset(cf, 0, sizeof(float)));
        CUDA_OK(cudaMemset(cd, 0, sizeof(double)));
        atomics<<<10, 100>>>(ci, cu, cull, cf, cd, mx, mn, cas, ex);
        CUDA_OK(cudaGetLastError());
        int hi, hmx, hmn;
        unsigned hu, hcas[2];
        unsigned long long hull;
        float hf;
        double hd;
        CUDA_OK(cudaMemcpy(&hi, ci, sizeof hi, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(&hmx, mx, sizeof hmx, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(&hmn, mn, sizeof hmn, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(&hu, cu, sizeof hu, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(hcas, cas, sizeof hcas, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(&hull, cull, sizeof hull, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(&hf, cf, sizeof hf, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(&hd, cd, sizeof hd, cudaMemcpyDeviceToHost));
        CHECK("atomicAdd int/unsigned/unsigned long long/float/double",
              hi == 1000 && hu == 2000 && hull == 3000 && hf == 500.0f && hd == 250.0,
              "%d %u %llu %g %g", hi, hu, hull, (double)hf, hd);
        CHECK("atomicMax/atomicMin", hmx == 999 && hmn == 1, "max %d min %d", hmx, hmn);
        CHECK("atomicCAS: exactly one winner", hcas[0] == 1 && hcas[1] == 1, "%u %u", hcas[0], hcas[1]);
        cudaFree(ci);
        cudaFree(mx);
        cudaFree(mn);
        cudaFree(ex);
        cudaFree(cu);
        cudaFree(cas);
        cudaFree(cull);
        cudaFree(cf);
        cudaFree(cd);
    }

    { /* float4, template kernel in a namespace, launches with shmem and stream, multi-line args */
        const int n4 = 1000;
        float4 *din, *dout;
        CUDA_OK(cudaMalloc(&din, n4 * sizeof(float4)));
        CUDA_OK(cudaMalloc(&dout, n4 * sizeof(float4)));
        std::vector<float> h(4 * n4), o(4 * n4);
        for (int i = 0; i < 4 * n4; i++) h[i] = (float)i;
        CUDA_OK(cudaMemcpy(din, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
        cudaStream_t stream;
        CUDA_OK(cudaStreamCreate(&stream));
        scale4<<<4, 64, 0, stream>>>(din,
                                     dout,   /* a launch whose arguments span lines */
                                     n4,
                                     3.0f);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy(o.data(), dout, o.size() * sizeof(float), cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int i = 0; i < 4 * n4; i++)
            if (o[i] != 3.0f * (float)i) bad++;
        CHECK("float4 grid-stride kernel on a stream, arguments over several lines", bad == 0, "%d wrong", bad);

        double *dd;
        CUDA_OK(cudaMalloc(&dd, 100 * sizeof(double)));
        kernels::fill<4, double><<<dim3(2), dim3(64), 128>>>(dd, 1.5, 100);
        CUDA_OK(cudaGetLastError());
        std::vector<double> hd(100);
        CUDA_OK(cudaMemcpy(hd.data(), dd, 100 * sizeof(double), cudaMemcpyDeviceToHost));
        bad = 0;
        for (double v : hd)
            if (v != 6.0) bad++;
        CHECK("template kernel kernels::fill<4, double> with a shmem argument", bad == 0, "%d wrong", bad);
        const char *not_a_launch = "k<<<1, 1>>>(x)"; /* never rewritten: a string, and a comment: k<<<1,1>>>() */
        CHECK("<<< inside a string is left alone", strlen(not_a_launch) == 14, "%s", not_a_launch);
        CUDA_OK(cudaStreamDestroy(stream));
        cudaFree(din);
        cudaFree(dout);
        cudaFree(dd);
    }

    { /* dynamic shared memory, __syncthreads_count/and/or */
        const int n = 4 * 128;
        int *din, *dout;
        CUDA_OK(cudaMalloc(&din, n * sizeof(int)));
        CUDA_OK(cudaMalloc(&dout, n * sizeof(int)));
        std::vector<int> h(n), o(n);
        for (int i = 0; i < n; i++) h[i] = i;
        CUDA_OK(cudaMemcpy(din, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
        dyn_shared_reverse<<<4, 128, 128 * sizeof(int)>>>(din, dout);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpy(o.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int i = 0; i < n; i++)
            if (o[i] != (i / 128) * 128 + 127 - i % 128) bad++;
        CHECK("extern __shared__ (dynamic shared memory)", bad == 0, "%d wrong", bad);
        count_barrier<<<1, 300>>>(dout);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpy(o.data(), dout, 3 * sizeof(int), cudaMemcpyDeviceToHost));
        CHECK("__syncthreads_count/and/or", o[0] == 100 && o[1] == 1 && o[2] == 1, "%d %d %d", o[0], o[1], o[2]);
        cudaFree(din);
        cudaFree(dout);
    }

    { /* device math */
        float *df;
        int *di;
        CUDA_OK(cudaMalloc(&df, 6 * sizeof(float)));
        CUDA_OK(cudaMalloc(&di, 4 * sizeof(int)));
        math_funcs<<<1, 128>>>(df, di);
        CUDA_OK(cudaGetLastError());
        float f[6];
        int iv[4];
        CUDA_OK(cudaMemcpy(f, df, sizeof f, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(iv, di, sizeof iv, cudaMemcpyDeviceToHost));
        CHECK("device math and min/max", f[0] == 0.5f && f[1] == 1.0f && f[2] == 0.25f && f[3] == 1.5f &&
              f[4] == 4.0f && f[5] == 4.0f && iv[0] == 7 && iv[1] == 3 && iv[2] == 4 && iv[3] == 35,
              "%g %g %g %g %g %g %d %d %d %d", (double)f[0], (double)f[1], (double)f[2], (double)f[3],
              (double)f[4], (double)f[5], iv[0], iv[1], iv[2], iv[3]);
        cudaFree(df);
        cudaFree(di);
    }
    return g_failed ? 1 : 0;
}
