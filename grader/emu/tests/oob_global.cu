/* Self-test of the CUDA emulator: an out-of-bounds write to global memory
 * (AddressSanitizer must report it at the line marked OOB). */
#include <cuda_runtime.h>
#include <stdio.h>

__global__ void off_by_one(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 1.0f; /* OOB: i == n writes past the end */
}

int main(void)
{
    const int n = 1000;
    float *d;
    if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) return 2;
    off_by_one<<<(n + 255) / 256, 256>>>(d, n);
    cudaError_t e = cudaDeviceSynchronize();
    printf("finished: %s\n", cudaGetErrorString(e));
    cudaFree(d);
    return 0;
}
