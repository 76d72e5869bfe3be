/* The runtime of the CPU emulator of CUDA (grader/emu/README.md).
 *
 * One host thread runs every CUDA thread. The threads of a block are
 * cooperative fibers; blocks run one after another, in order (x fastest),
 * and so do the threads of a block (thread 0, 1, 2, ...; after every
 * other barrier in reverse, to expose races). A thread runs
 * until it finishes, or until it waits at __syncthreads() or a warp
 * operation (shuffle, ballot, __syncwarp); only then does it keep a fiber
 * (and its stack) of its own, so a kernel without barriers costs a plain
 * function call per thread.
 *
 * A fiber switch is a few instructions of assembly on x86-64 (no system
 * call) and ucontext elsewhere. With AddressSanitizer every switch is
 * announced to it, so kernels can be checked for out-of-bounds accesses.
 *
 * Nothing is initialised before the first CUDA call (the test programs
 * fork), and no real threads are used.
 */
#include <cuda_runtime.h>

#include <cerrno>
#include <dlfcn.h>
#include <string>
#include <cstdarg>
#include <ctime>
#include <fenv.h>
#include <map>
#include <set>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define NDEMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NDEMU_ASAN 1
#endif
#endif
#ifdef NDEMU_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/* The scheduler's hot paths skip sanitizer instrumentation: they are the
 * emulator's, not the student's, code, and are tested on their own. */
#ifdef NDEMU_ASAN
#define NDEMU_HOT __attribute__((no_sanitize("address", "undefined")))
#else
#define NDEMU_HOT
#endif

#if defined(__x86_64__) && !defined(NDEMU_UCONTEXT)
#define NDEMU_ASM_SWITCH 1
#else
#include <ucontext.h>
#endif

namespace ndemu {

Builtins g_builtins;

/* ------------------------------------------------------------------------
 * Errors
 * --------------------------------------------------------------------- */
static cudaError_t g_last = cudaSuccess;   /* cudaGetLastError() */
static cudaError_t g_sticky = cudaSuccess; /* a fault in a kernel: until cudaDeviceReset */
static char g_message[4096];               /* ndemu_last_message() */

/* loud: print it to stderr whatever NDEMU_VERBOSE says (a host or freed
 * pointer where device memory must be, or the reverse: a bug a GPU reports
 * with a bare error code, or not at all). */
static void vset_message(const char *fmt, va_list ap, bool loud = false)
{
    vsnprintf(g_message, sizeof g_message, fmt, ap);
    const char *v = getenv("NDEMU_VERBOSE");
    if (loud || (v && *v && *v != '0')) fprintf(stderr, "ndemu: %s\n", g_message);
}

__attribute__((format(printf, 2, 3))) static void set_message(bool loud, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset_message(fmt, ap, loud);
    va_end(ap);
}

/* An API error: returned, and remembered for cudaGetLastError(). */
__attribute__((format(printf, 2, 3))) static cudaError_t fail(cudaError_t e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset_message(fmt, ap);
    va_end(ap);
    g_last = e;
    return e;
}

/* The same, with the message printed (vset_message's loud). */
__attribute__((format(printf, 2, 3))) static cudaError_t fail_loud(cudaError_t e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset_message(fmt, ap, true);
    va_end(ap);
    g_last = e;
    return e;
}

/* After a fault in a kernel every call that uses the device returns it. */
static bool sticky(cudaError_t *e)
{
    if (g_sticky == cudaSuccess) return false;
    g_last = g_sticky;
    *e = g_sticky;
    return true;
}
#define NDEMU_STICKY()                       \
    do {                                     \
        cudaError_t sticky_e_;               \
        if (sticky(&sticky_e_)) return sticky_e_; \
    } while (0)

/* ------------------------------------------------------------------------
 * Allocations
 * --------------------------------------------------------------------- */
/* The runtime's tables are never destroyed: LeakSanitizer runs after static
 * destructors, and device memory is no leak it should report (as on a GPU). */
template <class T>
static T &forever(T *&p)
{
    if (!p) p = new T();
    return *p;
}
static std::map<uintptr_t, size_t> *g_allocs_p; /* base -> size of live cudaMalloc blocks */
#define g_allocs forever(g_allocs_p)
static std::set<uintptr_t> *g_managed_p;        /* the bases among them from cudaMallocManaged */
#define g_managed forever(g_managed_p)
static std::map<uintptr_t, size_t> *g_pinned_p; /* base -> size of live cudaMallocHost blocks */
#define g_pinned forever(g_pinned_p)

/* The live allocation of `table` that p is in or just past the end of
 * ([base, base + size]): true, with its base and size. */
static bool find_in(const std::map<uintptr_t, size_t> &table, const void *p, uintptr_t *base, size_t *size)
{
    uintptr_t a = (uintptr_t)p;
    auto it = table.upper_bound(a);
    if (it == table.begin()) return false;
    --it;
    if (a - it->first > it->second) return false;
    *base = it->first;
    *size = it->second;
    return true;
}

/* 0 if [p, p+n) lies inside one live allocation; else describes why not. */
static bool in_device_memory(const void *p, size_t n, char *why, size_t whylen)
{
    uintptr_t a = (uintptr_t)p;
    auto it = g_allocs.upper_bound(a);
    if (it != g_allocs.begin()) {
        --it;
        uintptr_t base = it->first;
        size_t size = it->second;
        if (a < base + size || (size == 0 && a == base)) {
            if (n <= size - (a - base)) return true;
            snprintf(why, whylen,
                     "the range [%p, %p) runs %zu bytes past the end of the %zu-byte allocation at %p",
                     p, (const void *)(a + n), (size_t)(a + n - (base + size)), size, (void *)base);
            return false;
        }
        if (a == base + size) {
            snprintf(why, whylen, "%p is just past the end of the %zu-byte allocation at %p", p, size,
                     (void *)base);
            return false;
        }
    }
    snprintf(why, whylen,
             "%p is not device memory: no live cudaMalloc allocation contains it (a host pointer, "
             "a freed pointer, or one never allocated?)",
             p);
    return false;
}

static bool is_device_ptr(const void *p)
{
    char why[8];
    return p && in_device_memory(p, 1, why, sizeof why);
}

/* ------------------------------------------------------------------------
 * Fibers
 * --------------------------------------------------------------------- */
#ifdef NDEMU_ASAN
static const size_t kStackSize = 1024 * 1024;
#else
static const size_t kStackSize = 256 * 1024;
#endif
static const int kMaxFibers = 1025;

struct Fiber {
    void *sp = nullptr; /* saved stack pointer while switched out */
    char *map = nullptr;
    size_t map_size = 0;
    char *stack_lo = nullptr;
    size_t stack_size = 0;
    bool busy = false;  /* running threads, or owned by a waiting one */
    bool kill = false;  /* abandoned: leave for good when resumed */
    void *fake_stack = nullptr;
#ifndef NDEMU_ASM_SWITCH
    ucontext_t uc;
#endif
};

static std::vector<Fiber *> *g_fibers_p; /* every fiber, reused across launches */
static std::vector<Fiber *> *g_free_p;   /* the idle ones */
#define g_fibers forever(g_fibers_p)
#define g_free forever(g_free_p)
static Fiber *g_cur = nullptr; /* the fiber running now, or null on the main stack */
#ifdef NDEMU_ASM_SWITCH
static void *g_main_sp = nullptr;
#else
static ucontext_t g_main_uc;
static Fiber *g_starting = nullptr;
#endif
#ifdef NDEMU_ASAN
static const void *g_main_lo = nullptr;
static size_t g_main_size = 0;
static void *g_main_fake = nullptr;
static bool g_from_main = false;
#endif

static void fiber_entry(void *arg);

#ifdef NDEMU_ASM_SWITCH
/* ndemu_switch(save, to): push the callee-saved registers, store the stack
 * pointer in *save, load `to`, pop. The SSE and x87 control words are not
 * switched: device code cannot change them (CUDA has no floating-point
 * environment; rounding is per instruction), so every fiber shares the host
 * thread's, and run_launch() restores them after each launch. Saving them
 * at every switch cost half the time of a __syncthreads(). */
extern "C" void ndemu_switch(void **save, void *to);
extern "C" void ndemu_fiber_start(void);
asm(R"(
    .text
    .p2align 4
    .globl ndemu_switch
    .hidden ndemu_switch
    .type ndemu_switch, @function
ndemu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size ndemu_switch, .-ndemu_switch

    .p2align 4
    .globl ndemu_fiber_start
    .hidden ndemu_fiber_start
    .type ndemu_fiber_start, @function
ndemu_fiber_start:
    movq %r12, %rdi
    callq *%r13
    ud2
    .size ndemu_fiber_start, .-ndemu_fiber_start
)");
#else
static void fiber_start_uc(void) { fiber_entry(g_starting); }
#endif

static void fiber_reset(Fiber *f)
{
#ifdef NDEMU_ASM_SWITCH
    /* A fresh frame for ndemu_switch to "return" into ndemu_fiber_start,
     * which calls fiber_entry(f) with an ABI-aligned stack. */
    char *top = f->stack_lo + f->stack_size; /* 16-byte aligned */
    uint64_t *ret = (uint64_t *)(top - 24);
    ret[0] = (uint64_t)(uintptr_t)&ndemu_fiber_start;
    ret[-1] = 0;                                 /* rbp: ends frame-pointer walks */
    ret[-2] = 0;                                 /* rbx */
    ret[-3] = (uint64_t)(uintptr_t)f;            /* r12: the argument */
    ret[-4] = (uint64_t)(uintptr_t)&fiber_entry; /* r13 */
    ret[-5] = 0;                                 /* r14 */
    ret[-6] = 0;                                 /* r15 */
    f->sp = &ret[-6];
#else
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = f->stack_lo;
    f->uc.uc_stack.ss_size = f->stack_size;
    f->uc.uc_link = nullptr;
    makecontext(&f->uc, fiber_start_uc, 0);
#endif
    f->kill = false;
    f->fake_stack = nullptr;
}

static Fiber *fiber_new(void)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t psize = page > 0 ? (size_t)page : 4096;
    Fiber *f = new Fiber;
    f->map_size = kStackSize + psize;
    void *m = mmap(nullptr, f->map_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) {
        delete f;
        return nullptr;
    }
    f->map = (char *)m;
    mprotect(f->map, psize, PROT_NONE); /* guard page below the stack */
    f->stack_lo = f->map + psize;
    f->stack_size = kStackSize;
    fiber_reset(f);
    g_fibers.push_back(f);
    return f;
}

/* Switch from `from` to `to` (null: the main stack); returns when something
 * switches back to `from`. No system call on x86-64. */
NDEMU_HOT static void jump(Fiber *from, Fiber *to)
{
    g_cur = to;
#ifdef NDEMU_ASAN
    g_from_main = from == nullptr;
    __sanitizer_start_switch_fiber(from ? &from->fake_stack : &g_main_fake, to ? to->stack_lo : g_main_lo,
                                   to ? to->stack_size : g_main_size);
#endif
#ifdef NDEMU_ASM_SWITCH
    ndemu_switch(from ? &from->sp : &g_main_sp, to ? to->sp : g_main_sp);
#else
    g_starting = to;
    swapcontext(from ? &from->uc : &g_main_uc, to ? &to->uc : &g_main_uc);
#endif
#ifdef NDEMU_ASAN
    const void *lo;
    size_t size;
    __sanitizer_finish_switch_fiber(from ? from->fake_stack : g_main_fake, &lo, &size);
    if (g_from_main) { /* the host stack we launched from */
        g_main_lo = lo;
        g_main_size = size;
    }
#endif
    g_cur = from;
    if (from && from->kill) {
        /* The launch was abandoned: leave for good (with a null save slot,
         * AddressSanitizer frees this fiber's fake stack). */
#ifdef NDEMU_ASAN
        __sanitizer_start_switch_fiber(nullptr, g_main_lo, g_main_size);
#endif
        g_cur = nullptr;
#ifdef NDEMU_ASM_SWITCH
        ndemu_switch(&from->sp, g_main_sp);
#else
        swapcontext(&from->uc, &g_main_uc);
#endif
        __builtin_trap(); /* never resumed: fiber_reset gives it a new frame */
    }
}

/* ------------------------------------------------------------------------
 * Blocks
 * --------------------------------------------------------------------- */
enum ThreadState : unsigned char { kRunning = 0, kDone, kAtBarrier, kAtWarp, kFaulted };

struct Rendezvous {
    unsigned mask;    /* the lanes that must arrive (the mask, limited to lanes that exist) */
    unsigned arrived; /* the lanes that did */
    int readers;      /* lanes still to read their result */
    int warp;
    const char *file;
    int line;
    const char *what;
    unsigned long long value[32];
};

struct Block {
    const LaunchInfo *info = nullptr;
    Thunk thunk = nullptr;
    void *ctx = nullptr;
    int n = 0;    /* threads per block */
    int next = 0; /* the next thread to start */
    int ndone = 0, nbarrier = 0;
    int released = 0; /* barriers released so far in this block */
    bool error = false;
    std::vector<uint3> tidx;         /* threadIdx of each linear id */
    std::vector<unsigned char> state;
    std::vector<Fiber *> fiber;      /* of a waiting thread */
    std::vector<const char *> bfile; /* where a thread waits at a barrier */
    std::vector<int> bline;
    std::vector<int> waiting_rdv;    /* which rendezvous a thread waits at */
    /* the barrier being gathered: its first thread, and a thread elsewhere */
    int bar_first = -1, bar_other = -1;
    int bar_acc = 0, bar_count = 0, bar_live = 0; /* for __syncthreads_count/and/or */
    std::vector<int> runq;           /* threads free to go on, in order */
    size_t runq_head = 0;
    std::vector<Rendezvous> rdv;
    std::vector<int> rdv_free;
    std::vector<std::vector<int>> open; /* per warp: rendezvous still gathering */
};

static Block g_block;
static size_t g_static_shared = 0; /* bytes of __shared__ arrays this block reached */
static bool g_in_launch = false;
static int g_tid = -1; /* linear id of the running thread in its block */

/* The profiler and sanitizer of the instrumented build (profile.cpp, at the
 * end of this file).  g_prof_on is false in every other build, so these
 * hooks cost a test per block, barrier or warp operation, never per access. */
static bool g_prof_on = false;
static void prof_launch_begin(const LaunchInfo &info, const void *ctx, size_t ctx_size);
static void prof_launch_end(void);
static void prof_block_begin(void);
static void prof_block_end(void);
static void prof_barrier(void);
static void prof_warp_sync(int warp);
static void prof_alloc(const void *p, size_t n, bool freed);
static void prof_written(const void *dst, const void *src, size_t n);
static int launch_registers(const LaunchInfo &info);

static const char *fmt3(char *buf, size_t len, uint3 v)
{
    snprintf(buf, len, "(%u,%u,%u)", v.x, v.y, v.z);
    return buf;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A fault in the running kernel: the launch is abandoned, and err is
 * sticky (as on a GPU) until cudaDeviceReset(). */
static void vkernel_fault(cudaError_t err, const char *fmt, va_list ap)
{
    vset_message(fmt, ap);
    g_block.error = true;
    g_sticky = err;
    g_last = err;
}

__attribute__((format(printf, 2, 3))) static void vkernel_fault_f(cudaError_t err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkernel_fault(err, fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 1, 2))) static void kernel_fault(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vkernel_fault(cudaErrorLaunchFailure, fmt, ap);
    va_end(ap);
}

static void describe_thread(char *buf, size_t len, int t)
{
    char a[48], b[48];
    snprintf(buf, len, "thread %s of block %s", fmt3(a, sizeof a, g_block.tidx[(size_t)t]),
             fmt3(b, sizeof b, g_builtins.block_idx));
}

static bool same_site(const char *f1, int l1, const char *f2, int l2)
{
    return l1 == l2 && (f1 == f2 || strcmp(f1, f2) == 0);
}

/* Nothing can run and some threads wait: release a barrier, or report
 * why the block can never finish. */
NDEMU_HOT static void resolve(void)
{
    Block &b = g_block;
    const char *kname = b.info->kernel;
    char who[128], who2[128];
    /* A warp operation that some lane of its mask never reaches. */
    for (size_t w = 0; w < b.open.size(); w++) {
        if (b.open[w].empty()) continue;
        const Rendezvous &r = b.rdv[(size_t)b.open[w][0]];
        unsigned missing = r.mask & ~r.arrived;
        int lane = __builtin_ctz(missing);
        int t = (int)w * 32 + lane;
        describe_thread(who, sizeof who, t);
        if (b.state[(size_t)t] == kDone) {
            kernel_fault("%s() at %s:%d in kernel '%s': %s (lane %d of warp %d) returned without "
                         "reaching it, while other lanes named in the mask 0x%08x wait there; "
                         "every lane named in the mask must call it",
                         r.what, base_name(r.file), r.line, kname, who, lane, (int)w, r.mask);
        } else if (b.state[(size_t)t] == kAtBarrier) {
            kernel_fault("deadlock in kernel '%s': %s waits at __syncthreads() at %s:%d, while lanes "
                         "of its warp wait for it at %s() at %s:%d (mask 0x%08x)",
                         kname, who, base_name(b.bfile[(size_t)t]), b.bline[(size_t)t], r.what,
                         base_name(r.file), r.line, r.mask);
        } else {
            const Rendezvous &o = b.rdv[(size_t)b.waiting_rdv[(size_t)t]];
            int t2 = (int)w * 32 + __builtin_ctz(r.arrived);
            describe_thread(who2, sizeof who2, t2);
            kernel_fault("deadlock in kernel '%s': lanes of one warp wait at warp operations with "
                         "different masks: %s at %s() at %s:%d with mask 0x%08x, and %s at %s() at "
                         "%s:%d with mask 0x%08x",
                         kname, who2, r.what, base_name(r.file), r.line, r.mask, who, o.what,
                         base_name(o.file), o.line, o.mask);
        }
        return;
    }
    /* Every waiting thread is at a barrier. */
    int first = b.bar_first;
    if (first < 0) { /* cannot happen: ndone < n and nobody waits */
        kernel_fault("internal error of the emulator in kernel '%s': threads neither run nor wait", kname);
        return;
    }
    const char *f = b.bfile[(size_t)first];
    int line = b.bline[(size_t)first];
    if (b.ndone > 0) {
        int done = 0;
        while (b.state[(size_t)done] != kDone) done++;
        describe_thread(who, sizeof who, done);
        kernel_fault("__syncthreads() at %s:%d in kernel '%s': %s returned without reaching it; "
                     "every thread of a block must reach each barrier",
                     base_name(f), line, kname, who);
        return;
    }
    if (b.bar_other >= 0) {
        int t = b.bar_other;
        describe_thread(who, sizeof who, first);
        describe_thread(who2, sizeof who2, t);
        kernel_fault("divergent __syncthreads() in kernel '%s': %s waits at %s:%d while %s waits "
                     "at %s:%d; all threads of a block must reach the same barrier",
                     kname, who, base_name(f), line, who2, base_name(b.bfile[(size_t)t]),
                     b.bline[(size_t)t]);
        return;
    }
    /* Release them all: after every other barrier in reverse thread order,
     * so that the threads that ran first before the barrier run last after
     * it.  Code that needs a second barrier (a shared array read by some
     * threads after one barrier and written again by others before the
     * next) then reads clobbered values: a race gives a wrong answer here
     * whichever side of it thread 0 is on. */
    bool reverse = (b.released++ & 1) == 0;
    if (g_prof_on) prof_barrier();
    b.bar_count = b.bar_acc;
    b.bar_live = b.n;
    b.bar_acc = 0;
    b.bar_first = b.bar_other = -1;
    b.nbarrier = 0;
    b.runq.resize((size_t)b.n);
    for (int t = 0; t < b.n; t++) b.runq[(size_t)t] = reverse ? b.n - 1 - t : t;
    b.runq_head = 0;
}

NDEMU_HOT static Fiber *acquire_fiber(void)
{
    Fiber *f = nullptr;
    if (!g_free.empty()) {
        f = g_free.back();
        g_free.pop_back();
    } else if ((int)g_fibers.size() < kMaxFibers) {
        f = fiber_new();
    }
    if (f) f->busy = true;
    return f;
}

/* What runs next: a thread free to go on, else a fresh fiber for the
 * threads not started yet, else (after releasing a barrier) the first
 * released thread; null when the block is finished or has failed. */
NDEMU_HOT static Fiber *next_fiber(void)
{
    Block &b = g_block;
    for (;;) {
        if (b.error) return nullptr;
        if (b.runq_head < b.runq.size()) {
            int t = b.runq[b.runq_head++];
            if (b.runq_head == b.runq.size()) {
                b.runq.clear();
                b.runq_head = 0;
            }
            b.state[(size_t)t] = kRunning;
            return b.fiber[(size_t)t];
        }
        if (b.next < b.n) {
            Fiber *f = acquire_fiber();
            if (!f)
                kernel_fault("kernel '%s': the emulator cannot allocate a fiber stack (%s)", b.info->kernel,
                             strerror(errno));
            return f;
        }
        if (b.ndone == b.n) return nullptr;
        resolve();
    }
}

NDEMU_HOT static void fiber_entry(void *arg)
{
    Fiber *self = (Fiber *)arg;
#ifdef NDEMU_ASAN
    const void *lo;
    size_t size;
    __sanitizer_finish_switch_fiber(nullptr, &lo, &size);
    if (g_from_main) {
        g_main_lo = lo;
        g_main_size = size;
    }
#endif
    for (;;) {
        Block &b = g_block;
        /* Run the threads not started yet, one after another, on this stack. */
        while (b.next < b.n && !b.error) {
            int t = b.next++;
            g_tid = t;
            g_builtins.thread_idx = b.tidx[(size_t)t];
            b.thunk(b.ctx);
            b.state[(size_t)g_tid] = kDone;
            b.ndone++;
        }
        self->busy = false; /* idle: back to the pool */
        g_free.push_back(self);
        jump(self, next_fiber());
    }
}

/* The running thread waits (at a barrier or a warp operation) until it is
 * released; meanwhile the others run. */
NDEMU_HOT static void wait_here(void)
{
    Block &b = g_block;
    Fiber *self = g_cur;
    int me = g_tid;
    b.fiber[(size_t)me] = self;
    Fiber *to = next_fiber();
    if (to != self) jump(self, to);
    g_tid = me;
    g_builtins.thread_idx = b.tidx[(size_t)me];
}

static void abandon_fibers(void)
{
    for (Fiber *f : g_fibers) {
        if (!f->busy) continue;
        /* Let it leave through jump() (so AddressSanitizer drops its fake
         * stack), then clear the poison its frames left on the stack. */
        f->kill = true;
        jump(nullptr, f);
#ifdef NDEMU_ASAN
        __asan_unpoison_memory_region(f->stack_lo, f->stack_size);
#endif
        fiber_reset(f);
        f->busy = false;
        g_free.push_back(f);
    }
}

static void run_block(void)
{
    Block &b = g_block;
    b.next = 0;
    b.ndone = b.nbarrier = b.released = 0;
    b.bar_first = b.bar_other = -1;
    b.bar_acc = 0;
    b.runq.clear();
    b.runq_head = 0;
    std::fill(b.state.begin(), b.state.end(), (unsigned char)kRunning);
    g_block_epoch++;
    g_static_shared = 0;
    if (b.info->shmem) memset(dynamic_shared_base, 0xff, b.info->shmem);
    if (g_prof_on) prof_block_begin();
    Fiber *f = next_fiber();
    if (f) jump(nullptr, f); /* back when the block is finished or has failed */
    if (b.error) abandon_fibers();
    else if (g_prof_on) prof_block_end();
}

/* ------------------------------------------------------------------------
 * Device-side operations
 * --------------------------------------------------------------------- */
NDEMU_HOT static bool outside_kernel(const char *what, const char *file, int line)
{
    if (g_in_launch && g_cur) return false;
    fprintf(stderr, "ndemu: %s() called outside a kernel at %s:%d; it is device code\n", what, file, line);
    return true;
}

NDEMU_HOT int syncthreads(const char *file, int line, int kind, int pred)
{
    if (outside_kernel("__syncthreads", file, line)) return 0;
    Block &b = g_block;
    int me = g_tid;
    b.state[(size_t)me] = kAtBarrier;
    b.bfile[(size_t)me] = file;
    b.bline[(size_t)me] = line;
    b.bar_acc += pred;
    if (b.nbarrier++ == 0)
        b.bar_first = me;
    else if (b.bar_other < 0 && !same_site(b.bfile[(size_t)b.bar_first], b.bline[(size_t)b.bar_first], file, line))
        b.bar_other = me;
    wait_here();
    switch (kind) {
    case kSyncCount: return b.bar_count;
    case kSyncAnd: return b.bar_count == b.bar_live;
    case kSyncOr: return b.bar_count > 0;
    default: return 0;
    }
}

NDEMU_HOT static unsigned lanes_existing(int warp)
{
    int left = g_block.n - warp * 32;
    return left >= 32 ? 0xffffffffu : ((1u << left) - 1u);
}

unsigned activemask()
{
    if (outside_kernel("__activemask", "?", 0)) return 0;
    int w = g_tid / 32;
    unsigned m = 0;
    unsigned ex = lanes_existing(w);
    for (int l = 0; l < 32; l++)
        if ((ex >> l & 1u) && g_block.state[(size_t)(w * 32 + l)] != kDone) m |= 1u << l;
    return m;
}

NDEMU_HOT unsigned long long warp_op(const char *file, int line, const char *what, WarpOp op, unsigned mask,
                           unsigned long long value, int arg, int width)
{
    if (outside_kernel(what, file, line)) return value;
    Block &b = g_block;
    int me = g_tid;
    int w = me / 32, lane = me % 32;
    char who[128];
    if (width < 1 || width > 32 || (width & (width - 1)) != 0) {
        describe_thread(who, sizeof who, me);
        kernel_fault("%s() at %s:%d in kernel '%s': %s passes width %d; the width must be a power "
                     "of 2 from 1 to 32",
                     what, base_name(file), line, b.info->kernel, who, width);
        b.state[(size_t)me] = kFaulted;
        wait_here();
        return value;
    }
    unsigned em = mask & lanes_existing(w);
    if (em != mask) {
        /* A GPU's behaviour is undefined here (compute-sanitizer's synccheck
         * reports it): the mask must name only lanes that exist. */
        describe_thread(who, sizeof who, me);
        int last = __builtin_popcount(lanes_existing(w)) - 1;
        kernel_fault("%s() at %s:%d in kernel '%s': %s passes the mask 0x%08x, which names lanes "
                     "that do not exist: the block has %d threads, so warp %d has lanes 0..%d only "
                     "(mask 0x%08x); name only lanes that exist, e.g. __activemask() or "
                     "(1u << n) - 1 for the first n",
                     what, base_name(file), line, b.info->kernel, who, mask, b.n, w, last,
                     lanes_existing(w));
        b.state[(size_t)me] = kFaulted;
        wait_here();
        return value;
    }
    if (!(em >> lane & 1u)) {
        describe_thread(who, sizeof who, me);
        kernel_fault("%s() at %s:%d in kernel '%s': %s is lane %d of warp %d, but the mask 0x%08x "
                     "does not name it; a thread must be in the mask it passes",
                     what, base_name(file), line, b.info->kernel, who, lane, w, mask);
        b.state[(size_t)me] = kFaulted;
        wait_here();
        return value;
    }
    /* Join the rendezvous of this warp with the same mask, or open one. */
    std::vector<int> &open = b.open[(size_t)w];
    int ri = -1;
    size_t oi = 0;
    for (; oi < open.size(); oi++)
        if (b.rdv[(size_t)open[oi]].mask == em) {
            ri = open[oi];
            break;
        }
    if (ri >= 0 && op != kSyncwarp) {
        /* Every lane of the mask must execute the same shuffle, vote or
         * ballot (CUDA: "the same intrinsic with the same mask"); lanes at
         * two different ones (two sides of a branch) are undefined on a GPU
         * (compute-sanitizer's synccheck). __syncwarp() may differ. */
        const Rendezvous &r0 = b.rdv[(size_t)ri];
        if (r0.what != what || !same_site(r0.file, r0.line, file, line)) {
            char who2[128];
            describe_thread(who, sizeof who, me);
            describe_thread(who2, sizeof who2, w * 32 + __builtin_ctz(r0.arrived));
            kernel_fault("divergent warp operation in kernel '%s': %s (lane %d of warp %d) calls %s() at "
                         "%s:%d while %s waits at %s() at %s:%d with the same mask 0x%08x; every lane "
                         "named in the mask must execute the same %s() (issue it once, outside the "
                         "branch, or give each side a mask of its own lanes)",
                         b.info->kernel, who, lane, w, what, base_name(file), line, who2, r0.what,
                         base_name(r0.file), r0.line, mask, what);
            b.state[(size_t)me] = kFaulted;
            wait_here();
            return value;
        }
    }
    if (ri < 0) {
        if (!b.rdv_free.empty()) {
            ri = b.rdv_free.back();
            b.rdv_free.pop_back();
        } else {
            ri = (int)b.rdv.size();
            b.rdv.emplace_back();
        }
        Rendezvous &r = b.rdv[(size_t)ri];
        r.mask = em;
        r.arrived = 0;
        r.readers = __builtin_popcount(em);
        r.warp = w;
        r.file = file;
        r.line = line;
        r.what = what;
        open.push_back(ri);
        oi = open.size() - 1;
    }
    {
        Rendezvous &r = b.rdv[(size_t)ri];
        r.value[lane] = value;
        r.arrived |= 1u << lane;
        if (r.arrived != em) {
            b.state[(size_t)me] = kAtWarp;
            b.waiting_rdv[(size_t)me] = ri;
            wait_here();
        } else {
            /* The last to arrive: the others may go on (in lane order),
             * before any other thread, so that a warp runs on as one, as
             * it would on a GPU, ahead of the warps still waiting to run. */
            open.erase(open.begin() + (long)oi);
            int lanes[32], nl = 0;
            for (int l = 0; l < 32; l++) {
                if (l == lane || !(em >> l & 1u)) continue;
                int t = w * 32 + l;
                b.state[(size_t)t] = kRunning;
                lanes[nl++] = t;
            }
            b.runq.insert(b.runq.begin() + (long)b.runq_head, lanes, lanes + nl);
            if (g_prof_on) prof_warp_sync(w);
        }
    }
    Rendezvous &r = b.rdv[(size_t)ri]; /* b.rdv may have grown while we waited */
    int seg = lane & ~(width - 1);
    unsigned d = (unsigned)arg;
    int src = lane;
    unsigned long long out = 0;
    switch (op) {
    case kSyncwarp: break;
    case kShfl: src = seg + (int)(d & (unsigned)(width - 1)); break;
    case kShflUp: src = ((unsigned)(lane - seg) >= d) ? lane - (int)d : lane; break;
    case kShflDown: src = ((unsigned)(lane - seg) + d < (unsigned)width) ? lane + (int)d : lane; break;
    case kShflXor:
        src = (int)((unsigned)lane ^ d);
        if (src > 31 || (src & ~(width - 1)) > seg) src = lane;
        break;
    case kBallot:
    case kAny:
    case kAll: {
        unsigned ballot = 0;
        for (int l = 0; l < 32; l++)
            if ((em >> l & 1u) && r.value[l]) ballot |= 1u << l;
        out = op == kBallot ? ballot : op == kAny ? (ballot != 0) : (ballot == em);
        break;
    }
    }
    if (op >= kShfl && op <= kShflXor) {
        if (!(em >> src & 1u)) {
            /* A GPU returns an undefined value: refuse, naming both lanes. */
            describe_thread(who, sizeof who, me);
            kernel_fault("%s() at %s:%d in kernel '%s': %s (lane %d) reads the value of lane %d, "
                         "which is not in the mask 0x%08x; a shuffle may read only lanes of its "
                         "mask (a GPU returns an undefined value)",
                         what, base_name(file), line, b.info->kernel, who, lane, src, mask);
            if (--r.readers == 0) b.rdv_free.push_back(ri);
            b.state[(size_t)me] = kFaulted;
            wait_here();
            return value;
        }
        out = r.value[src];
    }
    if (--r.readers == 0) b.rdv_free.push_back(ri);
    return out;
}

long long clock_ticks()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Dynamic shared memory (extern __shared__): one buffer; the bytes past the
 * launch's request are poisoned for AddressSanitizer. */
alignas(256) static unsigned char g_dynamic_shared[kMaxDynamicShared];
unsigned char *const dynamic_shared_base = g_dynamic_shared;

/* Shared memory is uninitialised on a GPU: each block starts with every
 * byte of its shared memory 0xff (a float NaN, an integer -1), so a read of
 * a slot no thread wrote gives a visibly wrong answer.  Static __shared__
 * arrays are filled when the first thread of the block reaches their
 * declaration (NDEMU_SHARED, added by cu2cpp.py), dynamic shared memory
 * when the block starts. */
unsigned long long g_block_epoch = 1;
static const size_t kMaxStaticShared = 48 * 1024;

void shared_first(void *p, size_t n, const char *file, int line)
{
    memset(p, 0xff, n);
    g_static_shared += n;
    if (g_in_launch && g_cur && g_static_shared > kMaxStaticShared && !g_block.error) {
        char who[128];
        describe_thread(who, sizeof who, g_tid);
        vkernel_fault_f(cudaErrorLaunchOutOfResources,
                        "kernel '%s' (launched at %s:%d) uses %zu bytes of static __shared__ memory "
                        "(the array declared at %s:%d brings it past 48 KiB); ptxas refuses a kernel "
                        "whose static shared memory exceeds 48 KiB (49152 bytes): use dynamic shared "
                        "memory (extern __shared__) and cudaFuncSetAttribute for more",
                        g_block.info->kernel, base_name(g_block.info->file), g_block.info->line,
                        g_static_shared, base_name(file), line);
        g_block.state[(size_t)g_tid] = kFaulted;
        wait_here();
    }
}

/* ------------------------------------------------------------------------
 * Launch
 * --------------------------------------------------------------------- */
static bool valid_stream(cudaStream_t s);

/* cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, n):
 * kernel -> n.  Above 48 KiB a launch needs it, as on a GPU. */
static std::map<const void *, int> *g_max_dynamic_p;
#define g_max_dynamic forever(g_max_dynamic_p)
static const size_t kDefaultDynamicShared = 48 * 1024;

cudaError_t func_set_attribute(const void *fn, cudaFuncAttribute attr, int value)
{
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || value > kMaxDynamicShared)
            return fail(cudaErrorInvalidValue,
                        "cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize, %d): it "
                        "must be 0 to %d bytes (227 KiB, as on an H100)",
                        value, (int)kMaxDynamicShared);
        g_max_dynamic[fn] = value;
        return cudaSuccess;
    }
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout) return cudaSuccess;
    return fail(cudaErrorInvalidValue, "cudaFuncSetAttribute: attribute %d is not emulated", (int)attr);
}

/* Every pointer argument must be null or point into a live cudaMalloc (or
 * cudaMallocManaged) allocation, one past its end included (an empty
 * view's pointer).  A GPU does not look at the arguments: the kernel runs,
 * and its first access through a host pointer faults with
 * cudaErrorIllegalAddress, which is sticky (the context is lost; every
 * later call returns it).  The emulator refuses the launch instead, so that
 * the kernel never touches host memory (which it could, here), and reports
 * that same code, sticky, as the instrumented build does for such an
 * access.  Not cudaErrorInvalidValue: that is the runtime refusing bad
 * arguments of an API call, which a program may clear and go on from;
 * nothing on a GPU refuses a kernel's pointer that way. */
static bool pointer_args_ok(const LaunchInfo &info, const PointerArg *ptrs, int nptrs)
{
    for (int i = 0; i < nptrs; i++) {
        const void *p = ptrs[i].value;
        uintptr_t base;
        size_t size;
        if (!p || find_in(g_allocs, p, &base, &size)) continue;
        char what[160];
        if (find_in(g_pinned, p, &base, &size)) {
            snprintf(what, sizeof what,
                     "; it is pinned host memory (cudaMallocHost), which a GPU can map but the "
                     "emulator does not: cudaMemcpy it into a cudaMalloc buffer");
        } else {
            uintptr_t sp = (uintptr_t)__builtin_frame_address(0), a = (uintptr_t)p;
            bool stack = a >= sp - (8u << 20) && a < sp + (8u << 20);
            snprintf(what, sizeof what, "; no live allocation contains it (%s)",
                     stack ? "it looks like the host's stack: a host variable passed by address?"
                           : "a host array, a freed buffer, or an offset past the end?");
        }
        set_message(true,
                    "kernel '%s' (%s:%d) was given a host pointer as argument %d (%p): kernels may only "
                    "read and write device memory (cudaMalloc)%s",
                    info.kernel, base_name(info.file), info.line, ptrs[i].pos, p, what);
        g_sticky = g_last = cudaErrorIllegalAddress;
        return false;
    }
    return true;
}

/* __launch_bounds__(N): the first thread of the launch to start finds too
 * many threads per block and fails the launch (cudaErrorLaunchOutOfResources,
 * not sticky, as a GPU's refusal is) before any thread has done anything. */
int g_block_threads = 0;

void launch_bounds_fail(long long max_threads, const char *file, int line)
{
    Block &b = g_block;
    if (!g_in_launch || !g_cur || b.error) return;
    const LaunchInfo &info = *b.info;
    set_message(false,
                "launch of kernel '%s' at %s:%d with %d threads per block: the kernel is declared "
                "__launch_bounds__(%lld) at %s:%d, so a GPU refuses more than %lld threads per block "
                "(ptxas fits its registers to that bound); launch at most %lld, or raise the bound",
                info.kernel, base_name(info.file), info.line, b.n, max_threads, base_name(file), line,
                max_threads, max_threads);
    g_last = cudaErrorLaunchOutOfResources;
    b.error = true;
    b.state[(size_t)g_tid] = kFaulted;
    wait_here(); /* never returns: the launch is abandoned */
}

/* The order blocks run in: shuffled, from a seed (NDEMU_SEED, default 1;
 * "random": from the clock, printed) and the launch's number in the
 * process, so that a rerun of the same program (or test) runs them in the
 * same order.  Races between blocks that a fixed order x, y, z hides
 * ("block 0 stores before the others add", "the last block sums the
 * partials") then give wrong answers.  Small grids are shuffled fully, big
 * ones run in a rotated (and maybe reversed) order, which keeps memory
 * locality; either way block 0 never runs first nor the last block last. */
static unsigned long long g_seed = 0;
static bool g_seed_read = false;
static unsigned long long g_launch_no = 0;
static std::vector<unsigned> *g_order_p;
#define g_order forever(g_order_p)

static unsigned long long splitmix(unsigned long long &x)
{
    unsigned long long z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned long long block_seed(void)
{
    if (!g_seed_read) {
        g_seed_read = true;
        g_seed = 1;
        const char *e = getenv("NDEMU_SEED");
        if (e && strcmp(e, "random") == 0) {
            g_seed = (unsigned long long)clock_ticks() ^ ((unsigned long long)getpid() << 32);
            fprintf(stderr, "ndemu: blocks run in a shuffled order: NDEMU_SEED=%llu reproduces it\n", g_seed);
        } else if (e && *e) {
            g_seed = strtoull(e, nullptr, 0);
        }
    }
    return g_seed;
}

struct BlockOrder {
    unsigned long long total = 1, offset = 0;
    bool full = false, reverse = false;
    unsigned long long at(unsigned long long i) const
    {
        if (full) return g_order[(size_t)i];
        unsigned long long j = (offset + i) % total;
        return reverse ? total - 1 - j : j;
    }
};

/* Sampled launches (ndemu_sample_launches): a launch of more than
 * kSampleAll blocks runs only some of them, so that a test can launch over
 * more than 2^31 elements for a few CPU-milliseconds: one block chosen by
 * the seed; the blocks holding the grid's last 2048 threads (linear
 * order), last first; block 0; another chosen by the seed.  With the
 * usual mappings (grid-stride, or one thread per element) the last 2048
 * threads then cover at least 1024 consecutive positions among the
 * launch's last elements, and in a grid-stride loop every thread's last
 * trips are past 2^31 whenever the count is. */
static bool g_sampled = false;
static const unsigned long long kSampleAll = 16;
static std::vector<unsigned long long> *g_sample_picks_p;
#define g_sample_picks forever(g_sample_picks_p)

static void sample_blocks(std::vector<unsigned long long> &picks, unsigned long long nblocks,
                          unsigned long long nthreads, unsigned long long launch_no)
{
    if (nblocks <= kSampleAll) return; /* all of them, shuffled as usual */
    unsigned long long x = block_seed() ^ (launch_no * 0x9fb21c651e98df25ull);
    unsigned long long tail = (2048 + nthreads - 1) / nthreads;
    if (tail > nblocks - 2) tail = nblocks - 2;
    unsigned long long first_tail = nblocks - tail;
    unsigned long long r1 = 1 + splitmix(x) % (first_tail - 1), r2 = 1 + splitmix(x) % (first_tail - 1);
    picks.push_back(r1);
    for (unsigned long long j = nblocks; j-- > first_tail;) picks.push_back(j);
    picks.push_back(0);
    if (r2 != r1) picks.push_back(r2);
}

static void block_order(BlockOrder &o, unsigned long long total)
{
    unsigned long long x = block_seed() ^ (++g_launch_no * 0xd1b54a32d192ed03ull);
    o.total = total;
    o.full = false;
    o.reverse = false;
    o.offset = 0;
    if (total < 2) return;
    if (total == 2) {
        o.reverse = true;
        return;
    }
    if (total <= 4096) {
        std::vector<unsigned> &v = g_order;
        v.resize((size_t)total);
        for (unsigned i = 0; i < (unsigned)total; i++) v[i] = i;
        for (size_t i = (size_t)total - 1; i > 0; i--) std::swap(v[i], v[(size_t)(splitmix(x) % (i + 1))]);
        if (v[0] == 0) std::swap(v[0], v[1 + (size_t)(splitmix(x) % (total - 1))]);
        if (v[(size_t)total - 1] == total - 1) std::swap(v[(size_t)total - 1], v[1 + (size_t)(splitmix(x) % (total - 2))]);
        o.full = true;
        return;
    }
    o.reverse = splitmix(x) & 1;
    o.offset = 1 + splitmix(x) % (total - 2);
}

void run_launch(const LaunchInfo &info, Thunk thunk, void *ctx, size_t ctx_size, const PointerArg *ptrs,
                int nptrs)
{
    const char *k = info.kernel;
    const char *where = base_name(info.file);
    if (g_in_launch) {
        fail(cudaErrorNotSupported,
             "launch of kernel '%s' at %s:%d from inside a kernel: dynamic parallelism is not "
             "supported by the CPU emulator",
             k, where, info.line);
        return;
    }
    cudaError_t e;
    if (sticky(&e)) return;
    const dim3 &g = info.grid, &bl = info.block;
    unsigned long long nthreads = (unsigned long long)bl.x * bl.y * bl.z;
    if (g.x == 0 || g.y == 0 || g.z == 0 || bl.x == 0 || bl.y == 0 || bl.z == 0) {
        fail(cudaErrorInvalidConfiguration,
             "launch of kernel '%s' at %s:%d with grid (%u,%u,%u) and block (%u,%u,%u): no dimension "
             "may be 0",
             k, where, info.line, g.x, g.y, g.z, bl.x, bl.y, bl.z);
        return;
    }
    if (nthreads > 1024 || bl.x > 1024 || bl.y > 1024 || bl.z > 64) {
        fail(cudaErrorInvalidConfiguration,
             "launch of kernel '%s' at %s:%d with block (%u,%u,%u) = %llu threads: a block has at "
             "most 1024 threads, blockDim.x and .y at most 1024, blockDim.z at most 64",
             k, where, info.line, bl.x, bl.y, bl.z, nthreads);
        return;
    }
    if (g.x > 2147483647u || g.y > 65535 || g.z > 65535) {
        fail(cudaErrorInvalidConfiguration,
             "launch of kernel '%s' at %s:%d with grid (%u,%u,%u): gridDim.x is at most 2147483647, "
             "gridDim.y and .z at most 65535",
             k, where, info.line, g.x, g.y, g.z);
        return;
    }
    if (info.shmem > (size_t)kMaxDynamicShared) {
        fail(cudaErrorInvalidValue,
             "launch of kernel '%s' at %s:%d asks for %zu bytes of dynamic shared memory; the "
             "emulator has at most %d",
             k, where, info.line, info.shmem, (int)kMaxDynamicShared);
        return;
    }
    if (info.shmem > kDefaultDynamicShared) {
        auto it = g_max_dynamic.find(info.fn);
        if (it == g_max_dynamic.end() || info.shmem > (size_t)it->second) {
            fail(cudaErrorInvalidValue,
                 "launch of kernel '%s' at %s:%d asks for %zu bytes of dynamic shared memory; "
                 "above 48 KiB (49152 bytes) a GPU refuses the launch unless "
                 "cudaFuncSetAttribute(%s, cudaFuncAttributeMaxDynamicSharedMemorySize, %zu) "
                 "allowed it first%s",
                 k, where, info.line, info.shmem, k, info.shmem,
                 it == g_max_dynamic.end() ? "" : " (it allows less)");
            return;
        }
    }
    if (!valid_stream(info.stream)) {
        fail(cudaErrorInvalidResourceHandle,
             "launch of kernel '%s' at %s:%d on stream %p, which is not a live stream", k, where,
             info.line, (void *)info.stream);
        return;
    }
    int regs = launch_registers(info);
    if (regs > 0) {
        /* Registers are allocated per warp, in units of 256. */
        unsigned long long warps = (nthreads + 31) / 32;
        unsigned long long per_warp = ((unsigned long long)regs * 32 + 255) / 256 * 256;
        if (warps * per_warp > 65536) {
            fail(cudaErrorLaunchOutOfResources,
                 "launch of kernel '%s' at %s:%d with %llu threads per block: the kernel uses %d "
                 "registers per thread (ptxas), so a block needs %llu registers and an SM has "
                 "65536; launch fewer threads per block, or give the kernel "
                 "__launch_bounds__(%llu) so that the compiler uses at most %llu per thread",
                 k, where, info.line, nthreads, regs, warps * per_warp, nthreads,
                 65536 / (warps * 32) / 8 * 8);
            return;
        }
    }
    if (!pointer_args_ok(info, ptrs, nptrs)) return; /* the kernel does not run */
#ifdef NDEMU_ASAN
    __asan_unpoison_memory_region(g_dynamic_shared, info.shmem);
    __asan_poison_memory_region(g_dynamic_shared + info.shmem, sizeof g_dynamic_shared - info.shmem);
#endif
    Block &b = g_block;
    int n = (int)nthreads;
    b.info = &info;
    b.thunk = thunk;
    b.ctx = ctx;
    b.n = n;
    g_block_threads = n;
    b.error = false;
    b.tidx.resize((size_t)n);
    for (int t = 0; t < n; t++)
        b.tidx[(size_t)t] = uint3{(unsigned)t % bl.x, (unsigned)t / bl.x % bl.y, (unsigned)t / (bl.x * bl.y)};
    b.state.assign((size_t)n, kRunning);
    b.fiber.assign((size_t)n, nullptr);
    b.bfile.assign((size_t)n, nullptr);
    b.bline.assign((size_t)n, 0);
    b.waiting_rdv.assign((size_t)n, -1);
    b.rdv.clear();
    b.rdv_free.clear();
    b.open.assign((size_t)(n + 31) / 32, std::vector<int>());
    g_builtins.block_dim = bl;
    g_builtins.grid_dim = g;
    prof_launch_begin(info, ctx, ctx_size);
    fenv_t fenv; /* the host's floating-point environment, restored after the kernel */
    fegetenv(&fenv);
    g_in_launch = true;
    unsigned long long nblocks = (unsigned long long)g.x * g.y * g.z;
    BlockOrder order;
    block_order(order, nblocks);
    unsigned long long launch_no = g_launch_no;
    std::vector<unsigned long long> &picks = g_sample_picks;
    picks.clear();
    if (g_sampled) sample_blocks(picks, nblocks, nthreads, launch_no);
    unsigned long long nrun = picks.empty() ? nblocks : picks.size();
    for (unsigned long long i = 0; i < nrun && !b.error; i++) {
        unsigned long long j = picks.empty() ? order.at(i) : picks[(size_t)i];
        g_builtins.block_idx = uint3{(unsigned)(j % g.x), (unsigned)(j / g.x % g.y), (unsigned)(j / g.x / g.y)};
        run_block();
        for (auto &o : b.open) o.clear();
        b.rdv.clear();
        b.rdv_free.clear();
    }
    if (b.error && nblocks > 1) {
        size_t len = strlen(g_message);
        snprintf(g_message + len, sizeof g_message - len,
                 " [blocks ran in a shuffled order: NDEMU_SEED=%llu, launch %llu of the process]", g_seed,
                 launch_no);
    }
    g_in_launch = false;
    fesetenv(&fenv);
    g_tid = -1;
    if (g_prof_on) prof_launch_end();
    b.info = nullptr;
}

/* ------------------------------------------------------------------------
 * Streams and events
 * --------------------------------------------------------------------- */
static std::set<const void *> *g_streams_p, *g_events_p;
#define g_streams forever(g_streams_p)
#define g_events forever(g_events_p)

static bool valid_stream(cudaStream_t s)
{
    return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread || g_streams.count(s);
}

/* In sampled mode cudaMalloc maps its own pages between two guards of
 * kGuard bytes that no access may touch (PROT_NONE), the block ending at
 * the second guard's start (256-byte aligned: as close as that allows).
 * A 32-bit index that wraps past 2^31 - 1 goes negative, and the kernel's
 * next access lands a little before its array (an element of a view that
 * repeats its rows, say): in the guard, a SIGSEGV at once, where the heap
 * would take the write silently and the loop would run on for ever. */
static const size_t kGuard = (size_t)1 << 20;
static std::map<uintptr_t, std::pair<void *, size_t>> *g_guarded_p; /* base -> mapping, its bytes */
#define g_guarded forever(g_guarded_p)

static void *guarded_alloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t body = (size + 255) / 256 * 256, pages = (body + page - 1) / page * page;
    if (body < size || pages > SIZE_MAX - 2 * kGuard) return nullptr;
    size_t total = pages + 2 * kGuard;
    void *map = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) return nullptr;
    char *start = (char *)map + kGuard;
    if (mprotect(start, pages, PROT_READ | PROT_WRITE) != 0) {
        munmap(map, total);
        return nullptr;
    }
    void *m = start + (pages - body);
    g_guarded[(uintptr_t)m] = std::make_pair(map, total);
    return m;
}

static void release_alloc(void *p)
{
    auto it = g_guarded.find((uintptr_t)p);
    if (it == g_guarded.end()) {
        free(p);
        return;
    }
    munmap(it->second.first, it->second.second);
    g_guarded.erase(it);
}

} /* namespace ndemu */

struct CUstream_st {
    unsigned flags;
};
struct CUevent_st {
    unsigned flags;
    bool recorded;
    long long ns;
};

using namespace ndemu;

/* ------------------------------------------------------------------------
 * The runtime API
 * --------------------------------------------------------------------- */
extern "C" {

const char *ndemu_last_message(void) { return g_message; }

void ndemu_sample_launches(int on) { g_sampled = on != 0; }

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
#define NDEMU_NAME(x) \
    case x: return #x;
    NDEMU_NAME(cudaSuccess)
    NDEMU_NAME(cudaErrorInvalidValue)
    NDEMU_NAME(cudaErrorMemoryAllocation)
    NDEMU_NAME(cudaErrorInitializationError)
    NDEMU_NAME(cudaErrorCudartUnloading)
    NDEMU_NAME(cudaErrorInvalidConfiguration)
    NDEMU_NAME(cudaErrorInvalidPitchValue)
    NDEMU_NAME(cudaErrorInvalidSymbol)
    NDEMU_NAME(cudaErrorInvalidHostPointer)
    NDEMU_NAME(cudaErrorInvalidDevicePointer)
    NDEMU_NAME(cudaErrorInvalidMemcpyDirection)
    NDEMU_NAME(cudaErrorInvalidDeviceFunction)
    NDEMU_NAME(cudaErrorNoDevice)
    NDEMU_NAME(cudaErrorInvalidDevice)
    NDEMU_NAME(cudaErrorInvalidResourceHandle)
    NDEMU_NAME(cudaErrorNotReady)
    NDEMU_NAME(cudaErrorIllegalAddress)
    NDEMU_NAME(cudaErrorLaunchOutOfResources)
    NDEMU_NAME(cudaErrorLaunchTimeout)
    NDEMU_NAME(cudaErrorAssert)
    NDEMU_NAME(cudaErrorIllegalInstruction)
    NDEMU_NAME(cudaErrorMisalignedAddress)
    NDEMU_NAME(cudaErrorLaunchFailure)
    NDEMU_NAME(cudaErrorNotSupported)
    NDEMU_NAME(cudaErrorUnknown)
#undef NDEMU_NAME
    }
    return "unrecognized error code";
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorCudartUnloading: return "driver shutting down";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidHostPointer: return "invalid host pointer";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    case cudaErrorAssert: return "device-side assert triggered";
    case cudaErrorIllegalInstruction: return "an illegal instruction was encountered";
    case cudaErrorMisalignedAddress: return "misaligned address";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorUnknown: return "unknown error";
    }
    return "unrecognized error code";
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = g_last;
    g_last = g_sticky;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return g_last; }

cudaError_t cudaMalloc(void **p, size_t size)
{
    if (!p) return fail(cudaErrorInvalidValue, "cudaMalloc(NULL, %zu): the pointer to the result is NULL", size);
    NDEMU_STICKY();
    *p = nullptr;
    if (size == 0) return cudaSuccess;
    /* The normal heap (so AddressSanitizer sees overflows), 256-byte aligned as on a GPU;
     * in sampled mode, pages between guards (guarded_alloc). */
    void *m = nullptr;
    size_t rounded = (size + 255) / 256 * 256;
    if (rounded < size || (g_sampled ? (m = guarded_alloc(size)) == nullptr
                                     : posix_memalign(&m, 256, size) != 0 || !m))
        return fail(cudaErrorMemoryAllocation, "cudaMalloc of %zu bytes: out of memory", size);
    g_allocs[(uintptr_t)m] = size;
    prof_alloc(m, size, false);
    *p = m;
    return cudaSuccess;
}

/* Device memory the host may use too: a kernel may be given it, and a copy
 * may name it as either side. */
cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int)
{
    cudaError_t e = cudaMalloc(p, size);
    if (e == cudaSuccess && *p) g_managed.insert((uintptr_t)*p);
    return e;
}

/* Pinned host memory: host memory (kept in a table of its own, so that
 * kernels and cudaFree can say what it is). */
cudaError_t cudaMallocHost(void **p, size_t size)
{
    if (!p) return fail(cudaErrorInvalidValue, "cudaMallocHost(NULL, %zu): the pointer to the result is NULL", size);
    NDEMU_STICKY();
    *p = size ? malloc(size) : nullptr;
    if (size && !*p) return fail(cudaErrorMemoryAllocation, "cudaMallocHost of %zu bytes: out of memory", size);
    if (*p) g_pinned[(uintptr_t)*p] = size;
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p)
{
    if (!p) return cudaSuccess;
    auto it = g_pinned.find((uintptr_t)p);
    if (it == g_pinned.end())
        return fail_loud(cudaErrorInvalidValue, "cudaFreeHost(%p): %s", p,
                         is_device_ptr(p) ? "this is device memory: free it with cudaFree"
                                          : "not a pointer returned by cudaMallocHost, or already freed");
    g_pinned.erase(it);
    free(p);
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    if (!p) return cudaSuccess;
    auto it = g_allocs.find((uintptr_t)p);
    if (it == g_allocs.end()) {
        if (is_device_ptr(p))
            return fail_loud(cudaErrorInvalidValue,
                             "cudaFree(%p): the pointer is inside an allocation but not its start; pass "
                             "exactly what cudaMalloc returned",
                             p);
        if (g_pinned.count((uintptr_t)p))
            return fail_loud(cudaErrorInvalidValue,
                             "cudaFree(%p): this is pinned host memory from cudaMallocHost: free it with "
                             "cudaFreeHost",
                             p);
        return fail_loud(cudaErrorInvalidValue,
                         "cudaFree(%p): not a pointer returned by cudaMalloc, or already freed", p);
    }
    prof_alloc(p, it->second, true);
    g_allocs.erase(it);
    g_managed.erase((uintptr_t)p);
    release_alloc(p);
    NDEMU_STICKY();
    return cudaSuccess;
}

static const char *kind_name(cudaMemcpyKind k)
{
    switch (k) {
    case cudaMemcpyHostToHost: return "cudaMemcpyHostToHost";
    case cudaMemcpyHostToDevice: return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost: return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice: return "cudaMemcpyDeviceToDevice";
    case cudaMemcpyDefault: return "cudaMemcpyDefault";
    }
    return "?";
}

static bool is_managed(const void *p)
{
    uintptr_t base;
    size_t size;
    return find_in(g_allocs, p, &base, &size) && g_managed.count(base);
}

/* cudaMemcpy and cudaMemcpyAsync (api names it): the kind must match where
 * dst and src are, as the CUDA documentation requires (a GPU's behaviour
 * otherwise is undefined: with unified addressing its runtime may infer the
 * direction and succeed, or fail).  A device side must lie inside one live
 * allocation; a host side must not be device memory; managed memory may be
 * either; cudaMemcpyDefault takes the side from the pointer.  A mismatch is
 * cudaErrorInvalidValue, not sticky, said on stderr. */
static cudaError_t memcpy_checked(const char *api, void *dst, const void *src, size_t count, cudaMemcpyKind kind)
{
    NDEMU_STICKY();
    if ((unsigned)kind > (unsigned)cudaMemcpyDefault)
        return fail(cudaErrorInvalidMemcpyDirection, "%s(%p, %p, %zu, %d): %d is not a cudaMemcpyKind", api,
                    dst, src, count, (int)kind, (int)kind);
    if (count == 0) return cudaSuccess;
    if (!dst || !src)
        return fail(cudaErrorInvalidValue, "%s(%p, %p, %zu bytes, %s): the %s is NULL", api, dst, src, count,
                    kind_name(kind), dst ? "source" : "destination");
    bool dst_is_dev = is_device_ptr(dst), src_is_dev = is_device_ptr(src);
    bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault) {
        dst_dev = dst_is_dev;
        src_dev = src_is_dev;
    }
    /* what the pointers say, for the message */
    static const cudaMemcpyKind said[2][2] = {{cudaMemcpyHostToHost, cudaMemcpyHostToDevice},
                                              {cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice}};
    cudaMemcpyKind actual = said[src_is_dev][dst_is_dev];
    char hint[160] = "";
    if (actual != kind && kind != cudaMemcpyDefault)
        snprintf(hint, sizeof hint, "; the pointers say %s (or pass cudaMemcpyDefault)", kind_name(actual));
    char why[512];
    const char *side[2] = {"destination", "source"};
    const void *ptr[2] = {dst, src};
    bool want_dev[2] = {dst_dev, src_dev}, is_dev[2] = {dst_is_dev, src_is_dev};
    for (int k = 0; k < 2; k++) {
        uintptr_t base;
        size_t size;
        if (want_dev[k] && !in_device_memory(ptr[k], count, why, sizeof why)) {
            /* no hint for a range that starts in an allocation or just past it */
            bool near = find_in(g_allocs, ptr[k], &base, &size);
            return fail_loud(cudaErrorInvalidValue, "%s(%p, %p, %zu bytes, %s): the %s: %s%s", api, dst, src,
                             count, kind_name(kind), side[k], why, near ? "" : hint);
        }
        if (!want_dev[k] && is_dev[k] && !is_managed(ptr[k]))
            return fail_loud(cudaErrorInvalidValue,
                             "%s(%p, %p, %zu bytes, %s): the %s %p is device memory (cudaMalloc), but %s "
                             "copies %s host memory%s",
                             api, dst, src, count, kind_name(kind), side[k], ptr[k], kind_name(kind),
                             k == 0 ? "to" : "from", hint);
    }
    memmove(dst, src, count);
    if (dst_dev) prof_written(dst, src_dev ? src : nullptr, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind)
{
    return memcpy_checked("cudaMemcpy", dst, src, count, kind);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t s)
{
    if (!valid_stream(s))
        return fail(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync on stream %p, which is not a live stream",
                    (void *)s);
    return memcpy_checked("cudaMemcpyAsync", dst, src, count, kind);
}

cudaError_t cudaMemset(void *p, int value, size_t count)
{
    NDEMU_STICKY();
    if (count == 0) return cudaSuccess;
    char why[512];
    if (!p) return fail(cudaErrorInvalidValue, "cudaMemset(NULL, %d, %zu bytes): the pointer is NULL", value, count);
    if (!in_device_memory(p, count, why, sizeof why))
        return fail_loud(cudaErrorInvalidValue, "cudaMemset(%p, %d, %zu bytes): %s; cudaMemset writes device memory",
                         p, value, count, why);
    memset(p, value, count);
    prof_written(p, nullptr, count);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t count, cudaStream_t s)
{
    if (!valid_stream(s))
        return fail(cudaErrorInvalidResourceHandle, "cudaMemsetAsync on stream %p, which is not a live stream",
                    (void *)s);
    return cudaMemset(p, value, count);
}

static size_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 32;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    NDEMU_STICKY();
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (free_bytes) *free_bytes = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
    if (total_bytes) *total_bytes = physical_memory();
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    NDEMU_STICKY();
    return cudaSuccess;
}

cudaError_t cudaDeviceReset(void)
{
    for (auto &a : g_allocs) {
        prof_alloc((void *)a.first, a.second, true);
        release_alloc((void *)a.first);
    }
    g_allocs.clear();
    g_managed.clear();
    g_max_dynamic.clear();
    for (const void *s : g_streams) delete (const CUstream_st *)s;
    for (const void *e : g_events) delete (const CUevent_st *)e;
    g_streams.clear();
    g_events.clear();
    g_sticky = cudaSuccess;
    g_last = cudaSuccess;
    g_message[0] = '\0';
    return cudaSuccess;
}

static bool bad_device(int d, const char *what, cudaError_t *e)
{
    if (d == 0) return false;
    *e = fail(cudaErrorInvalidDevice, "%s(%d): the emulator has one device, number 0", what, d);
    return true;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count) return fail(cudaErrorInvalidValue, "cudaGetDeviceCount(NULL)");
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    cudaError_t e;
    if (bad_device(device, "cudaSetDevice", &e)) return e;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device) return fail(cudaErrorInvalidValue, "cudaGetDevice(NULL)");
    *device = 0;
    return cudaSuccess;
}

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device)
{
    if (!p) return fail(cudaErrorInvalidValue, "cudaGetDeviceProperties(NULL, %d)", device);
    cudaError_t e;
    if (bad_device(device, "cudaGetDeviceProperties", &e)) return e;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "CUDA emulator (CPU)");
    p->totalGlobalMem = physical_memory();
    p->sharedMemPerBlock = 49152;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->memPitch = 2147483647;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->clockRate = 1000000;
    p->totalConstMem = 65536;
    p->major = 9;
    p->minor = 0;
    p->textureAlignment = 512;
    p->multiProcessorCount = cpu_count();
    p->integrated = 1;
    p->canMapHostMemory = 1;
    p->unifiedAddressing = 1;
    p->managedMemory = 1;
    p->l2CacheSize = 1 << 20;
    p->maxThreadsPerMultiProcessor = 2048;
    p->sharedMemPerMultiprocessor = kMaxDynamicShared;
    p->regsPerMultiprocessor = 65536;
    p->sharedMemPerBlockOptin = kMaxDynamicShared;
    p->maxBlocksPerMultiProcessor = 32;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)
{
    if (!value) return fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute(NULL, %d, %d)", (int)attr, device);
    cudaError_t e;
    if (bad_device(device, "cudaDeviceGetAttribute", &e)) return e;
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *value = p.clockRate; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
    default:
        return fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute: attribute %d is not emulated", (int)attr);
    }
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    if (!s) return fail(cudaErrorInvalidValue, "cudaStreamCreate(NULL)");
    NDEMU_STICKY();
    CUstream_st *st = new CUstream_st{flags};
    g_streams.insert(st);
    *s = st;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!g_streams.erase(s))
        return fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy(%p): not a live stream", (void *)s);
    delete s;
    NDEMU_STICKY();
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (!valid_stream(s))
        return fail(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize(%p): not a live stream", (void *)s);
    NDEMU_STICKY();
    return cudaSuccess;
}

static bool bad_event(cudaEvent_t e, const char *what, cudaError_t *err)
{
    if (e && g_events.count(e)) return false;
    *err = fail(cudaErrorInvalidResourceHandle, "%s(%p): not a live event", what, (void *)e);
    return true;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    if (!e) return fail(cudaErrorInvalidValue, "cudaEventCreate(NULL)");
    NDEMU_STICKY();
    CUevent_st *ev = new CUevent_st{flags, false, 0};
    g_events.insert(ev);
    *e = ev;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    cudaError_t err;
    if (bad_event(e, "cudaEventRecord", &err)) return err;
    if (!valid_stream(s))
        return fail(cudaErrorInvalidResourceHandle, "cudaEventRecord on stream %p, which is not a live stream",
                    (void *)s);
    NDEMU_STICKY();
    e->recorded = true;
    e->ns = clock_ticks();
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    cudaError_t err;
    if (bad_event(e, "cudaEventSynchronize", &err)) return err;
    NDEMU_STICKY();
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e)
{
    cudaError_t err;
    if (bad_event(e, "cudaEventQuery", &err)) return err;
    NDEMU_STICKY();
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    cudaError_t err;
    if (!ms) return fail(cudaErrorInvalidValue, "cudaEventElapsedTime(NULL, ...)");
    if (bad_event(start, "cudaEventElapsedTime", &err) || bad_event(end, "cudaEventElapsedTime", &err))
        return err;
    NDEMU_STICKY();
    if (!start->recorded || !end->recorded)
        return fail(cudaErrorInvalidResourceHandle,
                    "cudaEventElapsedTime: the %s event was never recorded (call cudaEventRecord first)",
                    start->recorded ? "end" : "start");
    if ((start->flags | end->flags) & cudaEventDisableTiming)
        return fail(cudaErrorInvalidResourceHandle,
                    "cudaEventElapsedTime: an event was created with cudaEventDisableTiming");
    *ms = (float)((double)(end->ns - start->ns) / 1e6);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    if (!g_events.erase(e))
        return fail(cudaErrorInvalidResourceHandle, "cudaEventDestroy(%p): not a live event", (void *)e);
    delete e;
    NDEMU_STICKY();
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v) return fail(cudaErrorInvalidValue, "cudaDriverGetVersion(NULL)");
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v) return fail(cudaErrorInvalidValue, "cudaRuntimeGetVersion(NULL)");
    *v = CUDART_VERSION;
    return cudaSuccess;
}

} /* extern "C" */

/* ------------------------------------------------------------------------
 * Misaligned accesses, in every build
 * --------------------------------------------------------------------- */
/* The emulator's builds compile .cu files with -fsanitize=alignment
 * (cuda.mk's CXXFLAGS_CU; grade.sh; the sanitizer build has it in
 * -fsanitize=undefined): the compiler checks each typed load and store's
 * address against its type's alignment and calls UBSan's handler, which
 * the emulator supplies.  A misaligned access in a kernel (a float4 load
 * from an address that is not a multiple of 16) is a fault of the launch,
 * cudaErrorMisalignedAddress, as on a GPU, naming the line; anywhere else
 * it goes to UBSan's own handler where UBSan is linked, else is reported on
 * stderr (and aborts in the _abort form). */
namespace ndemu {
struct UbsanLocation {
    const char *file;
    unsigned line, column;
};
struct UbsanType {
    unsigned short kind, info;
    char name[1];
};
struct UbsanTypeMismatch {
    UbsanLocation loc;
    const UbsanType *type;
    unsigned char log_alignment;
    unsigned char check_kind;
};

[[maybe_unused]] static void type_mismatch(UbsanTypeMismatch *d, uintptr_t ptr, bool abort_it)
{
    static const char *const kinds[] = {"load of", "store to", "reference binding to", "member access within",
                                        "member call on", "constructor call on", "downcast of", "downcast of",
                                        "upcast of", "cast to virtual base of"};
    const char *what = d->check_kind < sizeof kinds / sizeof kinds[0] ? kinds[d->check_kind] : "access to";
    unsigned long long align = 1ull << d->log_alignment;
    bool misaligned = ptr && (ptr & (align - 1)) != 0;
    if (misaligned && g_in_launch && g_cur) {
        if (g_block.error) { /* the launch is being abandoned */
            g_block.state[(size_t)g_tid] = kFaulted;
            wait_here(); /* never returns */
            return;
        }
        char who[128];
        describe_thread(who, sizeof who, g_tid);
        vkernel_fault_f(cudaErrorMisalignedAddress,
                        "misaligned address in kernel '%s' (launched at %s:%d): %s at %s:%u: %s address "
                        "%p for type %s, which needs %llu-byte alignment (a %llu-byte vector access "
                        "needs an address that is a multiple of %llu; check the offset and the row "
                        "stride before taking this path)",
                        g_block.info->kernel, base_name(g_block.info->file), g_block.info->line, who,
                        base_name(d->loc.file), d->loc.line, what, (void *)ptr, d->type->name, align, align,
                        align);
        g_block.state[(size_t)g_tid] = kFaulted;
        wait_here(); /* never returns: the launch is abandoned */
        return;
    }
    typedef void (*Handler)(UbsanTypeMismatch *, uintptr_t);
    Handler next = (Handler)dlsym(RTLD_NEXT, abort_it ? "__ubsan_handle_type_mismatch_v1_abort"
                                                      : "__ubsan_handle_type_mismatch_v1");
    if (next) {
        next(d, ptr);
        return;
    }
    fprintf(stderr, "%s:%u:%u: runtime error: %s %s address %p for type %s%s\n", d->loc.file, d->loc.line,
            d->loc.column, what, ptr ? "misaligned" : "null", (void *)ptr, d->type->name,
            ptr ? ", which requires more alignment" : "");
    if (abort_it) abort();
}
} /* namespace ndemu */

/* Where the sanitizers' runtime is linked statically (clang's, as in the
 * fuzzer's build), it defines these handlers itself and a second
 * definition does not link: there UBSan's own handler reports a
 * misaligned access, with no kernel named.  gcc links it as a shared
 * library, whose handlers these override. */
#if defined(__clang__) && defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NDEMU_STATIC_SANITIZER_RUNTIME 1
#endif
#endif
#ifndef NDEMU_STATIC_SANITIZER_RUNTIME
extern "C" {
void __ubsan_handle_type_mismatch_v1(ndemu::UbsanTypeMismatch *d, uintptr_t ptr);
void __ubsan_handle_type_mismatch_v1_abort(ndemu::UbsanTypeMismatch *d, uintptr_t ptr);
void __ubsan_handle_type_mismatch_v1(ndemu::UbsanTypeMismatch *d, uintptr_t ptr)
{
    ndemu::type_mismatch(d, ptr, false);
}
void __ubsan_handle_type_mismatch_v1_abort(ndemu::UbsanTypeMismatch *d, uintptr_t ptr)
{
    ndemu::type_mismatch(d, ptr, true);
}
} /* extern "C" */
#endif

/* The profiler, the sanitizer and the performance model: one translation
 * unit with the runtime, whose state they read. */
#include "profile.cpp"
#include "model.cpp"
