/* ndemu_profile.h -- what the CPU emulator of CUDA saw a kernel do, and what
 * a documented model makes of it (grader/emu/README.md, "Profiling").
 *
 * C and C++.  Every function here exists in every emulator build, so code
 * that calls them links with any of them; only the instrumented build
 * (device code compiled with -fsanitize=thread instrumentation, which
 * `make profile` does) records anything: elsewhere ndemu_profile_enabled()
 * is 0 and no launch is recorded.  On a real GPU (nvcc) these functions do
 * not exist: test `#ifdef NDEMU`, or declare them weak.
 *
 * Counting follows Nsight Compute's definitions:
 *   request     one warp executing one load or store instruction once (the
 *               lanes of a warp that reach the same access site for the
 *               same time form one request);
 *   sector      32 aligned bytes of global memory; a request moves every
 *               sector any of its lanes touches;
 *   wavefront   one pass of a shared-memory request through the 32 banks
 *               (4 bytes wide; bank = (address / 4) % 32).  Lanes reading
 *               the same word share it; distinct words in one bank need
 *               one wavefront each (a bank conflict).  8-byte accesses go
 *               in two halves of the warp, 16-byte ones in four quarters.
 * "ideal" is what the same bytes would need at best: bytes / 32 sectors
 * (rounded up) for global, one wavefront per phase for shared.
 *
 * Numbers are exact counts for the launch as the emulator ran it.  The
 * model's figures (ndemu_model) are estimates, "modelled", never measured.
 */
#ifndef NDEMU_PROFILE_H
#define NDEMU_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The four kinds of access the counters separate. */
enum ndemu_access_kind {
    NDEMU_GLOBAL_LOAD = 0,
    NDEMU_GLOBAL_STORE = 1,
    NDEMU_SHARED_LOAD = 2,
    NDEMU_SHARED_STORE = 3,
    NDEMU_ACCESS_KINDS = 4
};

typedef struct ndemu_access_stats {
    uint64_t requests;         /* warp-level instructions executed                */
    uint64_t lanes;            /* thread-level accesses (<= 32 per request)       */
    uint64_t bytes;            /* distinct bytes the lanes asked for, per request,
                                  summed                                          */
    uint64_t sectors;          /* global: 32-byte sectors moved, summed over
                                  requests                                        */
    uint64_t wavefronts;       /* shared: wavefronts, summed over requests        */
    uint64_t ideal;            /* global: sum of ceil(bytes / 32) per request;
                                  shared: one wavefront per phase per request     */
    uint64_t by_width[5];      /* requests whose lanes move 1, 2, 4, 8, 16 bytes  */
} ndemu_access_stats;

typedef struct ndemu_launch_stats {
    char kernel[128];          /* as written at the launch: "transpose_kernel<T>" */
    char file[64];             /* the launch's file (base name) and line          */
    int line;
    unsigned grid[3], block[3];
    uint64_t threads;          /* grid x block                                    */
    uint64_t shared_static;    /* bytes of __shared__ arrays the kernel touched
                                  (the span of each, summed), per block           */
    uint64_t shared_dynamic;   /* the launch's dynamic shared memory, bytes       */
    int registers;             /* per thread, from ptxas (NDEMU_REGISTERS); -1
                                  when unknown                                    */
    ndemu_access_stats access[NDEMU_ACCESS_KINDS];
    uint64_t atomics;          /* atomic operations on global or shared memory    */
    uint64_t dram_sectors_read;    /* distinct global sectors read: what DRAM
                                      moves if L2 keeps every sector once touched
                                      for the rest of the launch                  */
    uint64_t dram_sectors_written; /* ... and written                             */
    /* Global load sectors that reach L2: each load request's sectors less
     * those its block read within its last 32 KB of load sectors (L1 keeps
     * them; stores are written through to L2, so every store sector
     * reaches it: access[NDEMU_GLOBAL_STORE].sectors). */
    uint64_t l2_load_sectors;
    /* 128-byte lines each global request (load or store) touches, summed:
     * L1 moves one line per clock, so 32 lanes in 32 lines take 32. */
    uint64_t l1_lines;
    uint64_t barriers;         /* __syncthreads() released, summed over blocks    */
    /* Global loads a thread issues between two barriers (or its start and
     * end), averaged over the (thread, interval) pairs that issue any. */
    double load_bytes_per_interval;
    /* The global loads a thread can have in flight at once, averaged over
     * runs: a run is what it issues from its start or a barrier until a
     * loop's next iteration must wait, as nvcc compiles loops: a loop the
     * compiler unrolled (#pragma unroll) issues all its loads at once; one
     * whose trip count it does not know, four iterations' loads if the
     * loop stores nothing, else one iteration's (a grid-stride copy keeps
     * one load in flight). */
    double load_bytes_in_flight;
    double seconds;            /* host time the emulator took (not a GPU time)    */
} ndemu_launch_stats;

/* 1 in the instrumented build (recording), else 0. */
int ndemu_profile_enabled(void);
/* Launches recorded since the program started or ndemu_profile_reset(). */
int ndemu_launch_count(void);
/* Copy launch i (0 = the first; -1 = the last, -2 the one before, ...)
 * into *out.  Returns 0, or -1 when there is no such launch. */
int ndemu_launch_get(int i, ndemu_launch_stats *out);
/* Forget the recorded launches. */
void ndemu_profile_reset(void);
/* Print launch i as `make profile` does (an Nsight-Compute-like table with
 * the access sites by line, and the model's estimate for every GPU). */
void ndemu_profile_print(int i, FILE *out);

/* ---- the performance model (grader/emu/README.md, "The model") -------- */

typedef struct ndemu_gpu {
    const char *name;          /* "H100 SXM"                                      */
    double dram_gbs;           /* nameplate DRAM bandwidth, GB/s (1e9 bytes/s)   */
    int sms;                   /* streaming multiprocessors                       */
    double clock_ghz;          /* boost clock                                     */
    double l2_mb;              /* L2 cache, MB                                    */
    int max_threads_sm;        /* resident threads per SM                         */
    int max_blocks_sm;         /* resident blocks per SM                          */
    int shared_kb_sm;          /* shared memory per SM usable by blocks, KiB      */
    int registers_sm;          /* 32-bit registers per SM                         */
} ndemu_gpu;

/* The GPUs the model knows, in a fixed order; NULL past the end. */
const ndemu_gpu *ndemu_gpu_get(int i);

typedef struct ndemu_estimate {
    double seconds;            /* modelled kernel time                            */
    double gbs;                /* modelled (bytes read + written) / time, GB/s    */
    double percent_of_dram;    /* gbs as % of the nameplate bandwidth             */
    int resident_threads_sm;   /* occupancy the model used                        */
    const char *limited_by;    /* "threads", "blocks", "shared memory",
                                  "registers" or "grid": what caps occupancy      */
    const char *bound_by;      /* "DRAM", "latency" or "L1": the slowest of the
                                  three limits below                              */
    /* the terms, seconds: seconds = max(t_dram, t_latency + t_bank_conflicts,
     * t_l1) + t_l2_extra + t_launch */
    double t_dram, t_latency, t_bank_conflicts, t_l1, t_l2_extra, t_launch;
} ndemu_estimate;

/* The model's fitted parameters (grader/emu/README.md, "The model": each
 * is fitted to one published measurement, which make model-validation
 * re-derives). */
typedef struct ndemu_model_params {
    double latency_s;          /* a load's round trip at low load, seconds       */
    double queue_loads;        /* ... plus this share of the DRAM time of the
                                  loads in flight ahead of it                     */
    double queue_stores;       /* ... and this share of that of the stores they
                                  bring                                           */
    double barrier_s;          /* what a barrier adds: the slowest warp's wait    */
    double dram_one_way;       /* DRAM efficiency (of nameplate) reading or
                                  writing only                                    */
    double dram_copy;          /* ... as many bytes read as written               */
    double l2_scattered;       /* L2's rate for sectors beyond those DRAM moves,
                                  x nameplate                                     */
} ndemu_model_params;

/* The parameters ndemu_model uses. */
const ndemu_model_params *ndemu_model_defaults(void);

/* Estimate launch *s on *gpu.  scale multiplies every byte, sector and
 * wavefront count (1: the launch as run; 1024: the same kernel on a
 * problem 1024 times larger, with a grid that fills the GPU).  Returns 0,
 * or -1 if s recorded no memory traffic. */
int ndemu_model(const ndemu_launch_stats *s, const ndemu_gpu *gpu, double scale,
                ndemu_estimate *out);
/* The same with other parameters (model_validation.cu fits them). */
int ndemu_model_with(const ndemu_launch_stats *s, const ndemu_gpu *gpu, double scale,
                     const ndemu_model_params *p, ndemu_estimate *out);

#ifdef __cplusplus
}
#endif

#endif /* NDEMU_PROFILE_H */
