/*
 * runner.c -- runs the hidden tests against one build of a submission.
 *
 *   runner -o results.tsv -d OUTDIR [-l LESSON]... [-t TEST] [-a]
 *          [-s SECONDS] [-T times.tsv -m FACTOR] [-k plain-results.tsv]
 *          [-c device.txt] [-g]
 *
 * Tests run on the CPU and on the CUDA device (a GPU, or the emulator the
 * tree was built with); -c writes the CUDA device's name there ("emulator",
 * a GPU's name, or "unusable"). *
 * Timeouts: -s SECONDS for every test, or, with -T, FACTOR times the
 * seconds the solution took for that test (times.tsv: test, seconds, as
 * a calibration run writes it), but never less than -s.  -k skips the
 * tests that did not pass in an earlier run (the plain build): they have
 * already failed, and a sanitizer build would only take longer to say so.
 *
 * Every test runs alone, in a child forked by Check, and before the test
 * starts the child closes itself in:
 *   - stdout and stderr go to OUTDIR/<n>.out (the report quotes a capped
 *     piece of it; nothing printed there can change a score);
 *   - resource limits: CPU seconds, file size (1 MB; writes past it fail),
 *     address space (not with -a: AddressSanitizer reserves terabytes of
 *     virtual memory, and bounds its allocations itself), no core files;
 *   - the sandbox's lock-down (sb_lockdown, grader/sandbox.c): an
 *     allow-list seccomp filter; no fork, no exec, signals only to itself
 *     (-g: the GPU policy, which the CUDA runtime needs).
 * The runner itself runs inside the sandbox (grade.sh: bubblewrap, an
 * unprivileged uid).  Check kills a child that outlives the timeout, whole
 * process group (the filter forbids setpgid and setsid).
 *
 * The result of each test comes from Check (the test's own assertions,
 * or the signal or exit that ended the child), never from what the code
 * under test prints.  One TSV line per test:
 *   lesson  test  points  result  seconds  message  hint  output-file
 * result is pass, fail, crash, timeout or skipped.  The runner writes the file
 * itself after the children have exited.
 */
#include "grader.h"
#include "sandbox.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The hidden suites, in lesson order. */
Suite *hidden_01_views(void);
Suite *hidden_02_compact(void);
Suite *hidden_03_ewise(void);
Suite *hidden_04_reduce(void);
Suite *hidden_05_matmul(void);
Suite *hidden_06_cuda(void);
Suite *hidden_07_permute(void);

static const struct {
    int lesson;
    Suite *(*make)(void);
} suites[] = {
    { 1, hidden_01_views },
    { 2, hidden_02_compact },
    { 3, hidden_03_ewise },
    { 4, hidden_04_reduce },
    { 5, hidden_05_matmul },
    { 6, hidden_06_cuda },
    { 7, hidden_07_permute },
};
#define NSUITES (int)(sizeof suites / sizeof suites[0])

/* ---------------------------------------------------------------------- */
/* Registration                                                           */
/* ---------------------------------------------------------------------- */

/* What the runner knows of each test case it registered. */
typedef struct {
    char name[160];       /* "slice_random[cpu]": also the TCase's name */
    int lesson;
    double points;
    const char *hint;
    nd_device dev;
    bool plain_only;      /* not run in the sanitizer build (G_PLAIN) */
    double timeout;       /* seconds */
    double solution;      /* seconds the solution took, or -1 if unknown */
    bool skip;            /* failed in the run given by -k */
    TCase *tc;
} test_info;

#define MAX_TESTS 2048
static test_info tests[MAX_TESTS];
static int ntests;
static int suite_lesson;          /* the lesson of the suite being made */
static const char *only_test;     /* -t */
static bool asan_build;           /* -a */
static bool gpu_policy;           /* -g: the sandbox's GPU policy (CUDA runtime) */

static const struct {
    const char *name;
    nd_device dev;
} devices[] = {
    { "cpu", ND_CPU },
    { "cuda", ND_CUDA },
};
#define NDEVICES (int)(sizeof devices / sizeof devices[0])

/* The [cuda] cases of lessons 2-5 test lesson 6's kernels: they count for
 * lesson 6, each worth this share of its points (the [cpu] case keeps
 * its lesson's points in full). */
#define CUDA_LESSON 6
#define CUDA_SHARE 0.25

/* The CUDA device, as a forked child found it before any test ran (the
 * parent never starts CUDA: a CUDA context does not survive a fork).
 * When it is unusable every [cuda] case fails at once, with the reason. */
static bool cuda_ok;
static char cuda_name[800], cuda_why[800];

static void probe_cuda(void)
{
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(cuda_why, sizeof cuda_why, "cannot make a pipe to probe the CUDA device");
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        const char *name = NULL;
        char line[800];
        int n = nd_device_available(ND_CUDA, &name) == ND_OK
                    ? snprintf(line, sizeof line, "ok %s", name)
                    : snprintf(line, sizeof line, "no %s", nd_last_error());
        ssize_t w = write(fd[1], line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        _exit(w > 0 ? 0 : 1);
    }
    close(fd[1]);
    char line[800] = "";
    ssize_t got = 0, r;
    while (pid > 0 && got < (ssize_t)sizeof line - 1 &&
           (r = read(fd[0], line + got, sizeof line - 1 - (size_t)got)) > 0)
        got += r;
    line[got] = '\0';
    close(fd[0]);
    int status = 0;
    if (pid > 0)
        waitpid(pid, &status, 0);
    if (strncmp(line, "ok ", 3) == 0) {
        cuda_ok = true;
        snprintf(cuda_name, sizeof cuda_name, "%s", line + 3);
    } else if (strncmp(line, "no ", 3) == 0) {
        snprintf(cuda_why, sizeof cuda_why, "%s", line + 3);
    } else {
        snprintf(cuda_why, sizeof cuda_why, "the probe %s",
                 pid < 0 ? "could not fork" : WIFSIGNALED(status) ? "crashed" : "failed");
    }
}

Suite *g_suite(int lesson, const char *name)
{
    suite_lesson = lesson;
    return suite_create(name);
}

/* The child's setup, defined below; it reads `current`. */
static void child_setup(void);
static double min_timeout = 10, timeout_factor = 20;

/* A submission that loops in a function many tests call would cost every
 * one of them its whole timeout.  Once timeouts have taken this many
 * seconds of a run, the tests left get SHORT_FACTOR times the solution's
 * time (at least a quarter of the minimum) instead: a grade stays within minutes,
 * and only a submission already caught looping gets less slack. */
#define TIMEOUT_BUDGET 10.0
#define SHORT_FACTOR 3.0

/* Seconds the solution took per test (-T); whether a test passed in the
 * plain build (-k: 1 passed, 0 did not). */
typedef struct {
    char name[160];
    double value;
} named_value;

#define MAX_KNOWN 4096
static named_value times[MAX_KNOWN], skips[MAX_KNOWN];
static int ntimes, nskips;

static double lookup(const char *name, const named_value *t, int n, double missing)
{
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0)
            return t[i].value;
    return missing;
}

void g_add(Suite *s, const char *fn_name, const TTest *fn, double points, const char *hint,
           int flags)
{
    int first = flags & G_DEVICES ? 0 : flags & G_CUDA ? 1 : 0;
    int last = flags & (G_DEVICES | G_CUDA) ? 1 : 0;
    /* Lessons 2-5 run on both devices, each case with the lesson's points
     * (the [cuda] one for lesson 6, at CUDA_SHARE); lessons 6 and 7 split
     * a test's points between their devices; lesson 1 is views without
     * data movement: the CPU alone. */
    bool moved = suite_lesson >= 2 && suite_lesson <= 5;
    if (suite_lesson == 1 || flags & G_CPU)
        last = 0;
    for (int d = first; d <= last; d++) {
        if (ntests == MAX_TESTS) {
            fprintf(stderr, "runner: more than %d hidden tests\n", MAX_TESTS);
            exit(2);
        }
        test_info *t = &tests[ntests];
        snprintf(t->name, sizeof t->name, flags & (G_DEVICES | G_CUDA) ? "%s[%s]" : "%s",
                 fn_name, devices[d].name);
        if (only_test != NULL && strcmp(only_test, fn_name) != 0 &&
            strcmp(only_test, t->name) != 0)
            continue;
        t->lesson = moved && d == 1 ? CUDA_LESSON : suite_lesson;
        t->points = moved ? (d == 1 ? points * CUDA_SHARE : points)
                          : points / (last - first + 1);
        t->hint = hint;
        t->dev = devices[d].dev;
        /* the emulator under the sanitizers is slow: lesson 6's own tests
         * run there, the [cuda] cases of lessons 2-5 in the plain build */
        t->plain_only = (flags & G_PLAIN) != 0 || (moved && d == 1);
        t->solution = lookup(t->name, times, ntimes, -1);
        t->timeout = t->solution < 0 ? min_timeout : t->solution * timeout_factor;
        if (t->timeout < min_timeout)
            t->timeout = min_timeout;
        t->skip = nskips > 0 && lookup(t->name, skips, nskips, 0) == 0;
        ntests++;
        TCase *tc = t->tc = tcase_create(t->name);
        tcase_add_checked_fixture(tc, child_setup, NULL);
        tcase_set_timeout(tc, t->timeout);
        tcase_add_test(tc, fn);
        suite_add_tcase(s, tc);
    }
}

/* ---------------------------------------------------------------------- */
/* The child: limits before the test                                      */
/* ---------------------------------------------------------------------- */

static test_info *current;        /* set by the parent before each fork */
static char current_out[4096];

#define OUTPUT_LIMIT (1 << 20)                  /* bytes a test may write */
#define MEMORY_LIMIT ((rlim_t)2 << 30)          /* bytes of address space */

static void limit(int resource, rlim_t value)
{
    struct rlimit r = { value, value };
    setrlimit(resource, &r);
}

static void child_setup(void)
{
    T_DEV = current->dev;
    int fd = open(current_out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGXFSZ, SIG_IGN);   /* a write past the limit fails, it does not kill */
    limit(RLIMIT_FSIZE, OUTPUT_LIMIT);
    limit(RLIMIT_CPU, (rlim_t)current->timeout + 2);
    limit(RLIMIT_CORE, 0);
    if (!asan_build)
        limit(RLIMIT_AS, MEMORY_LIMIT);
    /* the sandbox's lock-down (grader/sandbox.c): allow-list seccomp */
    if (sb_lockdown(gpu_policy ? SB_POLICY_GPU : SB_POLICY_CPU) != 0) {
        fprintf(stderr, "runner: %s\n", sb_error());
        _exit(3);
    }
    if (current->dev == ND_CUDA && !cuda_ok)
        ck_abort_msg("the CUDA device is unusable, so no CUDA test ran: %s", cuda_why);
}

/* ---------------------------------------------------------------------- */
/* The parent: run each test, explain how it ended                        */
/* ---------------------------------------------------------------------- */

/* The first line of the captured output that contains `needle`, copied
 * to dst; false if none. */
static bool find_line(const char *path, const char *needle, char *dst, size_t cap)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    bool found = false;
    while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
        if (strstr(line, needle) != NULL) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(dst, cap, "%s", line);
            found = true;
        }
    }
    if (f != NULL)
        fclose(f);
    return found;
}

/* How a test that did not pass ended, in words a student can act on. */
static const char *explain(TestResult *tr, const test_info *t, const char *out, char *dst,
                           size_t cap, const char **result)
{
    const char *msg = tr_msg(tr);
    char line[1024];
    *result = "fail";
    if (tr_rtype(tr) == CK_FAILURE)
        return msg;
    *result = "crash";
    /* AddressSanitizer: "SUMMARY: AddressSanitizer: heap-buffer-overflow
     * /path/02_compact.c:41 in gather_cpu"; UBSan: "...: runtime error: ..." */
    if (find_line(out, "SUMMARY: AddressSanitizer: ", line, sizeof line)) {
        char kind[128] = "", where[512] = "", fn[256] = "";
        sscanf(strstr(line, "SUMMARY: "), "SUMMARY: AddressSanitizer: %127s %511s in %255s",
               kind, where, fn);
        const char *base = strrchr(where, '/');
        snprintf(dst, cap, "%s in %s at %s (AddressSanitizer; the full report is in the "
                 "test's output)", kind, fn[0] ? fn : "?", base ? base + 1 : where);
        return dst;
    }
    if (find_line(out, ": runtime error: ", line, sizeof line)) {
        /* "/path/02_compact.c:41:9: runtime error: store to ..." */
        char *what = strstr(line, ": runtime error: ");
        *what = '\0';
        const char *base = strrchr(line, '/');
        snprintf(dst, cap, "undefined behaviour at %s: %s (UBSan)", base ? base + 1 : line,
                 what + strlen(": runtime error: "));
        return dst;
    }
    if (strstr(msg, "timeout") != NULL) {
        *result = "timeout";
        char took[64] = "";
        if (t->solution >= 0)
            snprintf(took, sizeof took, " (the solution takes %.2f s)", t->solution);
        snprintf(dst, cap, "killed after %.1f s%s: an endless loop, or far too slow",
                 t->timeout, took);
        return dst;
    }
    if (strstr(msg, "signal 24") != NULL) {   /* SIGXCPU */
        *result = "timeout";
        snprintf(dst, cap, "stopped after %.0f s of CPU time: an endless loop, or far too "
                 "slow", t->timeout + 2);
        return dst;
    }
    if (strstr(msg, "signal 11") != NULL)
        snprintf(dst, cap, "crashed: segmentation fault (a read or write through a bad "
                 "pointer or outside an array; run the tests with SAN=1 to see where)");
    else if (strstr(msg, "signal 6") != NULL)
        snprintf(dst, cap, "crashed: aborted (abort() or a failed assert)");
    else if (strstr(msg, "signal 31") != NULL) {   /* SIGSYS: the sandbox's filter */
        const char *call = "";
        if (find_line(out, "sandbox: forbidden system call ", line, sizeof line)) {
            call = strstr(line, "forbidden system call ") + strlen("forbidden system call ");
            line[strcspn(line, ":")] = '\0';
        }
        snprintf(dst, cap, "killed by the sandbox: the code under test made a forbidden "
                 "system call%s%s (lesson code may not signal other processes, trace them, "
                 "fork, run programs or use the network)", *call ? ", " : "", call);
    }
    else
        snprintf(dst, cap, "crashed: %s", msg);
    return dst;
}

/* Write s as one TSV field: tabs and newlines become spaces. */
static void tsv_field(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void usage(void)
{
    fprintf(stderr, "usage: runner -o results.tsv -d OUTDIR [-l LESSON]... [-t TEST] [-a]\n"
                    "              [-s SECONDS] [-T times.tsv -m FACTOR] [-k results.tsv]\n"
                    "              [-c device.txt] [-g]\n");
    exit(2);
}

/* Read "name<TAB>value" lines (times.tsv), or the names of the tests that
 * passed in a results file (column 4 is "pass"), into a table. */
static int read_table(const char *path, bool results, named_value *t)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    char line[8192];
    int n = 0;
    while (n < MAX_KNOWN && fgets(line, sizeof line, f) != NULL) {
        char *fld[5] = { line };
        for (int k = 1; k < 5 && fld[k - 1] != NULL; k++) {
            fld[k] = strchr(fld[k - 1], '\t');
            if (fld[k] != NULL)
                *fld[k]++ = '\0';
        }
        if (results ? fld[3] == NULL : fld[1] == NULL)
            continue;
        snprintf(t[n].name, sizeof t[n].name, "%.159s", results ? fld[1] : fld[0]);
        t[n++].value = results ? strncmp(fld[3], "pass", 4) == 0 : atof(fld[1]);
    }
    fclose(f);
    return n;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *results_path = NULL, *outdir = NULL, *device_path = NULL;
    bool want[64] = { false }, any_lesson = false;
    int opt;
    while ((opt = getopt(argc, argv, "o:d:l:t:s:T:m:k:ac:g")) != -1) {
        switch (opt) {
        case 'o': results_path = optarg; break;
        case 'd': outdir = optarg; break;
        case 'l': {
            int l = atoi(optarg);
            if (l < 1 || l > 63)
                usage();
            want[l] = any_lesson = true;
            break;
        }
        case 't': only_test = optarg; break;
        case 's': min_timeout = atof(optarg); break;
        case 'T': ntimes = read_table(optarg, false, times); break;
        case 'm': timeout_factor = atof(optarg); break;
        case 'k': nskips = read_table(optarg, true, skips); break;
        case 'a': asan_build = true; break;
        case 'c': device_path = optarg; break;
        case 'g': gpu_policy = true; break;
        default: usage();
        }
    }
    if (results_path == NULL || outdir == NULL || min_timeout <= 0 || timeout_factor <= 0 ||
        optind != argc)
        usage();
    probe_cuda();
    if (device_path != NULL) {   /* where the [cuda] cases ran, for the report */
        FILE *f = fopen(device_path, "w");
        if (f != NULL) {
            fprintf(f, "%s\n", cuda_ok ? cuda_name : "unusable");
            fclose(f);
        }
    }
    FILE *results = fopen(results_path, "w");
    if (results == NULL) {
        perror(results_path);
        return 2;
    }
    int passed = 0, failed = 0;
    double timed_out = 0;   /* seconds spent in tests that timed out */
    for (int i = 0; i < NSUITES; i++) {
        if (any_lesson && !want[suites[i].lesson])
            continue;
        int first = ntests;
        Suite *s = suites[i].make();
        SRunner *sr = srunner_create(s);
        srunner_set_fork_status(sr, CK_FORK);
        for (int t = first; t < ntests; t++) {
            current = &tests[t];
            snprintf(current_out, sizeof current_out, "%s/%d.out", outdir, t);
            char why[2048];
            const char *result = "pass", *msg = "";
            double seconds = 0;
            bool shortened = false;
            if (current->skip) {
                result = "skipped";
                msg = "not run: it failed in the plain build already";
                current_out[0] = '\0';
            } else if (current->plain_only && asan_build) {
                /* the plain build's result stands */
                msg = "not run under the sanitizers: too slow there; the plain build's "
                      "result stands";
                current_out[0] = '\0';
            } else {
                if (timed_out > TIMEOUT_BUDGET) {
                    double shorter = current->solution * SHORT_FACTOR;
                    if (shorter < min_timeout / 4)
                        shorter = min_timeout / 4;
                    if (shorter < current->timeout) {
                        current->timeout = shorter;
                        tcase_set_timeout(current->tc, shorter);
                        shortened = true;
                    }
                }
                fflush(NULL);   /* the child must not flush our buffers again */
                double t0 = now();
                srunner_run(sr, NULL, current->name, CK_SILENT);
                seconds = now() - t0;
                TestResult **tr = srunner_results(sr);
                TestResult *r = tr[srunner_ntests_run(sr) - 1];
                if (tr_rtype(r) != CK_PASS)
                    msg = explain(r, current, current_out, why, sizeof why, &result);
                if (strcmp(result, "timeout") == 0) {
                    timed_out += seconds;
                    if (shortened) {
                        size_t used = strlen(why);
                        snprintf(why + used, sizeof why - used, " (a shortened limit: earlier "
                                 "tests of this build had already run out of time)");
                        msg = why;
                    }
                }
                free(tr);
            }
            fprintf(results, "%d\t%s\t%g\t%s\t%.4f\t", current->lesson, current->name,
                    current->points, result, seconds);
            tsv_field(results, msg);
            fputc('\t', results);
            tsv_field(results, current->hint ? current->hint : "");
            fprintf(results, "\t%s\n", current_out);
            if (strcmp(result, "pass") == 0)
                passed++;
            else
                failed++;
        }
        srunner_free(sr);
    }
    fclose(results);
    printf("%d passed, %d failed\n", passed, failed);
    return 0;
}
