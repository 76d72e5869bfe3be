// expect: line in the stub of solution 'add' does not start with '//>'
// expect-line: 9
int add(int a, int b)
{
    //@ solution add
    return a + b;
    //@ stub
    //> (void)a;
    (void)b;
    //> return 0;
    //@ end solution add
}
