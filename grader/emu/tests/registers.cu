/* Self-test of the emulator's registers x threads limit: `registers N`
 * runs with NDEMU_REGISTERS naming a table that gives fat() N registers
 * per thread (test_emu.sh writes it; on a real build regs.py writes it
 * from ptxas), and checks that a 1024-thread launch is refused exactly when
 * N x 1024 exceeds the 65536 registers of an SM, as on a GPU. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

__global__ void fat(float *p) { p[threadIdx.x] *= 2.0f; }

int main(int argc, char **argv)
{
    int regs = argc > 1 ? atoi(argv[1]) : 0;
    float *d;
    CUDA_OK(cudaMalloc(&d, 1024 * sizeof(float)));
    CUDA_OK(cudaMemset(d, 0, 1024 * sizeof(float)));
    const int line = __LINE__ + 1;
    fat<<<1, 1024>>>(d);
    cudaError_t e = cudaGetLastError();
    char where[64];
    snprintf(where, sizeof where, "registers.cu:%d", line);
    if (regs * 1024 > 65536) {
        CHECK("registers x threads above 65536: cudaErrorLaunchOutOfResources", e == cudaErrorLaunchOutOfResources,
              "got %s", cudaGetErrorName(e));
        CHECK("... the message names the launch, the registers and __launch_bounds__",
              strstr(emu_message(), where) && strstr(emu_message(), "registers per thread (ptxas)") &&
                  strstr(emu_message(), "__launch_bounds__(1024)"),
              "message: %s", emu_message());
    } else {
        CHECK("registers x threads within 65536: the launch runs", e == cudaSuccess, "got %s: %s",
              cudaGetErrorName(e), emu_message());
    }
    fat<<<1, 64>>>(d);
    CHECK("a 64-thread launch runs (the refusal is not sticky)", cudaGetLastError() == cudaSuccess &&
                                                                    cudaDeviceSynchronize() == cudaSuccess,
          "%s", emu_message());
    cudaFree(d);
    return g_failed ? 1 : 0;
}
