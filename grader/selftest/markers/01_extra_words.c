// expect: unexpected 'now' after '//@ solution add'
// expect-line: 5
int add(int a, int b)
{
    //@ solution add now
    return a + b;
    //@ stub
    //> return 0;
    //@ end solution add
}
