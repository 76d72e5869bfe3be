/*
 * main.c -- the public test runner.  Every test runs in its own forked
 * child (Check's fork mode) with a timeout, so a crash or an endless loop
 * in lesson code costs that one test.
 *
 *   run_tests [-l LESSON]... [-t TEST] [-r results.tsv] [-q | -v]
 *
 * -l picks lessons (repeatable), -t one test by name ("reshape_random" or
 * "reshape_random[cpu]"), -r also writes one line per test for scripts:
 * lesson, test, result (pass, fail or crash), message.  The last line is
 * "N passed, N failed"; the exit status is 0 only when nothing failed.
 *
 * The output is for a learner: the first failure in full (its message, its
 * hint on a line of its own, where the test checked and how to rerun it),
 * then each later failure on one line, at most MAX_BRIEF of them, then one
 * line per lesson and the closing line.  -v shows every failure in full,
 * -q none.  Colour only on a terminal, and never with NO_COLOR set.
 */
#include "nd_test.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The public suites, one per lesson, in lesson order.  "Lesson 0" is the
 * framework (src/array.c), which passes on the skeleton too. */
Suite *suite_00_array(void);
Suite *suite_01_views(void);
Suite *suite_02_compact(void);
Suite *suite_03_ewise(void);
Suite *suite_04_reduce(void);
Suite *suite_05_matmul(void);
Suite *suite_06_cuda(void);
Suite *suite_07_permute(void);

static const struct {
    int lesson;
    const char *name;
    Suite *(*make)(void);
    const char *file;   /* the lesson's file in src/ */
} suites[] = {
    { 0, "00_array", suite_00_array, "array.c" },
    { 1, "01_views", suite_01_views, "01_views.c" },
    { 2, "02_compact", suite_02_compact, "02_compact.c" },
    { 3, "03_ewise", suite_03_ewise, "03_ewise.c" },
    { 4, "04_reduce", suite_04_reduce, "04_reduce.c" },
    { 5, "05_matmul", suite_05_matmul, "05_matmul.c" },
    { 6, "06_cuda", suite_06_cuda, "06_cuda.cu" },
    { 7, "07_permute", suite_07_permute, "07_permute.cu" },
};
#define NSUITES (int)(sizeof suites / sizeof suites[0])

/* Seconds a test may run before it is killed.  Check multiplies this by
 * CK_TIMEOUT_MULTIPLIER (the sanitizer build sets it). */
#define TEST_TIMEOUT 20

/* Failures shown on one line each after the first, before "... and N more". */
#define MAX_BRIEF 10

static const char *only_test; /* -t */

/* ---------------------------------------------------------------------- */
/* Registration (declared in nd_test.h)                                   */
/* ---------------------------------------------------------------------- */

static void use_cpu(void) { T_DEV = ND_CPU; }
static void use_cuda(void) { T_DEV = ND_CUDA; }

static const struct {
    const char *name;
    void (*setup)(void);
} devices[] = {
    { "cpu", use_cpu },
    { "cuda", use_cuda },
};
#define NDEVICES (int)(sizeof devices / sizeof devices[0])

/* The CUDA device, as a forked child found it before any test ran (the
 * parent never starts CUDA: a CUDA context does not survive a fork).
 * When it is unusable, no [cuda] case is registered: one test,
 * cuda_device, fails with the reason instead of every CUDA test. */
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

START_TEST(cuda_device)
{
    ck_assert_msg(cuda_ok, "the CUDA device is unusable, so no CUDA test ran: %s", cuda_why);
}
END_TEST

/* Which lesson each suite is.  The [cuda] cases of lessons 2-5 count for
 * lesson 6, whose work they test: lesson 2's bar fills with its CPU code. */
typedef struct { Suite *s; int lesson; } suite_lesson;
static suite_lesson suite_lessons[16];
static int nsuite_lessons;
static Suite *cuda_suite;   /* lesson 6's */

Suite *t_suite(int lesson, const char *name)
{
    Suite *s = suite_create(name);
    if (nsuite_lessons < (int)(sizeof suite_lessons / sizeof suite_lessons[0]))
        suite_lessons[nsuite_lessons++] = (suite_lesson){ s, lesson };
    if (lesson == 6) {
        cuda_suite = s;
        if (!cuda_ok)
            t_add(s, "cuda_device", cuda_device, false);
    }
    return s;
}

static int lesson_of(Suite *s)
{
    for (int i = 0; i < nsuite_lessons; i++)
        if (suite_lessons[i].s == s)
            return suite_lessons[i].lesson;
    return -1;
}

/* Check keeps, but does not copy, test case names: they live here. */
static char *case_names[4096];
static int ncase_names;

static const char *keep_name(const char *name)
{
    if (ncase_names == (int)(sizeof case_names / sizeof case_names[0])) {
        fprintf(stderr, "run_tests: more than %d test cases\n", ncase_names);
        exit(2);
    }
    return case_names[ncase_names++] = strdup(name);
}

/* Whether -t selects the case `name` ("fn" or "fn[dev]"). */
static bool selected(const char *fn, const char *name)
{
    return only_test == NULL || strcmp(only_test, fn) == 0 || strcmp(only_test, name) == 0;
}

/* Every test function's name (string literals, from T_ADD), selected or
 * not: for suggestions when -t matches nothing. */
static const char *all_fns[2048];
static int nall_fns;

void t_add(Suite *s, const char *fn_name, const TTest *fn, bool per_device)
{
    if (nall_fns < (int)(sizeof all_fns / sizeof all_fns[0]))
        all_fns[nall_fns++] = fn_name;
    for (int d = 0; d < (per_device ? NDEVICES : 1); d++) {
        char name[200];
        snprintf(name, sizeof name, per_device ? "%s[%s]" : "%s", fn_name, devices[d].name);
        if (!selected(fn_name, name))
            continue;
        Suite *to = s;
        if (per_device && devices[d].setup == use_cuda) {
            if (!cuda_ok)
                continue;
            int l = lesson_of(s);
            if (l >= 2 && l <= 5 && cuda_suite != NULL)
                to = cuda_suite;
        }
        TCase *tc = tcase_create(keep_name(name));
        tcase_add_checked_fixture(tc, devices[d].setup, NULL);
        tcase_set_timeout(tc, TEST_TIMEOUT);
        tcase_add_test(tc, fn);
        suite_add_tcase(to, tc);
    }
}

void t_add_cuda(Suite *s, const char *fn_name, const TTest *fn)
{
    if (nall_fns < (int)(sizeof all_fns / sizeof all_fns[0]))
        all_fns[nall_fns++] = fn_name;
    char name[200];
    snprintf(name, sizeof name, "%s[cuda]", fn_name);
    if (!cuda_ok || !selected(fn_name, name))
        return;
    TCase *tc = tcase_create(keep_name(name));
    tcase_add_checked_fixture(tc, use_cuda, NULL);
    tcase_set_timeout(tc, TEST_TIMEOUT);
    tcase_add_test(tc, fn);
    suite_add_tcase(s, tc);
}

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
#ifdef TIOCGWINSZ
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
        w = ws.ws_col;
#endif
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
    int col = indent + (int)strlen(lead), start = col;
    printf("%*s%s%s%s", indent, "", lead_colour, lead, RESET);
    const char *p = text, *end = text + len;
    bool first = true;
    while (p < end) {
        while (p < end && isspace((unsigned char)*p))
            p++;
        const char *w = p;
        while (p < end && !isspace((unsigned char)*p))
            p++;
        int n = (int)(p - w);
        if (n == 0)
            break;
        if (!first && col + 1 + n > width) {
            printf("\n%*s", start, "");
            col = start;
        } else if (!first) {
            putchar(' ');
            col++;
        }
        printf("%.*s", n, w);
        col += n;
        first = false;
    }
    putchar('\n');
}

/* A failed or crashed test, copied out of Check's results. */
typedef struct {
    int lesson;
    bool crash;
    char *name, *msg, *file;
    int line;
} failure;

static failure *fails;
static int nfails;

static void keep_failure(int lesson, TestResult *tr)
{
    static int cap;
    if (nfails == cap) {
        cap = cap ? 2 * cap : 64;
        if ((fails = realloc(fails, (size_t)cap * sizeof *fails)) == NULL) {
            fprintf(stderr, "run_tests: out of memory\n");
            exit(2);
        }
    }
    fails[nfails++] = (failure){
        .lesson = lesson,
        .crash = tr_rtype(tr) != CK_FAILURE,
        .name = strdup(tr_tcname(tr)),
        .msg = strdup(tr_msg(tr) ? tr_msg(tr) : ""),
        .file = strdup(tr_lfile(tr) ? tr_lfile(tr) : "?"),
        .line = tr_lno(tr),
    };
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

/* Built with the sanitizers (SAN=1): a report ends the test's process. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED true
#else
#define SANITIZED false
#endif

/* What a crash or a timeout (Check's own words in msg) most likely means. */
static const char *crash_hint(const char *msg)
{
    if (SANITIZED && (strstr(msg, "Early exit") || strstr(msg, "signal")))
        return "a sanitizer stopped the test: its report, printed above this summary, "
               "names the kind of bug and, in its first lines that name your src/ file, "
               "the line";
    if (strstr(msg, "timeout"))
        return "the test ran past its time limit and was stopped: an endless loop (a loop "
               "variable that never reaches its bound?), or a loop far too slow";
    if (strstr(msg, "signal 11") || strstr(msg, "signal 7"))
        return "your code read or wrote memory outside an array (an index, an offset or a "
               "stride too far?). Rerun it with SAN=1 (see below): AddressSanitizer "
               "stops at the bad access and names the line";
    if (strstr(msg, "signal 6"))
        return "the program aborted: a failed assert(), or the heap was corrupted by a write "
               "past the end of an allocation. Rerun it with SAN=1 (see below) to find where";
    if (strstr(msg, "signal 8"))
        return "an arithmetic error: an integer division or modulo by zero (an axis of size 0?)";
    if (strstr(msg, "Early exit"))
        return "the test's process ended early: does your code call exit()?";
    return "the test's process died. Rerun it with SAN=1 (see below) to find where";
}

static void print_full(const failure *f)
{
    int bl = base_len(f->name);
    printf("  %s%-5s%s %s%s%s  (lesson %d)\n", RED, f->crash ? "CRASH" : "FAIL", RESET, BOLD,
           f->name, RESET, f->lesson);
    const char *hint = find_hint(f->msg);
    size_t body = hint ? (size_t)(hint - f->msg) : strlen(f->msg);
    while (body > 0 && isspace((unsigned char)f->msg[body - 1]))
        body--;
    print_wrapped(8, "", "", f->msg, body);
    int stub_lesson = 0;
    char stub[100];
    const char *ni = strstr(f->msg, "not implemented: ");
    if (hint)
        print_wrapped(8, "Hint: ", YELLOW, hint + 6, strlen(hint + 6));
    else if (ni && sscanf(ni, "not implemented: %99s (lesson %d)", stub, &stub_lesson) == 2) {
        char h[400];
        const char *file = NULL;
        for (int i = 0; i < NSUITES; i++)
            if (suites[i].lesson == stub_lesson)
                file = suites[i].file;
        snprintf(h, sizeof h, "%s is still a stub: write it in src/%s, where "
                 "\"TODO (lesson %d)\" marks what to write%s", stub, file ? file : "?",
                 stub_lesson, stub_lesson < f->lesson ? "; lessons build on each other, so "
                 "finish the earlier lesson first" : "");
        print_wrapped(8, "Hint: ", YELLOW, h, strlen(h));
    } else if (f->crash) {
        const char *h = crash_hint(f->msg);
        print_wrapped(8, "Hint: ", YELLOW, h, strlen(h));
    }
    printf("        %sat %s:%d%s%s\n", DIM, f->file, f->line,
           f->crash ? " (the last point the test reached)" : "", RESET);
    printf("        %srerun it alone: make test T=%.*s%s%s\n", DIM, bl, f->name,
           f->crash || SANITIZED ? " SAN=1" : "", RESET);
}

/* One line: the name, and the start of the message (without its hint), or
 * its "not implemented: ..." part, which says the most. */
static void print_brief(const failure *f)
{
    const char *msg = f->msg, *ni = strstr(msg, "not implemented: ");
    if (ni)
        msg = ni;
    const char *hint = find_hint(msg);
    int len = hint ? (int)(hint - msg) : (int)strlen(msg);
    while (len > 0 && (msg[len - 1] == ' ' || msg[len - 1] == '.'))
        len--;
    int room = width - 8 - (int)strlen(f->name) - 2;
    if (room < 30)
        room = 30;
    printf("  %s%-5s%s %s: ", RED, f->crash ? "CRASH" : "FAIL", RESET, f->name);
    int n = len > room ? room - 3 : len;
    for (int i = 0; i < n; i++)
        putchar(isspace((unsigned char)msg[i]) ? ' ' : msg[i]);
    puts(len > room ? "..." : "");
}

static void print_failures(bool verbose)
{
    if (nfails == 0)
        return;
    print_full(&fails[0]);
    if (nfails == 1) {
        putchar('\n');
        return;
    }
    if (verbose) {
        for (int i = 1; i < nfails; i++) {
            putchar('\n');
            print_full(&fails[i]);
        }
        putchar('\n');
        return;
    }
    printf("\n  %d more failing:\n", nfails - 1);
    int shown = nfails - 1 > MAX_BRIEF ? MAX_BRIEF : nfails - 1;
    for (int i = 1; i <= shown; i++)
        print_brief(&fails[i]);
    if (nfails - 1 > shown)
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
    for (int i = 0; i < nall_fns && shown < 8; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup |= strcmp(all_fns[i], all_fns[j]) == 0;
        int d = distance(base, all_fns[i]);
        if (!dup && (strstr(all_fns[i], base) || d <= 2 + (int)strlen(base) / 6)) {
            fprintf(stderr, "%s %s", shown ? "," : "run_tests: did you mean", all_fns[i]);
            shown++;
        }
    }
    if (shown)
        fputs("?\n", stderr);
}

/* ---------------------------------------------------------------------- */
/* Running                                                                */
/* ---------------------------------------------------------------------- */

static const char *result_word(TestResult *tr)
{
    switch (tr_rtype(tr)) {
    case CK_PASS: return "pass";
    case CK_FAILURE: return "fail";
    default: return "crash"; /* CK_ERROR: a signal, a timeout, an early exit */
    }
}

/* Write s on one line of a TSV file: tabs and newlines become spaces. */
static void tsv_field(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
}

static void usage(void)
{
    fprintf(stderr, "usage: run_tests [-l LESSON]... [-t TEST] [-r results.tsv] [-q | -v]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    bool want[64] = { false }, any_lesson = false, quiet = false, verbose = false;
    const char *results_path = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "l:t:r:qv")) != -1) {
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
        case 't': only_test = optarg; break;
        case 'r': results_path = optarg; break;
        case 'q': quiet = true; break;
        case 'v': verbose = true; break;
        default: usage();
        }
    }
    if (optind != argc)
        usage();
    setup_output();

    FILE *results = NULL;
    if (results_path != NULL && (results = fopen(results_path, "w")) == NULL) {
        perror(results_path);
        return 2;
    }
    probe_cuda();
    /* Make every suite before running any: lesson 6's first, since the
     * [cuda] cases of lessons 2-5 join it. */
    Suite *made[NSUITES];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < NSUITES; i++)
            if ((suites[i].lesson == 6) == (pass == 0))
                made[i] = suites[i].make();
    if (!quiet && (!any_lesson || want[6]))
        printf("CUDA device: %s\n", cuda_ok ? cuda_name : "unusable (see cuda_device)");
    struct { int lesson, ok, n; const char *name; } ran[NSUITES];
    int passed = 0, failed = 0, ran_suites = 0;
    for (int i = 0; i < NSUITES; i++) {
        /* A runner frees its suite; one not run is freed the same way. */
        SRunner *sr = srunner_create(made[i]);
        if (any_lesson && !want[suites[i].lesson]) {
            srunner_free(sr);
            continue;
        }
        srunner_set_fork_status(sr, CK_FORK);
        /* Each test's child would flush a copy of anything still buffered
         * here when it exits: empty the buffers before forking. */
        fflush(NULL);
        srunner_run_all(sr, CK_SILENT);
        int n = srunner_ntests_run(sr), ok = 0;
        if (n == 0) {
            srunner_free(sr);
            continue;
        }
        TestResult **tr = srunner_results(sr);
        for (int j = 0; j < n; j++) {
            bool pass = tr_rtype(tr[j]) == CK_PASS;
            ok += pass;
            if (!pass)
                keep_failure(suites[i].lesson, tr[j]);
            if (results != NULL) {
                fprintf(results, "%d\t%s\t%s\t", suites[i].lesson, tr_tcname(tr[j]),
                        result_word(tr[j]));
                tsv_field(results, pass ? "" : tr_msg(tr[j]));
                fputc('\n', results);
            }
        }
        free(tr);
        ran[ran_suites].lesson = suites[i].lesson;
        ran[ran_suites].name = suites[i].name;
        ran[ran_suites].ok = ok;
        ran[ran_suites++].n = n;
        passed += ok;
        failed += n - ok;
        srunner_free(sr);
    }
    if (results != NULL)
        fclose(results);
    if (!quiet)
        print_failures(verbose);
    for (int i = 0; i < ran_suites; i++)
        printf("%slesson %d  %-12s %3d/%-3d passed%s\n", ran[i].ok == ran[i].n ? GREEN : "",
               ran[i].lesson, ran[i].name, ran[i].ok, ran[i].n, RESET);
    for (int i = 0; i < nfails; i++) {
        free(fails[i].name);
        free(fails[i].msg);
        free(fails[i].file);
    }
    free(fails);
    for (int i = 0; i < ncase_names; i++)
        free(case_names[i]);
    if (ran_suites == 0) {
        if (only_test != NULL) {
            fprintf(stderr, "run_tests: no test named '%s'%s\n", only_test,
                    any_lesson ? " in the lessons chosen with -l" : "");
            suggest(only_test);
        } else {
            fprintf(stderr, "run_tests: no test matches the selection (lessons: ");
            for (int i = 0; i < NSUITES; i++)
                fprintf(stderr, "%s%d", i ? ", " : "", suites[i].lesson);
            fprintf(stderr, ")\n");
        }
        return 2;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
