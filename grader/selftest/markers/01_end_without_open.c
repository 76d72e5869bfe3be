// expect: 'end snippet add' but no snippet region is open
// expect-line: 4
int add(int a, int b) { return a + b; }
//@ end snippet add
