/* Self-test of the CUDA emulator: cudaMemcpy's kind must match where its
 * pointers are (host-to-device: a device destination and a host source,
 * and so on); cudaFree, cudaFreeHost and cudaMemset must be given what
 * they free or write.  Each mistake is cudaErrorInvalidValue, not sticky,
 * copies nothing, and is said on stderr (test_emu.sh checks the line for
 * the swapped copy).  Real CUDA too (nvcc compiles it); on a GPU it
 * checks nothing, since a GPU's runtime may infer the direction instead. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "check.h"

#ifdef NDEMU
static bool contains(const char *s, const char *what) { return strstr(s, what) != NULL; }

/* e is cudaErrorInvalidValue, reported once by cudaGetLastError(), not
 * sticky; the message contains w1 and w2. */
static void expect_invalid(const char *name, cudaError_t e, const char *w1, const char *w2)
{
    char buf[240];
    snprintf(buf, sizeof buf, "%s: cudaErrorInvalidValue, not sticky", name);
    cudaError_t last = cudaGetLastError();
    CHECK(buf, e == cudaErrorInvalidValue && last == cudaErrorInvalidValue && cudaGetLastError() == cudaSuccess &&
                   cudaDeviceSynchronize() == cudaSuccess,
          "got %s, then %s", cudaGetErrorName(e), cudaGetErrorName(last));
    snprintf(buf, sizeof buf, "%s: the message says \"%s\" and \"%s\"", name, w1, w2);
    CHECK(buf, contains(emu_message(), w1) && contains(emu_message(), w2), "message: %s", emu_message());
}
#endif

int main(void)
{
#ifdef NDEMU
    const int n = 256;
    const size_t bytes = n * sizeof(int);
    std::vector<int> h(n), h2(n, -1);
    for (int i = 0; i < n; i++) h[i] = i;
    int *d, *d2;
    CUDA_OK(cudaMalloc(&d, bytes));
    CUDA_OK(cudaMalloc(&d2, bytes));
    CUDA_OK(cudaMemset(d, 0, bytes));

    /* the classic mistake: the arguments swapped, the kind kept */
    cudaError_t e = cudaMemcpy(h2.data(), d, bytes, cudaMemcpyHostToDevice);
    expect_invalid("cudaMemcpy(host, device, n, cudaMemcpyHostToDevice)", e, "destination",
                   "the pointers say cudaMemcpyDeviceToHost");
    CHECK("... nothing was copied", h2[0] == -1 && h2[n - 1] == -1, "h2[0] = %d", h2[0]);
    e = cudaMemcpy(d, h.data(), bytes, cudaMemcpyDeviceToHost);
    expect_invalid("cudaMemcpy(device, host, n, cudaMemcpyDeviceToHost)", e, "destination",
                   "is device memory (cudaMalloc), but cudaMemcpyDeviceToHost copies to host memory");

    /* one side wrong */
    e = cudaMemcpy(d, d2, bytes, cudaMemcpyHostToDevice);
    expect_invalid("cudaMemcpyHostToDevice from device memory", e, "the source",
                   "the pointers say cudaMemcpyDeviceToDevice");
    e = cudaMemcpy(h2.data(), h.data(), bytes, cudaMemcpyDeviceToDevice);
    expect_invalid("cudaMemcpyDeviceToDevice between host arrays", e, "is not device memory",
                   "the pointers say cudaMemcpyHostToHost");
    e = cudaMemcpy(h2.data(), d, bytes, cudaMemcpyHostToHost);
    expect_invalid("cudaMemcpyHostToHost from device memory", e, "the source", "copies from host memory");
    e = cudaMemcpyAsync(d, d2, bytes, cudaMemcpyDeviceToHost, 0);
    expect_invalid("cudaMemcpyAsync, kind wrong", e, "cudaMemcpyAsync(", "the destination");
    CUDA_OK(cudaMemcpy(h2.data(), d, bytes, cudaMemcpyDeviceToHost));
    CHECK("... none of them copied anything", h2[0] == 0 && h2[n - 1] == 0, "d[n-1] = %d", h2[n - 1]);

    /* the right kinds, cudaMemcpyDefault, and managed memory on either side */
    CUDA_OK(cudaMemcpy(d, h.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d2, d, bytes, cudaMemcpyDeviceToDevice));
    CUDA_OK(cudaMemcpy(h2.data(), d2, bytes, cudaMemcpyDefault));
    CHECK("the right kinds and cudaMemcpyDefault copy", h2[7] == 7 && h2[n - 1] == n - 1, "h2[7] = %d", h2[7]);
    int *m;
    CUDA_OK(cudaMallocManaged(&m, bytes));
    e = cudaMemcpy(m, d, bytes, cudaMemcpyDeviceToHost);
    cudaError_t e2 = cudaMemcpy(h2.data(), m, bytes, cudaMemcpyDeviceToHost);
    cudaError_t e3 = cudaMemcpy(h2.data(), m, bytes, cudaMemcpyHostToHost);
    CHECK("managed memory is accepted as host or device memory",
          e == cudaSuccess && e2 == cudaSuccess && e3 == cudaSuccess && m[9] == 9, "%s %s %s",
          cudaGetErrorName(e), cudaGetErrorName(e2), cudaGetErrorName(e3));

    /* cudaFree, cudaFreeHost, cudaMemset */
    e = cudaFree(h.data());
    expect_invalid("cudaFree of a host array", e, "cudaFree(", "not a pointer returned by cudaMalloc");
    e = cudaFree(d + 1);
    expect_invalid("cudaFree of a pointer inside an allocation", e, "cudaFree(", "not its start");
    int *pinned;
    CUDA_OK(cudaMallocHost(&pinned, bytes));
    e = cudaFree(pinned);
    expect_invalid("cudaFree of pinned host memory", e, "cudaFree(", "cudaFreeHost");
    e = cudaFreeHost(d);
    expect_invalid("cudaFreeHost of device memory", e, "cudaFreeHost(", "free it with cudaFree");
    e = cudaMemset(h2.data(), 0, bytes);
    expect_invalid("cudaMemset of a host array", e, "cudaMemset(", "is not device memory");
    e = cudaMemset(pinned, 0, bytes);
    expect_invalid("cudaMemset of pinned host memory", e, "cudaMemset(", "is not device memory");
    CUDA_OK(cudaFreeHost(pinned));
    CUDA_OK(cudaFree(m));
    CUDA_OK(cudaFree(d2));
    CUDA_OK(cudaFree(d));
    CHECK("after all of them, the device works", cudaMalloc(&d, 16) == cudaSuccess && cudaFree(d) == cudaSuccess,
          "%s", emu_message());
#else
    printf("ok nothing to check on a GPU (its runtime may infer the direction from the pointers)\n");
#endif
    return g_failed ? 1 : 0;
}
