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

#include <signal.h>
#include <stdio.h>

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    k_catch_cpu_limit();   /* a timeout's message then says where it looped */
    return k_serve(0, 3);
}
