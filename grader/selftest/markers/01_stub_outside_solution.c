// expect: 'stub' outside a solution region
// expect-line: 5
int zero(void)
{
    //@ stub
    return 0;
}
