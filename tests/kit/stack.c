/*
 * stack.c -- where the code under test was when its CPU time ran out:
 * linked into every process that runs it (a student's test worker, the
 * grader's executor), so that a timeout's message can name the looping
 * function and line of the lesson file.
 */
#include "runner.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

/* AddressSanitizer's runtime, when this program is built with it. */
void __sanitizer_print_stack_trace(void) __attribute__((weak));

/* At the CPU limit (SIGXCPU), print the stack to stderr, so that the
 * message can say which function of which lesson file was looping, then
 * die of the signal as if untouched. */
static void stack_at_limit(int sig)
{
    static const char line[] = "\nThe CPU time limit was reached here:\n";
    ssize_t w = write(2, line, sizeof line - 1);
    (void)w;
    if (__sanitizer_print_stack_trace != NULL) {
        __sanitizer_print_stack_trace();
    } else {
        void *frames[64];
        backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
    }
    signal(SIGXCPU, SIG_DFL);
    raise(SIGXCPU);
    (void)sig;
}

void k_catch_cpu_limit(void)
{
    signal(SIGXCPU, stack_at_limit);
    signal(SIGPROF, stack_at_limit);
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

