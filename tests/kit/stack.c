/*
 * stack.c -- the CPU time of the code under test: its limit, what it used,
 * and where the code was when it ran out.  Linked into every process that
 * runs it (a student's test worker, the grader's executor), so that a
 * timeout's message can name the looping function and line of the lesson
 * file.
 */
#include "runner.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

/* AddressSanitizer's runtime, when this program is built with it. */
void __sanitizer_print_stack_trace(void) __attribute__((weak));

/* At the CPU limit (SIGPROF, or SIGXCPU from RLIMIT_CPU), print the
 * stack to stderr, so that the message can say which function of which
 * lesson file was looping, then die of SIGXCPU as if untouched.  No
 * sigaction call here: the grader's seccomp filter keeps the SIGXCPU
 * handler as it was set before the lockdown, so the handler is installed
 * with SA_RESETHAND (the kernel restores the default as it enters it) and
 * SA_NODEFER (the raise inside it is delivered at once). */
/* The line, then the stack, on stderr (from a signal handler). */
static void print_stack(const char *line, size_t len)
{
    ssize_t w = write(2, line, len);
    (void)w;
    if (__sanitizer_print_stack_trace != NULL) {
        __sanitizer_print_stack_trace();
    } else {
        void *frames[64];
        backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
    }
}

static void stack_at_limit(int sig)
{
    static volatile sig_atomic_t printed;
    if (!printed) {
        printed = 1;
        static const char line[] = "\nThe CPU time limit was reached here:\n";
        print_stack(line, sizeof line - 1);
    }
    raise(SIGXCPU);   /* from SIGPROF: once more through here, then the default */
    (void)sig;
}

/* At the wall-clock backstop (the runner's K_STACK_SIGNAL, to a test that
 * has used little CPU for far too long: asleep, or blocked), print the
 * stack the same way, under its own line, then die of SIGKILL. */
static void stack_at_backstop(int sig)
{
    static const char line[] = "\n" K_BACKSTOP_LINE ":\n";
    print_stack(line, sizeof line - 1);
    raise(SIGKILL);
    (void)sig;
}

void k_catch_cpu_limit(void)
{
    struct sigaction sa = { .sa_handler = stack_at_limit, .sa_flags = SA_RESETHAND | SA_NODEFER };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGXCPU, &sa, NULL);
    sigaction(SIGPROF, &sa, NULL);
    sa.sa_handler = stack_at_backstop;
    sigaction(K_STACK_SIGNAL, &sa, NULL);
}

void k_limit_cpu(double seconds)
{
    /* ITIMER_PROF counts this process's CPU time to the microsecond;
     * RLIMIT_CPU (whole seconds) backs it up if the signal is ignored */
    struct itimerval t = { { 0, 0 }, { (time_t)seconds,
                                       (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6) } };
    if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0)
        t.it_value.tv_usec = 1000;
    setitimer(ITIMER_PROF, &t, NULL);
    struct rlimit r = { (rlim_t)seconds + 2, (rlim_t)seconds + 3 };
    setrlimit(RLIMIT_CPU, &r);
}


double k_cpu_of(const struct rusage *ru)
{
    struct rusage self;
    if (ru == NULL) {
        getrusage(RUSAGE_SELF, &self);
        ru = &self;
    }
    return (double)ru->ru_utime.tv_sec + 1e-6 * (double)ru->ru_utime.tv_usec +
           (double)ru->ru_stime.tv_sec + 1e-6 * (double)ru->ru_stime.tv_usec;
}
