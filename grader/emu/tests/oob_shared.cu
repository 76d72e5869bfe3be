/* Self-test of the CUDA emulator: an out-of-bounds read of a __shared__
 * array (AddressSanitizer must report it at the line marked OOB). */
#include <cuda_runtime.h>
#include <stdio.h>

__global__ void neighbour(const float *in, float *out)
{
    __shared__ float tile[128];
    int t = threadIdx.x;
    tile[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    const float *row = tile; /* through a pointer, past UBSan's bounds check */
    out[blockIdx.x * 128 + t] = row[t] + row[t + 1]; /* OOB: t == 127 reads tile[128] */
}

int main(void)
{
    float *in, *out;
    if (cudaMalloc(&in, 256 * sizeof(float)) != cudaSuccess) return 2;
    if (cudaMalloc(&out, 256 * sizeof(float)) != cudaSuccess) return 2;
    cudaMemset(in, 0, 256 * sizeof(float));
    neighbour<<<2, 128>>>(in, out);
    cudaError_t e = cudaDeviceSynchronize();
    printf("finished: %s\n", cudaGetErrorString(e));
    cudaFree(in);
    cudaFree(out);
    return 0;
}
