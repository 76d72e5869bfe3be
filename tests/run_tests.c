/*
 * run_tests.c -- the public tests, as a student runs them (make test,
 * make status, make watch): the runner of tests/kit/ with the executor in
 * each test's own process, so a test is fast and can be debugged with gdb.
 *
 *   run_tests [-l LESSON]... [-t TEST] [-r results.tsv] [-j JOBS] [-q | -v]
 *             [-T times.tsv] [-C cpu.tsv] [-d]
 *
 * -l picks lessons (repeatable), -t one test by name ("reshape_random" or
 * "reshape_random[cpu]"), -r also writes one line per test for scripts:
 * lesson, test, result (pass, fail, crash or timeout), message.  -j runs
 * that many tests at once (default: the number of cores).  Each test may
 * use 20 times the CPU seconds the solution's test takes (-T, by default
 * tests/times.tsv, written by `make times`), at least 1.5 s (3 s under the
 * sanitizers); once timeouts have used 10 s, the tests left get 3 times the
 * solution's, so an endless loop in a function every test calls costs
 * seconds, not minutes.  -C writes each passing test's CPU seconds
 * ("name<TAB>seconds", what make times keeps).  ND_TEST_TIME_SCALE=N
 * multiplies every limit (for tools that slow programs down, such as
 * compute-sanitizer).  -d (make debug, under gdb): the first case -t
 * names, alone, with no CPU limit and no backstop, and no probe of the CUDA
 * device first (so the only fork is the case's, which gdb follows).  A
 * test that uses little CPU for far too long (asleep, or blocked) is
 * stopped by a wall-clock backstop, 10 times its
 * CPU limit plus 30 s, counted in the seconds it could run: time it waited
 * for a CPU on a busy machine does not count (ND_TEST_WALL_GRACE=S sets
 * the 30, for tests of the backstop).  The last line is "N passed, N
 * failed"; the exit status is 0 only when nothing failed.
 *
 * The output is for a learner: the first failure in full (its message, its
 * hint on a line of its own, how to rerun it), then each later failure on
 * one line, at most MAX_BRIEF of them, then one line per lesson and the
 * closing line.  -v shows every failure in full, and what each test printed
 * (make profile's counters, a sanitizer's report); -q shows no failure.
 * Colour only on a terminal, and never with NO_COLOR set.
 */
#include "runner.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The public suites, one per lesson, in lesson order.  "Lesson 0" is the
 * framework (src/array.c), which passes on the skeleton too. */
static const k_suite *const suites[] = { &public_00, &public_01, &public_02, &public_03,
                                         &public_04, &public_05, &public_06, &public_07 };
#define NSUITES (int)(sizeof suites / sizeof suites[0])
static const char *const lesson_files[NSUITES] = {
    "array.c", "01_views.c", "02_compact.c", "03_ewise.c", "04_reduce.c", "05_matmul.c",
    "06_cuda.cu", "07_permute.cu",
};

/* Failures shown on one line each after the first, before "... and N more". */
#define MAX_BRIEF 10

/* ---------------------------------------------------------------------- */
/* Output for a learner                                                   */
/* ---------------------------------------------------------------------- */

static bool colour;   /* stdout is a terminal and NO_COLOR is unset */
static int width;     /* wrap at this column: the terminal's, at most 100 */

static const char *paint(const char *code) { return colour ? code : ""; }
#define RED paint("\033[1;31m")
#define GREEN paint("\033[32m")
#define YELLOW paint("\033[33m")
#define BOLD paint("\033[1m")
#define DIM paint("\033[2m")
#define RESET paint("\033[0m")

static void setup_output(void)
{
    const char *no = getenv("NO_COLOR");
    colour = isatty(STDOUT_FILENO) && (no == NULL || no[0] == '\0');
    int w = 0;
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
        w = ws.ws_col;
    if (w <= 0 && getenv("COLUMNS") != NULL)
        w = atoi(getenv("COLUMNS"));
    width = w <= 0 || w > 100 ? 100 : w < 40 ? 40 : w;
}

/* Print `text` from column `indent` (after `lead`, painted `lead_colour`),
 * broken at spaces so that no line passes `width`; continuation lines
 * start under the text, past the lead.  A word longer than a line stays
 * whole. */
static void print_wrapped(int indent, const char *lead, const char *lead_colour,
                          const char *text, size_t len)
{
    int start = indent + (int)strlen(lead), col = start;
    printf("%*s%s%s%s", indent, "", lead_colour, lead, RESET);
    for (const char *p = text, *end = text + len; p < end;) {
        while (p < end && isspace((unsigned char)*p))
            p++;
        const char *w = p;
        while (p < end && !isspace((unsigned char)*p))
            p++;
        if (p == w)
            break;
        if (col > start && col + 1 + (p - w) > width) {   /* col > start: not the first */
            printf("\n%*s", start, "");
            col = start;
        } else if (col > start) {
            putchar(' ');
            col++;
        }
        col += printf("%.*s", (int)(p - w), w);
    }
    putchar('\n');
}

/* The failed, crashed or stopped tests, in order. */
static const k_case **fails;
static int nfails;

static bool crashed(const k_case *c)
{
    return c->result == K_CRASH || c->result == K_TIMEOUT;
}

static const char *label(const k_case *c)
{
    return c->result == K_TIMEOUT ? "SLOW" : crashed(c) ? "CRASH" : "FAIL";
}

/* The test's name without its device: "reshape_random[cpu]" -> "reshape_random". */
static int base_len(const char *name)
{
    const char *b = strchr(name, '[');
    return b ? (int)(b - name) : (int)strlen(name);
}

/* Where a message's hint starts ("Hint: ..."), or NULL. */
static const char *find_hint(const char *msg)
{
    const char *h = NULL;
    for (const char *p = msg; (p = strstr(p, "Hint: ")) != NULL; p++)
        h = p;
    return h;
}

/* Built with the sanitizers (SAN=1). */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED true
#else
#define SANITIZED false
#endif

/* What a crash or a timeout most likely means, and what to do. */
static const char *crash_hint(const char *msg)
{
    if (strstr(msg, "signed integer overflow") || strstr(msg, "negation of"))
        return "a sum or a product of int64 values overflowed, which in C is undefined "
               "behaviour: compute sizes, strides and offsets that can be that large with "
               "nd_add_ok and nd_mul_ok (src/internal.h, lesson 1), which say when the result "
               "would not fit, and return the error nd.h names for that case";
    if (strstr(msg, "Sanitizer") || strstr(msg, "UBSan"))
        return "a sanitizer stopped the test at the bad access: the file and line above are "
               "where; the whole report is in the test's output (make test V=1)";
    if (strstr(msg, K_BACKSTOP_WORDS))
        return "the test sat for a long time without using the CPU (asleep, or blocked) until "
               "the backstop stopped it: the state and the line above say where. Lesson code "
               "never sleeps, waits for a lock or reads input";
    if (strstr(msg, "CPU time"))
        return "the test ran past its time limit: an endless loop (a loop variable that never "
               "reaches its bound, or a step of 0?), or a loop far too slow";
    if (strstr(msg, "bad pointer"))
        return SANITIZED ? "your code read or wrote memory outside an array (an index, an "
                           "offset or a stride too far?): make debug T=name stops in gdb at it"
                         : "your code read or wrote memory outside an array (an index, an "
                           "offset or a stride too far?). Rerun it with SAN=1 (see below): "
                           "AddressSanitizer stops at the bad access and names the line";
    if (strstr(msg, "abort()"))
        return SANITIZED ? "an assert failed, or abort() was called: make debug T=name stops "
                           "in gdb where"
                         : "the heap was corrupted by a write past the end of an allocation, "
                           "or an assert failed. Rerun it with SAN=1 (see below) to find where";
    if (strstr(msg, "division"))
        return "an integer division or modulo by zero (an axis of size 0?)";
    if (strstr(msg, "exit("))
        return "lesson code returns a status; it never ends the program";
    return SANITIZED ? "the test's process died: make debug T=name runs it under gdb, which "
                       "stops where"
                     : "the test's process died. Rerun it with SAN=1 (see below) to find where";
}

static bool verbose;   /* -v: every failure in full, and what each test printed */

static bool has_output(const char *path)
{
    FILE *f = fopen(path, "r");
    bool any = f != NULL && fgetc(f) != EOF;
    if (f != NULL)
        fclose(f);
    return any;
}

/* What a crashed test printed (a sanitizer's report, the stack of a loop). */
static void show_output(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char line[4096];
    while (fgets(line, sizeof line, f) != NULL)   /* all of it: -v asked */
        printf("        %s| %s%s%s", DIM, line, strchr(line, '\n') ? "" : "\n", RESET);
    fclose(f);
}

static void print_full(const k_case *f)
{
    int bl = base_len(f->name);
    bool crash = crashed(f);
    const char *msg = f->msg ? f->msg : "";
    printf("  %s%-5s%s %s%s%s  (lesson %d)\n", RED, label(f), RESET, BOLD, f->name, RESET,
           f->lesson);
    const char *hint = find_hint(msg);
    size_t body = hint ? (size_t)(hint - msg) : strlen(msg);
    while (body > 0 && isspace((unsigned char)msg[body - 1]))
        body--;
    print_wrapped(8, "", "", msg, body);
    int stub_lesson = 0;
    char stub[100], h[400];
    const char *ni = strstr(msg, "not implemented: ");
    if (hint) {
        hint += 6;
    } else if (ni && sscanf(ni, "not implemented: %99s (lesson %d)", stub, &stub_lesson) == 2) {
        const char *file = stub_lesson >= 0 && stub_lesson < NSUITES ? lesson_files[stub_lesson]
                                                                     : "?";
        snprintf(h, sizeof h, "%s is still a stub: write it in src/%s, where "
                 "\"TODO (lesson %d)\" marks what to write%s", stub, file,
                 stub_lesson, stub_lesson < f->lesson ? "; lessons build on each other, so "
                 "finish the earlier lesson first" : "");
        hint = h;
    } else if (crash) {
        hint = crash_hint(msg);
    }
    if (hint)
        print_wrapped(8, "Hint: ", YELLOW, hint, strlen(hint));
    if (f->file != NULL && strstr(f->file, "kit/") == NULL)   /* a framework test's own check */
        printf("        %sat %s:%d%s\n", DIM, f->file, f->line, RESET);
    if (crash && f->output != NULL && verbose)
        show_output(f->output);
    else if (crash && f->output != NULL && has_output(f->output))
        printf("        %sthe whole report: make test T=%.*s V=1%s\n", DIM, bl, f->name, RESET);
    printf("        %srerun it alone: make test T=%.*s%s%s\n", DIM, bl, f->name,
           crash && !SANITIZED ? " SAN=1" : "", RESET);
}

/* One line: the name, and the start of the message (without its hint), or
 * its "not implemented: ..." part, which says the most. */
static void print_brief(const k_case *f)
{
    const char *msg = f->msg ? f->msg : "", *ni = strstr(msg, "not implemented: ");
    if (ni)
        msg = ni;
    const char *hint = find_hint(msg);
    int len = hint ? (int)(hint - msg) : (int)strlen(msg);
    while (len > 0 && (msg[len - 1] == ' ' || msg[len - 1] == '.'))
        len--;
    int room = width - 8 - (int)strlen(f->name) - 2;
    if (room < 30)
        room = 30;
    printf("  %s%-5s%s %s: ", RED, label(f), RESET, f->name);
    int n = len > room ? room - 3 : len;
    for (int i = 0; i < n; i++)
        putchar(isspace((unsigned char)msg[i]) ? ' ' : msg[i]);
    puts(len > room ? "..." : "");
}

static void print_failures(void)
{
    if (nfails == 0)
        return;
    print_full(fails[0]);
    for (int i = 1; verbose && i < nfails; i++) {
        putchar('\n');
        print_full(fails[i]);
    }
    int shown = nfails - 1 > MAX_BRIEF ? MAX_BRIEF : nfails - 1;
    if (!verbose && shown > 0)
        printf("\n  %d more failing:\n", nfails - 1);
    for (int i = 1; !verbose && i <= shown; i++)
        print_brief(fails[i]);
    if (!verbose && nfails - 1 > shown)
        printf("  %s... and %d more (make test V=1 shows every failure in full)%s\n", DIM,
               nfails - 1 - shown, RESET);
    putchar('\n');
}

/* Edit distance, for suggesting a test name; long names are not compared. */
static int distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b), row[64];
    if (la >= 63 || lb >= 63)
        return 99;
    for (int j = 0; j <= lb; j++)
        row[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* -t matched nothing: name the tests it may have meant. */
static void suggest(const char *want)
{
    char base[200];
    snprintf(base, sizeof base, "%.*s", base_len(want), want);
    int shown = 0;
    for (int s = 0; s < NSUITES; s++)
        for (int i = 0; i < suites[s]->ntests && shown < 8; i++) {
            const char *fn = suites[s]->tests[i].name;
            int d = distance(base, fn);
            if (strstr(fn, base) || d <= 2 + (int)strlen(base) / 6) {
                fprintf(stderr, "%s %s", shown ? "," : "run_tests: did you mean", fn);
                shown++;
            }
        }
    if (shown)
        fputs("?\n", stderr);
}

/* ---------------------------------------------------------------------- */
/* Running                                                                */
/* ---------------------------------------------------------------------- */

static char cuda_name[800];   /* the device's name, or why it is unusable */

/* The one case that stands for every [cuda] case when the device is
 * unusable: it fails once, with the reason. */
static void cuda_device(k_ctx *k)
{
    (void)k;
    k_fail("the CUDA device is unusable, so no CUDA test ran: %s", cuda_name);
}
static const k_test cuda_device_test = K_TEST(cuda_device, K_HOST, 0, NULL);

static void progress(const k_case *c, int done, int total, bool started)
{
    printf("\r\033[K  %s[%d/%d] %s %s%s", DIM, done, total, started ? "running" : "done",
           c->name, RESET);
    fflush(stdout);
}

static void usage(void)
{
    fprintf(stderr, "usage: run_tests [-l LESSON]... [-t TEST] [-r results.tsv] [-j JOBS] "
                    "[-q | -v] [-T times.tsv] [-C cpu.tsv] [-d (with -t)]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    bool want[64] = { false }, any_lesson = false, quiet = false, debug = false;
    const char *results_path = NULL, *only = NULL, *times = NULL, *cpu_path = NULL;
    int opt, jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    while ((opt = getopt(argc, argv, "l:t:r:qvj:T:C:d")) != -1) {
        switch (opt) {
        case 'l': {
            int l = atoi(optarg);
            if (l < 0 || l > 63 || optarg[0] < '0' || optarg[0] > '9') {
                fprintf(stderr, "run_tests: no lesson '%s'\n", optarg);
                return 2;
            }
            want[l] = any_lesson = true;
            break;
        }
        case 't': only = optarg; break;
        case 'r': results_path = optarg; break;
        case 'q': quiet = true; break;
        case 'v': verbose = true; break;
        case 'j': jobs = atoi(optarg); break;
        case 'T': times = optarg; break;
        case 'C': cpu_path = optarg; break;
        case 'd': debug = true; break;
        default: usage();
        }
    }
    if (optind != argc || jobs < 1 || (debug && only == NULL))
        usage();
    setup_output();
    k_local = k_exec;
    FILE *results = NULL;
    if (results_path != NULL && (results = fopen(results_path, "w")) == NULL) {
        perror(results_path);
        return 2;
    }

    /* -d (make debug): no probe, whose fork a debugger would follow */
    bool cuda_ok = debug ? true : k_probe_cuda(NULL, cuda_name, sizeof cuda_name);
    int n;   /* -l 6 takes the [cuda] cases of lessons 2-5, which count for it */
    k_case *cases = k_cases(suites, NSUITES, K_CPU | (cuda_ok ? K_CUDA : 0), only,
                            any_lesson ? want : NULL, &n);
    if (!cuda_ok && (!any_lesson || want[6]) && (only == NULL || strstr(only, "cuda"))) {
        cases = realloc(cases, (size_t)(n + 1) * sizeof *cases);
        cases[n] = (k_case){ .test = &cuda_device_test, .suite = &public_06, .lesson = 6 };
        snprintf(cases[n++].name, sizeof cases[0].name, "cuda_device");
    }
    if (n == 0) {
        if (only != NULL) {
            fprintf(stderr, "run_tests: no test named '%s'%s\n", only,
                    any_lesson ? " in the lessons chosen with -l" : "");
            suggest(only);
        } else {
            fprintf(stderr, "run_tests: no test matches the selection\n");
        }
        free(cases);   /* (else LeakSanitizer reports it after the suggestion) */
        return 2;
    }
    /* ND_TEST_TIME_SCALE stretches every limit (compute-sanitizer, valgrind) */
    const char *scale_env = getenv("ND_TEST_TIME_SCALE");
    double scale = scale_env != NULL && atof(scale_env) > 0 ? atof(scale_env) : 1;
    double floor = (SANITIZED ? 3 : 1.5) * scale;
    if (times == NULL && access("tests/times.tsv", R_OK) == 0)
        times = "tests/times.tsv";
    k_set_limits(cases, n, times, 20 * scale, floor);
    if (debug) {   /* one case, no limit: it may wait at a breakpoint */
        if (n > 1)
            printf("make debug: %s (of %d cases of this test; T=%s picks one)\n", cases[0].name,
                   n, cases[1].name);
        n = 1;
        jobs = 1;
        cases[0].limit = cases[0].short_limit = 1e7;
    }
    if (!quiet && !debug && (!any_lesson || want[6]))
        printf("CUDA device: %s\n", cuda_ok ? cuda_name : "unusable (see cuda_device)");
    char outdir[] = "/tmp/nd-tests.XXXXXX";
    if (mkdtemp(outdir) == NULL) {
        perror("run_tests: mkdtemp");
        return 2;
    }
    /* ND_TEST_WALL_GRACE: the backstop's constant part (tests of the backstop) */
    const char *grace = getenv("ND_TEST_WALL_GRACE");
    k_plan plan = { .cases = cases, .n = n, .jobs = jobs, .outdir = outdir,
                    .progress = !quiet && colour ? progress : NULL,   /* a terminal's */
                    .wall_grace = debug ? 1e9 : grace != NULL ? atof(grace) : 0,
                    .output_here = debug };
    k_run_plan(&plan);
    if (plan.progress)
        printf("\r\033[K");

    struct { int ok, n; } ran[NSUITES] = { { 0, 0 } };
    FILE *cpu = cpu_path != NULL ? fopen(cpu_path, "w") : NULL;
    if ((fails = malloc((size_t)n * sizeof *fails)) == NULL) {
        fprintf(stderr, "run_tests: out of memory\n");
        return 2;
    }
    for (int i = 0; i < n; i++) {
        const k_case *c = &cases[i];
        bool pass = c->result == K_PASS;
        if (!pass)
            fails[nfails++] = c;
        if (results != NULL) {
            fprintf(results, "%d\t%s\t%s\t", c->lesson, c->name, k_result_word(c->result));
            k_tsv_field(results, pass ? "" : c->msg);
            fputc('\n', results);
        }
        if (pass && cpu != NULL)
            fprintf(cpu, "%s\t%.4f\n", c->name, c->cpu);
        if (pass && verbose && c->output != NULL && has_output(c->output)) {
            printf("  %s%s printed:%s\n", DIM, c->name, RESET);
            show_output(c->output);
        }
        int l = c->lesson < NSUITES ? c->lesson : NSUITES - 1;
        ran[l].n++;
        ran[l].ok += pass;
    }
    if (results != NULL)
        fclose(results);
    if (cpu != NULL)
        fclose(cpu);
    if (!quiet)
        print_failures();
    for (int l = 0; l < NSUITES; l++)
        if (ran[l].n > 0)
            printf("%slesson %d  %-12s %3d/%-3d passed%s\n", ran[l].ok == ran[l].n ? GREEN : "",
                   l, suites[l]->name, ran[l].ok, ran[l].n, RESET);
    printf("%d passed, %d failed\n", n - nfails, nfails);
    for (int i = 0; i < n; i++) {
        if (cases[i].output != NULL)
            unlink(cases[i].output);
        free(cases[i].msg);
        free(cases[i].file);
        free(cases[i].output);
    }
    rmdir(outdir);
    free(cases);
    free(fails);
    return nfails == 0 ? 0 : 1;
}
