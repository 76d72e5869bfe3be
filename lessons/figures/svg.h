/*
 * svg.h -- the few SVG primitives the figure generators need, and the
 * drawing of a buffer as a strip or a grid of numbered cells.  Header-only:
 * each generator (views_svg.c, compact_svg.c) is one program.
 *
 * Coordinates are in CSS pixels; the SVG has a viewBox, so it scales to
 * the page.  Text uses generic font families only (no web fonts).
 */
#ifndef FIG_SVG_H
#define FIG_SVG_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd.h"

#define CELL 34         /* side of one cell, px */
#define FONT "ui-sans-serif, system-ui, sans-serif"
#define MONO "ui-monospace, monospace"

/* Stop the generator with a message: figures are built by `make docs`,
 * which must fail loudly rather than publish half a figure. */
static inline void die(const char *what)
{
    fprintf(stderr, "figures: %s: %s\n", what, nd_last_error());
    exit(1);
}

#define TRY(call)                 \
    do {                          \
        if ((call) != ND_OK)      \
            die(#call);           \
    } while (0)

static inline FILE *svg_open(const char *dir, const char *name, int w, int h, const char *title)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "figures: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
               "width=\"%d\" height=\"%d\" role=\"img\" font-family=\"%s\">\n"
               "<title>%s</title>\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            w, h, w, h, FONT, title);
    return f;
}

static inline void svg_close(FILE *f)
{
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) {
        perror("figures: write");
        exit(1);
    }
}

/* Text; anchor is "start", "middle" or "end". */
static inline void svg_text(FILE *f, double x, double y, double size, const char *anchor,
                     const char *fill, bool mono, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"%s\" "
               "fill=\"%s\"%s>%s</text>\n",
            x, y, size, anchor, fill, mono ? " font-family=\"" MONO "\"" : "", buf);
}

static inline void svg_rect(FILE *f, double x, double y, double w, double h, const char *fill,
                     const char *stroke)
{
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
               "stroke=\"%s\"/>\n", x, y, w, h, fill, stroke);
}

static inline void svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke,
                     double width)
{
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
               "stroke-width=\"%.1f\"/>\n", x1, y1, x2, y2, stroke, width);
}

/* The fill of the i-th of n visited cells: light to darker blue, so the
 * order of a walk shows even without reading the numbers. */
static inline void visit_color(int64_t i, int64_t n, char *dst, size_t cap)
{
    double t = n > 1 ? (double)i / (double)(n - 1) : 0.0;
    snprintf(dst, cap, "hsl(208, 75%%, %.0f%%)", 90.0 - 28.0 * t);
}

/* What the view does to each buffer cell: which of its positions (in
 * row-major order) read it.  visits[off] lists them, nvisits[off] counts. */
#ifndef MAX_CELLS           /* a program may ask for more before including this */
#define MAX_CELLS 64
#endif
#define MAX_VISITS 8
typedef struct {
    int64_t size;                              /* buffer cells */
    int64_t nvisits[MAX_CELLS];
    int64_t visits[MAX_CELLS][MAX_VISITS];
    int64_t numel;                             /* positions of the view */
} visit_map;

/* Walk the view with the lesson 2 odometer and lesson 1's nd_offset_of. */
static inline visit_map map_visits(const nd_array *v)
{
    visit_map m;
    memset(&m, 0, sizeof m);
    m.size = (int64_t)(v->buf->nbytes / sizeof(float));
    if (m.size > MAX_CELLS) {
        fprintf(stderr, "figures: a buffer of %lld cells is too big to draw\n", (long long)m.size);
        exit(1);
    }
    nd_iter it;
    TRY(nd_iter_init(&it, v->ndim, v->shape));
    while (nd_iter_next(&it)) {
        int64_t off;
        TRY(nd_offset_of(v, it.index, &off));
        if (m.nvisits[off] < MAX_VISITS)
            m.visits[off][m.nvisits[off]] = it.count - 1;
        m.nvisits[off]++;
        m.numel++;
    }
    return m;
}

/* The label of a buffer cell: the view positions that read it. */
static inline void visit_label(const visit_map *m, int64_t off, char *dst, size_t cap)
{
    dst[0] = '\0';
    size_t len = 0;
    for (int64_t k = 0; k < m->nvisits[off] && k < MAX_VISITS && len < cap; k++)
        len += (size_t)snprintf(dst + len, cap - len, "%s%lld", k ? "," : "",
                                (long long)m->visits[off][k]);
}

/* One buffer cell at (x, y): its index small at the top left, the view
 * positions that visit it in the middle, filled if visited. */
static inline void buffer_cell(FILE *f, double x, double y, const visit_map *m, int64_t off)
{
    char fill[48] = "#ffffff", label[64];
    if (m->nvisits[off] == 1)
        visit_color(m->visits[off][0], m->numel, fill, sizeof fill);
    else if (m->nvisits[off] > 1)
        snprintf(fill, sizeof fill, "hsl(32, 90%%, 78%%)");   /* repeated: a broadcast */
    svg_rect(f, x, y, CELL, CELL, fill, "#6e7781");
    svg_text(f, x + 3, y + 10, 8, "start", "#57606a", true, "%lld", (long long)off);
    visit_label(m, off, label, sizeof label);
    if (label[0]) {
        double size = strlen(label) > 4 ? 9 : 13;
        svg_text(f, x + CELL / 2.0, y + CELL / 2.0 + 7, size, "middle", "#0d1117", false,
                 "%s", label);
    }
}

/* The buffer as one strip of cells from (x, y). */
static inline void buffer_strip(FILE *f, double x, double y, const visit_map *m, int per_row)
{
    for (int64_t off = 0; off < m->size; off++)
        buffer_cell(f, x + (double)(off % per_row) * CELL, y + (double)(off / per_row) * CELL,
                    m, off);
}

/* "(3,4)" */
static inline const char *tuple(int n, const int64_t *v, char *dst, size_t cap)
{
    return nd_shape_str(n, v, dst, cap);
}

/* "shape=(4,3)  strides=(1,4)  offset=0" at (x, y). */
static inline void describe(FILE *f, double x, double y, const nd_array *v)
{
    char sh[200], st[200];
    svg_text(f, x, y, 12, "start", "#1f2328", true, "shape=%s strides=%s offset=%lld",
             tuple(v->ndim, v->shape, sh, sizeof sh), tuple(v->ndim, v->strides, st, sizeof st),
             (long long)v->offset);
}

#endif /* FIG_SVG_H */
