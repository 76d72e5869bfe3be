/*
 * grader.h -- what a hidden test file uses (grader/hidden/hNN_*.c).
 *
 * Hidden tests are written like the public ones (tests/nd_test.h: the same
 * helpers, reference and assertions) but each carries points and a hint
 * that the report shows when it fails.  They are never shipped to
 * students (make handout leaves grader/hidden/ out).
 *
 *   START_TEST(slice_negative_steps_deep) { ... } END_TEST
 *
 *   Suite *hidden_01_views(void)
 *   {
 *       Suite *s = g_suite(1, "01_views");
 *       G_ADD(s, slice_negative_steps_deep, 2,
 *             "a negative step starts at the last element the slice selects");
 *       ...
 *       return s;
 *   }
 *
 * A test registered with G_ADD runs once per device, as "name[cpu]" and
 * "name[cuda]".  In lessons 2-5 the [cpu] case carries the points and the
 * [cuda] case counts for lesson 6 (the kernels it runs are lesson 6's),
 * at a quarter of them; in lessons 6 and 7 the points are split between
 * the devices; lesson 1 (views, no data moved) runs on the CPU alone.
 * G_ADD_HOST registers a test of a pure host function (no arrays), run
 * once; G_ADD_CUDA a test for the CUDA device alone; G_ADD_CPU a test of
 * lessons 2-5 too slow for the emulator, on the CPU alone.  The [cuda]
 * cases of lessons 2-5 run in the plain build only (the emulator under
 * the sanitizers is slow; lesson 6's own tests run there).  G_ADD_CUDA_PLAIN is
 * G_ADD_CUDA (G_ADD_PLAIN: G_ADD) for a test too slow for the emulator
 * under the sanitizers: it runs in the plain build only, whose result
 * stands for both.
 */
#ifndef ND_GRADER_H
#define ND_GRADER_H

#include "nd_test.h"

/* The hidden suite of one lesson. */
Suite *g_suite(int lesson, const char *name);

enum { G_HOST = 0, G_DEVICES = 1, G_CUDA = 2, G_PLAIN = 4, G_CPU = 8 };
#define G_ADD(s, fn, points, hint) g_add((s), #fn, (fn), (points), (hint), G_DEVICES)
#define G_ADD_HOST(s, fn, points, hint) g_add((s), #fn, (fn), (points), (hint), G_HOST)
#define G_ADD_CUDA(s, fn, points, hint) g_add((s), #fn, (fn), (points), (hint), G_CUDA)
#define G_ADD_CPU(s, fn, points, hint) \
    g_add((s), #fn, (fn), (points), (hint), G_DEVICES | G_CPU)
#define G_ADD_PLAIN(s, fn, points, hint) \
    g_add((s), #fn, (fn), (points), (hint), G_DEVICES | G_PLAIN)
#define G_ADD_CUDA_PLAIN(s, fn, points, hint) \
    g_add((s), #fn, (fn), (points), (hint), G_CUDA | G_PLAIN)
void g_add(Suite *s, const char *name, const TTest *fn, double points, const char *hint,
           int flags);

#endif /* ND_GRADER_H */
