/*
 * views_svg.c -- the figures of lesson 1, drawn from views that the
 * ndarray itself makes (linked against the solution's libnd.a).
 *
 *     views_svg OUT_DIR
 *
 * writes OUT_DIR/views-strides.svg and, for a transpose, a slice with a
 * negative step, a broadcast and a diagonal, OUT_DIR/views-NAME.svg: the
 * base array as a grid, the view as a grid, and the buffer as a strip of
 * memory.  Buffer cells show the order (row-major in the view) in which the
 * view visits them; view cells show the buffer cell they read.  Since the
 * buffer holds 0, 1, 2, ... (nd_arange), a view's values are those cell
 * numbers, and the figure prints what nd_to_host returns.
 */
#include "svg.h"

/* A grid of buffer cells for a 2-D base array at (x, y), with its row and
 * column numbers around it. */
static void base_grid(FILE *f, double x, double y, const nd_array *base, const visit_map *m)
{
    for (int64_t c = 0; c < base->shape[1]; c++)
        svg_text(f, x + (double)c * CELL + CELL / 2.0, y - 4, 9, "middle", "#57606a", true,
                 "%lld", (long long)c);
    for (int64_t r = 0; r < base->shape[0]; r++) {
        svg_text(f, x - 5, y + (double)r * CELL + CELL / 2.0 + 3, 9, "end", "#57606a", true,
                 "%lld", (long long)r);
        for (int64_t c = 0; c < base->shape[1]; c++) {
            int64_t idx[2] = { r, c }, off;
            TRY(nd_offset_of(base, idx, &off));
            buffer_cell(f, x + (double)c * CELL, y + (double)r * CELL, m, off);
        }
    }
}

/* The view as a grid (a 1-D view as one row) at (x, y): each cell shows
 * the value nd_to_host gives, which is the buffer cell it reads. */
static void view_grid(FILE *f, double x, double y, const nd_array *v)
{
    int64_t rows = v->ndim == 2 ? v->shape[0] : 1, cols = v->shape[v->ndim - 1];
    int64_t n = nd_numel(v);
    float vals[MAX_CELLS * MAX_VISITS];
    TRY(nd_to_host(v, vals, sizeof vals / sizeof vals[0]));
    for (int64_t c = 0; c < cols; c++)
        svg_text(f, x + (double)c * CELL + CELL / 2.0, y - 4, 9, "middle", "#57606a", true,
                 "%lld", (long long)c);
    for (int64_t r = 0; r < rows; r++) {
        if (v->ndim == 2)
            svg_text(f, x - 5, y + (double)r * CELL + CELL / 2.0 + 3, 9, "end", "#57606a",
                     true, "%lld", (long long)r);
        for (int64_t c = 0; c < cols; c++) {
            int64_t i = r * cols + c;
            char fill[48];
            visit_color(i, n, fill, sizeof fill);
            svg_rect(f, x + (double)c * CELL, y + (double)r * CELL, CELL, CELL, fill, "#1f2328");
            svg_text(f, x + (double)c * CELL + CELL / 2.0, y + (double)r * CELL + CELL / 2.0 + 5,
                     13, "middle", "#0d1117", false, "%g", (double)vals[i]);
        }
    }
}

/* One figure: base (2-D, compact, over the buffer 0..n-1) and a view of it. */
static void view_figure(const char *dir, const char *name, const char *expr,
                        const char *base_name, const nd_array *base, const nd_array *v)
{
    visit_map m = map_visits(v);
    char bs[200], bst[200];
    double gx = 30, gy = 64;
    double base_w = (double)base->shape[1] * CELL, base_h = (double)base->shape[0] * CELL;
    int64_t vrows = v->ndim == 2 ? v->shape[0] : 1, vcols = v->shape[v->ndim - 1];
    double vx = gx + base_w + 70, view_h = (double)vrows * CELL;
    double panels_h = base_h > view_h ? base_h : view_h;
    double sy = gy + panels_h + 76;                 /* memory strip */
    double strip_w = (double)m.size * CELL;
    /* Wide enough for the strip, the view and its description (12 px
     * monospace is about 7.3 px a character), and the legend. */
    char sh[200], st[200], desc[512];
    int dlen = snprintf(desc, sizeof desc, "shape=%s strides=%s offset=%lld",
                        tuple(v->ndim, v->shape, sh, sizeof sh),
                        tuple(v->ndim, v->strides, st, sizeof st), (long long)v->offset);
    double w = 600;
    if (strip_w + 20 > w)
        w = strip_w + 20;
    if (vx + (double)vcols * CELL + 14 + 7.3 * dlen + 10 > w)
        w = vx + (double)vcols * CELL + 14 + 7.3 * dlen + 10;
    double h = sy + CELL + 52;

    char title[256];
    snprintf(title, sizeof title, "The view %s of a buffer of %lld floats", expr,
             (long long)m.size);
    FILE *f = svg_open(dir, name, (int)w, (int)h, title);
    svg_text(f, 10, 22, 15, "start", "#0d1117", true, "%s", expr);
    svg_text(f, gx, gy - 22, 12, "start", "#1f2328", false, "%s: shape=%s strides=%s",
             base_name, tuple(base->ndim, base->shape, bs, sizeof bs),
             tuple(base->ndim, base->strides, bst, sizeof bst));
    base_grid(f, gx, gy, base, &m);
    svg_text(f, vx - 35, gy + panels_h / 2 + 5, 20, "middle", "#57606a", false, "\u2192");
    svg_text(f, vx, gy - 22, 12, "start", "#1f2328", false, "the view, %lld elements",
             (long long)nd_numel(v));
    view_grid(f, vx, gy, v);
    describe(f, vx + (double)vcols * CELL + 14, gy + 14, v);

    svg_text(f, 10, sy - 10, 12, "start", "#1f2328", false,
             "memory: the buffer, %lld floats (cell number at the top left)", (long long)m.size);
    buffer_strip(f, 10, sy, &m, (int)m.size);
    svg_text(f, 10, sy + CELL + 20, 11, "start", "#57606a", false,
             "In %s and in memory, a filled cell shows when the view visits it (0 = first, in "
             "row-major order of the view);", base_name);
    svg_text(f, 10, sy + CELL + 36, 11, "start", "#57606a", false,
             "in the view, each element shows the buffer cell it reads. Nothing is copied.");
    svg_close(f);
}

/* The (2,3,4) example: strides as steps through memory. */
static void strides_figure(const char *dir)
{
    int64_t shape[3] = { 2, 3, 4 }, at[3] = { 1, 2, 3 }, off;
    nd_array buf, a;
    TRY(nd_arange(ND_CPU, 24, &buf));
    TRY(nd_reshape(&buf, 3, shape, &a));
    TRY(nd_offset_of(&a, at, &off));
    const double cw = 26, x0 = 10, sy = 132;
    FILE *f = svg_open(dir, "views-strides.svg", (int)(x0 * 2 + 24 * cw + 10), 250,
                       "A compact (2,3,4) array: strides (12,4,1), element (1,2,3) at offset 23");
    char sh[200], st[200];
    svg_text(f, 10, 22, 15, "start", "#0d1117", true, "a = arange(24).reshape(2,3,4)");
    svg_text(f, 10, 42, 12, "start", "#1f2328", true, "shape=%s strides=%s offset=%lld",
             tuple(a.ndim, a.shape, sh, sizeof sh), tuple(a.ndim, a.strides, st, sizeof st),
             (long long)a.offset);
    /* Brackets above the strip: one per step that reaches (1,2,3). */
    struct { int64_t from, to; const char *label; double y; } steps[3] = {
        { 0, 0, "", 0 }, { 0, 0, "", 0 }, { 0, 0, "", 0 },
    };
    int64_t pos = a.offset;
    const char *names[3] = { "1 step along axis 0: +1\u00d712", "2 steps along axis 1: +2\u00d74",
                             "3 steps along axis 2: +3\u00d71" };
    for (int k = 0; k < 3; k++) {
        steps[k].from = pos;
        pos += at[k] * a.strides[k];
        steps[k].to = pos;
        steps[k].label = names[k];
        steps[k].y = 70 + 18 * k;
    }
    for (int k = 0; k < 3; k++) {
        double x1 = x0 + (double)steps[k].from * cw + cw / 2, x2 = x0 + (double)steps[k].to * cw + cw / 2;
        svg_line(f, x1, steps[k].y, x2, steps[k].y, "#0b5cad", 2);
        svg_line(f, x2, steps[k].y, x2, steps[k].y + 5, "#0b5cad", 2);
        svg_line(f, x1, steps[k].y - 4, x1, steps[k].y + 4, "#0b5cad", 2);
        if (k < 2)
            svg_text(f, x1 + 4, steps[k].y - 4, 11, "start", "#0b5cad", false, "%s", steps[k].label);
        else   /* the last step is short: its label ends where it ends */
            svg_text(f, x2 + 4, steps[k].y - 4, 11, "end", "#0b5cad", false, "%s", steps[k].label);
    }
    for (int64_t i = 0; i < 24; i++) {
        int64_t idx[3] = { i / 12, (i / 4) % 3, i % 4 };
        bool stop = i == steps[0].to || i == steps[1].to;   /* where a step lands */
        const char *fill = i == off ? "hsl(208, 75%, 62%)"
                         : stop ? "hsl(208, 75%, 88%)"
                         : idx[0] == 1 ? "#f3f4f6" : "#ffffff";
        svg_rect(f, x0 + (double)i * cw, sy, cw, cw, fill, "#6e7781");
        svg_text(f, x0 + (double)i * cw + cw / 2, sy + cw / 2 + 4, 11, "middle", "#0d1117", true,
                 "%lld", (long long)i);
        if (idx[2] == 0) {   /* each row of the last axis starts here */
            svg_text(f, x0 + (double)i * cw + 1, sy + cw + 14, 9, "start", "#57606a", true,
                     "(%lld,%lld,\u00b7)", (long long)idx[0], (long long)idx[1]);
        }
    }
    svg_text(f, 10, sy + cw + 44, 12, "start", "#1f2328", false,
             "offset of (1,2,3) = 0 + 1\u00d712 + 2\u00d74 + 3\u00d71 = %lld: "
             "nd_offset_of gives %lld", (long long)pos, (long long)off);
    svg_text(f, 10, sy + cw + 62, 11, "start", "#57606a", false,
             "The 24 floats of the buffer; under each run of 4, the (i,j) of the row it holds; "
             "a[1] is grey.");
    svg_close(f);
    nd_release(&a);
    nd_release(&buf);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: views_svg OUT_DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    strides_figure(dir);

    /* a = arange(12).reshape(3,4), the base of most figures. */
    int64_t s34[2] = { 3, 4 }, s44[2] = { 4, 4 }, s3x4[2] = { 3, 4 };
    nd_array buf, a, v;
    TRY(nd_arange(ND_CPU, 12, &buf));
    TRY(nd_reshape(&buf, 2, s34, &a));

    int axes[2] = { 1, 0 };
    TRY(nd_permute(&a, axes, &v));
    view_figure(dir, "views-transpose.svg", "a.permute((1,0))   # a.T", "a", &a, &v);
    nd_release(&v);

    nd_index ix[2] = { ND_SLICE(1, ND_NONE, 1), ND_SLICE(ND_NONE, ND_NONE, -2) };
    TRY(nd_slice(&a, 2, ix, &v));
    view_figure(dir, "views-slice.svg", "a[1:, ::-2]", "a", &a, &v);
    nd_release(&v);

    nd_array row;
    nd_index one[1] = { ND_AT(1) };
    TRY(nd_slice(&a, 1, one, &row));
    TRY(nd_broadcast_to(&row, 2, s3x4, &v));
    view_figure(dir, "views-broadcast.svg", "broadcast_to(a[1], (3,4))", "a", &a, &v);
    nd_release(&v);
    nd_release(&row);

    nd_array buf16, b;
    TRY(nd_arange(ND_CPU, 16, &buf16));
    TRY(nd_reshape(&buf16, 2, s44, &b));
    TRY(nd_diagonal(&b, 0, 0, 1, &v));
    view_figure(dir, "views-diagonal.svg", "b.diagonal()", "b", &b, &v);
    nd_release(&v);
    TRY(nd_diagonal(&b, 1, 0, 1, &v));
    view_figure(dir, "views-diagonal1.svg", "b.diagonal(offset=1)", "b", &b, &v);
    nd_release(&v);

    nd_release(&b);
    nd_release(&buf16);
    nd_release(&a);
    nd_release(&buf);
    return 0;
}
