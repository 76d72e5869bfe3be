/*
 * show.h -- what `make show` (tests/show/show.c) shares with the reference
 * it compares the student's views against (tests/show/reference.c).
 *
 * An expression such as arange(24).reshape(2,3,4)[:, ::-1, 1] is a chain
 * of steps: a source (arange, zeros, ones), then views of it (reshape,
 * permute, broadcast_to, slicing, diagonal) and copies (.copy(), lesson 2's
 * nd_compact).  A step's arguments are already checked for form by the
 * parser, not for meaning: whether reshape's sizes fit is the library's
 * business, and its answer is what make show draws.
 */
#ifndef SHOW_H
#define SHOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nd.h"

typedef enum show_kind {
    SHOW_ARANGE,     /* arange(n): v[0] = n                                  */
    SHOW_ZEROS,      /* zeros(shape): n, v = the shape                       */
    SHOW_ONES,       /* ones(shape): n, v = the shape                        */
    SHOW_RESHAPE,    /* .reshape(shape): n, v (one entry may be -1)          */
    SHOW_PERMUTE,    /* .transpose(axes), .permute(axes), .T: n, v = axes, or
                        reverse (no axes given: every axis, reversed)        */
    SHOW_BROADCAST,  /* broadcast_to(x, shape): n, v = the shape             */
    SHOW_SLICE,      /* x[...]: nidx entries of idx; ellipsis is the position
                        of a "..." among them (-1: none), which stands for as
                        many whole axes as the view needs                    */
    SHOW_DIAGONAL,   /* .diagonal(offset, axis1, axis2)                      */
    SHOW_COPY        /* .copy(): a compact copy (nd_compact)                 */
} show_kind;

typedef struct show_op {
    show_kind kind;
    int from, to;            /* the step's text: expr[from..to) */
    int n;                   /* entries of v                    */
    int64_t v[ND_MAX_DIMS + 1];
    bool reverse;
    int nidx, ellipsis;
    nd_index idx[ND_MAX_DIMS + 1];
    int64_t offset;          /* diagonal */
    int axis1, axis2;
} show_op;

/* A view as make show reports it: what a step gave, or why it failed. */
typedef struct show_view {
    nd_status status;        /* ND_OK, or the step's error              */
    bool refused;            /* refused by make show itself, as NumPy
                                would be, before any lesson code ran     */
    char message[600];       /* nd_last_error() when status is not ND_OK */
    int ndim;
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS], offset;
    int64_t size;            /* elements in the buffer under the view   */
} show_view;

/*
 * THE REFERENCE HOOK.  The reference's view after each of the nops steps,
 * into views[0..nops-1], computed without any lesson code (for a source
 * step: its compact layout; after a failing step, nothing more).  Returns
 * false, with the reason in `why`, when no reference is available: then
 * make show draws the student's views alone.
 *
 * Issue #12's test kit holds the independent reference of the lesson 1
 * view functions (tests/kit/); this hook is to be bound to it there, in
 * tests/show/reference.c, and nowhere else.  Until then it has no
 * reference to give.
 */
bool show_reference(const char *expr, const show_op *ops, int nops, show_view *views,
                    char *why, size_t cap);

#endif /* SHOW_H */
