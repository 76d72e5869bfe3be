/* Self-test of the CUDA emulator: 64 KiB of static __shared__ memory in
 * one array.  ptxas refuses it (more than 48 KiB), and so does the
 * emulator's build, at the array's line (marked BIG). */
#include <cuda_runtime.h>

__global__ void big(float *out)
{
    __shared__ float s[16384]; /* BIG: 64 KiB */
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

int main(void)
{
    float *d;
    if (cudaMalloc(&d, 32 * sizeof(float)) != cudaSuccess) return 1;
    big<<<1, 32>>>(d);
    return cudaDeviceSynchronize() != cudaSuccess;
}
