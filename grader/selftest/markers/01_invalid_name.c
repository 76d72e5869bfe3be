// expect: '2d_index' is not a valid snippet name
// expect-line: 3
//@ snippet 2d_index
int index2(int i, int j, int n) { return i * n + j; }
//@ end snippet 2d_index
