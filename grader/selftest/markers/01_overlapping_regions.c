// expect: 'end snippet add' closes 'snippet add' opened at line 3, but 'solution add' opened at line 6 inside it is still open; regions must nest
// expect-line: 9
//@ snippet add
int add(int a, int b)
{
    //@ solution add
    return a + b;
    //@ stub
    //@ end snippet add
    //> return 0;
    //@ end solution add
}
