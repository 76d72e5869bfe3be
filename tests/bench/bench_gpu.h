/*
 * bench_gpu.h -- what the GPU benchmarks share: errors, the GPU's
 * description, timing with CUDA events, the L2 flush, the 16-byte-per-
 * thread copy kernel they are all measured against, and one line of the
 * table and the TSV.
 *
 * How a case is timed (time_ms): 2 warm-up calls, then REPEATS samples,
 * each one call between two CUDA events, with the GPU's L2 cache flushed
 * before it (flush_l2: a kernel reads a buffer of twice the L2's size, so
 * the L2 holds clean lines of that buffer and nothing of the case); the
 * median sample is reported.  Every timed call ends with a
 * cudaDeviceSynchronize, as the library's calls do (ND_CUDA_LAUNCHED), the
 * copy kernel's included, so that ratios compare like with like.  That
 * fixed cost of a launch and its synchronisation is measured once, on an
 * empty kernel (launch_us), printed in the header, and each row says what
 * share of its time it is ("launch" column): under 1% for every case big
 * enough, and visible where it is not.
 *
 * The TSV, headed by "# key: value" lines (gpu, driver, cuda runtime,
 * sms, l2, clocks, launch+sync, date), has the columns of bench_cpu's and
 * one more:
 *   group  case  shape  seconds  rate  unit  ratio  baseline  target  verdict  launch
 */
#ifndef BENCH_GPU_H
#define BENCH_GPU_H

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

#define WARMUP 2

/* Set by main: the program's name for messages, the TSV (or NULL), and
 * whether to print the table. */
static const char *bench_name = "bench";
static FILE *tsv;
static bool quiet;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", bench_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void cuda_must(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        die("%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

/* ---------------------------------------------------------------------- */
/* The GPU                                                                */
/* ---------------------------------------------------------------------- */

static struct {
    char name[256], driver[160];
    int runtime, sms, l2, sm_mhz, mem_mhz, bus_bits;
    size_t memory;
    double launch_us;   /* a launch and its cudaDeviceSynchronize, measured */
    void *flush;        /* 2 * l2 bytes, read by flush_l2 */
} gpu;

static __global__ void empty_kernel(void) {}

/* Read every 16-byte word of p; the sum is stored only if it is 0xffffffff
 * (never, for the 0x01 bytes flush holds), so nothing is written. */
static __global__ void read_kernel(const uint4 *__restrict__ p, size_t n, unsigned *sink)
{
    unsigned acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        acc ^= p[i].x ^ p[i].y ^ p[i].z ^ p[i].w;
    if (acc == 0xffffffffu)
        *sink = acc;
}

static void flush_l2(void)
{
    read_kernel<<<gpu.sms * 8, 256>>>((const uint4 *)gpu.flush, 2 * (size_t)gpu.l2 / 16,
                                      (unsigned *)gpu.flush);
    cuda_must(cudaGetLastError(), "the L2 flush");
}

/* Median milliseconds of fn() over `repeats` samples, after WARMUP calls,
 * each between two CUDA events, the L2 flushed before each. */
template <typename F>
static double time_ms(int repeats, F fn)
{
    cudaEvent_t start, stop;
    cuda_must(cudaEventCreate(&start), "cudaEventCreate");
    cuda_must(cudaEventCreate(&stop), "cudaEventCreate");
    for (int i = 0; i < WARMUP; i++)
        fn();
    std::vector<float> ms((size_t)repeats);
    for (int i = 0; i < repeats; i++) {
        flush_l2();
        cuda_must(cudaEventRecord(start), "cudaEventRecord");
        fn();
        cuda_must(cudaEventRecord(stop), "cudaEventRecord");
        cuda_must(cudaEventSynchronize(stop), "cudaEventSynchronize");
        cuda_must(cudaEventElapsedTime(&ms[(size_t)i], start, stop), "cudaEventElapsedTime");
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return ms[(size_t)repeats / 2];
}

static int attribute(cudaDeviceAttr attr)
{
    int v = 0;
    cuda_must(cudaDeviceGetAttribute(&v, attr, 0), "cudaDeviceGetAttribute");
    return v;
}

/* Describe device 0, allocate the flush buffer, and measure the fixed cost
 * of a launch and its synchronisation.  `name`: nd_device_available's. */
static void gpu_init(const char *name)
{
    snprintf(gpu.name, sizeof gpu.name, "%s", name);
    int drv = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&gpu.runtime);
    /* The kernel module's version line names the driver release. */
    char line[512] = "";
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f != NULL) {
        if (fgets(line, sizeof line, f) == NULL)
            line[0] = '\0';
        fclose(f);
    }
    const char *rel = strstr(line, "Kernel Module");
    char release[64] = "";
    if (rel == NULL || sscanf(rel + strlen("Kernel Module"), " %63[0-9.]", release) != 1)
        release[0] = '\0';
    snprintf(gpu.driver, sizeof gpu.driver, "%s%sCUDA %d.%d", release, release[0] ? ", " : "",
             drv / 1000, drv % 1000 / 10);
    gpu.sms = attribute(cudaDevAttrMultiProcessorCount);
    gpu.l2 = attribute(cudaDevAttrL2CacheSize);
    gpu.sm_mhz = attribute(cudaDevAttrClockRate) / 1000;
    gpu.mem_mhz = attribute(cudaDevAttrMemoryClockRate) / 1000;
    gpu.bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
    size_t free_b = 0;
    cuda_must(cudaMemGetInfo(&free_b, &gpu.memory), "cudaMemGetInfo");
    if (gpu.l2 <= 0)
        die("the device reports no L2 cache size");
    cuda_must(cudaMalloc(&gpu.flush, 2 * (size_t)gpu.l2), "cudaMalloc (L2 flush buffer)");
    cuda_must(cudaMemset(gpu.flush, 1, 2 * (size_t)gpu.l2), "cudaMemset");
    gpu.launch_us = 1e3 * time_ms(200, [] {
        empty_kernel<<<1, 32>>>();
        cuda_must(cudaDeviceSynchronize(), "empty_kernel");
    });
}

/* ---------------------------------------------------------------------- */
/* The baseline                                                           */
/* ---------------------------------------------------------------------- */

/* A grid-stride copy of n 16-byte words. */
static __global__ void copy16(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i];
}

/* Milliseconds to copy `bytes` (a multiple of 16) from src to dst with
 * copy16, timed as a library call is (a launch, then a synchronisation). */
static double time_copy(const void *src, void *dst, size_t bytes, int repeats)
{
    return time_ms(repeats, [&] {
        copy16<<<gpu.sms * 8, 256>>>((const uint4 *)src, (uint4 *)dst, bytes / 16);
        cuda_must(cudaDeviceSynchronize(), "copy16");
    });
}

/* ---------------------------------------------------------------------- */
/* Output                                                                 */
/* ---------------------------------------------------------------------- */

/* One line of the table and of the TSV.  target <= 0: no target. */
static void report(const char *group, const char *name, const char *shape, double ms,
                   double rate, const char *unit, double ratio, const char *baseline,
                   double target)
{
    const char *verdict = target <= 0 ? "-" : ratio >= target ? "met" : "MISSED";
    double launch = gpu.launch_us / (1e3 * ms);
    if (!quiet)
        printf("%-8s %-38s %-24s %9.3f ms %9.1f %-7s %6.1f%% of %-14s %-6s launch %4.1f%%%s\n",
               group, name, shape, ms, rate, unit, 100 * ratio, baseline, verdict,
               100 * launch, launch > 0.01 ? " (over 1%)" : "");
    if (tsv)
        fprintf(tsv, "%s\t%s\t%s\t%.6g\t%.6g\t%s\t%.4f\t%s\t%.2f\t%s\t%.4f\n", group, name, shape,
                ms / 1e3, rate, unit, ratio, baseline, target, verdict, launch);
}

/* The header: the GPU, its driver, clocks and L2, the launch cost, the
 * date; then the TSV's column names. */
static void write_header(void)
{
    time_t t = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
    if (tsv)
        fprintf(tsv, "# gpu: %s\n# driver: %s\n# cuda runtime: %d.%d\n# sms: %d\n"
                "# memory: %.1f GiB, bus %d bits, clock %d MHz (peak)\n# sm clock: %d MHz (peak)\n"
                "# l2: %.1f MiB\n# launch+sync: %.2f us (an empty kernel and "
                "cudaDeviceSynchronize, median of 200)\n# date: %s\n"
                "group\tcase\tshape\tseconds\trate\tunit\tratio\tbaseline\ttarget\tverdict\t"
                "launch\n",
                gpu.name, gpu.driver, gpu.runtime / 1000, gpu.runtime % 1000 / 10, gpu.sms,
                (double)gpu.memory / (1 << 30), gpu.bus_bits, gpu.mem_mhz, gpu.sm_mhz,
                gpu.l2 / 1048576.0, gpu.launch_us, date);
    if (!quiet)
        printf("GPU: %s (%d SMs, L2 %.1f MiB, SM clock %d MHz, memory clock %d MHz), driver %s, "
               "CUDA runtime %d.%d\nA launch and its synchronisation cost %.2f us (empty "
               "kernel, median of 200)\n",
               gpu.name, gpu.sms, gpu.l2 / 1048576.0, gpu.sm_mhz, gpu.mem_mhz, gpu.driver,
               gpu.runtime / 1000, gpu.runtime % 1000 / 10, gpu.launch_us);
}

#endif /* BENCH_GPU_H */
