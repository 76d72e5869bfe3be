/* model.cpp -- the performance model: a profiled launch's counts turned
 * into a modelled time on a named GPU (included at the end of emu.cpp;
 * grader/emu/README.md, "The model", says why each term is there and what
 * is left out).  Every figure it gives is an estimate ("modelled").
 *
 *   time = t_dram + t_latency + t_l2_extra + t_bank_conflicts + t_launch
 *
 *   t_dram            distinct sectors x 32 B / (90% of nameplate DRAM
 *                     bandwidth): the bytes DRAM must move, if L2 keeps a
 *                     sector once touched;
 *   t_latency         Little's law: with B bytes of loads in flight per
 *                     thread (the loads it issues between barriers, at most
 *                     64 B), R resident threads on the GPU and a latency L,
 *                     loads arrive at R x B / L bytes/s; the kernel's load
 *                     bytes take that long on top of their transfer.  In a
 *                     kernel with barriers L grows by a barrier's drain: a
 *                     block issues its next loads only when its slowest
 *                     warp's have arrived;
 *   t_l2_extra        sectors the requests touch beyond those DRAM moves
 *                     (uncoalesced accesses: one L2 transaction each), at
 *                     the L2's rate for scattered sectors;
 *   t_bank_conflicts  shared-memory wavefronts beyond one per phase, one
 *                     per clock per SM;
 *   t_launch          a fixed launch and drain cost.
 */

namespace ndemu {

/* NVIDIA's published specifications (product pages and whitepapers):
 * nameplate DRAM bandwidth, SMs, boost clock, L2, and the per-SM limits of
 * the compute capability (9.0: H100; 8.0: A100; 8.9: L4, RTX 4090). */
static const ndemu_gpu k_gpus[] = {
    /* name        GB/s   SMs  GHz    L2 MB  thr/SM blk/SM smem KiB regs */
    {"H100 SXM", 3352, 132, 1.980, 50, 2048, 32, 228, 65536},
    {"H100 PCIe", 2039, 114, 1.755, 50, 2048, 32, 228, 65536},
    {"A100 SXM", 2039, 108, 1.410, 40, 2048, 32, 164, 65536},
    {"L4", 300, 58, 2.040, 48, 1536, 24, 100, 65536},
    {"RTX 4090", 1008, 128, 2.520, 72, 1536, 24, 100, 65536},
};

/* The model's parameters (README, "The model"). */
static const double kDramEfficiency = 0.90;  /* DRAM reaches ~90% of nameplate   */
static const double kLatencySeconds = 400e-9; /* a global load's round trip      */
static const double kBarrierSeconds = 100e-9; /* what a barrier adds to it         */
static const double kL2ScatteredFraction = 0.66; /* L2's rate for scattered sectors,
                                                    x nameplate: fitted once, on
                                                    the naive transpose (H100) */
static const double kLaunchSeconds = 2e-6;    /* launch and drain                 */
static const int kSharedReservedPerBlock = 1024; /* bytes CUDA keeps per block  */

} /* namespace ndemu */

extern "C" {

const ndemu_gpu *ndemu_gpu_get(int i)
{
    int n = (int)(sizeof ndemu::k_gpus / sizeof ndemu::k_gpus[0]);
    return i >= 0 && i < n ? &ndemu::k_gpus[i] : nullptr;
}

int ndemu_model(const ndemu_launch_stats *s, const ndemu_gpu *gpu, double scale, ndemu_estimate *out)
{
    using namespace ndemu;
    if (!s || !gpu || !out) return -1;
    memset(out, 0, sizeof *out);
    const ndemu_access_stats *a = s->access;
    double read = (double)a[NDEMU_GLOBAL_LOAD].bytes * scale;
    double written = (double)a[NDEMU_GLOBAL_STORE].bytes * scale;
    if (read + written <= 0) return -1;
    double dram_gbs = gpu->dram_gbs * 1e9;

    /* occupancy: resident blocks per SM, by each limit */
    uint64_t tpb = (uint64_t)s->block[0] * s->block[1] * s->block[2];
    uint64_t warps = (tpb + 31) / 32;
    uint64_t limit = (uint64_t)gpu->max_threads_sm / (tpb ? tpb : 1);
    out->limited_by = "threads";
    if ((uint64_t)gpu->max_blocks_sm < limit) {
        limit = (uint64_t)gpu->max_blocks_sm;
        out->limited_by = "blocks";
    }
    uint64_t smem = s->shared_static + s->shared_dynamic + kSharedReservedPerBlock;
    uint64_t by_smem = (uint64_t)gpu->shared_kb_sm * 1024 / smem;
    if (by_smem < limit) {
        limit = by_smem;
        out->limited_by = "shared memory";
    }
    if (s->registers > 0) {
        uint64_t per_block = warps * (((uint64_t)s->registers * 32 + 255) / 256 * 256);
        uint64_t by_regs = (uint64_t)gpu->registers_sm / per_block;
        if (by_regs < limit) {
            limit = by_regs;
            out->limited_by = "registers";
        }
    }
    if (limit == 0) limit = 1; /* a launch a GPU would refuse; model one block */
    uint64_t blocks = (uint64_t)s->grid[0] * s->grid[1] * s->grid[2];
    double resident_blocks = (double)limit * gpu->sms;
    if (scale <= 1.0 && (double)blocks < resident_blocks) {
        resident_blocks = (double)blocks;
        out->limited_by = "grid";
    }
    out->resident_threads_sm = (int)(resident_blocks * (double)tpb / gpu->sms + 0.5);

    /* the terms */
    double dram_bytes = (double)(s->dram_sectors_read + s->dram_sectors_written) * 32 * scale;
    out->t_dram = dram_bytes / (kDramEfficiency * dram_gbs);
    double in_flight = resident_blocks * (double)tpb * s->load_bytes_in_flight;
    double latency = kLatencySeconds + (s->barriers ? kBarrierSeconds : 0.0);
    out->t_latency = in_flight > 0 ? read * latency / in_flight : 0;
    double l2_sectors = (double)(a[NDEMU_GLOBAL_LOAD].sectors + a[NDEMU_GLOBAL_STORE].sectors) * scale;
    double extra = l2_sectors * 32 - dram_bytes;
    out->t_l2_extra = extra > 0 ? extra / (kL2ScatteredFraction * dram_gbs) : 0;
    double conflicts = (double)(a[NDEMU_SHARED_LOAD].wavefronts - a[NDEMU_SHARED_LOAD].ideal +
                                a[NDEMU_SHARED_STORE].wavefronts - a[NDEMU_SHARED_STORE].ideal) * scale;
    out->t_bank_conflicts = conflicts / (gpu->sms * gpu->clock_ghz * 1e9);
    out->t_launch = kLaunchSeconds;
    out->seconds = out->t_dram + out->t_latency + out->t_l2_extra + out->t_bank_conflicts + out->t_launch;
    out->gbs = (read + written) / out->seconds / 1e9;
    out->percent_of_dram = 100.0 * out->gbs / gpu->dram_gbs;
    return 0;
}

} /* extern "C" */
