/*
 * verdict.c -- the grader's runner: runs the hidden tests against one
 * build of a submission, and takes every verdict itself.
 *
 *   verdict -o results.tsv -d OUTDIR -x EXECDIR [-l LESSON]... [-t TEST]
 *           [-a] [-i] [-g] [-j JOBS] [-T times.tsv] [-m FACTOR] [-s FLOOR]
 *           [-k plain-results.tsv] [-c device.txt] [-R LESSON]... [-M] [-O]
 *
 * This process never loads submitted code (tests/kit/README.md, "Where the
 * verdict is taken").  Each test's calls go to an EXECUTOR built from the
 * submission (grader/executor.c), started for that test alone in the
 * grader's sandbox (grader/sandbox.c, in the mode SB_MODE names):
 * unprivileged, seeing its own folder and a private /tmp, with its CPU
 * limit, and locked down by the sandbox's seccomp filter before it reads a
 * call (-g: a GPU is in view, and the filter allows it).  EXECDIR/exec-N
 * holds lesson N's file from the submission and every other lesson's from
 * the solution, so a bug costs points in its own lesson only; with -i (the
 * integration section) every test runs on EXECDIR/exec-all, the whole
 * submission.  The performance tests (K_PROFILED) run on exec-N-profile
 * (exec-all-profile), the same programs with their CUDA code built with the
 * emulator's instrumentation, GPU or not, whose counters are judged here.
 *
 * Points: lessons 2-5 run on the CPU and the CUDA device, the [cuda] case
 * counting for lesson 6 (whose kernels it runs) at a quarter of the
 * points; tests of lessons 6 and 7 split their points between the devices
 * they run on.
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
 *   lesson  test  points  result  seconds  message  hint  output-file
 * result is pass, fail, crash, timeout or skipped; seconds are CPU seconds.
 */
#include "runner.h"
#include "sandbox.h"

#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
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
 * emulator's instrumentation (EXECDIR/exec-N-profile, exec-all-profile);
 * every other test on the plain one. */
static const char *executor_for(const k_case *c)
{
    int i = integration ? 8 : c->lesson;
    return c->test->where & K_PROFILED ? profiled_paths[i] : exec_paths[i];
}

/* ---------------------------------------------------------------------- */
/* Executors in the sandbox                                               */
/* ---------------------------------------------------------------------- */

static bool gpu, asan;
static sb_proc proc;      /* a worker runs one executor at a time */
static sb_opts opts;

static pid_t sandboxed(const char *path, int calls, int results, const char *output,
                       double cpu_seconds)
{
    static char dir[4200], cpu[32];
    int out = open(output ? output : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0)
        return -1;
    snprintf(dir, sizeof dir, "%s", path);
    snprintf(cpu, sizeof cpu, "%.3f", cpu_seconds);
    opts = sb_defaults();
    opts.ro[0] = dirname(dir);
    opts.fds[0] = calls;
    opts.fds[1] = out;
    opts.fds[2] = out;
    opts.fds[3] = results;
    opts.cpu_s = ceil(cpu_seconds) + 1;   /* the executor's own timer is the precise one */
    opts.wall_s = K_WALL_LIMIT(cpu_seconds);
    opts.mem_bytes = asan ? 0 : (size_t)2 << 30;   /* under ASan: its RSS limits (grade.sh) */
    opts.file_bytes = (size_t)1 << 20;
    opts.nofile = 64;
    /* processes and threads of the sandbox's uid machine-wide, shared by
     * the grades running at once; the seccomp filter refuses forks, so
     * this bounds threads only */
    opts.nproc = 4096;
    opts.gpu = gpu;
    /* the environment: PATH, and what the sanitizers and the emulator
     * read (ASAN_OPTIONS, UBSAN_OPTIONS, NDEMU_*) */
    static char *env[64];
    int ne = 0;
    env[ne++] = "PATH=/usr/bin:/bin";
    extern char **environ;
    for (char **e = environ; *e != NULL && ne < 63; e++)
        if (strncmp(*e, "ASAN_OPTIONS=", 13) == 0 || strncmp(*e, "UBSAN_OPTIONS=", 14) == 0 ||
            strncmp(*e, "LSAN_OPTIONS=", 13) == 0 || strncmp(*e, "NDEMU_", 6) == 0)
            env[ne++] = *e;
    env[ne] = NULL;
    opts.env = env;
    char *argv[] = { (char *)path, cpu, gpu ? "gpu" : "cpu", NULL };
    int rc = sb_spawn(&proc, &opts, argv);
    close(out);
    if (rc != 0) {
        fprintf(stderr, "verdict: cannot start %s in the sandbox: %s\n", path, sb_error());
        return -1;
    }
    return proc.pid;
}

static int sandbox_reap(pid_t pid, int *status, double *cpu, char *why, size_t cap)
{
    sb_result r;
    (void)pid;
    if (sb_wait(&proc, &r) != 0) {
        snprintf(why, cap, "the grader could not wait for the executor: %s", sb_error());
        *status = SIGKILL;
        return -1;
    }
    *cpu = r.cpu_s;
    switch (r.how) {
    case SB_EXITED: *status = (r.code & 0xff) << 8; break;
    case SB_SIGNALED: *status = r.sig; break;
    case SB_CPU: *status = SIGXCPU; break;
    case SB_SECCOMP: *status = SIGSYS; break;
    default:   /* memory, the wall clock, the sandbox itself: its words */
        *status = SIGKILL;
        sb_describe(&r, &opts, why, cap);
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: verdict -o results.tsv -d OUTDIR -x EXECDIR [-l LESSON]... "
                    "[-t TEST] [-a] [-g] [-i] [-j JOBS]\n"
                    "               [-T times.tsv] [-m FACTOR] [-s FLOOR] [-k results.tsv] "
                    "[-c device.txt] [-R LESSON]... [-M] [-O]\n");
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
    double factor = 10, floor = 1;
    int opt, jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    k_quote_messages = false;   /* -M: kit.h */
    while ((opt = getopt(argc, argv, "o:d:x:l:t:agij:T:m:s:k:c:R:MO")) != -1) {
        switch (opt) {
        case 'o': results_path = optarg; break;
        case 'd': outdir = optarg; break;
        case 'x': snprintf(execdir, sizeof execdir, "%s", optarg); break;
        case 'l': want[lesson_arg(optarg)] = any_lesson = true; break;
        case 't': only = optarg; break;
        case 'a': asan = true; break;
        case 'g': gpu = true; break;
        case 'i': integration = true; break;
        case 'j': jobs = atoi(optarg); break;
        case 'T': times = optarg; break;
        case 'm': factor = atof(optarg); break;
        case 's': floor = atof(optarg); break;
        case 'k': skip_path = optarg; break;
        case 'c': device_path = optarg; break;
        case 'R': rejected[lesson_arg(optarg)] = true; break;
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

    char cuda_name[800];
    bool cuda_ok = k_probe_cuda(exec_paths[integration ? 8 : 6], cuda_name, sizeof cuda_name);
    if (device_path != NULL) {
        FILE *f = fopen(device_path, "w");
        if (f != NULL) {
            fprintf(f, "%s\n%s\n", cuda_ok ? cuda_name : "unusable", cuda_ok ? "" : cuda_name);
            fclose(f);
        }
    }
    int n;
    k_case *cases = k_cases(suites, NSUITES, K_CPU | K_CUDA, only, any_lesson ? want : NULL, &n);
    k_set_limits(cases, n, times, factor, floor);
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
        } else if (c->dev == ND_CUDA && !cuda_ok) {
            c->skip = true;
        } else if (asan && (c->test->where & K_PLAIN)) {
            c->skip = true;
            c->msg = strdup("not run under the sanitizers: too slow there; the plain build's "
                            "result stands");
        } else if (skip_path != NULL && !rerun(skip_path, c->name)) {
            c->skip = true;
            c->msg = strdup("not run: it failed in the plain build already");
        }
    }
    k_plan plan = { .cases = cases, .n = n, .jobs = jobs, .outdir = outdir,
                    .executor = executor_for };
    k_run_plan(&plan);

    FILE *results = fopen(results_path, "w");
    if (results == NULL) {
        perror(results_path);
        return 2;
    }
    int passed = 0;
    for (int i = 0; i < n; i++) {
        k_case *c = &cases[i];
        const char *result = k_result_word(c->result), *msg = c->msg;
        if (c->dev == ND_CUDA && !cuda_ok && !rejected[c->lesson]) {
            result = "crash";
            msg = cuda_name;
        } else if (c->skip && c->msg != NULL && strstr(c->msg, "plain build's result")) {
            result = "pass";   /* the plain build's result stands */
        }
        fprintf(results, "%d\t%s\t%g\t%s\t%.4f\t", c->lesson, c->name, c->points, result,
                c->cpu);
        k_tsv_field(results, strcmp(result, "pass") == 0 && !c->skip ? "" : msg);
        fputc('\t', results);
        k_tsv_field(results, c->test->hint);
        fprintf(results, "\t%s\n", c->output && !c->skip ? c->output : "");
        passed += strcmp(result, "pass") == 0;
    }
    fclose(results);
    printf("%d passed, %d failed\n", passed, n - passed);
    return 0;
}
