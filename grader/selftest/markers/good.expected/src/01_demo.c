/* 01_demo.c -- fixture for grader/test_skelgen.sh (expected output in
 * ../../good.expected/src/01_demo.c). */
#include "demo.h"

//@ snippet demo_sum
int demo_sum(const int *v, int n)
{
    /* TODO (lesson 1): write demo_sum. */
    (void)v;
    (void)n;

    return demo_not_implemented("demo_sum", 1);
}
//@ end snippet demo_sum

//@ snippet demo_clamp
int demo_clamp(int x, int lo, int hi)
{
	/* TODO (lesson 1): write demo_clamp. */
	if (lo > hi)
	    return lo;  /* spaces after the first one are kept */

	return x;
}
//@ end snippet demo_clamp

/* Not a marker: //@ solution in the middle of a line is plain text. */
int demo_version(void) { return 1; }
