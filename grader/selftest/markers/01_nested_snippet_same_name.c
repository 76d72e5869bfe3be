// expect: 'snippet sum' opens inside 'snippet sum' opened at line 3; a snippet cannot nest in one of the same name
// expect-line: 5
//@ snippet sum
int sum(const int *v, int n)
//@ snippet sum
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}
//@ end snippet sum
//@ end snippet sum
