/*
 * executor.c -- the process that holds a submission while the grader tests
 * it.  Linked with the submission's lesson objects, the framework and the
 * kit's executor (tests/kit/exec.c, wire.c): no test, no reference, no
 * hint.  A test's executor reads calls on fd 0 and answers each with the
 * raw result on fd 3; whatever the submission prints goes to fds 1 and 2,
 * which the grader keeps apart from every verdict.  It ends at the end of
 * its input.
 *
 *   executor serve cpu|gpu   the grader's way: started once in its
 *                            sandbox (grader/sandbox.c, the zygote), it
 *                            serves the requests on fd 0, one fresh child
 *                            per test, whose CPU time its parent measures
 *                            and limits; each child locks itself down
 *                            before it reads a call
 *   executor [CPU-SECONDS [gpu|cpu]]
 *                            one test in this process (a debugging aid):
 *                            its own CPU limit, then the same lock-down
 *
 * Only the grader's code runs before a child's lock-down: the grader
 * refuses lesson objects that could run code by themselves (constructors,
 * ifunc resolvers, ...), and the server never calls lesson code.
 */
#include "kit_impl.h"
#include "runner.h"
#include "sandbox.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* gcov's runtime, in the coverage build (grader/coverage.sh): a child
 * ends with _exit, which skips the handler that writes the counts. */
void __gcov_dump(void) __attribute__((weak));

static sb_policy policy;

/* One test: its CPU limit (for the stack at the limit: the server
 * enforces it), the lock-down, then the calls. */
static int one_test(double cpu_seconds)
{
    signal(SIGPIPE, SIG_IGN);
    k_catch_cpu_limit();   /* a timeout's message then says where it looped */
    if (cpu_seconds > 0)
        k_limit_cpu(cpu_seconds);
    if (sb_lockdown(policy) != 0) {
        fprintf(stderr, "executor: cannot lock down: %s\n", sb_error());
        return 3;
    }
    int rc = k_serve(0, 3, k_exec_owning);
    if (__gcov_dump != NULL)
        __gcov_dump();
    return rc;
}

static int child(const sb_child_opts *c)
{
    return one_test(c->cpu_s);
}

int main(int argc, char **argv)
{
    policy = argc > 2 && strcmp(argv[2], "gpu") == 0 ? SB_POLICY_GPU : SB_POLICY_CPU;
    if (argc > 1 && strcmp(argv[1], "serve") == 0) {
        if (sb_zygote_serve(0, child) != 0) {
            fprintf(stderr, "executor: the server stopped: %s\n", sb_error());
            return 3;
        }
        return 0;
    }
    return one_test(argc > 1 ? atof(argv[1]) : 0);
}
