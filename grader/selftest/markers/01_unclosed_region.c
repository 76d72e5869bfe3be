// expect: 'solution add' is never closed (missing '//@ end solution add')
// expect-line: 5
int add(int a, int b)
{
    //@ solution add
    return a + b;
    //@ stub
    //> return 0;
}
