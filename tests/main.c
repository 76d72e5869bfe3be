/*
 * main.c -- the public test runner.  Every test runs in its own forked
 * child (Check's fork mode) with a timeout, so a crash or an endless loop
 * in lesson code costs that one test.
 *
 *   run_tests [-l LESSON]... [-t TEST] [-r results.tsv] [-q]
 *
 * -l picks lessons (repeatable), -t one test by name ("reshape_random" or
 * "reshape_random[cpu]"), -r also writes one line per test for scripts:
 * lesson, test, result (pass, fail or crash), message.  The last line is
 * "N passed, N failed"; the exit status is 0 only when nothing failed.
 */
#include "nd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The public suites, one per lesson, in lesson order.  "Lesson 0" is the
 * framework (src/array.c), which passes on the skeleton too. */
Suite *suite_00_array(void);
Suite *suite_01_views(void);
Suite *suite_02_compact(void);
Suite *suite_03_ewise(void);
Suite *suite_04_reduce(void);
Suite *suite_05_matmul(void);

static const struct {
    int lesson;
    const char *name;
    Suite *(*make)(void);
} suites[] = {
    { 0, "00_array", suite_00_array },
    { 1, "01_views", suite_01_views },
    { 2, "02_compact", suite_02_compact },
    { 3, "03_ewise", suite_03_ewise },
    { 4, "04_reduce", suite_04_reduce },
    { 5, "05_matmul", suite_05_matmul },
};
#define NSUITES (int)(sizeof suites / sizeof suites[0])

/* Seconds a test may run before it is killed.  Check multiplies this by
 * CK_TIMEOUT_MULTIPLIER (the sanitizer build sets it). */
#define TEST_TIMEOUT 20

static const char *only_test; /* -t */

/* ---------------------------------------------------------------------- */
/* Registration (declared in nd_test.h)                                   */
/* ---------------------------------------------------------------------- */

static void use_cpu(void) { T_DEV = ND_CPU; }
#ifdef ND_TEST_CUDA
static void use_cuda(void) { T_DEV = ND_CUDA; }
#endif

static const struct {
    const char *name;
    void (*setup)(void);
} devices[] = {
    { "cpu", use_cpu },
#ifdef ND_TEST_CUDA
    { "cuda", use_cuda },
#endif
};
#define NDEVICES (int)(sizeof devices / sizeof devices[0])

Suite *t_suite(int lesson, const char *name)
{
    (void)lesson;
    return suite_create(name);
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

void t_add(Suite *s, const char *fn_name, const TTest *fn, bool per_device)
{
    for (int d = 0; d < (per_device ? NDEVICES : 1); d++) {
        char name[200];
        snprintf(name, sizeof name, per_device ? "%s[%s]" : "%s", fn_name, devices[d].name);
        if (!selected(fn_name, name))
            continue;
        TCase *tc = tcase_create(keep_name(name));
        tcase_add_checked_fixture(tc, devices[d].setup, NULL);
        tcase_set_timeout(tc, TEST_TIMEOUT);
        tcase_add_test(tc, fn);
        suite_add_tcase(s, tc);
    }
}

/* ---------------------------------------------------------------------- */
/* Running and reporting                                                  */
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
    fprintf(stderr, "usage: run_tests [-l LESSON]... [-t TEST] [-r results.tsv] [-q]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    bool want[64] = { false }, any_lesson = false, quiet = false;
    const char *results_path = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "l:t:r:q")) != -1) {
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
        default: usage();
        }
    }
    if (optind != argc)
        usage();

    FILE *results = NULL;
    if (results_path != NULL && (results = fopen(results_path, "w")) == NULL) {
        perror(results_path);
        return 2;
    }
    int passed = 0, failed = 0, ran_suites = 0;
    for (int i = 0; i < NSUITES; i++) {
        if (any_lesson && !want[suites[i].lesson])
            continue;
        Suite *s = suites[i].make();
        SRunner *sr = srunner_create(s);
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
        ran_suites++;
        TestResult **tr = srunner_results(sr);
        for (int j = 0; j < n; j++) {
            bool pass = tr_rtype(tr[j]) == CK_PASS;
            ok += pass;
            if (!pass && !quiet)
                printf("  %-5s %s: %s\n        at %s:%d\n", tr_rtype(tr[j]) == CK_FAILURE ?
                       "FAIL" : "CRASH", tr_tcname(tr[j]), tr_msg(tr[j]),
                       tr_lfile(tr[j]) ? tr_lfile(tr[j]) : "?", tr_lno(tr[j]));
            if (results != NULL) {
                fprintf(results, "%d\t%s\t%s\t", suites[i].lesson, tr_tcname(tr[j]),
                        result_word(tr[j]));
                tsv_field(results, pass ? "" : tr_msg(tr[j]));
                fputc('\n', results);
            }
        }
        free(tr);
        printf("lesson %d  %-12s %3d/%-3d passed\n", suites[i].lesson, suites[i].name, ok, n);
        passed += ok;
        failed += n - ok;
        srunner_free(sr);
    }
    if (results != NULL)
        fclose(results);
    for (int i = 0; i < ncase_names; i++)
        free(case_names[i]);
    if (ran_suites == 0) {
        fprintf(stderr, "run_tests: no test matches the selection\n");
        return 2;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
