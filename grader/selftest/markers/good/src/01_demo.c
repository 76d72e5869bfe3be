/* 01_demo.c -- fixture for grader/test_skelgen.sh (expected output in
 * ../../good.expected/src/01_demo.c). */
#include "demo.h"

//@ snippet demo_sum
int demo_sum(const int *v, int n)
{
    //@ solution demo_sum
    int s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
    //@ stub
    //> (void)v;
    //> (void)n;

    //> return demo_not_implemented("demo_sum", 1);
    //@ end solution demo_sum
}
//@ end snippet demo_sum

//@ snippet demo_clamp
int demo_clamp(int x, int lo, int hi)
{
	//@ solution demo_clamp
	return x < lo ? lo : x > hi ? hi : x;
	//@ stub
	//>if (lo > hi)
	//>     return lo;  /* spaces after the first one are kept */
	//>
	//> return x;
	//@ end solution demo_clamp
}
//@ end snippet demo_clamp

/* Not a marker: //@ solution in the middle of a line is plain text. */
int demo_version(void) { return 1; }
