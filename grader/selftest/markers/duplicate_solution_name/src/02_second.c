// expect: solution name 'add' is used more than once (also at 
// expect-line: 5
long add(long a, long b)
{
    //@ solution add
    return a + b;
    //@ stub
    //> return 0;
    //@ end solution add
}
