/* Self-test of the CUDA emulator: a kernel given a host pointer.  On a GPU
 * the kernel faults when it touches it (cudaErrorIllegalAddress, sticky);
 * the emulator refuses the launch in every build (-O2, the sanitizers, the
 * instrumented one): the kernel does not run, the error is the same and as
 * sticky, and stderr says which kernel, argument and launch.  test_emu.sh
 * checks that line for the launch marked HOST_ARG.  Real CUDA too (nvcc
 * compiles it); on a GPU it checks nothing. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "check.h"

/* out[i] = 2 * in[i] for i < n */
__global__ void twice(int n, float *out, const float *__restrict__ in)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i];
}

/* the pointer kinds a launch looks at: void *, volatile, pointer to pointer */
__global__ void touch(void *raw, volatile int *flag, float **table)
{
    if (threadIdx.x == 0 && raw && flag && table) *flag = 1;
}

#ifdef NDEMU
/* The emulator guesses a host stack address; AddressSanitizer may move
 * stack arrays to the heap (detect_stack_use_after_return). */
#if defined(__SANITIZE_ADDRESS__)
static const char *const kStackHint = NULL;
#else
static const char *const kStackHint = "the host's stack";
#endif

static bool contains(const char *s, const char *what) { return strstr(s, what) != NULL; }

/* The launch just made was refused: cudaErrorIllegalAddress from
 * cudaGetLastError() and, sticky, from the calls after it until
 * cudaDeviceReset(); the message names the kernel, the launch and the
 * argument (and says `extra`, unless it is null). */
static void expect_refused(const char *name, const char *kernel, int line, int arg, const void *p,
                           const char *extra = NULL)
{
    cudaError_t e = cudaGetLastError();
    char buf[240], want[3][64];
    snprintf(want[0], sizeof want[0], "kernel '%s'", kernel);
    snprintf(want[1], sizeof want[1], "(host_arg.cu:%d)", line);
    snprintf(want[2], sizeof want[2], "argument %d (%p)", arg, p);
    snprintf(buf, sizeof buf, "%s: the launch fails with cudaErrorIllegalAddress", name);
    CHECK(buf, e == cudaErrorIllegalAddress, "got %s", cudaGetErrorName(e));
    const char *msg = emu_message();
    snprintf(buf, sizeof buf, "%s: the message names %s, %s and %s", name, want[0], want[1], want[2]);
    CHECK(buf, contains(msg, want[0]) && contains(msg, want[1]) && contains(msg, want[2]), "message: %s", msg);
    if (extra) {
        snprintf(buf, sizeof buf, "%s: the message says \"%s\"", name, extra);
        CHECK(buf, contains(msg, extra), "message: %s", msg);
    }
    void *q = NULL;
    cudaError_t e1 = cudaDeviceSynchronize(), e2 = cudaMalloc(&q, 16);
    snprintf(buf, sizeof buf, "%s: sticky, as a GPU's illegal address is", name);
    CHECK(buf, e1 == cudaErrorIllegalAddress && e2 == cudaErrorIllegalAddress, "%s, %s", cudaGetErrorName(e1),
          cudaGetErrorName(e2));
    cudaDeviceReset();
}
#endif

int main(void)
{
#ifdef NDEMU
    const int n = 64;
    std::vector<float> h(n, 1.0f), host_out(n, -1.0f);
    float *in, *out;
    CUDA_OK(cudaMalloc(&in, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&out, n * sizeof(float)));
    CUDA_OK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    /* what a launch accepts */
    twice<<<1, n>>>(n, out, in);
    CUDA_OK(cudaMemcpy(h.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK("device pointers: the kernel runs", cudaGetLastError() == cudaSuccess && h[0] == 2.0f && h[n - 1] == 2.0f,
          "%s, out[0] = %g", emu_message(), (double)h[0]);
    twice<<<1, 32>>>(0, out + n, nullptr);
    CHECK("a null pointer, and one just past the end of an allocation (an empty view's): accepted",
          cudaGetLastError() == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess, "%s", emu_message());
    twice<<<1, 32>>>(16, out + 16, in + 48);
    CHECK("pointers inside an allocation: accepted", cudaGetLastError() == cudaSuccess, "%s", emu_message());
    float **table;
    int *flag;
    CUDA_OK(cudaMalloc(&table, 4 * sizeof(float *)));
    CUDA_OK(cudaMallocManaged(&flag, sizeof(int)));
    *flag = 0;
    touch<<<1, 1>>>(out, flag, table);
    CUDA_OK(cudaDeviceSynchronize());
    CHECK("void *, volatile int * (managed memory) and float ** to device memory: accepted", *flag == 1,
          "flag %d: %s", *flag, emu_message());

    /* a host array as argument 2: refused, and the kernel does not run */
    twice<<<1, n>>>(n, host_out.data(), in); /* HOST_ARG */
    expect_refused("a host array as argument 2", "twice", __LINE__ - 1, 2, host_out.data());
    CHECK("... the kernel did not run: the host array is untouched", host_out[0] == -1.0f && host_out[n - 1] == -1.0f,
          "host_out[0] = %g", (double)host_out[0]);

    /* a host stack variable, as a const __restrict__ argument */
    float on_stack[64] = {0};
    CUDA_OK(cudaMalloc(&out, n * sizeof(float)));
    twice<<<1, n>>>(n, out, on_stack);
    expect_refused("a host stack array as argument 3", "twice", __LINE__ - 1, 3, on_stack, kStackHint);

    /* a freed buffer, and an offset past the end */
    CUDA_OK(cudaMalloc(&in, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&out, n * sizeof(float)));
    CUDA_OK(cudaFree(in));
    twice<<<1, n>>>(n, out, in);
    expect_refused("a freed buffer", "twice", __LINE__ - 1, 3, in);
    CUDA_OK(cudaMalloc(&out, n * sizeof(float)));
    twice<<<1, n>>>(0, out + n + 1, nullptr);
    expect_refused("a pointer two past the end of an allocation", "twice", __LINE__ - 1, 2, out + n + 1);

    /* pinned host memory: a GPU could map it; the emulator says what it is */
    float *pinned;
    CUDA_OK(cudaMallocHost(&pinned, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&out, n * sizeof(float)));
    twice<<<1, n>>>(n, out, pinned);
    expect_refused("pinned host memory (cudaMallocHost)", "twice", __LINE__ - 1, 3, pinned,
                   "pinned host memory (cudaMallocHost)");
    CUDA_OK(cudaFreeHost(pinned));

    /* void * and float ** are checked too */
    CUDA_OK(cudaMalloc(&table, 4 * sizeof(float *)));
    CUDA_OK(cudaMallocManaged(&flag, sizeof(int)));
    touch<<<1, 1>>>(h.data(), flag, table);
    expect_refused("a host pointer as a void * argument", "touch", __LINE__ - 1, 1, h.data());
    float *rows[4] = {0};
    CUDA_OK(cudaMalloc(&table, 4 * sizeof(float *)));
    CUDA_OK(cudaMallocManaged(&flag, sizeof(int)));
    touch<<<1, 1>>>(table, flag, rows);
    expect_refused("a host array of pointers as a float ** argument", "touch", __LINE__ - 1, 3, rows);

    /* a configuration error comes first, as on a GPU: not sticky */
    CUDA_OK(cudaMalloc(&in, n * sizeof(float)));
    twice<<<1, 2048>>>(n, host_out.data(), in);
    cudaError_t e = cudaGetLastError();
    CHECK("a bad block size with a host pointer: cudaErrorInvalidConfiguration, not sticky",
          e == cudaErrorInvalidConfiguration && cudaDeviceSynchronize() == cudaSuccess, "got %s",
          cudaGetErrorName(e));
#else
    printf("ok nothing to check on a GPU (there the kernel would fault, or run where the GPU can read host "
           "memory)\n");
#endif
    return g_failed ? 1 : 0;
}
