// expect: unknown marker '//@ soluton add'
// expect-line: 5
int add(int a, int b)
{
    //@ soluton add
    return a + b;
    //@ stub
    //> return 0;
    //@ end solution add
}
