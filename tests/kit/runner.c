/*
 * runner.c -- the one runner (see runner.h): cases, workers, limits, and
 * what a crash or a timeout means in words.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runner.h"

#include "kit_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *k_result_word(k_result r)
{
    static const char *const w[] = { "pass", "fail", "crash", "timeout", "skipped" };
    return w[r];
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* gcov's runtime, in a coverage build: a worker ends with _exit, which
 * skips the handler that writes the counts. */
void __gcov_dump(void) __attribute__((weak));

/* p, an allocation the runner cannot go on without. */
static void *need(void *p)
{
    if (p == NULL) {
        fprintf(stderr, "runner: out of memory\n");
        exit(2);
    }
    return p;
}

static char *dup_str(const char *s)
{
    return need(strdup(s ? s : ""));
}

/* ---------------------------------------------------------------------- */
/* Cases                                                                  */
/* ---------------------------------------------------------------------- */

int k_count(const k_ctx *k, int n)
{
    return k->test != NULL && k->test->scale > 1 ? n * k->test->scale : n;
}

/* The body of test t: its own, or the public test a K_AGAIN runs again. */
static k_body *body_of(const k_test *t)
{
    for (int i = 0; t->body == NULL && t->from != NULL && i < t->from->ntests; i++)
        if (strcmp(t->from->tests[i].name, t->again) == 0)
            return t->from->tests[i].body;
    return t->body;
}

k_case *k_cases(const k_suite *const *suites, int nsuites, int devices, const char *only,
                const bool *lessons, int *n)
{
    int cap = 0;
    for (int s = 0; s < nsuites; s++)
        cap += 2 * suites[s]->ntests;
    k_case *cases = need(calloc((size_t)(cap > 0 ? cap : 1), sizeof *cases));
    *n = 0;
    for (int s = 0; s < nsuites; s++) {
        const k_suite *su = suites[s];
        for (int t = 0; t < su->ntests; t++) {
            const k_test *te = &su->tests[t];
            int where = te->where & K_BOTH;
            if (body_of(te) == NULL) {
                fprintf(stderr, "runner: %s runs %s again, which is not a test of %s\n",
                        te->name, te->again ? te->again : "(nothing)",
                        te->from ? te->from->name : "any suite");
                exit(2);
            }
            for (int d = 0; d < 2; d++) {
                int bit = d == 0 ? K_CPU : K_CUDA;
                if (where == K_HOST ? d != 0 : !(where & devices & bit))
                    continue;
                k_case *c = &cases[*n];
                c->test = te;
                c->suite = su;
                c->dev = d == 0 ? ND_CPU : ND_CUDA;
                snprintf(c->name, sizeof c->name, where != K_HOST ? "%s[%s]" : "%s", te->name,
                         d == 0 ? "cpu" : "cuda");
                /* [cuda] cases of lessons 2-5 test lesson 6's kernels: they count for it */
                bool moved = d == 1 && su->lesson >= 2 && su->lesson <= 5;
                c->lesson = moved ? 6 : su->lesson;
                if ((only != NULL && strcmp(only, te->name) != 0 && strcmp(only, c->name) != 0) ||
                    (lessons != NULL && !lessons[c->lesson]))
                    continue;
                c->points = te->points;
                c->limit = 60;
                (*n)++;
            }
        }
    }
    return cases;
}

void k_set_limits(k_case *cases, int n, const char *times_path, double factor, double floor)
{
    FILE *f = times_path != NULL ? fopen(times_path, "r") : NULL;
    char line[512];
    for (int i = 0; i < n; i++) {
        cases[i].limit = floor;
        cases[i].short_limit = floor / 4;
    }
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *tab = strchr(line, '\t');
        if (tab == NULL)
            continue;
        *tab = '\0';
        double solution = atof(tab + 1);
        char *tab2 = strchr(tab + 1, '\t');
        double mb = tab2 != NULL ? atof(tab2 + 1) : 0;
        for (int i = 0; i < n; i++)
            if (strcmp(cases[i].name, line) == 0) {
                cases[i].expected = solution;
                cases[i].expected_mb = mb;
                if (solution * factor > floor)
                    cases[i].limit = solution * factor;
                if (3 * solution > floor / 4)
                    cases[i].short_limit = 3 * solution;
            }
    }
    if (f != NULL)
        fclose(f);
}

/* ---------------------------------------------------------------------- */
/* Where the code was when its time ran out                               */
/* ---------------------------------------------------------------------- */

int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* Words of the executor's output that a report may carry when the
 * submission's own words may not (k_quote_messages false: the grader,
 * kit.h): what the code under test prints could imitate a sanitizer's
 * report, so only what matches the runtime's vocabulary passes, and no
 * free text: a lesson file's name and a line number ("at 02_compact.c:57";
 * not the function, whose name a forged line could make up), a kind of
 * error from AddressSanitizer's list, a system call's name.  A forged line
 * can still choose among these: a few bits, never a test's data. */
static bool grader_words_at(const char *file_line, char *dst, size_t cap)
{
    static const char *const files[] = { "01_views.c", "02_compact.c", "03_ewise.c",
                                         "04_reduce.c", "05_matmul.c", "06_cuda.cu",
                                         "07_permute.cu" };
    const char *colon = strchr(file_line, ':');
    size_t n = colon ? (size_t)(colon - file_line) : 0;
    int line = 0, used = 0;
    if (colon == NULL || sscanf(colon + 1, "%6d%n", &line, &used) != 1 || line < 1 ||
        colon[1 + used] != '\0')
        return false;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (strlen(files[i]) == n && strncmp(files[i], file_line, n) == 0) {
            snprintf(dst, cap, "at %s:%d", files[i], line);
            return true;
        }
    return false;
}

static const char *known_word(const char *w, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(w, list[i]) == 0)
            return list[i];
    return NULL;
}

/* AddressSanitizer's kinds of error (its SUMMARY line's first word). */
static const char *const asan_kinds[] = {
    "heap-buffer-overflow", "stack-buffer-overflow", "global-buffer-overflow",
    "dynamic-stack-buffer-overflow", "heap-use-after-free", "stack-use-after-return",
    "stack-use-after-scope", "use-after-poison", "container-overflow", "double-free",
    "bad-free", "alloc-dealloc-mismatch", "new-delete-type-mismatch", "SEGV", "FPE", "ILL",
    "BUS", "stack-overflow", "memcpy-param-overlap", "negative-size-param", "calloc-overflow",
    "reallocarray-overflow", "allocation-size-too-big", "out-of-memory", "unknown-crash",
    "invalid-pointer-pair", "odr-violation", "initialization-order-fiasco", "bad-malloc_usable_size",
};

/* "in nd_iter_next at 02_compact.c:57": the first frame of a stack printed
 * by a sanitizer (#N 0x... in FUNCTION FILE:LINE:COLUMN) that lies in a
 * lesson file, after the line that contains `from`; false if none. */
static bool lesson_frame(const char *output, const char *from, char *dst, size_t cap)
{
    FILE *f = output != NULL ? fopen(output, "r") : NULL;
    char line[2048];
    bool after = from == NULL, found = false;
    while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
        if (!after) {
            after = strstr(line, from) != NULL;
            continue;
        }
        char fn[512], where[1024];
        const char *in = strstr(line, " in ");
        if (strstr(line, "#") == NULL || in == NULL ||
            sscanf(in, " in %511s %1023s", fn, where) != 2)
            continue;
        const char *base = strrchr(where, '/');
        base = base ? base + 1 : where;
        if (base[0] >= '0' && base[0] <= '9' && base[1] >= '0' && base[1] <= '9' &&
            base[2] == '_') {
            char *col = strchr(base, ':') ? strchr(strchr(base, ':') + 1, ':') : NULL;
            if (col != NULL)
                *col = '\0';   /* file:line, without the column */
            if (k_quote_messages)
                snprintf(dst, cap, "in %.200s at %.300s", fn, base);
            else if (!grader_words_at(base, dst, cap))
                continue;   /* not a frame the runtime writes: printed by the code under test */
            found = true;
        }
    }
    if (f != NULL)
        fclose(f);
    return found;
}

/* ---------------------------------------------------------------------- */
/* The worker: one case, in its own process                               */
/* ---------------------------------------------------------------------- */

static k_ctx *current;
static k_result worker_result;      /* K_FAIL unless the executor died */

START_TEST(run_current)
{
    body_of(current->test)(current);
    k_drain(current);
    k_case_end(current);
}
END_TEST

/* The worker's report to the runner: result, CPU seconds of the code under
 * test, line, then "file\0message\0". */
typedef struct {
    int result, line;
    double cpu, exec_peak_mb;
} report_head;

/* Each report is a 4-byte length, then the record; the runner keeps the
 * last whole one (a provisional report stands if the worker dies later). */
static void report(int fd, k_result res, double cpu, const char *file, int line, const char *msg)
{
    report_head h = { (int)res, line, cpu, current != NULL ? current->exec_peak_mb : 0 };
    file = file ? file : "";
    msg = msg ? msg : "";
    uint32_t len = (uint32_t)(sizeof h + strlen(file) + 1 + strlen(msg) + 1);
    struct iovec v[] = { { &len, 4 }, { &h, sizeof h }, { (char *)file, strlen(file) + 1 },
                         { (char *)msg, strlen(msg) + 1 } };
    ssize_t unused = writev(fd, v, 4);
    (void)unused;
}

static int report_fd = -1;

void k_provisional(const char *msg)
{
    if (report_fd >= 0)
        report(report_fd, K_FAIL, 0, NULL, 0, msg);
}

void k_tsv_field(FILE *f, const char *s)
{
    for (; s && *s; s++)
        fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static uint64_t seed_of(const char *name)
{
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ULL;
    return h;
}

static const char *executor_end(k_ctx *k, k_result *res, bool mid_call);

static void run_worker(k_plan *p, k_case *c, int fd)
{
    k_ctx k = { .test = c->test, .dev = c->dev, .rng = seed_of(c->name),
                .where = p->executor != NULL ? K_REMOTE : K_LOCAL,
                .exec_path = p->executor != NULL ? p->executor(c) : NULL,
                .exec_output = c->output, .cpu_limit = c->limit, .exec_pid = -1 };
    current = &k;
    worker_result = K_FAIL;
    report_fd = fd;
    if (k.where == K_LOCAL) {
        /* the code under test runs here: the CPU limit is this process's */
        k_catch_cpu_limit();
        k_limit_cpu(c->limit);
    }
    Suite *s = suite_create(c->suite->name);
    TCase *tc = tcase_create(c->name);
    tcase_add_test(tc, run_current);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_SILENT);
    TestResult **tr = srunner_results(sr);
    TestResult *r = tr[0];
    k_result how = worker_result;
    const char *why = executor_end(&k, &how, false);   /* ended badly after its last call? */
    if ((why != NULL || tr_rtype(r) != CK_PASS) && !k.output_settled)
        k_output_of(&k, NULL);   /* no call to blame: none of its output */
    double cpu = k.where == K_LOCAL ? k_cpu_of(NULL) : k.exec_cpu;
    /* in a sanitizer build, memory the code under test kept is a failure */
    if (tr_rtype(r) == CK_PASS && why == NULL && k.where == K_LOCAL &&
        __lsan_do_recoverable_leak_check != NULL && __lsan_do_recoverable_leak_check() != 0) {
        why = "memory leaked: an array or a temporary your code made was never released "
              "(LeakSanitizer's report, in the test's output, says where it was made)";
        how = K_CRASH;
    }
    if (tr_rtype(r) == CK_PASS)
        report(fd, why == NULL ? K_PASS : how, cpu, NULL, 0, why);
    else
        report(fd, tr_rtype(r) == CK_FAILURE ? worker_result : K_CRASH, cpu, tr_lfile(r),
               tr_lno(r), tr_msg(r));
    free(tr);
    srunner_free(sr);
    if (__gcov_dump != NULL)   /* a coverage build (grader/coverage.sh): keep the counts */
        __gcov_dump();
    _exit(0);
}

/* ---------------------------------------------------------------------- */
/* Remote executors                                                       */
/* ---------------------------------------------------------------------- */

static pid_t plain_launch(const char *path, int calls, int results, const char *output,
                          double cpu_seconds)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int out = open(output ? output : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || dup2(calls, 0) < 0 || dup2(results, 3) < 0 || dup2(out, 1) < 0 ||
        dup2(out, 2) < 0)
        _exit(126);
    for (int fd = 4; fd < 1024; fd++)
        close(fd);
    k_limit_cpu(cpu_seconds);
    if (path == NULL)   /* an executor in this program (run_tests' CUDA probe) */
        _exit(k_serve(0, 3, k_local));
    execl(path, path, (char *)NULL);
    _exit(127);
}

k_launcher *k_launch = plain_launch;

static int plain_reap(pid_t pid, int *status, double *cpu, double *peak_mb, char *why,
                      size_t cap)
{
    struct rusage ru;
    (void)why;
    (void)cap;
    pid_t w;
    while ((w = wait4(pid, status, 0, &ru)) < 0 && errno == EINTR)
        ;
    *cpu = k_cpu_of(&ru);
    *peak_mb = (double)ru.ru_maxrss / 1024;
    return w == pid ? 0 : -1;
}

k_reaper *k_reap = plain_reap;

/* Start k's executor: NULL, or why it could not. */
static const char *start_executor(k_ctx *k)
{
    static char err[600];
    int calls[2], results[2];
    if (pipe2(calls, O_CLOEXEC) != 0 || pipe2(results, O_CLOEXEC) != 0) {
        snprintf(err, sizeof err, "cannot make pipes: %s", strerror(errno));
        return err;
    }
    k_wire_reset();
    k->exec_pid = k_launch(k->exec_path, calls[0], results[1], k->exec_output, k->cpu_limit);
    close(calls[0]);
    close(results[1]);
    k->to_exec = calls[1];
    k->from_exec = results[0];
    if (k->exec_pid < 0) {
        close(k->to_exec);
        close(k->from_exec);
        snprintf(err, sizeof err, "cannot start the executor %.500s",
                 k->exec_path ? k->exec_path : "(a fork of this program)");
        return err;
    }
    /* calls go out ahead of their results (check.c): a full pipe must not
     * block while the executor waits for its results to be read */
    fcntl(k->to_exec, F_SETFL, fcntl(k->to_exec, F_GETFL) | O_NONBLOCK);
    signal(SIGPIPE, SIG_IGN);
    return NULL;
}

/* The first line of the captured output that contains `needle`. */
static bool find_line(const char *path, const char *needle, char *dst, size_t cap)
{
    FILE *f = path != NULL ? fopen(path, "r") : NULL;
    char line[1024];
    bool found = false;
    while (f != NULL && !found && fgets(line, sizeof line, f) != NULL)
        if (strstr(line, needle) != NULL) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(dst, cap, "%s", line);
            found = true;
        }
    if (f != NULL)
        fclose(f);
    return found;
}

/* A sanitizer's report in the output, as one line, or NULL. */
static const char *sanitizer_line(const char *output, char *dst, size_t cap)
{
    char line[1024], frame[1200];
    if (find_line(output, "SUMMARY: AddressSanitizer: ", line, sizeof line)) {
        char kind[128] = "", where[512] = "", fn[256] = "";
        sscanf(strstr(line, "SUMMARY: ") + 9, "AddressSanitizer: %127s %511s in %255s", kind,
               where, fn);
        const char *base = strrchr(where, '/');
        if (!k_quote_messages) {
            const char *k = known_word(kind, asan_kinds, sizeof asan_kinds / sizeof *asan_kinds);
            bool at = lesson_frame(output, "ERROR: AddressSanitizer", frame, sizeof frame);
            snprintf(dst, cap, "%s%s%s (AddressSanitizer)", k ? k : "a memory error",
                     at ? " " : "", at ? frame : "");
            return dst;
        }
        if (lesson_frame(output, "ERROR: AddressSanitizer", frame, sizeof frame))
            snprintf(dst, cap, "%.100s %.900s (AddressSanitizer)", kind, frame);
        else
            snprintf(dst, cap, "%s in %s at %s (AddressSanitizer)", kind, fn[0] ? fn : "?",
                     base ? base + 1 : where);
        return dst;
    }
    if (find_line(output, ": runtime error: ", line, sizeof line)) {
        char *what = strstr(line, ": runtime error: ");
        *what = '\0';
        const char *base = strrchr(line, '/');
        base = base ? base + 1 : line;
        if (!k_quote_messages) {   /* the kind of undefined behaviour, from UBSan's list */
            static const char *const kinds[] = {
                "signed integer overflow", "unsigned integer overflow", "division by zero",
                "shift exponent", "left shift of", "load of misaligned address",
                "store to misaligned address", "member access within misaligned address",
                "load of null pointer", "store to null pointer",
                "member access within null pointer", "applying non-zero offset",
                "applying zero offset to null pointer", "pointer index expression",
                "addition of unsigned offset", "subtraction of unsigned offset", "index",
                "load of value", "negation of", "null pointer passed as argument",
                "variable length array bound", "execution reached an unreachable program point",
                "execution reached the end of a value-returning function", "implicit conversion",
                "call to function", "reference binding to null pointer",
                "member call on null pointer", "nan is outside the range",
                "is outside the range of representable values", "passing zero to",
            };
            const char *t = what + strlen(": runtime error: "), *kind = "";
            char at[400];
            for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
                if (strncmp(t, kinds[i], strlen(kinds[i])) == 0 && strlen(kinds[i]) > strlen(kind))
                    kind = kinds[i];
            char *col = strchr(base, ':') ? strchr(strchr(base, ':') + 1, ':') : NULL;
            if (col != NULL)
                *col = '\0';
            bool known = grader_words_at(base, at, sizeof at);
            snprintf(dst, cap, "undefined behaviour%s%s%s%s (UBSan)", known ? " " : "",
                     known ? at : "", kind[0] ? ": " : "", kind);
            return dst;
        }
        snprintf(dst, cap, "undefined behaviour at %s: %s (UBSan)", base,
                 what + strlen(": runtime error: "));
        return dst;
    }
    int limit = 0, held = 0;
    if (find_line(output, "hard rss limit exhausted (", line, sizeof line) &&
        sscanf(strstr(line, "exhausted (") + 11, "%dMb vs %dMb", &limit, &held) == 2) {
        snprintf(dst, cap, "stopped: it held %d MB of memory, more than the %d MB a test may "
                 "(AddressSanitizer's limit)", held, limit);
        return dst;
    }
    if (find_line(output, "LeakSanitizer: detected memory leaks", line, sizeof line)) {
        snprintf(dst, cap, "memory leaked (LeakSanitizer)");
        return dst;
    }
    return NULL;
}

/* How a process ended, in words a student can act on: from its wait status
 * and CPU seconds, or from what its launcher said (`said`, "" if nothing:
 * the sandbox names what killed it), and from its output (a sanitizer's
 * report, the stack at the CPU limit). */
static const char *ending(int status, const char *said, double cpu, double limit,
                          const char *output, k_result *res, char *dst, size_t cap)
{
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    bool out_of_cpu = said[0] != '\0' ? strstr(said, "CPU") != NULL
                      : sig == SIGXCPU || sig == SIGPROF || (sig == SIGKILL && cpu >= limit);
    char at[1300] = "", frame[1200], line[600];
    /* Its own timer went off at the limit, and the report of where failed
     * (a sanitizer that could not map memory for the stack, past the
     * address-space limit, exits 1): a timeout all the same.  Measured
     * from outside, such a death has been seen at 85-92% of the limit on a
     * crowded machine; a process that prints the line itself, far from
     * its limit, is still a crash. */
    if (!out_of_cpu && said[0] == '\0' && !(WIFEXITED(status) && WEXITSTATUS(status) == 0) &&
        sig != SIGSYS && cpu >= 0.75 * limit &&
        find_line(output, "The CPU time limit was reached here", line, sizeof line))
        out_of_cpu = true;
    if (out_of_cpu &&
        lesson_frame(output, "The CPU time limit was reached here", frame, sizeof frame))
        snprintf(at, sizeof at, ", %s?", frame);   /* where it was looping */
    *res = out_of_cpu ? K_TIMEOUT : K_CRASH;
    if (sanitizer_line(output, dst, cap) != NULL) {
        *res = K_CRASH;
    } else if (said[0] != '\0') {
        snprintf(dst, cap, "%s%s", said, at);
    } else if (out_of_cpu) {
        snprintf(dst, cap, "stopped after %.1f s of CPU time, its limit: an endless loop, "
                 "or far too slow%s", cpu > limit ? cpu : limit, at);
    } else if (WIFEXITED(status)) {
        snprintf(dst, cap, "the process ended (exit status %d) in the middle of the test: "
                 "lesson code must return, never call exit()", WEXITSTATUS(status));
    } else if (sig == SIGSYS && find_line(output, "forbidden system call", line, sizeof line)) {
        /* (the sandbox's line names the call; the grader does not relay it:
         * the code under test could have printed its own) */
        snprintf(dst, cap, "stopped by the sandbox: %s (tests may not fork, exec, signal or "
                 "trace other processes, or use the network)",
                 k_quote_messages ? line : "a forbidden system call");
    } else {
        const char *what = sig == SIGSEGV || sig == SIGBUS
                               ? "a read or write through a bad pointer or outside an array"
                           : sig == SIGABRT ? "abort(): a failed assert, or a corrupted heap"
                           : sig == SIGFPE ? "an integer division by zero"
                           : sig == SIGSYS ? "a system call tests may not make"
                           : sig == SIGXFSZ ? "it printed more than a test may (its output "
                                              "reached the size limit of its file)"
                                           : "a signal";
        snprintf(dst, cap, "crashed: %s (signal %d, %s)", what, sig, strsignal(sig));
    }
    return dst;
}

/* End k's executor (its input closed, what it still sends read) and say
 * how it ended: NULL if it exited cleanly and was not answering a call
 * (mid_call), else in words, with *res the result they mean.  Its CPU
 * seconds go to k->exec_cpu. */
static const char *executor_end(k_ctx *k, k_result *res, bool mid_call)
{
    static char why[1500];
    if (k->exec_pid <= 0)
        return NULL;
    close(k->to_exec);
    /* the executor exits at the end of its input; drain what it still says */
    char junk[4096];
    bool extra = k_wire_take(k->from_exec, junk, sizeof junk) > 0;
    ssize_t r;
    while ((r = read(k->from_exec, junk, sizeof junk)) > 0)
        extra = true;
    close(k->from_exec);
    int status = 0;
    char said[600] = "";
    double peak = 0;
    k_reap(k->exec_pid, &status, &k->exec_cpu, &peak, said, sizeof said);
    if (peak > k->exec_peak_mb)
        k->exec_peak_mb = peak;
    k->exec_pid = -1;
    if (extra) {
        *res = K_FAIL;
        return "the process sent results nobody asked for";
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !mid_call)
        return NULL;
    return ending(status, said, k->exec_cpu, k->cpu_limit, k->exec_output, res, why, sizeof why);
}

/* Why k's executor did not answer a call (err, the wire's words): how it
 * ended, if it did.  It is ended either way; *res: what that means. */
static const char *exec_error(k_ctx *k, const char *err, k_result *res)
{
    bool ended = strncmp(err, "the process ended", strlen("the process ended")) == 0;
    const char *why = executor_end(k, res, ended);
    return ended && why != NULL ? why : err;
}

void (*k_local)(const k_call *c, k_res *r);

void k_exec_failed(k_ctx *k, const k_call *c, const char *err)
{
    char call[1500];
    k_describe(c, call, sizeof call);
    worker_result = K_FAIL;
    char why[1600];
    snprintf(why, sizeof why, "%s", exec_error(k, err, &worker_result));
    /* c alone again (check.c), unless that would cost a whole limit again */
    k_output_of(k, worker_result == K_TIMEOUT || strstr(why, "wall-clock") ? NULL : c);
    k_fail("%s: %s", call, why);
}

uint32_t k_send(k_ctx *k, const k_call *c)
{
    const char *err = k->exec_pid < 0 ? start_executor(k) : NULL;
    if (err != NULL)
        k_fail("test setup: %s", err);
    return k_write_call(k->to_exec, c);
}

void k_receive(k_ctx *k, const k_call *c, uint32_t seq, k_res *r)
{
    const char *err = k_read_res(k->from_exec, c, seq, r);
    if (err != NULL)
        k_exec_failed(k, c, err);
}

void k_abandon(k_ctx *k)
{
    if (k->exec_pid <= 0)
        return;
    close(k->to_exec);
    close(k->from_exec);   /* its next result fails to go out: it ends */
    int status;
    double cpu;
    char said[600];
    double peak = 0;
    k_reap(k->exec_pid, &status, &cpu, &peak, said, sizeof said);
    if (peak > k->exec_peak_mb)
        k->exec_peak_mb = peak;
    k->exec_pid = -1;
}

const char *k_restart(k_ctx *k)
{
    k_abandon(k);
    return start_executor(k);
}

void k_dispatch(k_ctx *k, const k_call *c, k_res *r)
{
    if (k->where == K_LOCAL) {
        if (k_local == NULL)
            k_fail("test setup: no executor in this process");
        k_local(c, r);
        return;
    }
    uint32_t seq = k_send(k, c);
    if (seq == 0)
        k_exec_failed(k, c, "the process ended");
    k_receive(k, c, seq, r);
}

bool k_probe_cuda(const char *executor, char *name, size_t cap)
{
    k_ctx k = { .exec_path = executor, .exec_pid = -1, .cpu_limit = 60 };
    k_call c = { .op = K_DEVICE, .dev = ND_CUDA, .out = K_OUT_NEW };
    k_res r = { 0 };
    k_result res;
    void (*sigpipe)(int) = signal(SIGPIPE, SIG_IGN);   /* start_executor ignores it */
    const char *err = start_executor(&k);
    if (err == NULL) {
        uint32_t seq = k_write_call(k.to_exec, &c);
        err = seq != 0 ? k_read_res(k.from_exec, &c, seq, &r) : "the process ended";
        if (err != NULL)
            err = exec_error(&k, err, &res);
        else
            k_abandon(&k);   /* how it ends after answering is no matter */
    }
    signal(SIGPIPE, sigpipe);
    snprintf(name, cap, "%s", err != NULL ? err : r.msg);
    bool ok = err == NULL && r.status == ND_OK;
    k_res_free(&r);
    return ok;
}

/* ---------------------------------------------------------------------- */
/* The runner: several workers at once                                    */
/* ---------------------------------------------------------------------- */

typedef struct {
    k_case *c;
    pid_t pid;
    int fd;
    double start;
    double waited;     /* seconds its processes waited for a CPU (not counted) */
    double stopping;   /* when the backstop signalled it (0: not yet) */
    char state[160];   /* what the kernel said it was doing then */
    char *buf;
    size_t len, cap;
} slot;

/* Seconds that the threads of pid, and of its descendants, have spent
 * ready to run but waiting for a CPU: the second field of
 * /proc/PID/task/TID/schedstat (nanoseconds; 0 where the kernel has no
 * schedstat).  A busy machine's delay, not time the test used or slept. */
static double waited_for_cpu(pid_t pid, int depth)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return 0;
    double sum = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%.20s/schedstat", (int)pid, e->d_name);
        unsigned long long ran, waited;
        FILE *f = fopen(path, "r");
        if (f != NULL && fscanf(f, "%llu %llu", &ran, &waited) == 2)
            sum += 1e-9 * (double)waited;
        if (f != NULL)
            fclose(f);
        snprintf(path, sizeof path, "/proc/%d/task/%.20s/children", (int)pid, e->d_name);
        f = depth < 8 ? fopen(path, "r") : NULL;
        int child;
        while (f != NULL && fscanf(f, "%d", &child) == 1)
            sum += waited_for_cpu((pid_t)child, depth + 1);
        if (f != NULL)
            fclose(f);
    }
    closedir(d);
    return sum;
}

/* What the kernel says pid is doing, in words: "asleep (S) in the kernel's
 * do_nanosleep"; "" if it cannot be read. */
static void process_state(pid_t pid, char *dst, size_t cap)
{
    char path[64], stat[512] = "", wchan[64] = "";
    dst[0] = '\0';
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(stat, 1, sizeof stat - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    stat[n] = '\0';
    const char *paren = strrchr(stat, ')');   /* "pid (comm) S ..." */
    if (paren == NULL || paren[1] != ' ')
        return;
    char st = paren[2];
    snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
    f = fopen(path, "r");
    n = f != NULL ? fread(wchan, 1, sizeof wchan - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    wchan[n] = '\0';
    const char *what = st == 'S'   ? "asleep or waiting"
                       : st == 'D' ? "waiting for the disk or the kernel"
                       : st == 'R' ? "running"
                       : st == 'T' || st == 't' ? "stopped (a debugger or a signal)"
                                    : "in kernel state";
    if (wchan[0] != '\0' && strcmp(wchan, "0") != 0)
        snprintf(dst, cap, "%s (state %c, in the kernel's %s)", what, st, wchan);
    else
        snprintf(dst, cap, "%s (state %c)", what, st);
}

/* Read what the worker has sent; false at the end of its pipe. */
static bool read_more(slot *s)
{
    if (s->len == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 4096;
        s->buf = need(realloc(s->buf, s->cap));
    }
    ssize_t r = read(s->fd, s->buf + s->len, s->cap - s->len);
    if (r > 0)
        s->len += (size_t)r;
    return r > 0;
}

static void take_report(slot *s, int status, const struct rusage *ru, k_plan *p)
{
    k_case *c = s->c;
    double cpu_self = k_cpu_of(ru);
    c->peak_mb = (double)ru->ru_maxrss / 1024;   /* the worker's, then its executors' */
    const char *last = NULL;
    size_t last_len = 0;
    for (size_t at = 0; at + 4 <= s->len;) {   /* the last whole record */
        uint32_t len;
        memcpy(&len, s->buf + at, 4);
        if (len > s->len - at - 4)
            break;
        last = s->buf + at + 4;
        last_len = len;
        at += 4 + len;
    }
    bool died = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (last != NULL && last_len > sizeof(report_head) && last[last_len - 1] == '\0') {
        report_head h;
        memcpy(&h, last, sizeof h);
        const char *file = last + sizeof h;
        size_t lf = strnlen(file, last_len - sizeof h);
        const char *msg = lf + 1 < last_len - sizeof h ? file + lf + 1 : "";
        if (h.result >= K_PASS && h.result <= K_TIMEOUT) {
            c->peak_mb += h.exec_peak_mb;
            c->result = (k_result)h.result;
            c->cpu = died ? cpu_self : h.cpu;
            c->file = file[0] ? dup_str(file) : NULL;
            c->line = h.line;
            c->msg = dup_str(msg);
            return;
        }
    }
    /* the worker died: in a local run, with the code under test */
    char why[1500];
    c->cpu = cpu_self;
    ending(status, "", cpu_self, c->limit, p->executor != NULL ? NULL : c->output, &c->result,
           why, sizeof why);
    c->msg = dup_str(why);
}

static void start(k_plan *p, slot *s, k_case *c, int index)
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) {
        perror("runner: pipe");
        exit(2);
    }
    memset(s, 0, sizeof *s);
    s->c = c;
    s->start = now();
    char output[4096];
    snprintf(output, sizeof output, "%s/%d.out", p->outdir, index);
    c->output = dup_str(output);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("runner: fork");
        exit(2);
    }
    if (pid == 0) {
        setpgid(0, 0);
        close(fd[0]);
        if (p->executor == NULL && !p->output_here) {   /* the code under test prints here */
            int out = open(c->output, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (out >= 0) {
                dup2(out, 1);
                dup2(out, 2);
                close(out);
            }
        }
        run_worker(p, c, fd[1]);
    }
    close(fd[1]);
    s->pid = pid;
    s->fd = fd[0];
}

/* Longest first (then in declaration order): a long case started last
 * would leave the other workers idle while it runs alone. */
static const k_case *order_base;
static int by_expected(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    double ei = order_base[i].expected, ej = order_base[j].expected;
    return ei > ej ? -1 : ei < ej ? 1 : (i > j) - (i < j);
}

/* The running plan's workers and order, static: a worker's leak check
 * (LeakSanitizer) then finds them reachable, not leaked by the test. */
static slot *slots;
static struct pollfd *pf;
static int *order;

void k_run_plan(k_plan *p)
{
    int jobs = p->jobs > 0 ? p->jobs : 1, total = 0, next = 0, done = 0, running = 0;
    slots = need(calloc((size_t)jobs, sizeof *slots));
    pf = need(calloc((size_t)jobs, sizeof *pf));
    order = need(malloc((size_t)(p->n > 0 ? p->n : 1) * sizeof *order));
    for (int i = 0; i < p->n; i++)
        if (p->cases[i].skip)
            p->cases[i].result = K_SKIPPED;
        else
            order[total++] = i;
    order_base = p->cases;
    qsort(order, (size_t)total, sizeof *order, by_expected);
    double timed_out = 0, mem_running = 0;
    for (;;) {
        for (; running < jobs && next < total; next++, running++) {
            k_case *c = &p->cases[order[next]];
            /* the memory the running cases are expected to hold: a case
             * that would take them past the budget waits (alone, it runs) */
            if (running > 0 && p->mem_budget_mb > 0 &&
                mem_running + c->expected_mb > p->mem_budget_mb)
                break;
            mem_running += c->expected_mb;
            if (timed_out > K_TIMEOUT_BUDGET && c->short_limit > 0 && c->short_limit < c->limit)
                c->limit = c->short_limit;
            int j = 0;
            while (slots[j].c != NULL)   /* there is a free one: fewer than jobs run */
                j++;
            start(p, &slots[j], c, order[next]);
            if (p->progress)
                p->progress(c, done, total, true);
        }
        if (running == 0)
            break;
        for (int j = 0; j < jobs; j++)   /* poll skips a negative fd (a free slot's) */
            pf[j] = (struct pollfd){ .fd = slots[j].c ? slots[j].fd : -1, .events = POLLIN };
        poll(pf, (nfds_t)jobs, 1000);
        for (int j = 0; j < jobs; j++) {
            slot *s = &slots[j];
            if ((pf[j].revents & (POLLIN | POLLHUP | POLLERR)) && !read_more(s)) {
                close(s->fd);
                s->fd = -1;
            }
            if (s->c == NULL)
                continue;
            /* the backstop counts the seconds it could run: time spent
             * waiting for a CPU on a busy machine is not counted */
            double backstop = K_WALL_LIMIT_GRACE(s->c->limit, p->wall_grace > 0 ? p->wall_grace
                                                                                : K_WALL_GRACE);
            if (s->fd >= 0 && s->stopping == 0 && now() - s->start > backstop) {
                double w = waited_for_cpu(s->pid, 0);
                s->waited = w > s->waited ? w : s->waited;
                if (now() - s->start - s->waited > backstop) {
                    if (p->executor == NULL)   /* (else the worker's state, not the code's) */
                        process_state(s->pid, s->state, sizeof s->state);
                    s->stopping = now();   /* its stack first, then SIGKILL */
                    kill(-s->pid, K_STACK_SIGNAL);
                    kill(s->pid, K_STACK_SIGNAL);
                }
            } else if (s->fd >= 0 && s->stopping > 0 && now() - s->stopping > K_STACK_WAIT) {
                kill(-s->pid, SIGKILL);
                kill(s->pid, SIGKILL);
            }
            int status;
            struct rusage ru;
            pid_t w = s->fd < 0 ? wait4(s->pid, &status, 0, &ru)
                                : wait4(s->pid, &status, WNOHANG, &ru);
            if (w != s->pid)
                continue;
            kill(-s->pid, SIGKILL);   /* anything the test left running */
            if (s->fd >= 0) {          /* ended without closing: read the rest */
                while (read_more(s))
                    ;
                close(s->fd);
            }
            bool walled = s->stopping > 0;
            take_report(s, status, &ru, p);
            if (walled && s->c->result != K_PASS) {
                free(s->c->msg);
                char m[1800], at[1300] = "";
                if (lesson_frame(s->c->output, K_BACKSTOP_LINE, at + 2, sizeof at - 2))
                    memcpy(at, ", ", 2);   /* ", in f at 01_views.c:42" */
                snprintf(m, sizeof m, K_BACKSTOP_WORDS ": no result after %.0f s of wall-clock "
                         "time (%.0f s more it spent waiting for a CPU, not counted) with %.1f s "
                         "of CPU used, its CPU limit %.1f s: it was %s%s",
                         s->stopping - s->start - s->waited, s->waited, s->c->cpu, s->c->limit,
                         s->state[0] ? s->state : "not using the CPU", at);
                s->c->msg = dup_str(m);
                s->c->result = K_TIMEOUT;
                if (k_output_alone && p->executor != NULL && truncate(s->c->output, 0) != 0) {
                    /* none of its output (k_output_of) */
                }
            }
            if (s->c->result == K_TIMEOUT)
                timed_out += s->c->cpu > s->c->limit ? s->c->cpu : s->c->limit;
            done++;
            mem_running -= s->c->expected_mb;
            if (p->progress)
                p->progress(s->c, done, total, false);
            free(s->buf);
            s->c = NULL;
            running--;
        }
    }
    free(slots);
    free(pf);
    free(order);
}
