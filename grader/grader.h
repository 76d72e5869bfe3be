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
 * A test registered with G_ADD runs once per device built in and its
 * points are split between the devices; G_ADD_HOST registers a test of a
 * pure host function (no arrays), run once.
 */
#ifndef ND_GRADER_H
#define ND_GRADER_H

#include "nd_test.h"

/* The hidden suite of one lesson. */
Suite *g_suite(int lesson, const char *name);

#define G_ADD(s, fn, points, hint) g_add((s), #fn, (fn), (points), (hint), true)
#define G_ADD_HOST(s, fn, points, hint) g_add((s), #fn, (fn), (points), (hint), false)
void g_add(Suite *s, const char *name, const TTest *fn, double points, const char *hint,
           bool per_device);

#endif /* ND_GRADER_H */
