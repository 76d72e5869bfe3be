// expect: unknown marker '//@ end'
// expect-line: 9
int add(int a, int b)
{
    //@ solution add
    return a + b;
    //@ stub
    //> return 0;
    //@ end
}
