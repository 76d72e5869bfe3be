/* Self-test of the CUDA emulator: two __shared__ arrays of 32 KiB, 64 KiB
 * in all.  ptxas refuses the kernel (more than 48 KiB of static shared
 * memory); the emulator fails its launch, naming the second array's line
 * (marked SECOND). */
#include <cuda_runtime.h>

#include "check.h"

static const int kLineSecond = __LINE__ + 4;
__global__ void two(float *out)
{
    __shared__ float a[8192];
    __shared__ float b[8192]; /* SECOND */
    a[threadIdx.x] = 1.0f;
    b[threadIdx.x] = 2.0f;
    __syncthreads();
    out[threadIdx.x] = a[(threadIdx.x + 1) % blockDim.x] + b[threadIdx.x];
}

int main(void)
{
    float *d;
    CUDA_OK(cudaMalloc(&d, 32 * sizeof(float)));
    two<<<1, 32>>>(d);
    cudaError_t e = cudaDeviceSynchronize();
    CHECK("64 KiB of static __shared__ in two arrays: the launch fails (cudaErrorLaunchOutOfResources)",
          e == cudaErrorLaunchOutOfResources, "got %s", cudaGetErrorName(e));
    char want[32];
    snprintf(want, sizeof want, "two_shared.cu:%d", kLineSecond);
    CHECK("64 KiB of static __shared__: the message names the second array's line and 48 KiB",
          strstr(emu_message(), want) && strstr(emu_message(), "48 KiB"), "message: %s", emu_message());
    printf("   message: %s\n", emu_message());
    return g_failed ? 1 : 0;
}
