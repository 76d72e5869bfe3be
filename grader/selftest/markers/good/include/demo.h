/* demo.h -- fixture: a file with no markers, copied unchanged. */
#ifndef DEMO_H
#define DEMO_H
int demo_not_implemented(const char *name, int lesson);
int demo_sum(const int *v, int n);
int demo_clamp(int x, int lo, int hi);
#endif
