// expect: solution name 'add' is used more than once (also at 
// expect-line: 5
int add(int a, int b)
{
    //@ solution add
    return a + b;
    //@ stub
    //> return 0;
    //@ end solution add
}
