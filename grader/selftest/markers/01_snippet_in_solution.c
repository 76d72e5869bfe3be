// expect: 'snippet loop' opens inside solution 'sum' (opened at line 5); a solution region cannot contain a snippet
// expect-line: 7
int sum(const int *v, int n)
{
    //@ solution sum
    int s = 0;
    //@ snippet loop
    for (int i = 0; i < n; i++)
        s += v[i];
    //@ end snippet loop
    return s;
    //@ stub
    //> return 0;
    //@ end solution sum
}
