// expect: 'end solution add' closes 'solution sum' opened at line 5
// expect-line: 9
int sum(int a, int b)
{
    //@ solution sum
    return a + b;
    //@ stub
    //> return 0;
    //@ end solution add
}
