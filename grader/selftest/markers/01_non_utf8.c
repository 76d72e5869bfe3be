// expect: not valid UTF-8 (byte 0xe9)
// expect-line: 3
/* café: Latin-1, not UTF-8 */
int x;
