// expect: solution 'add' in a file that is not a lesson file
// expect-line: 5
int add(int a, int b)
{
    //@ solution add
    return a + b;
    //@ stub
    //> return 0;
    //@ end solution add
}
