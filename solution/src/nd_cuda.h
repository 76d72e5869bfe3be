/*
 * nd_cuda.h -- what the framework gives the CUDA lesson files (06_cuda.cu,
 * 07_permute.cu): CUDA's runtime, internal.h, and error checking that turns
 * every CUDA error into an nd_status with CUDA's message and file:line.
 * Built by nvcc for a GPU, or by g++ with the emulator in grader/emu/.
 */
#ifndef ND_CUDA_H
#define ND_CUDA_H

#include <cuda_runtime.h>

#include "internal.h"

/* Record a CUDA error for nd_last_error() and return ND_ERR_DEVICE:
 * "<what> failed at <file>:<line>: <CUDA's message> (<error name>)", plus
 * a note when the error is sticky (the device is unusable from then on). */
extern "C" nd_status nd_cuda_fail(cudaError_t err, const char *what, const char *file,
                                  int line);

/* Run a CUDA runtime call; on error, return from the enclosing function
 * with nd_cuda_fail's status. */
#define ND_CUDA_TRY(call)                                                    \
    do {                                                                     \
        cudaError_t nd_err_ = (call);                                        \
        if (nd_err_ != cudaSuccess)                                          \
            return nd_cuda_fail(nd_err_, #call, __FILE__, __LINE__);         \
    } while (0)

/* Put right after a kernel launch: the launch's own error (a bad grid or
 * block, too many registers), then a fault while the kernel ran (an
 * illegal address, a broken barrier on the emulator).  Waiting for the
 * kernel here keeps every error next to the launch that caused it. */
#define ND_CUDA_LAUNCHED(kernel_name)                                        \
    do {                                                                     \
        cudaError_t nd_err_ = cudaGetLastError();                            \
        if (nd_err_ != cudaSuccess)                                          \
            return nd_cuda_fail(nd_err_, "launching " kernel_name,           \
                                __FILE__, __LINE__);                         \
        nd_err_ = cudaDeviceSynchronize();                                   \
        if (nd_err_ != cudaSuccess)                                          \
            return nd_cuda_fail(nd_err_, "running " kernel_name,             \
                                __FILE__, __LINE__);                         \
    } while (0)

#endif /* ND_CUDA_H */
