/*
 * bench_cpu.c -- CPU benchmarks for lessons 2 to 5, beside memcpy, OpenBLAS
 * and NumPy, all measured in the same run.  Laid out like llm.c's dev/cuda
 * files: every version is checked against a reference before it is timed.
 *
 *   bench_cpu [-o results.tsv] [-f GROUP] [-n NUMPY_COMMAND] [-s] [-q]
 *
 *   -f GROUP  only the groups whose name contains GROUP: compact (with the
 *             steps of lesson 2's fast path), ewise, reduce, matmul
 *   -n CMD    also time NumPy: CMD (a shell command) starts
 *             tests/bench/bench_numpy.py, which runs each case's NumPy
 *             call when asked; `make bench` gives it
 *   -s        smoke pass: small shapes, one round, no warm-up, every check
 *             (seconds; `make check` runs it, so the benchmark cannot break
 *             unseen); its figures mean nothing
 *   -q        no table on stdout (the TSV only)
 *   bench_cpu -T   the self-test of its check of OpenBLAS's kernels against
 *             the CPU (a fallback or not) on known cases; make check runs it
 *   (-P: internal, one probe of a core type; see choose_blas_core)
 *
 * OpenBLAS runs the kernels that fit this CPU: when it falls back to older
 * ones by itself, bench_cpu times the core types that fit and runs again
 * with the fastest (see choose_blas_core); the TSV header says which and
 * why ("# openblas kernels:", "# openblas fallback: no").
 *
 * Cases, and the baseline each ratio is taken against:
 *   compact   nd_compact of 2-D transposes (n,n) -> permute (1,0), n = 4096,
 *             4100 and 8192, and of (0,2,1,3) permutes of 4-D arrays, against
 *             memcpy of the same bytes and NumPy's np.ascontiguousarray of
 *             the same view; for the transposes also each step of lesson 2's
 *             fast path (nd_compact_version 1-4: row by row, blocked, in
 *             registers, streaming stores); and a plain C copy loop against
 *             memcpy, the ceiling for ordinary stores
 *   ewise     a + b of two compact (8192,4096) arrays: memcpy bandwidth; NumPy
 *   reduce    the sum over the last axis of (8192,4096): memcpy bandwidth;
 *             NumPy's a.sum(-1); and the fastest read of the same array (a
 *             plain sum, no care for accuracy): one core's read bandwidth,
 *             the ceiling for any sum
 *   matmul    nd_matmul (tiled) against OpenBLAS's cblas_sgemm on one thread
 *             and NumPy's a @ b, n = 256, 512, 1024, 2048; nd_matmul_naive
 *             against nd_matmul
 *
 * Method, so that figures taken on a machine shared with other work mean
 * something:
 *   - A case's contenders (the course's code, its baseline, NumPy) run in
 *     rounds, one call each per round, after a warm-up round: at least
 *     MIN_ROUNDS rounds and MIN_SECONDS seconds, at most MAX_ROUNDS.  Times
 *     are medians over the rounds; a ratio is the median of the ratios
 *     within each round, so a change of load moves both of its sides.
 *     Times are CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID;
 *     NumPy's side: time.thread_time), which leaves out the time spent
 *     waiting for a core on a busy machine; every contender runs on one
 *     thread, so on a quiet machine it is the wall-clock time.
 *   - The arrays are larger than the last-level cache (64 MB to 256 MB per
 *     array; the course's machine has 32 MB of L3), so what is measured is
 *     memory traffic, not the cache.  The TSV's header names the machine,
 *     its caches, its page settings and its load before and after.
 *   - Outputs reuse memory.  The library allocates every result with
 *     aligned_alloc; glibc maps a block that large fresh from the kernel and
 *     unmaps it when freed, so each call would also pay for its page faults,
 *     16,000 of them for 64 MB, whose cost swings with the machine (in a
 *     virtual machine, tenfold between runs of the same binary: the cause of
 *     issue #18's 281 ms vs 32 ms).  The link wraps aligned_alloc and free
 *     (-Wl,--wrap) so that large blocks are kept and handed out again, as a
 *     caching allocator would (PyTorch's does): both sides of every ratio
 *     measure data movement only.  NumPy's side does the same (mallopt).
 *
 * Bandwidth counts bytes read plus bytes written, in decimal GB/s (1e9).
 */
#include "nd.h"

#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static FILE *tsv;
static bool quiet, smoke;
/* What choose_blas_core decided: the header's "openblas kernels" line, and
 * whether the kernels fall short of the CPU (every ratio against them then
 * says so). */
static char blas_choice[1200];
static bool blas_fallback;

#define STR_(x) #x
#define STR(x) STR_(x)

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_cpu: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void must(nd_status s, const char *what)
{
    if (s == ND_ERR_NOT_IMPLEMENTED)
        die("%s failed: %s: the benchmark runs lessons 1-5's code; finish them, or "
            "measure the complete library with make bench TREE=solution", what, nd_last_error());
    if (s != ND_OK)
        die("%s failed: %s: %s", what, nd_status_name(s), nd_last_error());
}

/* ---------------------------------------------------------------------- */
/* Memory: large blocks are kept and reused (see the top of this file)     */
/* ---------------------------------------------------------------------- */

#define POOL_SLOTS 16
#define POOL_MIN_BYTES (1 << 20)

static struct {
    void *ptr;
    size_t size, align;
    bool in_use;
} pool[POOL_SLOTS];

void *__real_aligned_alloc(size_t align, size_t size);
void __real_free(void *ptr);
void *__wrap_aligned_alloc(size_t align, size_t size);
void __wrap_free(void *ptr);

/* A kept block of this size if one is free; otherwise a new one, kept in
 * an empty slot, or in the slot of a free block of another size (which is
 * freed for good).  Small blocks go straight to glibc. */
void *__wrap_aligned_alloc(size_t align, size_t size)
{
    if (size < POOL_MIN_BYTES)
        return __real_aligned_alloc(align, size);
    int slot = -1;
    for (int k = 0; k < POOL_SLOTS; k++) {
        if (pool[k].ptr != NULL && !pool[k].in_use && pool[k].size == size &&
            pool[k].align == align) {
            pool[k].in_use = true;
            return pool[k].ptr;
        }
        if (slot < 0 && pool[k].ptr == NULL)
            slot = k;
    }
    for (int k = 0; k < POOL_SLOTS && slot < 0; k++)
        if (!pool[k].in_use) {
            __real_free(pool[k].ptr);
            pool[k].ptr = NULL;
            slot = k;
        }
    void *p = __real_aligned_alloc(align, size);
    if (p != NULL && slot >= 0)
        pool[slot] = (__typeof__(pool[0])){ p, size, align, true };
    return p;
}

void __wrap_free(void *ptr)
{
    for (int k = 0; k < POOL_SLOTS && ptr != NULL; k++)
        if (pool[k].ptr == ptr) {
            pool[k].in_use = false;
            return;
        }
    __real_free(ptr);
}

static float *floats(size_t n)
{
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    if (p == NULL)
        die("out of memory for %zu floats", n);
    return p;
}

/* ---------------------------------------------------------------------- */
/* Timing in rounds                                                        */
/* ---------------------------------------------------------------------- */

#define MIN_ROUNDS 7
#define MAX_ROUNDS 25
#define MIN_SECONDS 1.0
#define LONG_RUN 5.0       /* a warm-up call this long: one round is enough */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[MAX_ROUNDS];
    memcpy(s, v, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* One contender of a case: run(ctx) makes one call and returns the seconds
 * it took (NumPy's are measured in its own process). */
typedef struct {
    double (*run)(void *ctx);
    void *ctx;
    double t[MAX_ROUNDS];
} contender;

/* Run the contenders in rounds; returns the number of rounds.  When a
 * warm-up call takes longer than LONG_RUN (the naive matmul at 2048: 40 s),
 * the warm-up round is the one measured round. */
static int time_rounds(contender *c, int n)
{
    bool long_run = false;
    for (int k = 0; k < n && !smoke; k++) {   /* warm-up round */
        c[k].t[0] = c[k].run(c[k].ctx);
        long_run |= c[k].t[0] > LONG_RUN;
    }
    if (long_run)
        return 1;
    int rounds = 0;
    double spent = 0;
    int min_rounds = smoke ? 1 : MIN_ROUNDS;
    while (rounds < MAX_ROUNDS && (rounds < min_rounds || (spent < MIN_SECONDS && !smoke))) {
        for (int k = 0; k < n; k++) {
            c[k].t[rounds] = c[k].run(c[k].ctx);
            spent += c[k].t[rounds];
        }
        rounds++;
    }
    return rounds;
}

/* The median over rounds of num's time / den's time. */
static double ratio(const contender *num, const contender *den, int rounds)
{
    double r[MAX_ROUNDS];
    for (int i = 0; i < rounds; i++)
        r[i] = num->t[i] / den->t[i];
    return median(r, rounds);
}

/* ---------------------------------------------------------------------- */
/* Results: the table for people and the TSV for plots                     */
/* ---------------------------------------------------------------------- */

/* One row.  ratio: against `baseline` (0: none); target: the ratio it
 * should reach (0: none); numpy: NumPy's time / this one's (0: none). */
static void report(const char *group, const char *name, const char *shape, double seconds,
                   double rate, const char *unit, double ratio_, const char *baseline,
                   double target, double numpy)
{
    const char *verdict = target <= 0 || smoke ? "" : ratio_ >= target ? "met" : "MISSED";
    if (!quiet) {
        printf("%-8s %-46s %-16s %9.3f ms %8.2f %-7s", group, name, shape, seconds * 1e3, rate,
               unit);
        if (ratio_ > 0)
            printf(" %6.1f%% of %-12s", 100 * ratio_, baseline);
        if (numpy > 0)
            printf(" %5.2fx NumPy", numpy);
        if (*verdict)
            printf("  target %.0f%%: %s", 100 * target, verdict);
        printf("\n");
    }
    if (tsv != NULL)
        fprintf(tsv, "%s\t%s\t%s\t%.6g\t%.6g\t%s\t%.4f\t%s\t%.2f\t%s\t%.4f\n", group, name,
                shape, seconds, rate, unit, ratio_, baseline, target, verdict, numpy);
}

/* ---------------------------------------------------------------------- */
/* NumPy's side: tests/bench/bench_numpy.py, a process that runs one call  */
/* at a time when asked                                                    */
/* ---------------------------------------------------------------------- */

static FILE *np_to, *np_from;
static pid_t np_pid;
static char np_reply[1 << 16];

static void numpy_start(const char *cmd)
{
    int to[2], from[2];
    if (pipe(to) != 0 || pipe(from) != 0)
        die("pipe: %s", strerror(errno));
    fflush(NULL);
    if ((np_pid = fork()) < 0)
        die("fork: %s", strerror(errno));
    if (np_pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    signal(SIGPIPE, SIG_IGN);   /* a helper that died is reported below */
    if ((np_to = fdopen(to[1], "w")) == NULL || (np_from = fdopen(from[0], "r")) == NULL)
        die("fdopen: %s", strerror(errno));
}

/* Send one command; the helper's one-line answer, which must not be an
 * error. */
static const char *numpy_ask(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *numpy_ask(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(np_to, fmt, ap);
    va_end(ap);
    fputc('\n', np_to);
    if (fflush(np_to) != 0 || fgets(np_reply, sizeof np_reply, np_from) == NULL)
        die("the NumPy helper (-n) stopped answering; its messages are above");
    np_reply[strcspn(np_reply, "\n")] = '\0';
    if (strncmp(np_reply, "error", 5) == 0)
        die("the NumPy helper says: %s", np_reply);
    return np_reply;
}

static void numpy_stop(void)
{
    if (np_to == NULL)
        return;
    fputs("quit\n", np_to);
    fclose(np_to);
    fclose(np_from);
    int status;
    waitpid(np_pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("the NumPy helper exited with status %d", status);
}

/* Set NumPy's case up (a "setup ..." command) and compare the values it
 * samples from its result with ours, want[0..n-1], within tol (relative). */
static void numpy_setup(const float *want, int64_t n, double tol, const char *what,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void numpy_setup(const float *want, int64_t n, double tol, const char *what,
                        const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    const char *r = numpy_ask("setup %s", cmd);
    char *end;
    if (strncmp(r, "ok ", 3) != 0)
        die("NumPy's %s: unexpected answer '%.80s'", what, r);
    long k = strtol(r + 3, &end, 10);
    for (long j = 0; j < k; j++) {
        int64_t at = k > 1 ? j * (n - 1) / (k - 1) : 0;
        double got = (float)strtod(end, &end), exp = want[at];   /* both floats */
        if (fabs(got - exp) > tol * (fabs(exp) + 1.0))
            die("NumPy's %s differs from ours at element %lld: %.9g, we have %.9g", what,
                (long long)at, got, exp);
    }
}

static double run_numpy(void *unused)
{
    (void)unused;
    return strtod(numpy_ask("run"), NULL);
}

/* ---------------------------------------------------------------------- */
/* memcpy: the bandwidth baseline                                          */
/* ---------------------------------------------------------------------- */

typedef struct {
    float *dst;
    const float *src;
    size_t n;
} copy_ctx;

static copy_ctx copy_make(size_t n)
{
    float *src = floats(n), *dst = floats(n);
    for (size_t i = 0; i < n; i++)
        src[i] = (float)i;
    memset(dst, 0, n * sizeof(float));   /* fault the pages in now */
    return (copy_ctx){ dst, src, n };
}

static void copy_free(copy_ctx *c)
{
    free(c->dst);
    free((void *)c->src);
}

static double run_memcpy(void *p)
{
    copy_ctx *c = p;
    double t0 = now();
    memcpy(c->dst, c->src, c->n * sizeof(float));
    return now() - t0;
}

/* A plain C copy loop: ordinary stores, as any gather must use.  The
 * "+ 0.0f" keeps GCC from turning it into a call to memcpy. */
static double run_copy_loop(void *p)
{
    copy_ctx *c = p;
    double t0 = now();
    for (size_t i = 0; i < c->n; i++)
        c->dst[i] = c->src[i] + 0.0f;
    return now() - t0;
}

/* How close ordinary stores get to memcpy: the ceiling for a gather that
 * does not stream. */
static void bench_copy_loop(size_t n)
{
    copy_ctx c = copy_make(n);
    contender k[2] = { { run_memcpy, &c, { 0 } }, { run_copy_loop, &c, { 0 } } };
    int rounds = time_rounds(k, 2);
    double t = median(k[1].t, rounds);
    char sh[40];
    snprintf(sh, sizeof sh, "(%zu,)", n);
    report("compact", "C copy loop (reference)", sh, t, 2.0 * (double)n * sizeof(float) / t / 1e9,
           "GB/s", ratio(&k[0], &k[1], rounds), "memcpy", 0, 0);
    copy_free(&c);
}

/* ---------------------------------------------------------------------- */
/* compact: permuted views                                                 */
/* ---------------------------------------------------------------------- */

typedef struct {
    const nd_array *view;
    int version;
} compact_ctx;

static double run_compact(void *p)
{
    compact_ctx *c = p;
    nd_array out;
    double t0 = now();
    must(nd_compact_version(c->view, c->version, &out, NULL), "nd_compact_version");
    nd_release(&out);
    return now() - t0;
}

/* Check nd_compact_version(v, version) against an index-by-index gather
 * of the base buffer, and that it ran the version asked for; for version
 * 0 (nd_compact), keep the result in *keep (NumPy's is compared with it). */
static void compact_check(const nd_array *v, const float *base, int version, int want_ran,
                          float *keep)
{
    nd_array out;
    int ran;
    must(nd_compact_version(v, version, &out, &ran), "nd_compact_version");
    if (want_ran >= 0 && ran != want_ran)
        die("nd_compact_version(%d) ran version %d, expected %d", version, ran, want_ran);
    const float *got = (const float *)out.buf->ptr;
    int64_t n = nd_numel(v), idx[ND_MAX_DIMS] = { 0 };
    for (int64_t i = 0; i < n; i++) {
        int64_t off = v->offset, rest = i;
        for (int k = v->ndim - 1; k >= 0; k--) {
            idx[k] = rest % v->shape[k];
            rest /= v->shape[k];
            off += idx[k] * v->strides[k];
        }
        if (got[i] != base[off])
            die("nd_compact_version(%d): element %lld is %g, expected %g", version,
                (long long)i, (double)got[i], (double)base[off]);
    }
    if (keep != NULL)
        memcpy(keep, got, (size_t)n * sizeof(float));
    nd_release(&out);
}

typedef struct {
    const char *name, *numpy;   /* ours, and NumPy's call */
    int ndim;
    int64_t shape[4];
    int perm[4];
    bool steps;                 /* also time nd_compact_version 1-4 */
} compact_case;

static const char *const step_names[5] = {
    "", "1 row by row", "2 blocked", "3 in registers", "4 streaming stores",
};

static void bench_compact_case(const compact_case *cc)
{
    nd_array a, v;
    int64_t n = 1;
    for (int k = 0; k < cc->ndim; k++)
        n *= cc->shape[k];
    must(nd_arange(ND_CPU, n, &a), "nd_arange");
    must(nd_reshape(&a, cc->ndim, cc->shape, &a), "nd_reshape");
    must(nd_permute(&a, cc->perm, &v), "nd_permute");
    const float *base = (const float *)a.buf->ptr;
    float *ours = malloc((size_t)n * sizeof(float));
    if (ours == NULL)
        die("out of memory");
    compact_check(&v, base, 0, -1, ours);
    for (int s = 1; s <= 4 && cc->steps; s++)
        compact_check(&v, base, s, s, NULL);
    char sh[120], cmd[200];
    nd_shape_str(cc->ndim, cc->shape, sh, sizeof sh);
    if (np_to != NULL) {
        int len = snprintf(cmd, sizeof cmd, "permute %d", cc->ndim);
        for (int k = 0; k < cc->ndim; k++)
            len += snprintf(cmd + len, sizeof cmd - (size_t)len, " %lld", (long long)cc->shape[k]);
        for (int k = 0; k < cc->ndim; k++)
            len += snprintf(cmd + len, sizeof cmd - (size_t)len, " %d", cc->perm[k]);
        numpy_setup(ours, n, 0, cc->numpy, "%s", cmd);
    }
    free(ours);

    /* contenders: memcpy, nd_compact, [steps 1-4], [NumPy] */
    copy_ctx mc = copy_make((size_t)n);
    compact_ctx ctx[5];
    contender k[7];
    int nk = 0;
    k[nk++] = (contender){ run_memcpy, &mc, { 0 } };
    for (int s = 0; s <= (cc->steps ? 4 : 0); s++) {
        ctx[s] = (compact_ctx){ &v, s };
        k[nk++] = (contender){ run_compact, &ctx[s], { 0 } };
    }
    int np_k = np_to != NULL ? nk : -1;
    if (np_k >= 0)
        k[nk++] = (contender){ run_numpy, NULL, { 0 } };
    int rounds = time_rounds(k, nk);

    double bytes = 2.0 * (double)n * sizeof(float), t = median(k[1].t, rounds);
    report("compact", cc->name, sh, t, bytes / t / 1e9, "GB/s", ratio(&k[0], &k[1], rounds),
           "memcpy", 0.6, np_k >= 0 ? ratio(&k[np_k], &k[1], rounds) : 0);
    if (np_k >= 0) {
        double tn = median(k[np_k].t, rounds);
        report("compact", cc->numpy, sh, tn, bytes / tn / 1e9, "GB/s",
               ratio(&k[0], &k[np_k], rounds), "memcpy", 0, 0);
    }
    for (int s = 1; s <= 4 && cc->steps; s++) {
        double ts = median(k[1 + s].t, rounds);
        report("steps", step_names[s], sh, ts, bytes / ts / 1e9, "GB/s",
               ratio(&k[0], &k[1 + s], rounds), "memcpy", 0,
               np_k >= 0 ? ratio(&k[np_k], &k[1 + s], rounds) : 0);
    }
    copy_free(&mc);
    nd_release(&v);
    nd_release(&a);
}

static void bench_compact(void)
{
    static const compact_case full[] = {
        { "transpose (1,0)", "NumPy ascontiguousarray(a.T)", 2, { 4096, 4096 }, { 1, 0 }, true },
        { "transpose (1,0)", "NumPy ascontiguousarray(a.T)", 2, { 4100, 4100 }, { 1, 0 }, true },
        { "transpose (1,0)", "NumPy ascontiguousarray(a.T)", 2, { 8192, 8192 }, { 1, 0 }, true },
        { "permute (0,2,1,3)", "NumPy ascontiguousarray(a.transpose(0,2,1,3))", 4,
          { 16, 256, 64, 64 }, { 0, 2, 1, 3 }, false },
        { "permute (0,2,1,3)", "NumPy ascontiguousarray(a.transpose(0,2,1,3))", 4,
          { 16, 257, 65, 63 }, { 0, 2, 1, 3 }, false },
    };
    /* the smoke pass: the same code paths, edges included, in little time */
    static const compact_case small[] = {
        { "transpose (1,0)", "NumPy ascontiguousarray(a.T)", 2, { 64, 64 }, { 1, 0 }, true },
        { "transpose (1,0)", "NumPy ascontiguousarray(a.T)", 2, { 300, 257 }, { 1, 0 }, true },
        { "permute (0,2,1,3)", "NumPy ascontiguousarray(a.transpose(0,2,1,3))", 4,
          { 2, 17, 9, 7 }, { 0, 2, 1, 3 }, false },
    };
    bench_copy_loop(smoke ? 1 << 16 : (size_t)1 << 24);
    const compact_case *cases = smoke ? small : full;
    size_t count = smoke ? sizeof small / sizeof small[0] : sizeof full / sizeof full[0];
    for (size_t c = 0; c < count; c++)
        bench_compact_case(&cases[c]);
}

/* ---------------------------------------------------------------------- */
/* ewise add and sum over the last axis, against memcpy bandwidth          */
/* ---------------------------------------------------------------------- */

typedef struct {
    const nd_array *a, *b;
} pair_ctx;

static double run_add(void *p)
{
    pair_ctx *c = p;
    nd_array out;
    double t0 = now();
    must(nd_binary(ND_ADD, c->a, c->b, &out), "nd_binary(ND_ADD)");
    nd_release(&out);
    return now() - t0;
}

static double run_sum_last(void *p)
{
    pair_ctx *c = p;
    nd_array out;
    int axis = -1;
    double t0 = now();
    must(nd_reduce(ND_SUM, c->a, 1, &axis, false, &out), "nd_reduce(ND_SUM)");
    nd_release(&out);
    return now() - t0;
}

/* The fastest read of the array: a plain sum into 64 running sums (four
 * AVX-512 registers, GCC vectorises it), no care for accuracy.  What one
 * core reads from memory when it does nothing else: the ceiling for any
 * sum over it (against memcpy, which also writes, it need not reach 100%). */
static volatile float read_sink;

static double run_read(void *p)
{
    copy_ctx *c = p;
    double t0 = now();
    float acc[64] = { 0 };
    size_t i = 0;
    for (; i + 64 <= c->n; i += 64)
        for (int j = 0; j < 64; j++)
            acc[j] += c->src[i + j];
    for (; i < c->n; i++)
        acc[0] += c->src[i];
    float total = 0;
    for (int j = 0; j < 64; j++)
        total += acc[j];
    read_sink = total;
    return now() - t0;
}

/* The targets of #31: add and the last-axis sum at 80% of memcpy's
 * bandwidth (bytes each moves, in the same run). */
#define EWISE_TARGET 0.8
#define REDUCE_TARGET 0.8

static void bench_ewise_reduce(bool ewise, bool reduce)
{
    const int64_t rows = smoke ? 64 : 8192, cols = smoke ? 48 : 4096, n = rows * cols;
    int64_t shape[2] = { rows, cols };
    float *x = floats((size_t)n), *y = floats((size_t)n), *got = floats((size_t)n);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)(i % 1000) * 0.001f;
        y[i] = (float)(i % 7);
    }
    nd_array a, b, out;
    must(nd_from_host(ND_CPU, 2, shape, x, &a), "nd_from_host");
    must(nd_from_host(ND_CPU, 2, shape, y, &b), "nd_from_host");
    copy_ctx mc = copy_make((size_t)n);
    pair_ctx c = { &a, &b };
    char sh[64];
    nd_shape_str(2, shape, sh, sizeof sh);
    contender k[3] = { { run_memcpy, &mc, { 0 } }, { NULL, &c, { 0 } }, { run_numpy, NULL, { 0 } } };
    int nk = np_to != NULL ? 3 : 2;
    if (ewise) {
        must(nd_binary(ND_ADD, &a, &b, &out), "nd_binary");
        must(nd_to_host(&out, got, (size_t)n), "nd_to_host");
        nd_release(&out);
        for (int64_t i = 0; i < n; i++)
            if (got[i] != x[i] + y[i])
                die("ewise add: wrong result at %lld", (long long)i);
        if (nk == 3)
            numpy_setup(got, n, 0, "a + b", "add %lld %lld", (long long)rows, (long long)cols);
        k[1].run = run_add;
        int rounds = time_rounds(k, nk);
        /* a and b read, the result written: 3n floats against memcpy's 2n */
        double bytes = 3.0 * (double)n * sizeof(float), t = median(k[1].t, rounds);
        report("ewise", "add", sh, t, bytes / t / 1e9, "GB/s", 1.5 * ratio(&k[0], &k[1], rounds),
               "memcpy GB/s", EWISE_TARGET, nk == 3 ? ratio(&k[2], &k[1], rounds) : 0);
        if (nk == 3) {
            double tn = median(k[2].t, rounds);
            report("ewise", "NumPy a + b", sh, tn, bytes / tn / 1e9, "GB/s",
                   1.5 * ratio(&k[0], &k[2], rounds), "memcpy GB/s", 0, 0);
        }
    }
    if (reduce) {
        int axis = -1;
        must(nd_reduce(ND_SUM, &a, 1, &axis, false, &out), "nd_reduce");
        must(nd_to_host(&out, got, (size_t)rows), "nd_to_host");
        nd_release(&out);
        for (int64_t r = 0; r < rows; r++) {
            double want = 0, mag = 0;
            for (int64_t j = 0; j < cols; j++) {
                want += x[r * cols + j];
                mag += fabs(x[r * cols + j]);
            }
            if (fabs(got[r] - want) > 1e-5 * mag + 1e-6)
                die("sum over the last axis: row %lld is %g, expected %g", (long long)r,
                    (double)got[r], want);
        }
        if (nk == 3)
            numpy_setup(got, rows, 1e-5, "a.sum(-1)", "sum %lld %lld", (long long)rows,
                        (long long)cols);
        k[1].run = run_sum_last;
        /* the fastest read of the same bytes, in the same rounds */
        copy_ctx rd = { NULL, x, (size_t)n };
        contender kr[4] = { k[0], k[1], k[2], { run_read, &rd, { 0 } } };
        if (nk == 2)
            kr[2] = kr[3];
        int nr = nk + 1, rounds = time_rounds(kr, nr);
        const contender *numpy = &kr[2], *read = &kr[nr - 1];
        /* bytes read and written, (n + rows) floats, against memcpy's 2n */
        double bytes = ((double)n + (double)rows) * sizeof(float), t = median(kr[1].t, rounds);
        double scale = bytes / (2.0 * (double)n * sizeof(float));
        double rscale = (double)n * sizeof(float) / (2.0 * (double)n * sizeof(float));
        report("reduce", "sum over last axis", sh, t, bytes / t / 1e9, "GB/s",
               scale * ratio(&kr[0], &kr[1], rounds), "memcpy GB/s", REDUCE_TARGET,
               nk == 3 ? ratio(numpy, &kr[1], rounds) : 0);
        if (nk == 3) {
            double tn = median(numpy->t, rounds);
            report("reduce", "NumPy a.sum(-1)", sh, tn, bytes / tn / 1e9, "GB/s",
                   scale * ratio(&kr[0], numpy, rounds), "memcpy GB/s", 0, 0);
        }
        double tr = median(read->t, rounds);
        report("reduce", "read only, no accuracy (reference)", sh, tr,
               (double)n * sizeof(float) / tr / 1e9, "GB/s", rscale * ratio(&kr[0], read, rounds),
               "memcpy GB/s", 0, 0);
        report("reduce", "sum over last axis vs read only", sh, t, ratio(read, &kr[1], rounds),
               "x", 0, "", 0, 0);
    }
    copy_free(&mc);
    nd_release(&a);
    nd_release(&b);
    free(x);
    free(y);
    free(got);
}

/* ---------------------------------------------------------------------- */
/* matmul: naive, tiled, OpenBLAS, NumPy                                   */
/* ---------------------------------------------------------------------- */

typedef struct {
    const nd_array *a, *b;
    nd_status (*fn)(const nd_array *, const nd_array *, nd_array *);
    const float *pa, *pb;
    float *pc;
    int n;
} mm_ctx;

static double run_mm(void *p)
{
    mm_ctx *c = p;
    nd_array out;
    double t0 = now();
    must(c->fn(c->a, c->b, &out), "matmul");
    nd_release(&out);
    return now() - t0;
}

static double run_sgemm(void *p)
{
    mm_ctx *c = p;
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->n, c->n, c->n, 1.0f, c->pa,
                c->n, c->pb, c->n, 0.0f, c->pc, c->n);
    return now() - t0;
}

/* Largest relative difference of got from want, scaled by the row's size. */
static double max_rel_diff(const float *got, const float *want, int n)
{
    double worst = 0;
    for (int64_t i = 0; i < (int64_t)n * n; i++) {
        double d = fabs((double)got[i] - (double)want[i]) / (fabs((double)want[i]) + 1.0);
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* The baseline's name in the matmul rows: says so when the kernels are a
 * fallback (choose_blas_core). */
static const char *blas_label(void)
{
    return blas_fallback ? "OpenBLAS FALLBACK" : "OpenBLAS";
}

static void bench_matmul_size(int n)
{
    int64_t shape[2] = { n, n };
    size_t nn = (size_t)n * (size_t)n;
    float *x = floats(nn), *y = floats(nn), *ref = floats(nn), *got = floats(nn);
    for (size_t i = 0; i < nn; i++) {
        x[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        y[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    }
    nd_array a, b, out;
    must(nd_from_host(ND_CPU, 2, shape, x, &a), "nd_from_host");
    must(nd_from_host(ND_CPU, 2, shape, y, &b), "nd_from_host");
    mm_ctx blas = { &a, &b, NULL, x, y, ref, n }, tiled = blas, naive = blas;
    run_sgemm(&blas);
    /* float sums of n terms of size <= 0.25: allow n * eps relative */
    double tol = n * 1.2e-7 + 1e-5;
    tiled.fn = nd_matmul;
    naive.fn = nd_matmul_naive;
    const mm_ctx *mine[2] = { &naive, &tiled };
    for (int v = 0; v < 2; v++) {
        must(mine[v]->fn(&a, &b, &out), "matmul");
        must(nd_to_host(&out, got, nn), "nd_to_host");
        nd_release(&out);
        if (max_rel_diff(got, ref, n) > tol)
            die("%s at %d: differs from OpenBLAS by %g", v ? "nd_matmul" : "nd_matmul_naive",
                n, max_rel_diff(got, ref, n));
    }
    int nk = 2;
    if (np_to != NULL) {
        numpy_setup(ref, (int64_t)nn, tol, "a @ b", "matmul %d", n);
        nk = 3;
    }
    char sh[64];
    snprintf(sh, sizeof sh, "%dx%dx%d", n, n, n);
    double flops = 2.0 * n * (double)n * n;
    contender k[3] = { { run_sgemm, &blas, { 0 } }, { run_mm, &tiled, { 0 } },
                       { run_numpy, NULL, { 0 } } };
    int rounds = time_rounds(k, nk);
    double t_blas = median(k[0].t, rounds), t = median(k[1].t, rounds);
    report("matmul", "OpenBLAS sgemm, 1 thread", sh, t_blas, flops / t_blas / 1e9, "GFLOP/s",
           1.0, blas_label(), 0, 0);
    report("matmul", "tiled (nd_matmul)", sh, t, flops / t / 1e9, "GFLOP/s",
           ratio(&k[0], &k[1], rounds), blas_label(), n == 1024 && !blas_fallback ? 0.5 : 0,
           nk == 3 ? ratio(&k[2], &k[1], rounds) : 0);
    if (nk == 3) {
        double tn = median(k[2].t, rounds);
        report("matmul", "NumPy a @ b", sh, tn, flops / tn / 1e9, "GFLOP/s",
               ratio(&k[0], &k[2], rounds), blas_label(), 0, 0);
    }
    /* The naive loop takes seconds (40 at 2048): timed on its own, with
     * the tiled version beside it. */
    contender kn[2] = { { run_mm, &naive, { 0 } }, { run_mm, &tiled, { 0 } } };
    rounds = time_rounds(kn, 2);
    double tn = median(kn[0].t, rounds);
    report("matmul", "naive (nd_matmul_naive)", sh, tn, flops / tn / 1e9, "GFLOP/s",
           ratio(&kn[1], &kn[0], rounds) * (t_blas / t), blas_label(), 0, 0);
    report("matmul", "tiled vs naive", sh, median(kn[1].t, rounds), ratio(&kn[0], &kn[1], rounds),
           "x", 0, "", 0, 0);
    nd_release(&a);
    nd_release(&b);
    free(x);
    free(y);
    free(ref);
    free(got);
}

static void bench_matmul(void)
{
    openblas_set_num_threads(1);
    static const int sizes[] = { 256, 512, 1024, 2048 }, small[] = { 32, 100 };
    const int *s = smoke ? small : sizes;
    int count = smoke ? 2 : 4;
    for (int i = 0; i < count; i++)
        bench_matmul_size(s[i]);
}

/* ---------------------------------------------------------------------- */
/* OpenBLAS: the kernels it runs, and the right ones for this CPU          */
/* ---------------------------------------------------------------------- */

/*
 * OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels ("core
 * type") when it loads, from the CPU's model number, unless the variable
 * OPENBLAS_CORETYPE names one.  A release that does not know the CPU's
 * model falls back to an old core: Debian 12's 0.3.21 runs its SSE3
 * (Prescott) kernels on an Intel Xeon of model 207 (Emerald Rapids), with
 * AVX-512, at a quarter of the speed of its SkylakeX or Cooperlake ones.
 * A ratio against such a baseline flatters the course's code.
 *
 * So bench_cpu compares the instruction set the kernels need with what the
 * CPU has (its flags in /proc/cpuinfo).  When OpenBLAS chose a fallback by
 * itself, bench_cpu times each core type that fits the CPU (sgemm of
 * 1024^3 on one thread, in a child process each, since the choice is made
 * when the library loads), keeps the fastest, and runs itself again with
 * OPENBLAS_CORETYPE set to it; the NumPy helper, started after that,
 * inherits the variable, so both users of OpenBLAS run the same kernels,
 * which bench_cpu checks.  The TSV header says what was chosen and why;
 * if the kernels still fall short of the CPU (no core type that fits was
 * found), every ratio against OpenBLAS is labelled as taken against a
 * fallback.
 */

/* Instruction-set levels, the lowest first. */
enum { ISA_SSE3, ISA_SSE42, ISA_AVX, ISA_AVX2, ISA_AVX512, ISA_UNKNOWN };
static const char *const isa_names[] = { "SSE3", "SSE4.2", "AVX", "AVX2+FMA", "AVX-512",
                                         "unknown" };

/* OpenBLAS's x86-64 core types (dynamic.c's names) and the instruction set
 * their kernels need.  `needs` is a CPU flag the core needs beyond its
 * level (Cooperlake: AVX-512 BF16), or NULL. */
static const struct {
    const char *name;
    int isa;
    const char *needs;
} blas_cores[] = {
    { "SapphireRapids", ISA_AVX512, "amx_tile" }, { "Cooperlake", ISA_AVX512, "avx512_bf16" },
    { "SkylakeX", ISA_AVX512, NULL },     { "Zen", ISA_AVX2, NULL },
    { "Haswell", ISA_AVX2, NULL },        { "Excavator", ISA_AVX2, NULL },
    { "Sandybridge", ISA_AVX, NULL },     { "Steamroller", ISA_AVX, NULL },
    { "Piledriver", ISA_AVX, NULL },      { "Bulldozer", ISA_AVX, NULL },
    { "Nehalem", ISA_SSE42, NULL },       { "Barcelona", ISA_SSE3, NULL },
    { "Dunnington", ISA_SSE3, NULL },     { "Penryn", ISA_SSE3, NULL },
    { "Core2", ISA_SSE3, NULL },          { "Prescott", ISA_SSE3, NULL },
    { "Atom", ISA_SSE3, NULL },           { "Nano", ISA_SSE3, NULL },
    { "Bobcat", ISA_SSE3, NULL },         { "Opteron(SSE3)", ISA_SSE3, NULL },
    { "Opteron", ISA_SSE3, NULL },        { "Athlon", ISA_SSE3, NULL },
    { "Northwood", ISA_SSE3, NULL },      { "Coppermine", ISA_SSE3, NULL },
    { "Katmai", ISA_SSE3, NULL },         { "Banias", ISA_SSE3, NULL },
};
#define N_BLAS_CORES (int)(sizeof blas_cores / sizeof blas_cores[0])

/* The level a core type's kernels need; ISA_UNKNOWN for a name not in the
 * table (another architecture, a newer release). */
static int core_isa(const char *name)
{
    for (int i = 0; i < N_BLAS_CORES; i++)
        if (strcasecmp(name, blas_cores[i].name) == 0)
            return blas_cores[i].isa;
    return ISA_UNKNOWN;
}

/* Whether the space-separated list `flags` has the flag `f`. */
static bool has_flag(const char *flags, const char *f)
{
    size_t n = strlen(f);
    for (const char *p = flags; (p = strstr(p, f)) != NULL; p += n)
        if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0' || p[n] == '\n'))
            return true;
    return false;
}

/* The highest level the CPU with these flags runs (ISA_UNKNOWN: no x86
 * flags, another architecture). */
static int cpu_isa(const char *flags)
{
    if (!has_flag(flags, "sse2"))
        return ISA_UNKNOWN;
    if (has_flag(flags, "avx512f") && has_flag(flags, "avx512bw") &&
        has_flag(flags, "avx512dq") && has_flag(flags, "avx512vl") &&
        has_flag(flags, "avx512cd"))
        return ISA_AVX512;
    if (has_flag(flags, "avx2") && has_flag(flags, "fma"))
        return ISA_AVX2;
    if (has_flag(flags, "avx"))
        return ISA_AVX;
    return has_flag(flags, "sse4_2") ? ISA_SSE42 : ISA_SSE3;
}

/* Whether core type `core` falls short of a CPU with these flags: its
 * kernels need less than the CPU has.  An unknown name or CPU: no. */
static bool core_is_fallback(const char *core, const char *flags)
{
    int need = core_isa(core), have = cpu_isa(flags);
    return need != ISA_UNKNOWN && have != ISA_UNKNOWN && need < have;
}

/* The "flags" line of /proc/cpuinfo, or "". */
static void cpu_flags(char *dst, size_t cap)
{
    static char line[8192];
    FILE *f = fopen("/proc/cpuinfo", "r");
    dst[0] = '\0';
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "flags", 5) == 0 && strchr(line, ':') != NULL) {
            snprintf(dst, cap, "%s", strchr(line, ':') + 2);
            dst[strcspn(dst, "\n")] = '\0';
            break;
        }
    if (f != NULL)
        fclose(f);
}

/* Median GFLOP/s of cblas_sgemm at n^3 on one thread, after a warm-up. */
static double sgemm_gflops(int n, int calls)
{
    size_t nn = (size_t)n * (size_t)n;
    float *x = floats(nn), *y = floats(nn), *z = floats(nn);
    for (size_t i = 0; i < nn; i++) {
        x[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        y[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    }
    mm_ctx c = { NULL, NULL, NULL, x, y, z, n };
    double t[MAX_ROUNDS];
    run_sgemm(&c);
    for (int i = 0; i < calls; i++)
        t[i] = run_sgemm(&c);
    free(x);
    free(y);
    free(z);
    return 2.0 * n * (double)n * n / median(t, calls) / 1e9;
}

/* bench_cpu -P: the core type this process's OpenBLAS runs and its sgemm
 * GFLOP/s, one line (a child of choose_blas_core, with OPENBLAS_CORETYPE
 * set to a candidate). */
static int probe_core(void)
{
    openblas_set_num_threads(1);
    printf("%s %.2f\n", openblas_get_corename(), sgemm_gflops(smoke ? 256 : 1024, 5));
    return 0;
}

/* Run `self -P` with OPENBLAS_CORETYPE=core: the GFLOP/s of that core type,
 * or 0 when OpenBLAS ran another one (its release does not know the name:
 * it is left out). */
static double time_core(const char *self, const char *core)
{
    char cmd[PATH_MAX + 100], got[64] = "";
    snprintf(cmd, sizeof cmd, "OPENBLAS_CORETYPE='%s' '%s' -P%s 2>/dev/null", core, self,
             smoke ? " -s" : "");
    FILE *p = popen(cmd, "r");
    double gflops = 0;
    if (p == NULL || fscanf(p, "%63s %lf", got, &gflops) != 2)
        gflops = 0;
    if (p != NULL)
        pclose(p);
    return strcasecmp(got, core) == 0 ? gflops : 0;
}

/* Make sure OpenBLAS runs kernels that fit this CPU; see the comment at the
 * top of this section.  May run bench_cpu again (execv), with
 * OPENBLAS_CORETYPE set, and BENCH_CPU_BLAS_CHOICE saying why. */
static void choose_blas_core(char **argv)
{
    static char flags[8192];
    cpu_flags(flags, sizeof flags);
    const char *core = openblas_get_corename(), *forced = getenv("OPENBLAS_CORETYPE");
    const char *why = getenv("BENCH_CPU_BLAS_CHOICE");
    int have = cpu_isa(flags), need = core_isa(core);
    blas_fallback = core_is_fallback(core, flags);
    char cpu[100];
    snprintf(cpu, sizeof cpu, "this CPU runs %s (/proc/cpuinfo flags)", isa_names[have]);
    if (why != NULL) {   /* the second run: the first one chose */
        snprintf(blas_choice, sizeof blas_choice, "%s; %s", core, why);
    } else if (forced != NULL && *forced) {
        snprintf(blas_choice, sizeof blas_choice, "%s, as OPENBLAS_CORETYPE=%s says (set "
                 "before bench_cpu started: not chosen by it); its kernels need %s, %s",
                 core, forced, isa_names[need], cpu);
    } else if (!blas_fallback) {
        snprintf(blas_choice, sizeof blas_choice, "%s, OpenBLAS's own choice for this CPU; "
                 "its kernels need %s, %s", core, isa_names[need], cpu);
    } else {
        /* A fallback: time the core types of the CPU's level and of the
         * one below it (above the fallback's), and keep the fastest. */
        char self[PATH_MAX], tried[800] = "", best[32] = "";
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len <= 0)
            die("readlink /proc/self/exe: %s", strerror(errno));
        self[len] = '\0';
        openblas_set_num_threads(1);
        double best_gflops = sgemm_gflops(smoke ? 256 : 1024, 5);
        snprintf(best, sizeof best, "%s", core);
        size_t used = (size_t)snprintf(tried, sizeof tried, "%s %.0f", core, best_gflops);
        for (int i = 0; i < N_BLAS_CORES; i++) {
            if (blas_cores[i].isa > have || blas_cores[i].isa < have - 1 ||
                blas_cores[i].isa <= need ||
                (blas_cores[i].needs != NULL && !has_flag(flags, blas_cores[i].needs)))
                continue;
            double g = time_core(self, blas_cores[i].name);
            if (used < sizeof tried && g > 0)
                used += (size_t)snprintf(tried + used, sizeof tried - used, ", %s %.0f",
                                         blas_cores[i].name, g);
            if (g > best_gflops) {
                best_gflops = g;
                snprintf(best, sizeof best, "%s", blas_cores[i].name);
            }
        }
        if (strcmp(best, core) != 0) {
            char reason[1000];
            snprintf(reason, sizeof reason, "chosen by bench_cpu: OpenBLAS by itself ran %s "
                     "(kernels for %s), a fallback, as %s; sgemm %d^3 on one thread, "
                     "GFLOP/s: %s; the fastest, %s, set as OPENBLAS_CORETYPE for bench_cpu "
                     "and NumPy", core, isa_names[need], cpu, smoke ? 256 : 1024, tried, best);
            setenv("OPENBLAS_CORETYPE", best, 1);
            setenv("BENCH_CPU_BLAS_CHOICE", reason, 1);
            fflush(NULL);
            execv(self, argv);
            die("execv %s: %s", self, strerror(errno));
        }
        snprintf(blas_choice, sizeof blas_choice, "%s, a FALLBACK: its kernels need %s, "
                 "%s, and no core type that fits it was faster (sgemm %d^3 on one thread, "
                 "GFLOP/s: %s)", core, isa_names[need], cpu, smoke ? 256 : 1024, tried);
    }
    if (blas_fallback && strstr(blas_choice, "FALLBACK") == NULL) {
        size_t n = strlen(blas_choice);
        snprintf(blas_choice + n, sizeof blas_choice - n, "; a FALLBACK for this CPU: "
                 "every ratio against OpenBLAS is against slower kernels than it could run");
    }
}

/* bench_cpu -T: the classification above on known cases (make check). */
static int self_test(void)
{
    static const struct {
        const char *core, *flags;
        bool fallback;
    } cases[] = {
        /* Debian 12's OpenBLAS 0.3.21 on a Xeon of model 207 */
        { "Prescott", "fpu sse2 pni ssse3 fma sse4_2 avx avx2 avx512f avx512dq avx512cd "
                      "avx512bw avx512vl avx512_bf16", true },
        { "Cooperlake", "sse2 fma sse4_2 avx avx2 avx512f avx512dq avx512cd avx512bw avx512vl "
                        "avx512_bf16", false },
        { "SkylakeX", "sse2 fma sse4_2 avx avx2 avx512f avx512dq avx512cd avx512bw avx512vl",
          false },
        { "Haswell", "sse2 fma sse4_2 avx avx2 avx512f avx512dq avx512cd avx512bw avx512vl",
          true },
        { "Zen", "sse2 fma sse4_2 avx avx2", false },          /* AMD EPYC, Zen 2 */
        { "Haswell", "sse2 fma sse4_2 avx avx2", false },
        { "Sandybridge", "sse2 fma sse4_2 avx avx2", true },
        { "Haswell", "sse2 sse4_2 avx avx2", false },          /* AVX2 without FMA */
        { "Nehalem", "sse2 sse4_2", false },
        { "Prescott", "sse2 sse4_2", true },
        { "NEOVERSEN1", "fp asimd evtstrm aes pmull sha1 sha2 crc32", false },  /* arm64 */
        { "SomethingNew", "sse2 avx avx2 fma avx512f", false },
        { "Prescott", "sse2 avx512fx avx2x", false },           /* whole flags only */
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool got = core_is_fallback(cases[i].core, cases[i].flags);
        printf("%s  %-12s on a CPU with %-8s: %s\n", got == cases[i].fallback ? "ok  " : "FAIL",
               cases[i].core, isa_names[cpu_isa(cases[i].flags)],
               got ? "a fallback" : "fits (or unknown)");
        bad += got != cases[i].fallback;
    }
    printf("%d of %zu classified right\n", (int)(sizeof cases / sizeof cases[0]) - bad,
           sizeof cases / sizeof cases[0]);
    return bad != 0;
}

/* ---------------------------------------------------------------------- */
/* The machine                                                             */
/* ---------------------------------------------------------------------- */

/* The first line of a file, or "" */
static void first_line(const char *path, char *dst, size_t cap)
{
    FILE *f = fopen(path, "r");
    dst[0] = '\0';
    if (f != NULL && fgets(dst, (int)cap, f) == NULL)
        dst[0] = '\0';
    if (f != NULL)
        fclose(f);
    dst[strcspn(dst, "\n")] = '\0';
}

/* "AMD EPYC (2 cores)", from /proc/cpuinfo. */
static void machine_name(char *dst, size_t cap)
{
    char line[256], model[200] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            snprintf(model, sizeof model, "%s", colon + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    if (f != NULL)
        fclose(f);
    snprintf(dst, cap, "%s (%ld cores)", model, sysconf(_SC_NPROCESSORS_ONLN));
}

/* "L1d 32K, L2 1024K, L3 32768K" from sysfs, and what glibc believes the
 * last-level cache is: its memcpy streams copies above 3/4 of that. */
static void cache_sizes(char *dst, size_t cap)
{
    size_t len = 0;
    for (int i = 0; i < 8 && len < cap; i++) {
        char path[100], level[16], type[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        first_line(path, level, sizeof level);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        first_line(path, type, sizeof type);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        first_line(path, size, sizeof size);
        if (*level && *size && strcmp(type, "Instruction") != 0)
            len += (size_t)snprintf(dst + len, cap - len, "%sL%s%s %s", len ? ", " : "", level,
                                    strcmp(type, "Data") == 0 ? "d" : "", size);
    }
    if (len < cap)
        snprintf(dst + len, cap - len, "%s(sysfs); glibc's L3 (sysconf): %ld KB",
                 len ? " " : "", sysconf(_SC_LEVEL3_CACHE_SIZE) / 1024);
}

static void header(const char *numpy)
{
    const char *method = smoke ? "smoke pass (small shapes, one round): the figures mean nothing"
        : "median of " STR(MIN_ROUNDS) "-" STR(MAX_ROUNDS) " rounds after a warm-up round, "
          "ratios taken within each round; seconds of CPU time of the calling thread "
          "(time spent waiting for a core left out); outputs reuse their memory";
    char machine[300], caches[300], thp[100], load[100], uptime_line[200] = "";
    machine_name(machine, sizeof machine);
    cache_sizes(caches, sizeof caches);
    first_line("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof thp);
    first_line("/proc/loadavg", load, sizeof load);
    FILE *up = popen("uptime", "r");
    if (up != NULL) {
        if (fgets(uptime_line, sizeof uptime_line, up) == NULL)
            uptime_line[0] = '\0';
        uptime_line[strcspn(uptime_line, "\n")] = '\0';
        pclose(up);
    }
    time_t t = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    /* Which OpenBLAS kernels run, and why (choose_blas_core). */
    char blas[300];
    snprintf(blas, sizeof blas, "%s; kernels for %s", openblas_get_config(),
             openblas_get_corename());
    if (tsv != NULL)
        fprintf(tsv, "# machine: %s\n# caches: %s\n# pages: transparent huge pages %s\n"
                "# load before: %s (uptime:%s)\n# date: %s\n# compiler: gcc %s\n"
                "# openblas: %s\n# openblas kernels: %s\n# openblas fallback: %s\n"
                "# numpy: %s\n# method: %s\n",
                machine, caches, thp, load, strchr(uptime_line, ' ') ? strchr(uptime_line, ' ')
                : uptime_line, date, __VERSION__, blas, blas_choice,
                blas_fallback ? "yes" : "no", numpy, method);
    printf("CPU benchmarks on %s, %s\n  caches: %s\n  load: %s\n  OpenBLAS: %s\n"
           "  OpenBLAS kernels: %s\n  NumPy: %s\n  method: %s\n\n", machine, date, caches,
           load, blas, blas_choice, numpy, method);
    if (tsv != NULL)
        fprintf(tsv, "group\tcase\tshape\tseconds\trate\tunit\tratio\tbaseline\ttarget\tverdict"
                "\tvs_numpy\n");
}

int main(int argc, char **argv)
{
    const char *tsv_path = NULL, *filter = "", *numpy_cmd = NULL;
    int opt;
    bool probe = false;
    while ((opt = getopt(argc, argv, "o:f:n:sqPT")) != -1) {
        switch (opt) {
        case 'o': tsv_path = optarg; break;
        case 'f': filter = optarg; break;
        case 'n': numpy_cmd = optarg; break;
        case 's': smoke = true; break;
        case 'q': quiet = true; break;
        case 'P': probe = true; break;
        case 'T': return self_test();
        default:
            fprintf(stderr, "usage: bench_cpu [-o results.tsv] [-f GROUP] [-n NUMPY_COMMAND] "
                    "[-s] [-q]\n       bench_cpu -T\n");
            return 2;
        }
    }
    if (probe)
        return probe_core();
    if (*filter && !strstr("compact steps ewise reduce matmul", filter))
        die("-f %s: no such group (compact, ewise, reduce, matmul)", filter);
    choose_blas_core(argv);   /* may run bench_cpu again, with OPENBLAS_CORETYPE set */
    if (tsv_path != NULL && (tsv = fopen(tsv_path, "w")) == NULL)
        die("cannot write %s: %s", tsv_path, strerror(errno));
    if (numpy_cmd != NULL)
        numpy_start(numpy_cmd);
    const char *numpy = numpy_cmd != NULL ? numpy_ask("info") : "not measured (no -n)";
    /* Both users of OpenBLAS run the same kernels, or NumPy's matmul
     * figures would be about other code. */
    char kernels[100];
    snprintf(kernels, sizeof kernels, "kernels for %s;", openblas_get_corename());
    if (numpy_cmd != NULL && strstr(numpy, "OpenBLAS") != NULL && strstr(numpy, kernels) == NULL)
        die("NumPy's OpenBLAS does not run the kernels bench_cpu's does (%s): %s", kernels,
            numpy);
    header(numpy);
    if (strstr("compact steps", filter))
        bench_compact();
    if (strstr("ewise", filter) || strstr("reduce", filter))
        bench_ewise_reduce(strstr("ewise", filter) != NULL, strstr("reduce", filter) != NULL);
    if (strstr("matmul", filter))
        bench_matmul();
    numpy_stop();
    char load[100];
    first_line("/proc/loadavg", load, sizeof load);
    if (tsv != NULL) {
        fprintf(tsv, "# load after: %s\n", load);
        if (fclose(tsv) != 0)
            die("cannot write %s: %s", tsv_path, strerror(errno));
    }
    printf("\n  load after: %s\n", load);
    return 0;
}
