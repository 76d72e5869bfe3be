// expect: 'solution inner' opens inside solution 'outer' (opened at line 5); a solution region cannot contain another solution
// expect-line: 7
int outer(int x)
{
    //@ solution outer
    int y = x + 1;
    //@ solution inner
    y *= 2;
    //@ stub
    //> y = 0;
    //@ end solution inner
    return y;
    //@ stub
    //> return 0;
    //@ end solution outer
}
