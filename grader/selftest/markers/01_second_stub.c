// expect: second 'stub' in solution 'add' (first at line 7)
// expect-line: 9
int add(int a, int b)
{
    //@ solution add
    return a + b;
    //@ stub
    //> return 0;
    //@ stub
    //> return 1;
    //@ end solution add
}
