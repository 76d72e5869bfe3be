// expect: solution 'add' has no '//@ stub' line
// expect-line: 5
int add(int a, int b)
{
    //@ solution add
    return a + b;
    //@ end solution add
}
