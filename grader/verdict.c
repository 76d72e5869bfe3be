/*
 * verdict.c -- the grader's runner: runs the hidden tests against one
 * build of a submission, and takes every verdict itself.
 *
 *   verdict -o results.tsv -d OUTDIR -x EXECDIR [-l LESSON]... [-t TEST]
 *           [-a] [-i] [-P] [-g] [-j JOBS] [-T times.tsv] [-m FACTOR] [-s FLOOR]
 *           [-k plain-results.tsv] [-c device.txt] [-R LESSON]... [-U UID] [-B MB]
 *           [-M] [-O]
 *
 * This process never loads submitted code (tests/kit/README.md, "Where the
 * verdict is taken").  Each test's calls go to an EXECUTOR built from the
 * submission (grader/executor.c).  Each executor program runs in a sandbox
 * of its own (grader/sandbox.c, in the mode SB_MODE names), started before
 * the tests: unprivileged, seeing that one file and no other of the
 * grader's, it forks a fresh child for each test, which locks itself down
 * with the sandbox's seccomp filter before it reads a call (-g: a GPU is in
 * view, and the filter allows it); the child's parent measures its CPU
 * time and enforces its limits.  -U (as root): executor k's sandbox runs as
 * uid UID + k, the one uid that may read that executor.  EXECDIR/exec-N
 * holds lesson N's file from the submission beside the course's own
 * versions of the other lesson files (grader/carries.tsv: what lesson N
 * builds on, nothing that could do its work), so a bug costs points in its
 * own lesson only; with -i (the integration section) every test runs on
 * EXECDIR/exec-all, the whole submission.  The performance tests
 * (K_PROFILED) run on exec-N-profile, the same programs with their CUDA
 * code built with the emulator's instrumentation, GPU or not, whose
 * counters are judged here.
 *
 * Points: lessons 2-5 run on the CPU and the CUDA device, the [cuda] case
 * counting for lesson 6 (whose kernels it runs) at a quarter of the
 * points; tests of lessons 6 and 7 split their points between the devices
 * they run on.
 *
 * Each test runs as often as it earns: a grade runs the lessons' tests
 * under the sanitizers (-a), which catch everything the plain build does
 * and the memory errors besides, and only the tests too slow there
 * (K_PLAIN: the large ones, and the performance tests) in the plain build
 * (-P lists the others as passed there: the sanitizer build's result
 * stands).  The integration section (-i) runs in the plain build, without
 * the large and performance tests, which run per lesson.
 *
 * Limits are CPU time, which a loaded machine does not stretch: FACTOR
 * times the solution's CPU seconds for the test (times.tsv, from a
 * calibration run), at least FLOOR.  A wall-clock limit ten times longer
 * only backs them up.  -k skips the tests that failed or timed out in the
 * plain build (a sanitizer build would only take longer to say so); one
 * that crashed runs again, for the sanitizers' account of where.  -R lists a
 * lesson's tests as skipped without running them (its file was rejected:
 * the report says why, and it scores 0).  -M quotes the submission's own
 * error messages in the failure messages (weights.tsv `messages quote`;
 * by default none of their text is relayed); -O runs the call a failure
 * reports again, alone, so that the test's output file holds only what
 * that call printed (for a report that quotes it: weights.tsv `output`).
 *
 * One TSV line per test:
 *   lesson  test  points  result  seconds  message  hint  output-file  limit  MB
 * result is pass, fail, crash, timeout or skipped; seconds are CPU seconds;
 * limit is the CPU seconds the test was allowed ("%.3f": FACTOR times the
 * solution's, at least FLOOR, or the shorter limit of the tests that
 * started after timeouts had used their budget, tests/kit/runner.h), so
 * that a timeout can be checked against it (the grader's self-tests:
 * timeouts-at-limit); MB is the peak resident memory of the test's
 * worker and its largest executor together (the calibration keeps the
 * solution's: -B bounds the expected memory of the tests that run at
 * once, in MB, so that a grade fits a container's memory; a test larger
 * than that runs alone).  report.c reads the first eight columns.
 */
#include "runner.h"
#include "sandbox.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const k_suite hidden_01, hidden_02, hidden_03, hidden_04, hidden_05, hidden_06,
    hidden_07;
static const k_suite *const suites[] = { &hidden_01, &hidden_02, &hidden_03, &hidden_04,
                                         &hidden_05, &hidden_06, &hidden_07 };
#define NSUITES (int)(sizeof suites / sizeof suites[0])

#define CUDA_SHARE 0.25

static char execdir[4096];
static bool integration;
static char exec_paths[9][4200], profiled_paths[9][4200];

/* A K_PROFILED test runs on the executor whose CUDA code is built with the
 * emulator's instrumentation (EXECDIR/exec-N-profile); every other test
 * on the plain one. */
static const char *executor_for(const k_case *c)
{
    int i = integration ? 8 : c->lesson;
    return c->test->where & K_PROFILED ? profiled_paths[i] : exec_paths[i];
}

/* ---------------------------------------------------------------------- */
/* Executors in the sandbox                                               */
/* ---------------------------------------------------------------------- */

/* One sandbox per executor program, started before the tests (a zygote,
 * grader/sandbox.h): it sees that one file and nothing else of the
 * grader's, and forks a fresh child per test, which locks itself down
 * before it reads a call.  The server, the child's parent, measures the
 * child's CPU time and enforces its limits from outside. */
static bool gpu, asan, plain_only, list_only;
#define MAX_EXECUTORS 32
static struct {
    char path[4200];
    sb_zygote z;
} zygotes[MAX_EXECUTORS];
static int nzygotes;
static sb_child_opts child_opts;   /* the running test's (a worker runs one at a time) */
static uid_t first_uid;            /* -U: executor k's sandbox runs as first_uid + k */

/* The environment of the executors: PATH, and what the sanitizers and the
 * emulator read (ASAN_OPTIONS, UBSAN_OPTIONS, NDEMU_*). */
static char *const *executor_env(void)
{
    static char *env[64];
    int ne = 0;
    env[ne++] = "PATH=/usr/bin:/bin";
    extern char **environ;
    for (char **e = environ; *e != NULL && ne < 63; e++)
        if (strncmp(*e, "ASAN_OPTIONS=", 13) == 0 || strncmp(*e, "UBSAN_OPTIONS=", 14) == 0 ||
            strncmp(*e, "LSAN_OPTIONS=", 13) == 0 || strncmp(*e, "NDEMU_", 6) == 0)
            env[ne++] = *e;
    env[ne] = NULL;
    return env;
}

/* The sandbox serving executor `path`, started on first use (by the main
 * process, before any worker: the workers inherit its control socket). */
static sb_zygote *zygote_for(const char *path, bool start)
{
    for (int i = 0; i < nzygotes; i++)
        if (strcmp(zygotes[i].path, path) == 0)
            return &zygotes[i].z;
    if (!start || nzygotes == MAX_EXECUTORS)
        return NULL;
    sb_opts o = sb_executor_opts(gpu);   /* (sandbox.h: the limits) */
    o.ro[0] = path;   /* the executor itself: no folder, no sibling */
    o.fds[2] = 2;     /* the server's own complaints */
    o.env = executor_env();
    /* As root, with -U: a uid of its own, which alone may read the
     * executor (in the uid fallback, where no namespace hides the other
     * executors, they stay closed to it), and whose count of processes
     * and threads no other executor and no other grade shares. */
    if (first_uid > 0 && geteuid() == 0) {
        o.uid = first_uid + (uid_t)nzygotes;
        if (chown(path, 0, o.uid) != 0 || chmod(path, 0750) != 0) {
            fprintf(stderr, "verdict: cannot give %s to uid %u: %s\n", path, (unsigned)o.uid,
                    strerror(errno));
            exit(2);
        }
    }
    char *argv[] = { (char *)path, "serve", gpu ? "gpu" : "cpu", NULL };
    snprintf(zygotes[nzygotes].path, sizeof zygotes[nzygotes].path, "%s", path);
    if (sb_zygote_start(&zygotes[nzygotes].z, &o, argv) != 0) {
        fprintf(stderr, "verdict: cannot start %s in the sandbox: %s\n", path, sb_error());
        exit(2);
    }
    return &zygotes[nzygotes++].z;
}

static pid_t sandboxed(const char *path, int calls, int results, const char *output,
                       double cpu_seconds)
{
    sb_zygote *z = zygote_for(path, false);
    if (z == NULL) {
        fprintf(stderr, "verdict: no sandbox serves %s\n", path);
        return -1;
    }
    int out = open(output ? output : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                   0600);
    if (out < 0)
        return -1;
    /* (sandbox.h: with a GPU, no address-space limit and more files) */
    child_opts = sb_test_limits(gpu, cpu_seconds, K_WALL_LIMIT(cpu_seconds));
    int fds[SB_MAX_FDS] = { calls, out, out, results };
    int h = sb_zygote_run(z, fds, &child_opts);
    close(out);
    if (h < 0) {
        fprintf(stderr, "verdict: cannot start a test of %s: %s\n", path, sb_error());
        return -1;
    }
    return h + 1;   /* the handle, as a positive "pid" */
}

static int sandbox_reap(pid_t pid, int *status, double *cpu, double *peak_mb, char *why,
                        size_t cap)
{
    sb_result r;
    if (sb_zygote_wait((int)pid - 1, &r) != 0) {
        snprintf(why, cap, "the grader lost the executor: %s", sb_error());
        *status = SIGKILL;
        return -1;
    }
    *cpu = r.cpu_s;
    *peak_mb = (double)r.peak_kb / 1024;
    switch (r.how) {
    case SB_EXITED: *status = (r.code & 0xff) << 8; break;
    case SB_SIGNALED: *status = r.sig; break;
    case SB_CPU: *status = SIGXCPU; break;
    case SB_SECCOMP: *status = SIGSYS; break;
    default: {  /* memory, the wall clock, the sandbox itself: its words */
        sb_opts o = sb_defaults();
        o.cpu_s = child_opts.cpu_s;
        o.wall_s = child_opts.wall_s;
        *status = SIGKILL;
        sb_describe(&r, &o, why, cap);
    }
    }
    return 0;
}

/* The CUDA device, as the probe found it. */
static bool cuda_ok;
static char cuda_name[800];
static bool rejected_lesson[64];

/* Case c's row of the results (the header says what each field is);
 * pending: not run, the grade having run out of time.  Whether it passed. */
static bool write_row(FILE *f, const k_case *c, bool pending)
{
    const char *result = k_result_word(c->result), *msg = c->msg;
    if (pending) {
        result = "skipped";
        msg = "not run: the grade ran out of time before this test (see the report's first lines)";
    } else if (c->dev == ND_CUDA && !cuda_ok && !rejected_lesson[c->lesson]) {
        result = "crash";
        msg = cuda_name;
    } else if (c->skip && c->msg != NULL && strstr(c->msg, "build's result stands")) {
        result = "pass";   /* the other build's result stands */
    }
    fprintf(f, "%d\t%s\t%g\t%s\t%.4f\t", c->lesson, c->name, c->points, result, c->cpu);
    k_tsv_field(f, strcmp(result, "pass") == 0 && !c->skip ? "" : msg);
    fputc('\t', f);
    /* (no hint where the machine, not the code, stopped the test) */
    if (msg == NULL || !strstr(msg, "out-of-memory killer: the machine"))
        k_tsv_field(f, c->test->hint);
    fprintf(f, "\t%s\t%.3f\t%.0f\n", c->output && !c->skip && !pending ? c->output : "",
            c->limit, c->peak_mb);
    return strcmp(result, "pass") == 0;
}

static char done_path[4200];
static FILE *done_rows;

/* k_plan's progress hook: a case's row as soon as it ends. */
static void row_done(const k_case *c, int done, int total, bool started)
{
    (void)done;
    (void)total;
    if (!started) {
        write_row(done_rows, c, false);
        fflush(done_rows);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: verdict -o results.tsv -d OUTDIR -x EXECDIR [-l LESSON]... "
                    "[-t TEST] [-a] [-g] [-i] [-P] [-j JOBS]\n"
                    "               [-T times.tsv] [-m FACTOR] [-s FLOOR] [-k results.tsv] "
                    "[-c device.txt] [-R LESSON]... [-U UID] [-B MB] [-M] [-O]\n");
    exit(2);
}

/* -l and -R: a lesson from 1 to 63. */
static int lesson_arg(const char *arg)
{
    int l = atoi(arg);
    if (l < 1 || l > 63)
        usage();
    return l;
}

/* Whether test `name` passed or crashed in an earlier results file (the
 * plain build's): the sanitizer build runs those again, a crash to say
 * where the bad access was. */
static bool rerun(const char *path, const char *name)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    bool pass = false;
    while (f != NULL && !pass && fgets(line, sizeof line, f) != NULL) {
        char *fld[5] = { line };
        for (int i = 1; i < 5 && fld[i - 1] != NULL; i++)
            if ((fld[i] = strchr(fld[i - 1], '\t')) != NULL)
                *fld[i]++ = '\0';
        pass = fld[3] != NULL && strcmp(fld[1], name) == 0 &&
               (strncmp(fld[3], "pass", 4) == 0 || strncmp(fld[3], "crash", 5) == 0);
    }
    if (f != NULL)
        fclose(f);
    return pass;
}

int main(int argc, char **argv)
{
    const char *results_path = NULL, *outdir = NULL, *only = NULL, *times = NULL;
    const char *skip_path = NULL, *device_path = NULL;
    bool want[64] = { false }, any_lesson = false, rejected[64] = { false };
    double factor = 10, floor = 1, mem_budget = 0;
    int opt, jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    k_quote_messages = false;   /* -M: kit.h */
    while ((opt = getopt(argc, argv, "o:d:x:l:t:agiPLj:T:m:s:k:c:R:U:B:MO")) != -1) {
        switch (opt) {
        case 'o': results_path = optarg; break;
        case 'd': outdir = optarg; break;
        case 'x': snprintf(execdir, sizeof execdir, "%s", optarg); break;
        case 'l': want[lesson_arg(optarg)] = any_lesson = true; break;
        case 't': only = optarg; break;
        case 'a': asan = true; break;
        case 'g': gpu = true; break;
        case 'i': integration = true; break;
        case 'P': plain_only = true; break;
        case 'L': list_only = true; break;
        case 'j': jobs = atoi(optarg); break;
        case 'T': times = optarg; break;
        case 'm': factor = atof(optarg); break;
        case 's': floor = atof(optarg); break;
        case 'k': skip_path = optarg; break;
        case 'c': device_path = optarg; break;
        case 'R': rejected[lesson_arg(optarg)] = true; break;
        case 'B': mem_budget = atof(optarg); break;
        case 'U': first_uid = (uid_t)strtoul(optarg, NULL, 10); break;
        case 'M': k_quote_messages = true; break;
        case 'O': k_output_alone = true; break;
        default: usage();
        }
    }
    if (results_path == NULL || outdir == NULL || execdir[0] == '\0' || optind != argc ||
        jobs < 1 || factor <= 0 || floor <= 0)
        usage();
    k_launch = sandboxed;
    k_reap = sandbox_reap;
    for (int l = 1; l <= 7; l++) {
        snprintf(exec_paths[l], sizeof exec_paths[l], "%s/exec-%d", execdir, l);
        snprintf(profiled_paths[l], sizeof profiled_paths[l], "%s/exec-%d-profile", execdir, l);
    }
    snprintf(exec_paths[8], sizeof exec_paths[8], "%s/exec-all", execdir);
    snprintf(profiled_paths[8], sizeof profiled_paths[8], "%s/exec-all-profile", execdir);

    int n;
    k_case *cases = k_cases(suites, NSUITES, K_CPU | K_CUDA, only, any_lesson ? want : NULL, &n);
    if (integration) {   /* the large and the performance tests: per lesson only */
        int kept = 0;
        for (int i = 0; i < n; i++)
            if (!(cases[i].test->where & K_PLAIN))
                cases[kept++] = cases[i];
        n = kept;
    }
    k_set_limits(cases, n, times, factor, floor);
    memcpy(rejected_lesson, rejected, sizeof rejected_lesson);
    for (int i = 0; i < n; i++) {
        k_case *c = &cases[i];
        bool moved = c->suite->lesson >= 2 && c->suite->lesson <= 5;
        if (c->lesson != c->suite->lesson)   /* a [cuda] case of lessons 2-5 */
            c->points *= CUDA_SHARE;
        else if (!moved && (c->test->where & K_BOTH) == K_BOTH)
            c->points /= 2;
        /* k_run_plan reports each skipped case as skipped */
        if (rejected[c->lesson]) {
            c->skip = true;
            c->msg = strdup("not run: this lesson's file was not accepted (see the build notes)");
        } else if (asan && (c->test->where & K_PLAIN)) {
            c->skip = true;
            c->msg = strdup("not run under the sanitizers: too slow there; the plain build's "
                            "result stands");
        } else if (plain_only && !(c->test->where & K_PLAIN)) {
            c->skip = true;
            c->msg = strdup("not run in the plain build: the sanitizer build's result stands");
        } else if (skip_path != NULL && !rerun(skip_path, c->name)) {
            c->skip = true;
            c->msg = strdup("not run: it failed in the plain build already");
        }
    }
    if (list_only) {   /* -L: every case's row, as a grade that ran out of time first */
        cuda_ok = true;
        FILE *f = fopen(results_path, "w");
        if (f == NULL) {
            perror(results_path);
            return 2;
        }
        for (int i = 0; i < n; i++)
            write_row(f, &cases[i], !cases[i].skip);
        return fclose(f) == 0 ? 0 : 2;
    }
    zygote_for(exec_paths[integration ? 8 : 6], true);
    cuda_ok = k_probe_cuda(exec_paths[integration ? 8 : 6], cuda_name, sizeof cuda_name);
    if (device_path != NULL) {
        FILE *f = fopen(device_path, "w");
        if (f != NULL) {
            fprintf(f, "%s\n%s\n", cuda_ok ? cuda_name : "unusable", cuda_ok ? "" : cuda_name);
            fclose(f);
        }
    }
    for (int i = 0; i < n; i++)
        if (!cases[i].skip && cases[i].dev == ND_CUDA && !cuda_ok)
            cases[i].skip = true;
    for (int i = 0; i < n; i++)   /* a sandbox for each executor the tests use */
        if (!cases[i].skip)
            zygote_for(executor_for(&cases[i]), true);
    /* each case's row as it ends, in RESULTS.done: a grade stopped by its
     * time limit reports the tests that finished (grade.sh) */
    snprintf(done_path, sizeof done_path, "%s.done", results_path);
    if ((done_rows = fopen(done_path, "w")) == NULL) {
        perror(done_path);
        return 2;
    }
    for (int i = 0; i < n; i++)
        if (cases[i].skip)
            write_row(done_rows, &cases[i], false);
    k_plan plan = { .cases = cases, .n = n, .jobs = jobs, .outdir = outdir,
                    .executor = executor_for, .mem_budget_mb = mem_budget,
                    .progress = row_done };
    k_run_plan(&plan);
    bool lost = false;
    for (int i = 0; i < nzygotes; i++)
        if (sb_zygote_stop(&zygotes[i].z) != 0) {
            fprintf(stderr, "verdict: the sandbox of %s: %s\n", zygotes[i].path, sb_error());
            lost = true;
        }
    if (lost)
        return 2;   /* a result may be the grader's failure, not the submission's */

    fclose(done_rows);
    FILE *results = fopen(results_path, "w");
    if (results == NULL) {
        perror(results_path);
        return 2;
    }
    int passed = 0;
    for (int i = 0; i < n; i++)
        passed += write_row(results, &cases[i], false);
    fclose(results);
    unlink(done_path);
    printf("%d passed, %d failed\n", passed, n - passed);
    return 0;
}
