/*
 * executor.c -- the process that holds a submission while the grader tests
 * it.  Linked with the submission's lesson objects, the framework and the
 * kit's executor (tests/kit/exec.c, wire.c): no test, no reference, no
 * hint.  It reads calls on fd 0 and answers each with the raw result on
 * fd 3; whatever the submission prints goes to fds 1 and 2, which the
 * grader keeps apart from every verdict.  It ends at the end of its input.
 *
 * The grader starts it in its sandbox (grader/sandbox.c); before it reads
 * anything it locks itself down further.
 */
#include "kit_impl.h"
#include "runner.h"
#include "sandbox.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* executor [CPU-SECONDS [gpu|cpu]]: the grader gives its CPU limit, to the
 * microsecond, and whether a GPU's runtime must be allowed. */
int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    k_catch_cpu_limit();   /* a timeout's message then says where it looped */
    if (argc > 1)
        k_limit_cpu(atof(argv[1]));
    if (sb_lockdown(argc > 2 && strcmp(argv[2], "gpu") == 0 ? SB_POLICY_GPU : SB_POLICY_CPU) != 0) {
        fprintf(stderr, "executor: cannot lock down: %s\n", sb_error());
        return 3;
    }
    int rc = k_serve(0, 3, k_exec);
    /* After the last result, the CPU time this process used: the sandbox
     * runs it below bubblewrap, whose wait status carries no usage of its
     * own child, so this is the only account of it (it sets the limits
     * of the next grades when the solution is timed; a submission that
     * lies here only changes what its own messages say). */
    char t[64];
    int n = snprintf(t, sizeof t, K_CPU_TRAILER "%.6f\n", k_cpu_of(NULL));
    if (rc == 0 && write(3, t, (size_t)n) != n)
        return 3;
    return rc;
}
