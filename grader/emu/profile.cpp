/* profile.cpp -- the emulator as a profiler and a sanitizer (included at the
 * end of emu.cpp, whose state it reads; grader/emu/README.md, "Profiling").
 *
 * In the instrumented build the lesson's device code is compiled with gcc's
 * -fsanitize=thread instrumentation, and this file supplies the functions
 * that instrumentation calls on every load and store (__tsan_read4(addr),
 * __tsan_write16(addr), ...), in place of ThreadSanitizer's runtime, which
 * is not linked.  The call's return address names the access site (the
 * instruction).  An access made inside a kernel is then
 *
 *   - classified by its address: the thread's own stack and the kernel's
 *     parameters (not counted), global memory (a cudaMalloc allocation),
 *     shared memory (a __shared__ array: the program's symbol table lists
 *     it as a function's static variable; or dynamic shared memory),
 *     static storage of the program (a __device__ or __constant__
 *     variable, a constant; allowed, not counted), anything else (a host
 *     pointer: a fault, as on a GPU);
 *   - grouped with the accesses of the other lanes of its warp at the same
 *     site for the same time (per thread, the k-th execution of a site):
 *     one group is one request, whose sectors (global) or wavefronts
 *     (shared) are counted when the block reaches a barrier or ends;
 *   - checked: racecheck (shared memory written by one thread and read or
 *     written by another with no barrier between; global memory written by
 *     one block and read or written by another of the same launch with no
 *     __threadfence()+atomic ordering them), initcheck (global memory read
 *     before anything wrote it).
 *
 * Elsewhere (every build without the instrumentation) nothing calls the
 * __tsan_ functions, __tsan_init never runs, g_prof_on stays false, and
 * the C API below reports that nothing is recorded.
 */
#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unordered_map>

namespace ndemu {

/* A block's share of L1 for global loads, in sectors: 32 KB, what each of
 * 4 resident blocks has of the smallest L1 the model's GPUs have (128 KB
 * per SM on compute capability 8.9).  Global loads are cached in L1 (the
 * default since compute capability 7.0); stores are written through. */
static const uint64_t kL1Sectors = 32 * 1024 / 32;

/* ---- settings --------------------------------------------------------- */
struct ProfSettings {
    bool instrumented = false; /* an instrumented object is linked (__tsan_init ran) */
    bool race = true, host = true, init = true; /* NDEMU_SANITIZE */
    int print = 0;                              /* NDEMU_PROFILE: print each launch */
    FILE *tsv = nullptr;                        /* NDEMU_PROFILE_TSV: a row per launch */
    bool read_env = false;
};
static ProfSettings g_ps;

static void prof_settings(void)
{
    if (g_ps.read_env) return;
    g_ps.read_env = true;
    const char *s = getenv("NDEMU_SANITIZE");
    if (s && *s) {
        /* "0" or "none": nothing; else a list of race, host, init */
        bool all = strcmp(s, "1") == 0 || strcmp(s, "all") == 0;
        g_ps.race = all || strstr(s, "race");
        g_ps.host = all || strstr(s, "host");
        g_ps.init = all || strstr(s, "init");
    }
    const char *p = getenv("NDEMU_PROFILE");
    g_ps.print = p && *p && *p != '0';
    const char *t = getenv("NDEMU_PROFILE_TSV");
    if (t && *t) {
        g_ps.tsv = fopen(t, "a");
        if (!g_ps.tsv) fprintf(stderr, "ndemu: cannot append to NDEMU_PROFILE_TSV=%s: %s\n", t, strerror(errno));
    }
}

/* ---- access sites ----------------------------------------------------- */
enum Space : unsigned char { kGlobal = 0, kShared = 1 };

/* One access site: an instruction (return address of the callback), the
 * memory it went to and whether it stores. */
struct Site {
    uintptr_t pc;
    unsigned char space, write, width;
    uint32_t launch;          /* the last launch that used it */
    uint32_t lidx;            /* its index in that launch's Prof::launch_sites */
    /* this launch's totals, for the per-line table */
    uint64_t requests, lanes, bytes, sectors, wavefronts, ideal;
};

struct Group {                /* one request being gathered */
    uint32_t site;
    uint32_t lanes;           /* lanes that took part */
    uint32_t size;            /* bytes per lane */
    uintptr_t addr[32];
};

struct Bits {                 /* one bit per byte or per sector */
    std::vector<uint64_t> w;
    bool get(size_t i) const { return w[i >> 6] >> (i & 63) & 1u; }
    bool set(size_t i)        /* true if it was clear */
    {
        uint64_t m = 1ull << (i & 63), &x = w[i >> 6];
        bool was = x & m;
        x |= m;
        return !was;
    }
};

/* Racecheck's record of one byte of shared memory. */
struct ShadowByte {
    uint32_t wepoch, repoch;  /* barrier interval of the last write / read */
    uint32_t wwarp_epoch, rwarp_epoch;
    uint32_t wsite, rsite;
    uint16_t wtid, rtid;
    bool rmany;               /* several threads read in repoch */
    uint32_t iblock;          /* initcheck: the block (Prof::block_epoch) that last wrote it */
};

/* Racecheck between blocks: one access to a 4-byte word of global memory,
 * in 8 bytes.  block: the block's linear index in the grid (a launch of
 * more than 2^24 blocks is not checked); site: the site's index in the
 * launch's sites (Site::lidx; 1023: one of the rest); mask: the bytes of
 * the word it touched (0: no access); tid: the thread in the block; time:
 * the block's fences before the access (Prof::gtime), which says whether
 * a fence followed it. */
struct GAcc {
    uint64_t block : 24, site : 10, mask : 4, tid : 10, time : 16;
};
static const uint32_t kGSiteOther = 1023;
/* The record of one 4-byte word in this launch: its last write, and one
 * read (the first by another block that nothing orders before later
 * writes). */
struct GWord {
    GAcc w, r;
};
static const size_t kGPageWords = 1024; /* 4 KiB of device memory a page, 16 KiB of records */
struct GPage {
    uint32_t launch;                        /* the launch its records are of */
    GWord w[kGPageWords];
};
/* A launch records at most this many pages (32 MiB of device memory, 128
 * MiB of records); what it touches beyond them is not checked. */
static const size_t kGMaxPages = 8192;

struct Prof {
    ndemu_launch_stats cur;
    std::vector<Site> sites;                      /* this program's sites */
    std::unordered_map<uint64_t, uint32_t> site_of; /* (pc, space, write) -> index */
    std::vector<uint32_t> launch_sites;           /* sites used in this launch */
    /* per thread of the block: executions of each site so far in this
     * barrier interval; per warp and site: the groups, by execution */
    std::vector<std::vector<uint32_t>> occ;
    std::vector<std::vector<std::vector<uint32_t>>> widx;
    std::vector<Group> groups;
    std::vector<uint32_t> ld_bytes;               /* per thread, this interval */
    double interval_bytes = 0;
    uint64_t intervals = 0;
    /* per thread: the load bytes issued since its last wait (its loads in
     * flight: a run), the run's number, whether it stored since the run
     * began, and per load site the run it last executed in and how often
     * (run << 8 | count); over the launch, the bytes and number of runs */
    struct Run {
        uint32_t bytes = 0, id = 1;
        bool stored = false;
        std::vector<uint64_t> site;
    };
    std::vector<Run> run;
    double run_bytes = 0;
    uint64_t runs = 0;
    /* this block's L1 for loads: sector -> the block's load misses when it
     * was last used; a sector last used kL1Sectors misses ago or more is
     * gone (least recently used) */
    std::unordered_map<uintptr_t, uint64_t> l1;
    uint64_t l1_misses = 0;
    /* distinct sectors read and written, per allocation (base -> bits) */
    std::unordered_map<uintptr_t, Bits> dram_rd, dram_wr;
    /* the __shared__ arrays this launch touched */
    std::vector<const void *> sh_used;
    size_t dyn_hi = 0;
    const void *ctx = nullptr;
    size_t ctx_size = 0;
    /* racecheck */
    std::vector<ShadowByte> shadow;               /* static section, then dynamic */
    uint32_t epoch = 1;                           /* barrier intervals, program-wide */
    uint32_t block_epoch = 0;                     /* P.epoch when this block began */
    /* initcheck on shared memory: the first read of a byte no thread of
     * the block wrote, reported at the end of its barrier interval unless
     * racecheck reports it first (a write by another thread in the same
     * interval: a missing barrier, which is the better message) */
    struct {
        bool on;
        uintptr_t a;
        size_t n;
        uint32_t site;
        int tid;
        const void *sa;
    } pend = {};
    std::vector<uint32_t> warp_epoch;             /* per warp: __syncwarp and shuffles */
    /* initcheck: bytes of each allocation written so far */
    std::map<uintptr_t, Bits> init;
    /* racecheck between blocks: the records of the global words touched,
     * by page (address >> 12), with a cache of pages; the running
     * block (its linear index), its fences so far, the time of its last
     * fence, of its last fence that an atomic followed (its release:
     * stores before it are ordered for other blocks), whether it made a
     * global atomic (its acquire: accesses after it see what was
     * released); and the release of every finished block of the launch
     * that has one */
    std::unordered_map<uintptr_t, GPage *> gpages;
    struct { uintptr_t key; GPage *page; uint32_t launch; } gcache[1024] = {};
    size_t gpages_launch = 0;                     /* pages this launch uses */
    bool gcheck = false;                          /* at most 2^24 blocks */
    uint32_t gblock = 0;
    uint16_t gtime = 0, gfence = 0, grelease = 0;
    bool gacquired = false;
    std::unordered_map<uint32_t, uint16_t> greleased;
    /* the last allocation found, for the next access */
    uintptr_t hit_base = 0, hit_end = 0;
    uintptr_t host_sp = 0;                        /* near the host's stack pointer */
    uint32_t nlaunch = 0;                         /* launches begun */
    struct { uint64_t key; uint32_t id; } cache[1024] = {}; /* (pc, space, write) -> site */
    double t0 = 0;
    std::vector<ndemu_launch_stats> launches;
    std::vector<std::vector<Site>> launch_site_tables; /* per launch: its sites' totals */
};
static Prof *g_prof_p;
#define g_prof forever(g_prof_p)

static double now_s(void) { return (double)clock_ticks() * 1e-9; }

/* ---- shared memory ------------------------------------------------------ */
/* A __shared__ array is a function's static variable (cuda_runtime.h):
 * the program's symbol table names it "_ZZ<function>E<name>", in a
 * writable section.  Device code has no other static variables inside
 * functions, so every such array a kernel touches is shared memory.  Read
 * once, from /proc/self/exe.  Racecheck's records follow one another in
 * the order of this list, then the dynamic shared memory. */
struct SharedArray {
    uintptr_t lo, hi;
    size_t shadow; /* index of its first byte in Prof::shadow */
    std::string name;
};
static std::vector<SharedArray> *g_shared_p;
#define g_shared forever(g_shared_p)
static size_t g_shared_bytes = 0; /* all of them */
static bool g_shared_read = false;

static int main_bias(struct dl_phdr_info *info, size_t, void *data)
{
    *(uintptr_t *)data = info->dlpi_addr; /* the first entry: the program */
    return 1;
}

static void read_shared_arrays(void)
{
    g_shared_read = true;
    int fd = open("/proc/self/exe", O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) close(fd);
        return;
    }
    void *m = mmap(nullptr, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return;
    const unsigned char *base = (const unsigned char *)m;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    uintptr_t bias = 0;
    dl_iterate_phdr(main_bias, &bias);
    if ((size_t)st.st_size >= sizeof *eh && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 &&
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) <= (size_t)st.st_size) {
        const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(base + eh->e_shoff);
        for (int i = 0; i < eh->e_shnum; i++) {
            if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
            const ElfW(Sym) *sym = (const ElfW(Sym) *)(base + sh[i].sh_offset);
            size_t nsym = sh[i].sh_size / sizeof(ElfW(Sym));
            const char *str = (const char *)(base + sh[sh[i].sh_link].sh_offset);
            for (size_t k = 0; k < nsym; k++) {
                const ElfW(Sym) &y = sym[k];
                if (ELF64_ST_TYPE(y.st_info) != STT_OBJECT || y.st_size == 0 || y.st_shndx == SHN_UNDEF ||
                    y.st_shndx >= eh->e_shnum)
                    continue;
                const ElfW(Shdr) &in = sh[y.st_shndx];
                if (!(in.sh_flags & SHF_WRITE) || !(in.sh_flags & SHF_ALLOC) || (in.sh_flags & SHF_TLS)) continue;
                const char *name = str + y.st_name;
                if (strncmp(name, "_ZZ", 3) != 0) continue;
                if (strstr(name, "ndemu_shared_epoch_")) continue; /* NDEMU_SHARED's, not the kernel's */
                std::string pretty;
                type_name(name, pretty);
                g_shared.push_back(SharedArray{bias + y.st_value, bias + y.st_value + y.st_size, 0, pretty});
            }
        }
    }
    munmap(m, (size_t)st.st_size);
    std::sort(g_shared.begin(), g_shared.end(),
              [](const SharedArray &x, const SharedArray &y) { return x.lo < y.lo; });
    for (SharedArray &a : g_shared) {
        a.shadow = g_shared_bytes;
        g_shared_bytes += a.hi - a.lo;
    }
}

/* The __shared__ array holding a, or null. */
static const SharedArray *shared_array(uintptr_t a)
{
    std::vector<SharedArray> &v = g_shared;
    size_t lo = 0, hi = v.size();
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a < v[mid].lo) hi = mid;
        else if (a >= v[mid].hi) lo = mid + 1;
        else return &v[mid];
    }
    return nullptr;
}

/* ---- source lines ----------------------------------------------------- */
/* The module holding pc and its load bias, for addr2line. */
struct ModuleHit {
    uintptr_t pc;
    const char *name;
    uintptr_t bias;
};
static int find_module(struct dl_phdr_info *info, size_t, void *data)
{
    ModuleHit *h = (ModuleHit *)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD) continue;
        uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
        if (h->pc >= lo && h->pc < lo + ph.p_memsz) {
            h->name = info->dlpi_name;
            h->bias = info->dlpi_addr;
            return 1;
        }
    }
    return 0;
}

/* "07_permute.cu:289" for each pc (the access instruction's return
 * address), by one run of addr2line (binutils), which reads the DWARF line
 * table; "pc 0x..." where that is not possible (no debug information, or
 * no way to run addr2line, as in the grader's sandbox). */
static void pc_lines(const std::vector<uintptr_t> &pcs, std::vector<std::string> &out)
{
    out.assign(pcs.size(), std::string());
    std::string cmd, exe;
    std::vector<size_t> asked;
    for (size_t i = 0; i < pcs.size(); i++) {
        char buf[48];
        snprintf(buf, sizeof buf, "pc %#lx", (unsigned long)pcs[i]);
        out[i] = buf;
        ModuleHit h{pcs[i] - 1, nullptr, 0};
        if (!dl_iterate_phdr(find_module, &h)) continue;
        std::string name = h.name && *h.name ? h.name : "/proc/self/exe";
        if (exe.empty()) exe = name;
        if (name != exe) continue; /* one module per run: the program */
        snprintf(buf, sizeof buf, " %#lx", (unsigned long)(pcs[i] - 1 - h.bias));
        cmd += buf;
        asked.push_back(i);
    }
    if (asked.empty()) return;
    char real[4096];
    ssize_t n = readlink(exe.c_str(), real, sizeof real - 1);
    if (n > 0) {
        real[n] = '\0';
        exe = real;
    }
    std::string full = "addr2line -e '" + exe + "'" + cmd + " 2>/dev/null";
    FILE *p = popen(full.c_str(), "r");
    if (!p) return;
    char line[1024];
    size_t k = 0;
    while (k < asked.size() && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        char *d = strstr(line, " (discriminator");
        if (d) *d = '\0';
        if (line[0] != '?') out[asked[k]] = base_name(line);
        k++;
    }
    pclose(p);
}

static std::string pc_line(uintptr_t pc)
{
    std::vector<std::string> out;
    pc_lines(std::vector<uintptr_t>{pc}, out);
    return out[0];
}

/* ---- launch, block, barrier ------------------------------------------- */
static void flush_groups(void);
static void global_race_launch(void);

static void prof_launch_begin(const LaunchInfo &info, const void *ctx, size_t ctx_size)
{
    if (!g_ps.instrumented) return;
    prof_settings();
    g_prof_on = true;
    Prof &P = g_prof;
    ndemu_launch_stats &s = P.cur;
    memset(&s, 0, sizeof s);
    snprintf(s.kernel, sizeof s.kernel, "%s", info.kernel);
    snprintf(s.file, sizeof s.file, "%s", base_name(info.file));
    s.line = info.line;
    s.grid[0] = info.grid.x, s.grid[1] = info.grid.y, s.grid[2] = info.grid.z;
    s.block[0] = info.block.x, s.block[1] = info.block.y, s.block[2] = info.block.z;
    int n = g_block.n;
    s.threads = (uint64_t)info.grid.x * info.grid.y * info.grid.z * (uint64_t)n;
    s.shared_dynamic = info.shmem;
    s.registers = launch_registers(info);
    P.ctx = ctx;
    P.ctx_size = ctx_size;
    P.occ.assign((size_t)n, std::vector<uint32_t>());
    P.widx.assign((size_t)(n + 31) / 32, std::vector<std::vector<uint32_t>>());
    P.warp_epoch.assign((size_t)(n + 31) / 32, 1);
    P.ld_bytes.assign((size_t)n, 0);
    P.run.assign((size_t)n, Prof::Run());
    P.groups.clear();
    P.interval_bytes = 0;
    P.intervals = 0;
    P.run_bytes = 0;
    P.runs = 0;
    P.dram_rd.clear();
    P.dram_wr.clear();
    P.sh_used.clear();
    P.dyn_hi = 0;
    if (!g_shared_read) read_shared_arrays();
    for (uint32_t id : P.launch_sites) {
        Site &t = P.sites[id];
        t.requests = t.lanes = t.bytes = t.sectors = t.wavefronts = t.ideal = 0;
    }
    P.launch_sites.clear();
    P.hit_base = P.hit_end = 0;
    P.host_sp = (uintptr_t)__builtin_frame_address(0);
    P.nlaunch++;
    global_race_launch();
    P.t0 = now_s();
}

/* A run of loads in flight ends: the thread waits for them. */
static void end_run(Prof::Run &r)
{
    Prof &P = g_prof;
    if (r.bytes) {
        P.run_bytes += r.bytes;
        P.runs++;
    }
    r.bytes = 0;
    r.id++;
    r.stored = false;
}

/* A thread loads n bytes at a site.  A site executed again in the same
 * run is the loop's next iteration: as nvcc compiles a loop whose trip
 * count it does not know (sm_90, checked with nvdisasm), four iterations
 * are issued together when the loop stores nothing, and one at a time
 * when it stores; a loop the compiler unrolled has its sites once each. */
static void run_load(Prof::Run &r, uint32_t site, uint32_t n)
{
    if (r.site.size() <= site) r.site.resize((size_t)site + 1, 0);
    uint64_t &x = r.site[site];
    uint32_t count = (uint32_t)(x >> 8 == r.id ? (x & 0xff) + 1 : 1);
    if (count > 1 && (r.stored || count > 4)) {
        end_run(r);
        count = 1;
    }
    x = (uint64_t)r.id << 8 | count;
    r.bytes += n;
}

/* The loads each thread issued in the interval that ends here. */
static void end_interval(void)
{
    Prof &P = g_prof;
    for (uint32_t &b : P.ld_bytes) {
        if (!b) continue;
        P.interval_bytes += b;
        P.intervals++;
        b = 0;
    }
    for (Prof::Run &r : P.run) end_run(r);
}

static void new_interval(void)
{
    Prof &P = g_prof;
    flush_groups();
    end_interval();
    for (auto &v : P.occ) std::fill(v.begin(), v.end(), 0u);
    P.epoch++;
}

static void flush_shared_init(void);

static void prof_block_begin(void)
{
    new_interval();
    Prof &P = g_prof;
    P.l1.clear();
    P.l1_misses = 0;
    P.block_epoch = P.epoch;
    P.pend.on = false;
    const uint3 &b = g_builtins.block_idx;
    const dim3 &g = g_builtins.grid_dim;
    P.gblock = (uint32_t)(b.x + (uint64_t)g.x * (b.y + (uint64_t)g.y * b.z));
    P.gtime = P.gfence = P.grelease = 0;
    P.gacquired = false;
}
static void prof_block_end(void)
{
    flush_shared_init();
    new_interval();
    Prof &P = g_prof;
    if (P.grelease) P.greleased[P.gblock] = P.grelease;
}

static void prof_barrier(void)
{
    flush_shared_init();
    g_prof.cur.barriers++;
    new_interval();
}

static void prof_warp_sync(int warp) { g_prof.warp_epoch[(size_t)warp]++; }

static void print_launch(FILE *out, const ndemu_launch_stats &s, const std::vector<Site> &sites);
static void tsv_launch(FILE *out, const ndemu_launch_stats &s);

static void prof_launch_end(void)
{
    Prof &P = g_prof;
    g_prof_on = false;
    ndemu_launch_stats &s = P.cur;
    if (!g_block.error) {
        flush_groups();
        end_interval();
    }
    for (auto &kv : P.dram_rd)
        for (uint64_t w : kv.second.w) s.dram_sectors_read += (uint64_t)__builtin_popcountll(w);
    for (auto &kv : P.dram_wr)
        for (uint64_t w : kv.second.w) s.dram_sectors_written += (uint64_t)__builtin_popcountll(w);
    for (const void *x : P.sh_used) {
        const SharedArray *sa = (const SharedArray *)x;
        s.shared_static += sa->hi - sa->lo;
    }
    s.load_bytes_per_interval = P.intervals ? P.interval_bytes / (double)P.intervals : 0;
    s.load_bytes_in_flight = P.runs ? P.run_bytes / (double)P.runs : 0;
    s.seconds = now_s() - P.t0;
    P.dram_rd.clear();
    P.dram_wr.clear();
    if (g_block.error) return; /* a failed launch is not a profile */
    P.launches.push_back(s);
    std::vector<Site> used;
    for (uint32_t id : P.launch_sites) used.push_back(P.sites[id]);
    P.launch_site_tables.push_back(used);
    if (g_ps.print) print_launch(stderr, s, used);
    if (g_ps.tsv) tsv_launch(g_ps.tsv, s);
}

/* ---- counting a request ----------------------------------------------- */
static Bits &sector_bits(std::unordered_map<uintptr_t, Bits> &m, uintptr_t base, size_t size)
{
    auto it = m.find(base);
    if (it != m.end()) return it->second;
    Bits &b = m[base];
    b.w.assign((size / 32 + 1) / 64 + 1, 0);
    return b;
}

/* The allocation holding [a, a+n): base and size, or false. */
static bool find_alloc(uintptr_t a, size_t n, uintptr_t *base, size_t *size)
{
    Prof &P = g_prof;
    if (a >= P.hit_base && a + n <= P.hit_end) {
        *base = P.hit_base;
        *size = P.hit_end - P.hit_base;
        return true;
    }
    auto it = g_allocs.upper_bound(a);
    if (it == g_allocs.begin()) return false;
    --it;
    if (a < it->first || a + n > it->first + it->second) return false;
    P.hit_base = it->first;
    P.hit_end = it->first + it->second;
    *base = it->first;
    *size = it->second;
    return true;
}

static void count_global(Group &g, Site &t, ndemu_access_stats &st, bool write)
{
    uintptr_t sec[32 * 2];
    int ns = 0;
    /* distinct bytes: lanes sorted by address, overlapping ranges merged */
    uintptr_t lo[32];
    int nl = 0;
    for (int l = 0; l < 32; l++) {
        if (!(g.lanes >> l & 1u)) continue;
        lo[nl++] = g.addr[l];
        uintptr_t first = g.addr[l] >> 5, last = (g.addr[l] + g.size - 1) >> 5;
        for (uintptr_t x = first; x <= last && ns < 64; x++) sec[ns++] = x;
    }
    std::sort(sec, sec + ns);
    int nsec = (int)(std::unique(sec, sec + ns) - sec);
    for (int i = 0; i < nsec; i++) /* lines: 4 sectors each, sec sorted */
        g_prof.cur.l1_lines += i == 0 || sec[i] >> 2 != sec[i - 1] >> 2;
    std::sort(lo, lo + nl);
    uint64_t bytes = 0;
    uintptr_t end = 0;
    for (int i = 0; i < nl; i++) {
        uintptr_t a = lo[i], b = lo[i] + g.size;
        if (a < end) a = end;
        if (b > a) bytes += b - a;
        if (b > end) end = b;
    }
    uint64_t ideal = (bytes + 31) / 32;
    st.requests++, st.lanes += (uint64_t)nl, st.bytes += bytes, st.sectors += (uint64_t)nsec, st.ideal += ideal;
    t.requests++, t.lanes += (uint64_t)nl, t.bytes += bytes, t.sectors += (uint64_t)nsec, t.ideal += ideal;
    int wi = g.size >= 16 ? 4 : g.size >= 8 ? 3 : g.size >= 4 ? 2 : g.size >= 2 ? 1 : 0;
    st.by_width[wi]++;
    /* distinct sectors of the launch, per allocation */
    Prof &P = g_prof;
    if (!write) {
        /* the sectors L1 does not hold reach L2 */
        for (int i = 0; i < nsec; i++) {
            auto it = P.l1.find(sec[i]);
            if (it != P.l1.end() && P.l1_misses - it->second < kL1Sectors) {
                it->second = P.l1_misses;
                continue;
            }
            P.cur.l2_load_sectors++;
            P.l1[sec[i]] = ++P.l1_misses;
        }
        if (P.l1.size() > 4 * kL1Sectors) /* forget what L1 has let go */
            for (auto it = P.l1.begin(); it != P.l1.end();)
                it = P.l1_misses - it->second >= kL1Sectors ? P.l1.erase(it) : std::next(it);
    }
    for (int i = 0; i < nsec; i++) {
        uintptr_t base;
        size_t size;
        if (!find_alloc(sec[i] << 5, 1, &base, &size)) continue;
        sector_bits(write ? P.dram_wr : P.dram_rd, base, size).set(((sec[i] << 5) - base) >> 5);
    }
}

static void count_shared(Group &g, Site &t, ndemu_access_stats &st)
{
    /* phases: the whole warp for accesses up to 4 bytes, halves for 8,
     * quarters for 16 */
    int phases = g.size <= 4 ? 1 : g.size <= 8 ? 2 : 4, per = 32 / phases;
    uint64_t waves = 0, ideal = 0, bytes = 0;
    int nl = 0;
    for (int ph = 0; ph < phases; ph++) {
        /* the distinct 4-byte words of this phase; the bank with the most
         * of them sets the wavefronts */
        uintptr_t words[32 * 5];
        int nw = 0;
        for (int l = ph * per; l < (ph + 1) * per; l++) {
            if (!(g.lanes >> l & 1u)) continue;
            nl++;
            uintptr_t first = g.addr[l] >> 2, last = (g.addr[l] + g.size - 1) >> 2;
            for (uintptr_t w = first; w <= last && nw < 32 * 5; w++) words[nw++] = w;
        }
        if (!nw) continue;
        std::sort(words, words + nw);
        nw = (int)(std::unique(words, words + nw) - words);
        int count[32] = {0}, worst = 0;
        for (int i = 0; i < nw; i++) {
            int c = ++count[words[i] & 31];
            if (c > worst) worst = c;
        }
        waves += (uint64_t)worst;
        ideal++;
    }
    /* distinct bytes, as for global */
    uintptr_t lo[32];
    int k = 0;
    for (int l = 0; l < 32; l++)
        if (g.lanes >> l & 1u) lo[k++] = g.addr[l];
    std::sort(lo, lo + k);
    uintptr_t end = 0;
    for (int i = 0; i < k; i++) {
        uintptr_t a = lo[i] < end ? end : lo[i], b = lo[i] + g.size;
        if (b > a) bytes += b - a;
        if (b > end) end = b;
    }
    st.requests++, st.lanes += (uint64_t)nl, st.bytes += bytes, st.wavefronts += waves, st.ideal += ideal;
    t.requests++, t.lanes += (uint64_t)nl, t.bytes += bytes, t.wavefronts += waves, t.ideal += ideal;
    int wi = g.size >= 16 ? 4 : g.size >= 8 ? 3 : g.size >= 4 ? 2 : g.size >= 2 ? 1 : 0;
    st.by_width[wi]++;
}

/* Count every request gathered so far: called when the block reaches a
 * barrier or ends, so a request never spans a barrier. */
static void flush_groups(void)
{
    Prof &P = g_prof;
    for (Group &g : P.groups) {
        Site &t = P.sites[g.site];
        int kind = t.space == kGlobal ? (t.write ? NDEMU_GLOBAL_STORE : NDEMU_GLOBAL_LOAD)
                                      : (t.write ? NDEMU_SHARED_STORE : NDEMU_SHARED_LOAD);
        if (t.space == kGlobal)
            count_global(g, t, P.cur.access[kind], t.write);
        else
            count_shared(g, t, P.cur.access[kind]);
    }
    P.groups.clear();
    for (auto &w : P.widx)
        for (auto &v : w) v.clear();
}

/* ---- faults ----------------------------------------------------------- */
/* A fault found by the sanitizer: the launch is abandoned (the thread
 * never resumes), as after any kernel fault; err is the sticky code. */
__attribute__((format(printf, 2, 3))) static void sanitizer_fault(cudaError_t err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkernel_fault(err, fmt, ap);
    va_end(ap);
    g_block.state[(size_t)g_tid] = kFaulted;
    wait_here();
}

/* ---- racecheck ---------------------------------------------------------- */
static size_t shared_index(uintptr_t a, const SharedArray *sa)
{
    return sa ? sa->shadow + (size_t)(a - sa->lo) : g_shared_bytes + (size_t)(a - (uintptr_t)g_dynamic_shared);
}

/* "byte 4 of __shared__ tile" (or of the dynamic shared memory): where a is. */
static void shared_where(uintptr_t a, const SharedArray *sa, char *where, size_t cap)
{
    if (sa)
        snprintf(where, cap, "byte %zu of __shared__ %s", (size_t)(a - sa->lo), sa->name.c_str());
    else
        snprintf(where, cap, "byte %zu of the dynamic shared memory", (size_t)(a - (uintptr_t)g_dynamic_shared));
}

static void race_report(const char *what, uint32_t site_a, int tid_a, uint32_t site_b, size_t n, uintptr_t a,
                        const SharedArray *sa)
{
    Prof &P = g_prof;
    char me[128], other[128];
    describe_thread(me, sizeof me, g_tid);
    describe_thread(other, sizeof other, tid_a);
    std::vector<uintptr_t> pcs{P.sites[site_a].pc, P.sites[site_b].pc};
    std::vector<std::string> lines;
    pc_lines(pcs, lines);
    char where[300];
    shared_where(a, sa, where, sizeof where);
    sanitizer_fault(cudaErrorLaunchFailure,
                    "racecheck: a shared-memory race in kernel '%s' (launched at %s:%d): %s %s at %s, "
                    "and %s %s it at %s, with no __syncthreads() between them (%s, %zu byte%s); on a GPU "
                    "the result depends on which thread runs first",
                    g_block.info->kernel, base_name(g_block.info->file), g_block.info->line, other, what,
                    lines[0].c_str(), me, P.sites[site_b].write ? "writes" : "reads", lines[1].c_str(), where, n,
                    n == 1 ? "" : "s");
}

/* initcheck on shared memory: a read of a byte no thread of this block
 * wrote (on a GPU, whatever the last block on that SM left there). */
static void shared_init_report(uintptr_t a, size_t n, uint32_t site, const SharedArray *sa, int tid)
{
    Prof &P = g_prof;
    char me[128], where[300];
    describe_thread(me, sizeof me, tid);
    std::string line = pc_line(P.sites[site].pc);
    shared_where(a, sa, where, sizeof where);
    vkernel_fault_f(cudaErrorLaunchFailure,
                    "initcheck: kernel '%s' (launched at %s:%d): %s reads %zu byte%s of shared memory at "
                    "%s (%s), and no thread of its block has written it: shared memory starts "
                    "uninitialised on a GPU (the emulator fills it with 0xff bytes)",
                    g_block.info->kernel, base_name(g_block.info->file), g_block.info->line, me, n,
                    n == 1 ? "" : "s", line.c_str(), where);
}

/* At a barrier or the block's end: the pending uninitialised read, if
 * racecheck did not report it (a fault of the launch, without a thread to
 * stop: the caller abandons the block). */
static void flush_shared_init(void)
{
    Prof &P = g_prof;
    if (!P.pend.on) return;
    P.pend.on = false;
    if (g_block.error) return;
    shared_init_report(P.pend.a, P.pend.n, P.pend.site, (const SharedArray *)P.pend.sa, P.pend.tid);
}

static void shared_written(uintptr_t a, size_t n, const SharedArray *sa)
{
    Prof &P = g_prof;
    if (P.shadow.empty()) P.shadow.assign(g_shared_bytes + kMaxDynamicShared, ShadowByte());
    size_t i0 = shared_index(a, sa);
    for (size_t i = i0; i < i0 + n && i < P.shadow.size(); i++) P.shadow[i].iblock = P.block_epoch;
}

static void race_check(uintptr_t a, size_t n, bool write, uint32_t site, const SharedArray *sa)
{
    Prof &P = g_prof;
    if (P.shadow.empty()) P.shadow.assign(g_shared_bytes + kMaxDynamicShared, ShadowByte());
    int me = g_tid, w = me / 32;
    uint32_t wep = P.warp_epoch[(size_t)w];
    size_t i0 = shared_index(a, sa);
    for (size_t i = i0; i < i0 + n && i < P.shadow.size(); i++) {
        ShadowByte &s = P.shadow[i];
        if (write) {
            s.iblock = P.block_epoch;
        } else if (g_ps.init && s.iblock != P.block_epoch && !P.pend.on) {
            P.pend.on = true;
            P.pend.a = a, P.pend.n = n, P.pend.site = site, P.pend.tid = me, P.pend.sa = sa;
        }
        if (!g_ps.race) continue;
        /* ordered: an earlier barrier interval, or the same warp after a
         * __syncwarp/shuffle, or the same thread */
        bool w_conc = s.wepoch == P.epoch && s.wtid != me &&
                      !(s.wtid / 32 == w && s.wwarp_epoch != wep);
        if (w_conc) {
            race_report("wrote it", s.wsite, s.wtid, site, n, a, sa);
            return;
        }
        if (write) {
            bool r_conc = s.repoch == P.epoch && (s.rtid != me || s.rmany) &&
                          !(!s.rmany && s.rtid / 32 == w && s.rwarp_epoch != wep);
            if (r_conc) {
                int reader = s.rtid != me ? s.rtid : me;
                race_report("read it", s.rsite, reader, site, n, a, sa);
                return;
            }
            s.wepoch = P.epoch, s.wwarp_epoch = wep, s.wsite = site, s.wtid = (uint16_t)me;
        } else {
            if (s.repoch == P.epoch && s.rtid != me) {
                s.rmany = true;
            } else if (s.repoch != P.epoch) {
                s.rmany = false;
            }
            s.repoch = P.epoch, s.rwarp_epoch = wep, s.rsite = site, s.rtid = (uint16_t)me;
        }
    }
}

/* ---- racecheck between blocks (global memory) ------------------------------ */
/* Blocks run one after another here, all at once on a GPU.  Two accesses
 * to the same bytes of global memory by different blocks of one launch,
 * at least one a store, neither an atomic, race unless they are ordered
 * as the standard pattern orders them: the earlier block stored (or
 * loaded), then executed __threadfence() and after it a global atomic
 * (its release), and the later block executed a global atomic before
 * its access (its acquire; typically the atomic on a counter that tells
 * it it is the last block).  Blocks run whole, so when a block makes an
 * access, every earlier access in the record is of a finished block, or
 * of its own; the rule is per block, not per thread (a fence or atomic by
 * any of its threads, in the order the emulator ran them). */

/* Forget the last launch's releases; free the pages when there are many
 * (a page's records are cleared when a launch first uses it). */
static void global_race_launch(void)
{
    Prof &P = g_prof;
    P.greleased.clear();
    P.gpages_launch = 0;
    P.gcheck = P.cur.grid[0] * (uint64_t)P.cur.grid[1] * P.cur.grid[2] <= (1u << 24);
    if (P.gpages.size() <= kGMaxPages / 2) return;
    for (auto &kv : P.gpages) free(kv.second);
    P.gpages.clear();
}

/* The page of records of a word (its address / 4) in this launch, or
 * null past the launch's pages. */
static GPage *global_page(uintptr_t key)
{
    Prof &P = g_prof;
    auto it = P.gpages.find(key);
    GPage *pg = it == P.gpages.end() ? nullptr : it->second;
    if (pg && pg->launch == P.nlaunch) return pg;
    if (P.gpages_launch >= kGMaxPages) return nullptr;
    if (!pg) {
        pg = (GPage *)malloc(sizeof(GPage));
        if (!pg) return nullptr;
        P.gpages[key] = pg;
    }
    P.gpages_launch++;
    pg->launch = P.nlaunch; /* first use in this launch: no records yet */
    memset(pg->w, 0, sizeof pg->w);
    return pg;
}

static inline GWord *global_word(Prof &P, uintptr_t word)
{
    uintptr_t key = word / kGPageWords;
    auto &c = P.gcache[(key ^ key >> 10) & 1023];
    if (c.key != key || c.launch != P.nlaunch) {
        c.key = key;
        c.launch = P.nlaunch;
        c.page = global_page(key);
    }
    return c.page ? &c.page->w[word % kGPageWords] : nullptr;
}

/* The access x of another, finished block is ordered before the running
 * block's: a fence and then an atomic followed it in its block, and the
 * running block has made an atomic. */
static bool global_ordered(Prof &P, const GAcc &x)
{
    if (!P.gacquired) return false;
    auto it = P.greleased.find(x.block);
    return it != P.greleased.end() && x.time < it->second;
}

static void global_race_report(const GAcc &x, bool x_write, uint32_t site, bool write, uintptr_t a, size_t n)
{
    Prof &P = g_prof;
    const dim3 &g = g_builtins.grid_dim, &bd = g_builtins.block_dim;
    char me[128], other[128];
    describe_thread(me, sizeof me, g_tid);
    uint32_t t = x.tid, b = x.block;
    snprintf(other, sizeof other, "thread (%u,%u,%u) of block (%u,%u,%u)", t % bd.x, t / bd.x % bd.y,
             t / (bd.x * bd.y), b % g.x, b / g.x % g.y, b / g.x / g.y);
    uint32_t xs = (uint32_t)x.site;
    std::vector<uintptr_t> pcs{xs < kGSiteOther ? P.sites[P.launch_sites[xs]].pc : 0, P.sites[site].pc};
    std::vector<std::string> lines;
    pc_lines(pcs, lines);
    if (xs >= kGSiteOther) lines[0] = "a line of the kernel (one of its 1023rd and later access sites)";
    uintptr_t base = 0;
    size_t size = 0;
    char where[160] = "";
    if (find_alloc(a, 1, &base, &size))
        snprintf(where, sizeof where, " at offset %zu of a %zu-byte cudaMalloc allocation", (size_t)(a - base),
                 size);
    sanitizer_fault(cudaErrorLaunchFailure,
                    "racecheck: a global-memory race between blocks in kernel '%s' (launched at %s:%d): %s "
                    "%s it at %s, and %s %s it at %s, with no atomic or __threadfence()+atomic ordering "
                    "them (%zu byte%s%s); on a GPU blocks run at the same time, in any order, so the "
                    "result depends on which block gets there first (the emulator runs them one after "
                    "another)",
                    g_block.info->kernel, base_name(g_block.info->file), g_block.info->line, other,
                    x_write ? "wrote" : "read", lines[0].c_str(), me, write ? "writes" : "reads", lines[1].c_str(),
                    n, n == 1 ? "" : "s", where);
}

static void global_race_check(Prof &P, uintptr_t a, size_t n, bool write, uint32_t site)
{
    uint32_t me = P.gblock, lidx = P.sites[site].lidx;
    GAcc acc;
    acc.block = me & 0xffffff;
    acc.site = (lidx < kGSiteOther ? lidx : kGSiteOther) & 0x3ff;
    acc.mask = 0;
    acc.tid = (unsigned)g_tid & 0x3ff;
    acc.time = P.gtime;
    for (uintptr_t w = a >> 2, last = (a + n - 1) >> 2; w <= last; w++) {
        /* the bytes of this word the access covers */
        uintptr_t lo = w << 2 > a ? w << 2 : a, hi = (w << 2) + 4 < a + n ? (w << 2) + 4 : a + n;
        unsigned mask = ((1u << (hi - lo)) - 1) << (lo & 3);
        GWord *x = global_word(P, w);
        if (!x) return; /* past the pages a launch records */
        if ((x->w.mask & mask) && x->w.block != me && !global_ordered(P, x->w))
            global_race_report(x->w, true, site, write, lo, hi - lo);
        if (write) {
            if ((x->r.mask & mask) && x->r.block != me && !global_ordered(P, x->r))
                global_race_report(x->r, false, site, write, lo, hi - lo);
            unsigned m = x->w.block == me ? x->w.mask | mask : mask;
            x->w = acc;
            x->w.mask = m & 0xf;
        } else if (!x->r.mask || x->r.block == me || global_ordered(P, x->r)) {
            /* keep another block's read that nothing orders: a later
             * store by any block but that one races with it */
            unsigned m = x->r.block == me ? x->r.mask | mask : mask;
            x->r = acc;
            x->r.mask = m & 0xf;
        }
    }
}

/* __threadfence() (and __threadfence_system()) in the instrumented build. */
void fence_note(void)
{
    if (!g_prof_on || !g_cur) return;
    Prof &P = g_prof;
    if (P.gtime < 0xffff) P.gtime++;
    P.gfence = P.gtime;
}

/* ---- initcheck ---------------------------------------------------------- */
static void prof_alloc(const void *p, size_t n, bool freed)
{
    if (!g_ps.instrumented) return;
    Prof &P = g_prof;
    P.hit_base = P.hit_end = 0;
    if (freed) {
        P.init.erase((uintptr_t)p);
        return;
    }
    Bits &b = P.init[(uintptr_t)p];
    b.w.assign(n / 64 + 1, 0);
}

/* dst[0..n) of device memory was written by the host (src null: cudaMemset
 * or a host source) or copied from device memory src. */
static void prof_written(const void *dst, const void *src, size_t n)
{
    if (!g_ps.instrumented) return;
    uintptr_t db, sb = 0;
    size_t dsize, ssize = 0;
    if (!find_alloc((uintptr_t)dst, n, &db, &dsize)) return;
    Prof &P = g_prof;
    Bits &d = P.init[db];
    size_t d0 = (uintptr_t)dst - db;
    if (src && find_alloc((uintptr_t)src, n, &sb, &ssize)) {
        Bits s = P.init[sb]; /* a copy: the ranges may overlap */
        size_t s0 = (uintptr_t)src - sb;
        for (size_t i = 0; i < n; i++)
            if (s.get(s0 + i)) d.set(d0 + i);
        return;
    }
    for (size_t i = 0; i < n; i++) d.set(d0 + i);
}

static void init_check(uintptr_t a, size_t n, bool write, uintptr_t base, size_t size, uint32_t site)
{
    Prof &P = g_prof;
    auto it = P.init.find(base);
    if (it == P.init.end()) return;
    Bits &b = it->second;
    size_t o = a - base;
    if (write) {
        for (size_t i = 0; i < n; i++) b.set(o + i);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (b.get(o + i)) continue;
        char me[128];
        describe_thread(me, sizeof me, g_tid);
        std::string line = pc_line(P.sites[site].pc);
        sanitizer_fault(cudaErrorLaunchFailure,
                        "initcheck: kernel '%s' (launched at %s:%d): %s reads %zu byte%s at offset %zu of "
                        "a %zu-byte cudaMalloc allocation at %s, and nothing has written byte %zu of it "
                        "(no cudaMemcpy, cudaMemset or kernel): on a GPU it would read whatever was there",
                        g_block.info->kernel, base_name(g_block.info->file), g_block.info->line, me, n,
                        n == 1 ? "" : "s", o, size, line.c_str(), o + i);
        return;
    }
}

/* ---- the access callback ------------------------------------------------ */
struct StaticRange {
    uintptr_t lo, hi;
};
static std::vector<StaticRange> *g_static_p; /* the program's loaded segments */
#define g_static forever(g_static_p)

static int add_module(struct dl_phdr_info *info, size_t, void *)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD)
            g_static.push_back(StaticRange{info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz});
    }
    return 0;
}

static bool static_storage(uintptr_t a)
{
    if (g_static.empty()) dl_iterate_phdr(add_module, nullptr);
    for (const StaticRange &r : g_static)
        if (a >= r.lo && a < r.hi) return true;
    return false;
}

static uint32_t site_id(uintptr_t pc, int space, bool write, size_t n)
{
    Prof &P = g_prof;
    uint64_t key = (uint64_t)pc << 2 | (uint64_t)space << 1 | (write ? 1u : 0u);
    auto &c = P.cache[(key >> 2 ^ key >> 12) & 1023];
    uint32_t id;
    if (c.key == key) {
        id = c.id;
    } else if (P.site_of.count(key)) {
        id = P.site_of[key];
    } else {
        id = (uint32_t)P.sites.size();
        Site s;
        memset(&s, 0, sizeof s);
        s.pc = pc, s.space = (unsigned char)space, s.write = write, s.width = (unsigned char)n;
        P.sites.push_back(s);
        P.site_of[key] = id;
    }
    c.key = key;
    c.id = id;
    Site &s = P.sites[id];
    if (s.launch != P.nlaunch) { /* first use in this launch */
        s.launch = P.nlaunch;
        s.lidx = (uint32_t)P.launch_sites.size();
        P.launch_sites.push_back(id);
    }
    return id;
}

static void host_pointer(uintptr_t a, size_t n, bool write, uintptr_t pc)
{
    char me[128], why[512];
    describe_thread(me, sizeof me, g_tid);
    in_device_memory((const void *)a, n, why, sizeof why);
    uintptr_t sp = g_prof.host_sp;
    bool stack = a >= sp - (8u << 20) && a < sp + (8u << 20);
    std::string line = pc_line(pc);
    sanitizer_fault(cudaErrorIllegalAddress,
                    "kernel '%s' (launched at %s:%d): %s %s %zu byte%s at %p at %s, which is neither device "
                    "memory, shared memory nor the thread's own stack: %s%s. A GPU stops the kernel with "
                    "cudaErrorIllegalAddress (cudaMemcpy the data to a cudaMalloc buffer and pass that)",
                    g_block.info->kernel, base_name(g_block.info->file), g_block.info->line, me,
                    write ? "writes" : "reads", n, n == 1 ? "" : "s", (void *)a, line.c_str(), why,
                    stack ? " (it looks like the host's stack: a host variable passed by address?)" : "");
}

static void on_access(uintptr_t a, size_t n, bool write, uintptr_t pc)
{
    if (!g_prof_on || !g_cur) return; /* host code, or not instrumented */
    /* the common cases first: built-in variables, the thread's stack */
    if (a - (uintptr_t)&g_builtins < sizeof g_builtins) return;
    if (a - (uintptr_t)g_cur->stack_lo < g_cur->stack_size) return;
    Prof &P = g_prof;
    if (a - (uintptr_t)P.ctx < P.ctx_size) return; /* the kernel's parameters */
    int space;
    bool dynamic = false;
    uintptr_t base = 0;
    size_t size = 0;
    const SharedArray *sa = nullptr;
    if (find_alloc(a, n, &base, &size)) {
        space = kGlobal;
    } else if ((sa = shared_array(a)) != nullptr) {
        space = kShared;
        bool listed = false;
        for (const void *x : P.sh_used) listed = listed || x == sa;
        if (!listed) P.sh_used.push_back(sa);
    } else if (a - (uintptr_t)g_dynamic_shared < sizeof g_dynamic_shared) {
        space = kShared;
        dynamic = true;
    } else if (find_alloc(a, 1, &base, &size)) {
        /* starts inside an allocation, runs past its end: AddressSanitizer's
         * job in the other builds; here a fault */
        if (g_ps.host) {
            char me[128];
            describe_thread(me, sizeof me, g_tid);
            std::string line = pc_line(pc);
            sanitizer_fault(cudaErrorIllegalAddress,
                            "kernel '%s' (launched at %s:%d): %s %s %zu bytes at %p at %s, past the end "
                            "of the %zu-byte allocation at %p: an out-of-bounds access",
                            g_block.info->kernel, base_name(g_block.info->file), g_block.info->line, me,
                            write ? "writes" : "reads", n, (void *)a, line.c_str(), size, (void *)base);
        }
        return;
    } else if (static_storage(a)) {
        return; /* a __device__ or __constant__ variable, or a constant */
    } else {
        if (g_ps.host) host_pointer(a, n, write, pc);
        return;
    }
    uint32_t site = site_id(pc, space, write, n);
    int me = g_tid;
    if (space == kShared && (g_ps.race || g_ps.init)) race_check(a, n, write, site, sa);
    /* the request: this thread's k-th execution of the site */
    std::vector<uint32_t> &occ = P.occ[(size_t)me];
    if (occ.size() <= site) occ.resize((size_t)site + 1, 0);
    uint32_t k = occ[site]++;
    if (space == kGlobal) {
        if (g_ps.race && P.gcheck) global_race_check(P, a, n, write, site);
        if (g_ps.init) init_check(a, n, write, base, size, site);
        if (!write) {
            P.ld_bytes[(size_t)me] += (uint32_t)n;
            run_load(P.run[(size_t)me], site, (uint32_t)n);
        }
    }
    if (write && P.run[(size_t)me].bytes) P.run[(size_t)me].stored = true; /* a store inside the run */
    std::vector<std::vector<uint32_t>> &bysite = P.widx[(size_t)me / 32];
    if (bysite.size() <= site) bysite.resize((size_t)site + 1);
    std::vector<uint32_t> &byk = bysite[site];
    while (byk.size() <= k) {
        byk.push_back((uint32_t)P.groups.size());
        P.groups.emplace_back();
        Group &g = P.groups.back();
        g.site = site, g.lanes = 0, g.size = (uint32_t)n;
    }
    Group &g = P.groups[byk[k]];
    int lane = me & 31;
    if (g.lanes >> lane & 1u) return; /* cannot happen: k counts per thread */
    g.lanes |= 1u << lane;
    g.addr[lane] = a;
    if (n > g.size) g.size = (uint32_t)n;
    if (dynamic && a + n - (uintptr_t)g_dynamic_shared > P.dyn_hi) P.dyn_hi = a + n - (uintptr_t)g_dynamic_shared;
}

/* An access gcc instruments as a range (__tsan_read_range, _write_range):
 * gcc calls __tsan_readN (N = 1, 2, 4, 8, 16) only when the type's
 * alignment is at least min(N, 8) bytes, and a range for the rest: a
 * struct copied by value whose alignment is below its size (struct
 * { float a, b, c, d; }: 16 bytes, 4-byte aligned), or of another size.
 * nvcc moves such a struct in units of its alignment (a vector load or
 * store needs an address aligned to its whole width): four 4-byte
 * requests for that struct, where a float4 or uint4 (16-byte aligned) is
 * one 16-byte request.  The alignment is not passed, but it is bounded:
 * for a power-of-two size up to 16, by half of min(size, 8) (else gcc
 * would have called __tsan_readN); otherwise by 16 and the largest power
 * of two dividing the size; and always by the address's own alignment.
 * Each unit is an access of its own, as each of nvcc's instructions is a
 * request of its own. */
static void on_range(uintptr_t a, size_t n, bool write, uintptr_t pc)
{
    if (!g_prof_on || !g_cur) return;
    size_t unit = n <= 16 && (n & (n - 1)) == 0 ? (n < 8 ? n : 8) / 2 : 16;
    while (unit > 1 && (n % unit != 0 || a % unit != 0)) unit /= 2;
    if (unit == 0 || unit >= n) {
        on_access(a, n, write, pc);
        return;
    }
    for (size_t i = 0; i < n; i += unit) on_access(a + i, unit, write, pc);
}

void atomic_access(const void *p, size_t n)
{
    if (!g_prof_on || !g_cur) return;
    uintptr_t a = (uintptr_t)p, base;
    size_t size;
    g_prof.cur.atomics++;
    const SharedArray *sa = shared_array(a);
    bool shared = sa || a - (uintptr_t)g_dynamic_shared < sizeof g_dynamic_shared;
    if (shared) shared_written(a, n, sa); /* initcheck: an atomic writes it */
    if (shared || a - (uintptr_t)g_cur->stack_lo < g_cur->stack_size) return;
    if (find_alloc(a, n, &base, &size)) {
        if (g_ps.init) init_check(a, n, true, base, size, 0);
        /* racecheck between blocks: a fence before it makes it a release;
         * it is an acquire */
        Prof &P = g_prof;
        if (P.gfence) P.grelease = P.gfence;
        P.gacquired = true;
        return;
    }
    if (!static_storage(a) && g_ps.host) host_pointer(a, n, true, (uintptr_t)__builtin_return_address(0));
}

/* ---- registers (ptxas) ---------------------------------------------------- */
/* The table: "kernel(parameter types)<TAB>registers..." lines, which
 * grader/emu/regs.py writes from nvcc's resource usage, found in
 *   - the section ndemu_regs of the program: the grader links, beside each
 *     lesson object, an object of its kernels' lines (regs.py --c), so an
 *     executor locked in its sandbox carries its own table;
 *   - the file NDEMU_REGISTERS names; unset, ndemu-registers.tsv beside the
 *     program or one folder up, which make build writes with nvcc
 *     installed (set it empty for none).
 * The section's lines come first: a line for a kernel already listed adds
 * nothing. */
extern "C" {
extern const char __start_ndemu_regs[] __attribute__((weak));
extern const char __stop_ndemu_regs[] __attribute__((weak));
}
static std::map<std::string, int> *g_regs_p;
static bool g_regs_read = false;

static void regs_line(const char *line, size_t n)
{
    const char *tab = (const char *)memchr(line, '\t', n);
    if (!tab || line[0] == '#') return;
    if (!g_regs_p) g_regs_p = new std::map<std::string, int>();
    g_regs_p->emplace(std::string(line, (size_t)(tab - line)), atoi(std::string(tab + 1, line + n).c_str()));
}

static void read_registers(void)
{
    /* the section: the objects' arrays one after another (NUL padding
     * between them, where the linker aligned one) */
    const char *p = __start_ndemu_regs, *end = __stop_ndemu_regs;
    if (p && end) {
        while (p < end) {
            const char *e = p;
            while (e < end && *e != '\n' && *e != '\0') e++;
            if (e > p) regs_line(p, (size_t)(e - p));
            p = e + 1;
        }
    }
    const char *path = getenv("NDEMU_REGISTERS");
    std::string found;
    if (!path) {
        char exe[4096];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k > 0) {
            exe[k] = '\0';
            std::string d(exe);
            for (int up = 0; up < 2 && found.empty(); up++) {
                size_t slash = d.rfind('/');
                if (slash == std::string::npos) break;
                d.erase(slash);
                std::string c = d + "/ndemu-registers.tsv";
                if (access(c.c_str(), R_OK) == 0) found = c;
            }
        }
        if (!found.empty()) path = found.c_str();
    }
    if (!path || !*path) return;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "ndemu: cannot read NDEMU_REGISTERS=%s: %s\n", path, strerror(errno));
        return;
    }
    char line[2048];
    while (fgets(line, sizeof line, f)) regs_line(line, strcspn(line, "\n"));
    fclose(f);
}

static int launch_registers(const LaunchInfo &info)
{
    if (!g_regs_read) {
        g_regs_read = true;
        read_registers();
    }
    if (!g_regs_p || !info.params) return -1;
    /* the base name: no namespace, no template arguments */
    std::string name = info.kernel;
    size_t lt = name.find('<');
    if (lt != std::string::npos) name.erase(lt);
    size_t colon = name.rfind("::");
    if (colon != std::string::npos) name.erase(0, colon + 2);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    std::string params;
    info.params(params);
    auto it = g_regs_p->find(name + "(" + params + ")");
    return it == g_regs_p->end() ? -1 : it->second;
}

void type_name(const char *mangled, std::string &out)
{
    int status = 0;
    char *d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    out += status == 0 && d ? d : mangled;
    free(d);
}

/* ---- printing ------------------------------------------------------------ */
static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static void print_launch(FILE *out, const ndemu_launch_stats &s, const std::vector<Site> &sites)
{
    static const char *kind_names[] = {"global loads", "global stores", "shared loads", "shared stores"};
    fprintf(out, "\n== %s  (launched at %s:%d)\n", s.kernel, s.file, s.line);
    fprintf(out, "   grid (%u,%u,%u) x block (%u,%u,%u) = %llu threads; shared memory %llu B/block",
            s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2], (unsigned long long)s.threads,
            (unsigned long long)(s.shared_static + s.shared_dynamic));
    if (s.registers > 0) fprintf(out, "; %d registers/thread (ptxas, sm_90)", s.registers);
    fprintf(out, "\n   %-14s %10s %10s %9s %12s %10s %s\n", "", "requests", "bytes/req", "B/thread",
            "sectors/req", "efficiency", "(shared: wavefronts/req, conflicts)");
    for (int k = 0; k < NDEMU_ACCESS_KINDS; k++) {
        const ndemu_access_stats &a = s.access[k];
        if (!a.requests) continue;
        if (k < 2)
            fprintf(out, "   %-14s %10llu %10.1f %9.1f %12.2f %9.1f%%\n", kind_names[k],
                    (unsigned long long)a.requests, ratio(a.bytes, a.requests), ratio(a.bytes, a.lanes),
                    ratio(a.sectors, a.requests), 100.0 * ratio(a.bytes, a.sectors * 32));
        else
            fprintf(out, "   %-14s %10llu %10.1f %9.1f %12s %10s %.2f wavefronts/req, %.2f ideal (%llu extra)\n",
                    kind_names[k], (unsigned long long)a.requests, ratio(a.bytes, a.requests),
                    ratio(a.bytes, a.lanes), "", "", ratio(a.wavefronts, a.requests), ratio(a.ideal, a.requests),
                    (unsigned long long)(a.wavefronts - a.ideal));
    }
    fprintf(out, "   DRAM sectors   %llu read, %llu written (%.2f MB; L2 assumed to keep each sector once touched)\n",
            (unsigned long long)s.dram_sectors_read, (unsigned long long)s.dram_sectors_written,
            (double)(s.dram_sectors_read + s.dram_sectors_written) * 32 / 1e6);
    fprintf(out, "   barriers %llu; global loads per thread between barriers %.1f B (in flight: %.1f B)\n",
            (unsigned long long)s.barriers, s.load_bytes_per_interval, s.load_bytes_in_flight);
    fprintf(out, "   L1: %.2f lines/request; load sectors reaching L2 %llu of %llu (the rest L1 kept)\n",
            ratio(s.l1_lines, s.access[0].requests + s.access[1].requests), (unsigned long long)s.l2_load_sectors,
            (unsigned long long)s.access[0].sectors);
    if (s.atomics) fprintf(out, "   atomics %llu\n", (unsigned long long)s.atomics);
    /* the access sites, by line: sites of one line and kind added up
     * (an unrolled loop is several instructions of one line) */
    std::vector<uintptr_t> pcs;
    for (const Site &t : sites) pcs.push_back(t.pc);
    std::vector<std::string> lines;
    pc_lines(pcs, lines);
    std::vector<Site> rows;
    std::vector<std::string> names;
    for (size_t i = 0; i < sites.size(); i++) {
        const Site &t = sites[i];
        if (!t.requests) continue;
        size_t r = 0;
        while (r < rows.size() && !(names[r] == lines[i] && rows[r].space == t.space && rows[r].write == t.write)) r++;
        if (r == rows.size()) {
            rows.push_back(t);
            names.push_back(lines[i]);
            continue;
        }
        Site &x = rows[r];
        x.requests += t.requests, x.lanes += t.lanes, x.bytes += t.bytes, x.sectors += t.sectors;
        x.wavefronts += t.wavefronts, x.ideal += t.ideal;
    }
    fprintf(out, "   %-24s %-13s %10s %9s %s\n", "by line", "access", "requests", "B/thread", "per request");
    for (size_t i = 0; i < rows.size(); i++) {
        const Site &t = rows[i];
        const char *kind = t.space == kGlobal ? (t.write ? "global store" : "global load")
                                              : (t.write ? "shared store" : "shared load");
        fprintf(out, "   %-24s %-13s %10llu %9.1f %.2f %s (ideal %.2f)\n", names[i].c_str(), kind,
                (unsigned long long)t.requests, ratio(t.bytes, t.lanes),
                ratio(t.space == kGlobal ? t.sectors : t.wavefronts, t.requests),
                t.space == kGlobal ? "sectors" : "wavefronts", ratio(t.ideal, t.requests));
    }
    fprintf(out, "   modelled (not measured; grader/emu/README.md, \"The model\"), at this size:\n");
    for (int g = 0; ndemu_gpu_get(g); g++) {
        ndemu_estimate e;
        if (ndemu_model(&s, ndemu_gpu_get(g), 1.0, &e) != 0) continue;
        fprintf(out, "     %-10s %9.2f us  %7.0f GB/s  %5.1f%% of DRAM  (%d threads/SM, limited by %s; bound by %s)\n",
                ndemu_gpu_get(g)->name, e.seconds * 1e6, e.gbs, e.percent_of_dram, e.resident_threads_sm,
                e.limited_by, e.bound_by);
    }
}

static void tsv_launch(FILE *out, const ndemu_launch_stats &s)
{
    static bool header = false;
    if (!header && ftell(out) == 0)
        fprintf(out, "kernel\tgrid\tblock\tgld_req\tgld_sectors_per_req\tgld_bytes_per_req\tgst_req\t"
                     "gst_sectors_per_req\tgst_bytes_per_req\tshld_wavefronts_per_req\tshst_wavefronts_per_req\t"
                     "dram_sectors\tbarriers\tload_bytes_in_flight\tmodelled_h100_sxm_gbs\n");
    header = true;
    ndemu_estimate e;
    memset(&e, 0, sizeof e);
    ndemu_model(&s, ndemu_gpu_get(0), 1.0, &e);
    const ndemu_access_stats *a = s.access;
    fprintf(out, "%s\t%u,%u,%u\t%u,%u,%u\t%llu\t%.2f\t%.1f\t%llu\t%.2f\t%.1f\t%.2f\t%.2f\t%llu\t%llu\t%.1f\t%.0f\n",
            s.kernel, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2],
            (unsigned long long)a[0].requests, ratio(a[0].sectors, a[0].requests), ratio(a[0].bytes, a[0].requests),
            (unsigned long long)a[1].requests, ratio(a[1].sectors, a[1].requests), ratio(a[1].bytes, a[1].requests),
            ratio(a[2].wavefronts, a[2].requests), ratio(a[3].wavefronts, a[3].requests),
            (unsigned long long)(s.dram_sectors_read + s.dram_sectors_written), (unsigned long long)s.barriers,
            s.load_bytes_in_flight, e.gbs);
    fflush(out);
}

} /* namespace ndemu */

/* ---- the functions gcc's -fsanitize=thread instrumentation calls ---------- */
#define NDEMU_TSAN_ONE(name, n, write)                                                   \
    void name(void *a);                                                                  \
    void name(void *a) { ndemu::on_access((uintptr_t)a, n, write, (uintptr_t)__builtin_return_address(0)); }
#define NDEMU_TSAN_RW(n)                                                                 \
    NDEMU_TSAN_ONE(__tsan_read##n, n, false) NDEMU_TSAN_ONE(__tsan_write##n, n, true)    \
    NDEMU_TSAN_ONE(__tsan_unaligned_read##n, n, false)                                   \
    NDEMU_TSAN_ONE(__tsan_unaligned_write##n, n, true)                                   \
    NDEMU_TSAN_ONE(__tsan_volatile_read##n, n, false)                                    \
    NDEMU_TSAN_ONE(__tsan_volatile_write##n, n, true)

extern "C" {
void __tsan_init(void);
void __tsan_read_range(void *a, unsigned long n);
void __tsan_write_range(void *a, unsigned long n);
void __tsan_func_entry(void *);
void __tsan_func_exit(void);
void __tsan_vptr_update(void **, void *);
void __tsan_vptr_read(void **);

/* Called by a constructor of every instrumented object file: an
 * instrumented object is linked, so record. */
void __tsan_init(void) { ndemu::g_ps.instrumented = true; }
NDEMU_TSAN_RW(1)
NDEMU_TSAN_RW(2)
NDEMU_TSAN_RW(4)
NDEMU_TSAN_RW(8)
NDEMU_TSAN_RW(16)
void __tsan_read_range(void *a, unsigned long n)
{
    ndemu::on_range((uintptr_t)a, n, false, (uintptr_t)__builtin_return_address(0));
}
void __tsan_write_range(void *a, unsigned long n)
{
    ndemu::on_range((uintptr_t)a, n, true, (uintptr_t)__builtin_return_address(0));
}
void __tsan_func_entry(void *) {}
void __tsan_func_exit(void) {}
void __tsan_vptr_update(void **, void *) {}
void __tsan_vptr_read(void **) {}

/* ---- the C API (ndemu_profile.h) ------------------------------------------ */
int ndemu_profile_enabled(void) { return ndemu::g_ps.instrumented ? 1 : 0; }

int ndemu_launch_count(void) { return ndemu::g_prof_p ? (int)ndemu::g_prof.launches.size() : 0; }

int ndemu_launch_get(int i, ndemu_launch_stats *out)
{
    int n = ndemu_launch_count();
    if (i < 0) i += n;
    if (!out || i < 0 || i >= n) return -1;
    *out = ndemu::g_prof.launches[(size_t)i];
    return 0;
}

void ndemu_profile_reset(void)
{
    if (!ndemu::g_prof_p) return;
    ndemu::g_prof.launches.clear();
    ndemu::g_prof.launch_site_tables.clear();
}

void ndemu_profile_print(int i, FILE *out)
{
    int n = ndemu_launch_count();
    if (i < 0) i += n;
    if (i < 0 || i >= n || !out) return;
    ndemu::print_launch(out, ndemu::g_prof.launches[(size_t)i], ndemu::g_prof.launch_site_tables[(size_t)i]);
}
}
