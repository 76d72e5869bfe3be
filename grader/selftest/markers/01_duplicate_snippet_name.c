// expect: snippet name 'add' is used more than once (also at
// expect-line: 3
//@ snippet add
int add(int a, int b) { return a + b; }
//@ end snippet add

//@ snippet add
int add3(int a, int b, int c) { return a + b + c; }
//@ end snippet add
