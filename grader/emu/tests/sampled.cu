/* Self-test of the CUDA emulator's sampled launches (README.md, "Sampled
 * launches"): a launch of many blocks runs only a few, among them block 0
 * and those of the grid's last 2048 threads; a grid-stride loop over more
 * than 2^31 elements of a repeated row then writes every column of it, in
 * milliseconds; cudaMalloc's blocks sit between guards, so a kernel whose
 * int index wraps past 2^31 - 1 crashes at once (in a child process).
 * Emulator only (the plain build: test_emu.sh runs it there); on a GPU it
 * checks nothing. */
#include <cuda_runtime.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define COLS 1024

/* ran[b] = 1 for each block b that runs. */
__global__ void mark(int *ran)
{
    if (threadIdx.x == 0) ran[blockIdx.x] = 1;
}

/* out[i % COLS] = i % COLS + 1 for i < n, a grid-stride loop in 64 bits. */
__global__ void row64(float *out, int64_t n)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        out[i % COLS] = (float)(i % COLS + 1);
}

/* The same with an int index: past 2^31 - 1 it wraps negative, and
 * out[i % COLS] is before out. */
__global__ void row32(float *out, int64_t n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i % COLS] = (float)(i % COLS + 1);
}

#ifdef NDEMU
/* Run row32 (or row64) in a child: its exit status. */
static int in_child(bool wrap)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        float *out = nullptr;
        if (cudaMalloc(&out, COLS * sizeof(float)) != cudaSuccess) _exit(3);
        if (wrap)
            row32<<<65535, 256>>>(out, ((int64_t)1 << 31) + COLS);
        else
            row64<<<65535, 256>>>(out, ((int64_t)1 << 31) + COLS);
        _exit(cudaDeviceSynchronize() == cudaSuccess ? 0 : 4);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}
#endif

int main(void)
{
#ifdef NDEMU
    ndemu_sample_launches(1);
    const int nblocks = 65535;
    int *ran = nullptr;
    CUDA_OK(cudaMalloc(&ran, nblocks * sizeof(int)));
    CUDA_OK(cudaMemset(ran, 0, nblocks * sizeof(int)));
    mark<<<nblocks, 256>>>(ran);
    CUDA_OK(cudaDeviceSynchronize());
    static int h[65535];
    CUDA_OK(cudaMemcpy(h, ran, sizeof h, cudaMemcpyDeviceToHost));
    int count = 0;
    for (int b = 0; b < nblocks; b++) count += h[b];
    bool tail = true;
    for (int b = nblocks - 8; b < nblocks; b++) tail = tail && h[b];
    CHECK("a sampled launch of 65535 blocks of 256 runs block 0, the last 8 and at most 2 more",
          h[0] && tail && count <= 11, "block 0 %s, the last 8 %s, %d in all", h[0] ? "ran" : "did not run",
          tail ? "ran" : "did not all run", count);
    CUDA_OK(cudaFree(ran));

    float *out = nullptr, host[COLS];
    CUDA_OK(cudaMalloc(&out, COLS * sizeof(float)));
    CUDA_OK(cudaMemset(out, 0, COLS * sizeof(float)));
    row64<<<65535, 256>>>(out, ((int64_t)1 << 31) + COLS);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
    int right = 0;
    for (int j = 0; j < COLS; j++) right += host[j] == (float)(j + 1);
    CHECK("a sampled grid-stride loop over 2^31 + 1024 elements writes all 1024 columns", right == COLS,
          "%d of %d columns written", right, COLS);
    CUDA_OK(cudaFree(out));
    ndemu_sample_launches(0);

    ndemu_sample_launches(1);
    int st = in_child(false);
    CHECK("the same in a child exits normally", WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    st = in_child(true);
    CHECK("an int index that wraps past 2^31 - 1 crashes in the guard before the block",
          WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "status %d", st);
    ndemu_sample_launches(0);
#endif
    return g_failed != 0;
}
