/*
 * ewise_svg.c -- the figure of lesson 3, drawn from what the ndarray itself
 * does (linked against the solution's libnd.a).
 *
 *     ewise_svg OUT_DIR
 *
 * writes OUT_DIR/ewise-broadcast.svg: c = a + b for a of shape (3,1) and b
 * of shape (1,4).  Each input is shown as it is stored, then as the (3,4)
 * view that nd_broadcast_to makes of it (stride 0 along the stretched
 * axis), then the sum that nd_binary returns.  A cell's colour says which
 * float of the input's buffer it reads, so a stride of 0 shows as a
 * colour repeated along that axis.
 */
#include "svg.h"

/* A distinct light fill for buffer cell i of n: hues from `base` over
 * `span` degrees, so that the two inputs get different colours. */
static void cell_hue(int64_t i, int64_t n, double base, double span, char *dst, size_t cap)
{
    snprintf(dst, cap, "hsl(%.0f, 70%%, 80%%)", base + span * (double)i / (double)n);
}

/* A 2-D view v as a grid at (x, y): each cell shows the value it reads
 * (big) and the buffer cell it reads (small, top left), filled with that
 * buffer cell's colour (hues from `hue`); `ncells` is the size of v's
 * buffer.  With
 * `plain`, the cells are white and show the value only (a result). */
static void grid(FILE *f, double x, double y, const nd_array *v, int64_t ncells, double hue,
                 bool plain)
{
    float vals[64];
    TRY(nd_to_host(v, vals, sizeof vals / sizeof vals[0]));
    for (int64_t r = 0; r < v->shape[0]; r++)
        for (int64_t c = 0; c < v->shape[1]; c++) {
            int64_t idx[2] = { r, c }, off;
            TRY(nd_offset_of(v, idx, &off));
            char fill[48] = "#ffffff";
            if (!plain)
                cell_hue(off, ncells, hue, 110, fill, sizeof fill);
            double cx = x + (double)c * CELL, cy = y + (double)r * CELL;
            svg_rect(f, cx, cy, CELL, CELL, fill, "#57606a");
            if (!plain)
                svg_text(f, cx + 3, cy + 10, 8, "start", "#57606a", true, "%lld", (long long)off);
            svg_text(f, cx + CELL / 2.0, cy + CELL / 2.0 + 7, 13, "middle", "#0d1117", false,
                     "%g", (double)vals[r * v->shape[1] + c]);
        }
}

/* Two lines above a grid: a name, then the layout in monospace. */
static void label(FILE *f, double x, double y, const char *name, const nd_array *v)
{
    char sh[200], st[200];
    svg_text(f, x, y - 24, 12, "start", "#1f2328", false, "%s", name);
    svg_text(f, x, y - 8, 11, "start", "#1f2328", true, "shape=%s strides=%s",
             tuple(v->ndim, v->shape, sh, sizeof sh), tuple(v->ndim, v->strides, st, sizeof st));
}

static void ewise_broadcast(const char *dir)
{
    int64_t s31[2] = { 3, 1 }, s14[2] = { 1, 4 }, s34[2] = { 3, 4 };
    nd_array r3, t3, a, r4, b, va, vb, c;
    TRY(nd_arange(ND_CPU, 3, &r3));
    TRY(nd_scalar(ND_MUL, &r3, 10.0f, &t3));   /* 0, 10, 20 */
    TRY(nd_reshape(&t3, 2, s31, &a));
    TRY(nd_arange(ND_CPU, 4, &r4));
    TRY(nd_reshape(&r4, 2, s14, &b));
    TRY(nd_broadcast_to(&a, 2, s34, &va));
    TRY(nd_broadcast_to(&b, 2, s34, &vb));
    TRY(nd_binary(ND_ADD, &a, &b, &c));

    const double x1 = 20, x2 = x1 + 4 * CELL + 90, x3 = x2 + 4 * CELL + 110;
    const double y1 = 96, y2 = y1 + 3 * CELL + 100, yc = (y1 + y2) / 2;
    const double w = x3 + 4 * CELL + 40, h = y2 + 3 * CELL + 72;
    FILE *f = svg_open(dir, "ewise-broadcast.svg", (int)w, (int)h,
                       "c = a + b with a of shape (3,1) and b of shape (1,4): the broadcast "
                       "views have stride 0 along the stretched axis");
    svg_text(f, 10, 24, 15, "start", "#0d1117", true, "c = a + b:  (3,1) + (1,4) -> (3,4)");

    label(f, x1, y1, "a, as stored", &a);
    grid(f, x1, y1, &a, 3, 190, false);
    label(f, x2, y1, "a seen as (3,4)", &va);
    grid(f, x2, y1, &va, 3, 190, false);
    label(f, x1, y2, "b, as stored", &b);
    grid(f, x1, y2, &b, 4, 10, false);
    label(f, x2, y2, "b seen as (3,4)", &vb);
    grid(f, x2, y2, &vb, 4, 10, false);
    label(f, x3, yc, "c = a + b, a new array", &c);
    grid(f, x3, yc, &c, 12, 0, true);

    /* Arrows: stored -> view, views -> c. */
    const char *grey = "#8c959f";
    svg_line(f, x1 + CELL + 10, y1 + 1.5 * CELL, x2 - 12, y1 + 1.5 * CELL, grey, 1.5);
    svg_text(f, x2 - 10, y1 + 1.5 * CELL + 5, 14, "end", grey, false, "\u25b6");
    svg_text(f, (x1 + CELL + x2) / 2 + 10, y1 + 1.5 * CELL - 6, 10, "middle", "#57606a", true,
             "broadcast_to");
    svg_line(f, x1 + 2 * CELL, y2 + CELL + 8, x1 + 2 * CELL, y2 + 1.5 * CELL + 14, grey, 1.5);
    svg_line(f, x1 + 2 * CELL, y2 + 1.5 * CELL + 14, x2 - 12, y2 + 1.5 * CELL + 14, grey, 1.5);
    svg_text(f, x2 - 10, y2 + 1.5 * CELL + 19, 14, "end", grey, false, "\u25b6");
    svg_text(f, (x1 + 2 * CELL + x2) / 2, y2 + 1.5 * CELL + 8, 10, "middle", "#57606a", true,
             "broadcast_to");
    svg_text(f, x2 + 2 * CELL, (y1 + 3 * CELL + y2 - 28) / 2 + 10, 26, "middle", "#57606a",
             false, "+");
    double mx = x2 + 4 * CELL + 14, ex = x3 - 12, my = yc + 1.5 * CELL;
    svg_line(f, mx, y1 + 1.5 * CELL, mx + 30, y1 + 1.5 * CELL, grey, 1.5);
    svg_line(f, mx, y2 + 1.5 * CELL, mx + 30, y2 + 1.5 * CELL, grey, 1.5);
    svg_line(f, mx + 30, y1 + 1.5 * CELL, mx + 30, y2 + 1.5 * CELL, grey, 1.5);
    svg_line(f, mx + 30, my, ex, my, grey, 1.5);
    svg_text(f, ex + 2, my + 5, 14, "end", grey, false, "\u25b6");

    double ny = y2 + 3 * CELL + 26;
    svg_text(f, 10, ny, 11, "start", "#57606a", false,
             "A colour is one float of the input's buffer (its cell number at the top left). "
             "Stride 0 repeats it along an axis:");
    svg_text(f, 10, ny + 16, 11, "start", "#57606a", false,
             "a's view reads each of a's 3 floats 4 times, b's view each of b's 4 floats 3 "
             "times. Nothing is copied until c is written.");
    svg_close(f);
    nd_release(&c);
    nd_release(&vb);
    nd_release(&va);
    nd_release(&b);
    nd_release(&r4);
    nd_release(&a);
    nd_release(&t3);
    nd_release(&r3);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ewise_svg OUT_DIR\n");
        return 2;
    }
    ewise_broadcast(argv[1]);
    return 0;
}
