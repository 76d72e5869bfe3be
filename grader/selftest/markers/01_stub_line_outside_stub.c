// expect: '//>' stub line outside a stub section
// expect-line: 6
int add(int a, int b)
{
    //@ solution add
    //> return 0;
    return a + b;
    //@ stub
    //> return 0;
    //@ end solution add
}
