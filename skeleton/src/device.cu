/*
 * device.cu -- the framework's CUDA device: memory, copies and errors.
 * The lessons' kernels are in 06_cuda.cu and 07_permute.cu.
 *
 * The CUDA runtime starts on the first call here (cudaMalloc, or the probe
 * behind nd_device_available), never earlier: test programs fork a child
 * per test, and a CUDA context does not survive a fork.
 */
#include <stdio.h>
#include <string.h>

#include "nd_cuda.h"

/* Errors after which the CUDA context is unusable until the process ends:
 * every later call fails the same way. */
static bool sticky(cudaError_t err)
{
    switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
        return true;
    default:
        return false;
    }
}

/* The first sticky error, so later failures can say where it came from. */
static char sticky_origin[600];

extern "C" nd_status nd_cuda_fail(cudaError_t err, const char *what, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    base = base != NULL ? base + 1 : file;
    const char *detail = "";
#ifdef NDEMU
    detail = ndemu_last_message();
#endif
    char where[600];
    snprintf(where, sizeof where, "%s failed at %s:%d: %s (%s)%s%s", what, base, line,
             cudaGetErrorString(err), cudaGetErrorName(err), *detail ? ": " : "", detail);
    if (!sticky(err))
        return nd_fail(ND_ERR_DEVICE, "cuda: %s", where);
    if (sticky_origin[0] == '\0') {
        snprintf(sticky_origin, sizeof sticky_origin, "%s", where);
        return nd_fail(ND_ERR_DEVICE, "cuda: %s; the device is unusable until the program "
                       "exits (a sticky error)", where);
    }
    return nd_fail(ND_ERR_DEVICE, "cuda: %s; the device has been unusable since an earlier "
                   "error: %s", where, sticky_origin);
}

extern "C" nd_status nd_cuda_probe(const char **name)
{
    static char probed_name[256];
    static cudaError_t probed = cudaErrorNotReady;   /* not asked yet */
    if (probed == cudaErrorNotReady) {
        int count = 0;
        probed = cudaGetDeviceCount(&count);
        if (probed == cudaSuccess && count == 0)
            probed = cudaErrorNoDevice;
        cudaDeviceProp prop;
        if (probed == cudaSuccess && (probed = cudaGetDeviceProperties(&prop, 0)) == cudaSuccess)
            snprintf(probed_name, sizeof probed_name, "%s", prop.name);
    }
    if (probed != cudaSuccess)
        return nd_cuda_fail(probed, "finding a CUDA device", __FILE__, __LINE__);
    if (sticky_origin[0] != '\0')
        return nd_fail(ND_ERR_DEVICE, "cuda: the device is unusable since an earlier error: %s",
                       sticky_origin);
    if (name != NULL)
        *name = probed_name;
    return ND_OK;
}

extern "C" nd_status nd_cuda_alloc(size_t nbytes, void **ptr, const char *op)
{
    nd_status s = nd_cuda_probe(NULL);
    if (s != ND_OK)
        return s;
    cudaError_t err = cudaMalloc(ptr, nbytes ? nbytes : 1);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();   /* not sticky: clear it */
        return nd_fail(ND_ERR_NOMEM, "%s: cannot allocate %zu bytes on the CUDA device",
                       op, nbytes);
    }
    if (err != cudaSuccess)
        return nd_cuda_fail(err, "cudaMalloc", __FILE__, __LINE__);
    return ND_OK;
}

extern "C" void nd_cuda_free(void *ptr)
{
    /* After a sticky error cudaFree fails too; the memory goes with the
     * process, and there is nobody to tell. */
    (void)cudaFree(ptr);
}

extern "C" nd_status nd_cuda_copy(void *dst, const void *src, size_t nbytes,
                                  nd_copy_kind kind, const char *op)
{
    if (nbytes == 0)
        return ND_OK;
    static const cudaMemcpyKind kinds[] = { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                            cudaMemcpyDeviceToDevice };
    static const char *const names[] = { "host to device", "device to host",
                                         "device to device" };
    cudaError_t err = cudaMemcpy(dst, src, nbytes, kinds[kind]);
    if (err != cudaSuccess) {
        char what[200];
        snprintf(what, sizeof what, "%s: copying %zu bytes %s", op, nbytes, names[kind]);
        return nd_cuda_fail(err, what, __FILE__, __LINE__);
    }
    return ND_OK;
}
