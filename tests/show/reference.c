/*
 * reference.c -- the reference make show compares a student's views with.
 *
 * This is the one hook (declared in show.h) that binds make show to the
 * independent reference of the lesson 1 view functions in the test kit
 * (tests/kit/, issue #12), once that lands on main.  Until then there is
 * no reference, and make show draws the student's views alone: it must not
 * grow a second reference of its own.
 */
#include <stdio.h>

#include "show.h"

bool show_reference(const char *expr, const show_op *ops, int nops, show_view *views,
                    char *why, size_t cap)
{
    (void)expr;
    (void)ops;
    (void)nops;
    (void)views;
    snprintf(why, cap, "no reference yet: the test kit's view reference (tests/kit/, "
             "issue #12) is not bound in tests/show/reference.c");
    return false;
}
