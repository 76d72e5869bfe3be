/*
 * reference.c -- the reference make show compares a student's views with:
 * the test kit's own (tests/kit/ref.c), step by step, on layouts alone.
 *
 * Each step is the call the student's code was given, made on the
 * reference's view after the step before (for a source, its compact
 * layout); the kit's reference says the view it must give, or the error
 * and the rule it breaks.  No lesson code runs here.
 */
#include <stdio.h>
#include <string.h>

#include "kit.h"
#include "show.h"

static k_op op_of(show_kind kind)
{
    switch (kind) {
    case SHOW_RESHAPE: return K_RESHAPE;
    case SHOW_PERMUTE: return K_PERMUTE;
    case SHOW_BROADCAST: return K_BROADCAST_TO;
    case SHOW_SLICE: return K_SLICE;
    default: return K_DIAGONAL;
    }
}

bool show_reference(const char *expr, const show_op *ops, int nops, show_view *views,
                    char *why, size_t cap)
{
    (void)expr;
    (void)why;
    (void)cap;
    k_ctx *k = k_ctx_new(ND_CPU);
    k_arr cur = { .kind = K_VIEW };
    int64_t size = 0;
    for (int i = 0; i < nops; i++) {
        const show_op *op = &ops[i];
        show_view *v = &views[i];
        memset(v, 0, sizeof *v);
        v->status = ND_OK;
        if (op->kind == SHOW_ARANGE || op->kind == SHOW_ZEROS || op->kind == SHOW_ONES ||
            op->kind == SHOW_COPY) {
            /* a new compact array: of its shape, or of the copied view's */
            if (op->kind != SHOW_COPY) {
                cur.ndim = op->kind == SHOW_ARANGE ? 1 : op->n;
                for (int d = 0; d < cur.ndim; d++)
                    cur.shape[d] = op->kind == SHOW_ARANGE ? op->v[0] : op->v[d];
            }
            size = k_numel(cur.ndim, cur.shape);
            cur.offset = 0;
            for (int d = cur.ndim - 1, s = 1; d >= 0; s *= (int)(cur.shape[d] > 0 ? cur.shape[d] : 1), d--)
                cur.strides[d] = s;
        } else {
            k_call c = k_new(k, op_of(op->kind));
            c.nbufs = 1;
            c.bufs[0] = (k_buf){ .n = size, .v = NULL };   /* layouts only */
            k_arg(&c, cur);
            if (op->kind == SHOW_PERMUTE) {
                for (int d = 0; d < cur.ndim; d++)
                    c.list[0][d] = op->reverse ? cur.ndim - 1 - d : op->v[d];
            } else if (op->kind == SHOW_SLICE) {
                int n = 0;   /* "..." stands for as many whole axes as needed */
                for (int j = 0; j < op->nidx && n < K_LIST; j++)
                    if (j != op->ellipsis)
                        c.idx[n++] = op->idx[j];
                    else
                        for (int d = op->nidx - 1; d < cur.ndim && n < K_LIST; d++)
                            c.idx[n++] = ND_ALL;
                c.n = n;
            } else if (op->kind == SHOW_DIAGONAL) {
                c.at[0] = op->offset;
                c.at[1] = op->axis1;
                c.at[2] = op->axis2;
            } else {
                k_list(&c, 0, op->n, op->v);
            }
            k_want w = k_reference(k, &c);
            if (w.status != ND_OK) {
                v->status = w.status;
                snprintf(v->message, sizeof v->message, "%s", w.why ? w.why : "");
                k_case_end(k);
                break;   /* nothing after a failing step */
            }
            cur.ndim = w.ndim;
            memcpy(cur.shape, w.shape, sizeof cur.shape);
            memcpy(cur.strides, w.strides, sizeof cur.strides);
            cur.offset = w.offset;
            k_case_end(k);
        }
        v->ndim = cur.ndim;
        memcpy(v->shape, cur.shape, sizeof v->shape);
        memcpy(v->strides, cur.strides, sizeof v->strides);
        v->offset = cur.offset;
        v->size = size;
    }
    k_ctx_free(k);
    return true;
}
