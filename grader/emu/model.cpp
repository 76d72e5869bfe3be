/* model.cpp -- the performance model: a profiled launch's counts turned
 * into a modelled time on a named GPU (included at the end of emu.cpp;
 * grader/emu/README.md, "The model", says where each figure comes from and
 * what is left out; "Validation", how it was tested).  Every figure it
 * gives is an estimate ("modelled").
 *
 *   time = max(t_dram, t_latency + t_bank_conflicts, t_l1) + t_l2_extra + t_launch
 *
 *   t_dram            distinct sectors x 32 B / (DRAM efficiency x nameplate
 *                     bandwidth): the bytes DRAM must move, if L2 keeps a
 *                     sector once touched.  The efficiency is that of
 *                     one-way traffic, or of a copy, or in between by the
 *                     mix of reads and writes;
 *   t_latency         Little's law: with B bytes of loads in flight per
 *                     thread (what the compiled loop issues before it
 *                     waits) and R resident threads, loads arrive at
 *                     R x B / L bytes/s.  L is the round trip at low load,
 *                     plus the queue a load waits in (a share of the DRAM
 *                     time of the loads in flight and of the stores they
 *                     bring), plus a barrier's wait in a kernel with
 *                     barriers;
 *   t_bank_conflicts  shared-memory wavefronts beyond one per phase, one per
 *                     clock per SM: time each block spends between its
 *                     loads, so it adds to their latency;
 *   t_l1              128-byte lines the requests touch, one per clock per
 *                     SM (32 lanes in 32 lines take 32 clocks);
 *   t_l2_extra        sectors reaching L2 beyond those DRAM moves (a store
 *                     sector per lane of an uncoalesced store; L1 keeps
 *                     what a block loaded), at L2's rate for them;
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

/* The fitted parameters: each set by one published measurement (a "fit"
 * row of lessons/data/model-validation.md), which make model-validation
 * fits again and compares with these.  The first five come from a
 * microbenchmark of an H100 PCIe's memory (te42kyfo/gpu-benches,
 * gpu-stream: one double per thread, occupancy 3 to 100%), the last two
 * from the published H100 SXM transposes, whose other rows test them. */
static const ndemu_model_params k_params = {
    601e-9, /* latency_s: Little's law on the read kernel at 3% occupancy   */
    0.267,  /* queue_loads: the read kernel at 25%                            */
    0.823,  /* queue_stores: the scale kernel (a copy) at 25%                 */
    256e-9, /* barrier_s: the padded 32x32 tile, one element per thread       */
    0.956,  /* dram_one_way: the read kernel at 100% (95.2% of nameplate)     */
    0.837,  /* dram_copy: the scale kernel at 100% (83.6% of nameplate)       */
    0.650,  /* l2_scattered: the naive transpose (strided stores)             */
};

static const double kLaunchSeconds = 2e-6;    /* launch and drain: a round figure,
                                                 not fitted */
static const int kSharedReservedPerBlock = 1024; /* bytes CUDA keeps per block  */

} /* namespace ndemu */

extern "C" {

const ndemu_gpu *ndemu_gpu_get(int i)
{
    int n = (int)(sizeof ndemu::k_gpus / sizeof ndemu::k_gpus[0]);
    return i >= 0 && i < n ? &ndemu::k_gpus[i] : nullptr;
}

const ndemu_model_params *ndemu_model_defaults(void) { return &ndemu::k_params; }

int ndemu_model_with(const ndemu_launch_stats *s, const ndemu_gpu *gpu, double scale, const ndemu_model_params *p,
                     ndemu_estimate *out)
{
    using namespace ndemu;
    if (!s || !gpu || !p || !out) return -1;
    memset(out, 0, sizeof *out);
    const ndemu_access_stats *a = s->access;
    double read = (double)a[NDEMU_GLOBAL_LOAD].bytes * scale;
    double written = (double)a[NDEMU_GLOBAL_STORE].bytes * scale;
    if (read + written <= 0) return -1;
    double nameplate = gpu->dram_gbs * 1e9;

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

    /* DRAM: the efficiency by the mix, 1 for a copy, 0 one way */
    double dram_r = (double)s->dram_sectors_read * 32 * scale, dram_w = (double)s->dram_sectors_written * 32 * scale;
    double dram = dram_r + dram_w, fr = dram > 0 ? dram_r / dram : 1.0, mix = 4 * fr * (1 - fr);
    double rate = (p->dram_one_way * (1 - mix) + p->dram_copy * mix) * nameplate;
    out->t_dram = dram / rate;

    /* latency: Little's law, with the queue the loads in flight and the
     * stores they bring make at DRAM (in bytes DRAM moves per load byte) */
    double in_flight = resident_blocks * (double)tpb * s->load_bytes_in_flight;
    if (in_flight > 0 && read > 0) {
        double queue = in_flight / read * (p->queue_loads * dram_r + p->queue_stores * dram_w) / rate;
        double latency = p->latency_s + (s->barriers ? p->barrier_s : 0.0) + queue;
        out->t_latency = read * latency / in_flight;
    }
    double sm_clocks = gpu->sms * gpu->clock_ghz * 1e9;
    double conflicts = (double)(a[NDEMU_SHARED_LOAD].wavefronts - a[NDEMU_SHARED_LOAD].ideal +
                                a[NDEMU_SHARED_STORE].wavefronts - a[NDEMU_SHARED_STORE].ideal) * scale;
    out->t_bank_conflicts = conflicts / sm_clocks;
    out->t_l1 = (double)s->l1_lines * scale / sm_clocks;
    double l2_bytes = (double)(s->l2_load_sectors + a[NDEMU_GLOBAL_STORE].sectors) * 32 * scale;
    out->t_l2_extra = l2_bytes > dram ? (l2_bytes - dram) / (p->l2_scattered * nameplate) : 0;
    out->t_launch = kLaunchSeconds;

    double path = out->t_latency + out->t_bank_conflicts, slowest = out->t_dram;
    out->bound_by = "DRAM";
    if (path > slowest) {
        slowest = path;
        out->bound_by = "latency";
    }
    if (out->t_l1 > slowest) {
        slowest = out->t_l1;
        out->bound_by = "L1";
    }
    out->seconds = slowest + out->t_l2_extra + out->t_launch;
    out->gbs = (read + written) / out->seconds / 1e9;
    out->percent_of_dram = 100.0 * out->gbs / gpu->dram_gbs;
    return 0;
}

int ndemu_model(const ndemu_launch_stats *s, const ndemu_gpu *gpu, double scale, ndemu_estimate *out)
{
    return ndemu_model_with(s, gpu, scale, &ndemu::k_params, out);
}

} /* extern "C" */
