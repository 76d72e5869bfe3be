/*
 * runner.h -- the one test runner, with two thin mains: tests/run_tests.c
 * (the student's runs: the executor in the test's own process) and
 * grader/verdict.c (the grader: each test's calls go to a separate
 * executor process that holds the submission; this process never loads
 * it).
 *
 * Every case (a test on one device) runs in its own forked worker, up to
 * `jobs` at once.  A worker that calls the executor in-process gets a CPU
 * time limit (RLIMIT_CPU); a remote executor gets it instead.  A wall
 * clock limit, much longer, only backs the CPU limit up: a loaded machine
 * slows a test down but never fails it.
 */
#ifndef ND_KIT_RUNNER_H
#define ND_KIT_RUNNER_H

#include "kit.h"

#include <stdio.h>

typedef enum { K_PASS, K_FAIL, K_CRASH, K_TIMEOUT, K_SKIPPED } k_result;

typedef struct k_case {
    const k_test *test;
    const k_suite *suite;
    nd_device dev;
    char name[160];        /* "fn", or "fn[dev]" for a test per device */
    int lesson;            /* the lesson it counts for ([cuda] of 2-5: 6) */
    double points;
    double limit;          /* CPU seconds */
    double short_limit;    /* ... once timeouts have used the plan's budget */
    double expected;       /* the solution's CPU seconds (0: not known); the
                              plan starts the longest cases first */
    double expected_mb;    /* the solution's peak memory, this process's and
                              its executors' (0: not known) */
    bool skip;             /* not run (result K_SKIPPED, msg says why) */
    /* the outcome */
    k_result result;
    char *msg;             /* malloc'd */
    char *file;            /* where the failing check is, or NULL */
    int line;
    double cpu;            /* seconds */
    double peak_mb;        /* peak resident memory: the worker's and its
                              executors' (the largest), MB */
    char *output;          /* the file the code under test prints to */
} k_case;

typedef struct k_plan {
    k_case *cases;
    int n;
    int jobs;
    /* NULL: calls run in the worker itself.  Otherwise the executor to
     * start for a case (k_launch starts it). */
    const char *(*executor)(const k_case *c);
    const char *outdir;           /* where each case's output goes */
    /* at most this many MB of the cases' expected memory at once (0: no
     * bound; a case larger than it runs alone) */
    double mem_budget_mb;
    /* called as cases start and end (for a progress line) */
    void (*progress)(const k_case *c, int done, int total, bool started);
    /* the constant part of the wall-clock backstop, in seconds (0: the 30
     * of K_WALL_LIMIT; a test of the backstop itself sets less) */
    double wall_grace;
    /* the code under test prints here, not to its case's output file
     * (make debug, where it prints in the debugger's terminal) */
    bool output_here;
} k_plan;

/* Every case of the suites, in order: each test once per device its
 * `where` names and `devices` allows (K_CPU | K_CUDA); `only` (a test,
 * "fn" or "fn[dev]") and `lessons` (NULL: all; indexed by the lesson a
 * case counts for) select.  *n gets the count; the array is malloc'd. */
k_case *k_cases(const k_suite *const *suites, int nsuites, int devices, const char *only,
                const bool *lessons, int *n);

/* The executor in this process (run_tests sets it to k_exec).  The
 * grader's verdict leaves it NULL: it never links the library. */
extern void (*k_local)(const k_call *c, k_res *r);

/* Run the plan's cases that are not skipped; fills each case's outcome.
 * Once cases that timed out have used K_TIMEOUT_BUDGET CPU seconds, cases
 * still to start get their short_limit (a submission that loops in a
 * function every test calls then costs minutes, not an hour). */
void k_run_plan(k_plan *p);
#define K_TIMEOUT_BUDGET 10

/* The wall-clock backstop of a case, or an executor, whose CPU limit is
 * `cpu` seconds.  The runner counts it in the seconds the case could run:
 * time its processes spent waiting for a CPU on a busy machine is not
 * counted, so the backstop stops only a test that sleeps or blocks, never
 * one that a crowded machine slows down (its CPU limit decides). */
#define K_WALL_LIMIT(cpu) K_WALL_LIMIT_GRACE(cpu, K_WALL_GRACE)
#define K_WALL_LIMIT_GRACE(cpu, grace) (10 * (cpu) + (grace))
#define K_WALL_GRACE 30

/* The signal the runner sends a case at the backstop: its handler
 * (k_catch_cpu_limit) prints the stack under K_BACKSTOP_LINE, then the
 * case dies of SIGKILL. */
#define K_STACK_SIGNAL SIGUSR2
#define K_BACKSTOP_LINE "The wall-clock backstop stopped it here"
/* The wall-clock seconds it has for that before the runner's SIGKILL:
 * the handler ends the case itself once the stack is out, but under the
 * sanitizers the stack is symbolized by another program, which on a
 * crowded machine took more than 3 s (the stack was lost). */
#define K_STACK_WAIT 20
/* The start of the message of a case the backstop stopped (make status
 * never keeps such a result: it runs the case again). */
#define K_BACKSTOP_WORDS "stopped by the wall-clock backstop"

/* Start an executor: the program `path` (NULL: a fork of this one, serving
 * calls with k_local) with its calls on fd 0, results on fd 3 and its
 * output to `output` (or /dev/null), under the CPU limit.  A launcher (the
 * grader's sandbox) may replace it. */
typedef pid_t k_launcher(const char *path, int calls, int results, const char *output,
                         double cpu_seconds);
extern k_launcher *k_launch;

/* Wait for a launched executor: a wait status as waitpid gives it, its
 * CPU seconds, its peak resident memory in MB (0: not known), and, when
 * the launcher knows better (the sandbox killed it), a sentence in why
 * (else why[0] stays '\0').  The default is wait4. */
typedef int k_reaper(pid_t pid, int *status, double *cpu, double *peak_mb, char *why,
                     size_t cap);
extern k_reaper *k_reap;

/* Probe the CUDA device in an executor (`executor`, as k_launch takes it;
 * never in this process: a CUDA context does not survive a fork): true
 * with its name, or false with the reason. */
bool k_probe_cuda(const char *executor, char *name, size_t cap);

/* Seconds of CPU a case may use: per-test times measured on the solution
 * ("name<TAB>seconds[<TAB>MB]" lines) times `factor`, at least `floor`;
 * its short limit (see k_run_plan) is 3 times the solution's, at least
 * floor/4; MB, the solution's peak memory, is the case's expected_mb. */
void k_set_limits(k_case *cases, int n, const char *times_path, double factor, double floor);

const char *k_result_word(k_result r);

/* s (NULL: nothing) as a field of a results TSV: tabs and line breaks as spaces. */
void k_tsv_field(FILE *f, const char *s);

/* At the CPU limit, print the stack (to say where the code was looping),
 * then die of SIGXCPU as before.  The executor calls it too. */
void k_catch_cpu_limit(void);

/* Limit this process (and a program it then execs) to `seconds` of CPU. */
void k_limit_cpu(double seconds);

/* The CPU seconds, user and system, of a usage (NULL: this process's). */
struct rusage;
double k_cpu_of(const struct rusage *ru);

#endif /* ND_KIT_RUNNER_H */
