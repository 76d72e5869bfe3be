/*
 * reduce_svg.c -- the figure of lesson 4, drawn from what the ndarray
 * itself does (linked against the solution's libnd.a).
 *
 *     reduce_svg OUT_DIR
 *
 * writes into OUT_DIR:
 *   reduce-axis1.svg  s = sum(a, axis=1) for a = arange(24).reshape(2,3,4).
 *                     Every element of a, in the array and in its buffer, is
 *                     filled with the colour of the output element it is
 *                     added into; the output's values are what nd_reduce
 *                     returns.  Under the buffer, the run that feeds one
 *                     output, as the view that nd_reduce walks (nd_permute
 *                     with the kept axes first) lays it out.
 *   reduce-error.svg  the relative error of the float sum of n copies of
 *                     0.1f, for n from 10^2 to 10^7, measured when the
 *                     figure is made: one running float, 16 running floats
 *                     (lanes) added at the end, and nd_reduce (pairwise).
 *                     IEEE float addition is deterministic, so the curves
 *                     are the same on every machine that builds the docs.
 */
#include "svg.h"

#include <math.h>

/* The fill of output element o of n (n <= 12): well-separated hues. */
static void out_hue(int64_t o, int64_t n, char *dst, size_t cap)
{
    snprintf(dst, cap, "hsl(%.0f, 68%%, 79%%)", 360.0 * (double)o / (double)n);
}

/* The output that element (i, j, k) of a is added into: (i, k), in
 * row-major order over the kept axes 0 and 2 (4 of them per i). */
static int64_t output_of(int64_t i, int64_t k) { return i * 4 + k; }

static void reduce_axis1(const char *dir)
{
    int64_t s234[3] = { 2, 3, 4 };
    int axis = 1, perm[3] = { 0, 2, 1 };
    nd_array buf, a, s, sk, v;
    TRY(nd_arange(ND_CPU, 24, &buf));
    TRY(nd_reshape(&buf, 3, s234, &a));
    TRY(nd_reduce(ND_SUM, &a, 1, &axis, false, &s));
    TRY(nd_reduce(ND_SUM, &a, 1, &axis, true, &sk));
    TRY(nd_permute(&a, perm, &v));   /* the layout nd_reduce walks */
    float sums[8];
    TRY(nd_to_host(&s, sums, 8));

    const double x1 = 30, y1 = 96, gap = 54, x2 = x1 + 4 * CELL + 110;
    const double y2 = y1 + 3 * CELL + gap, ys = y1 + (6 * CELL + gap) / 2 - CELL;
    const double cw = 26, sx = 10, sy = y2 + 3 * CELL + 64;
    FILE *f = svg_open(dir, "reduce-axis1.svg", (int)(2 * sx + 24 * cw + 8), (int)(sy + 160),
                       "sum over axis 1 of a (2,3,4) array: which elements feed each of the "
                       "(2,4) outputs");
    svg_text(f, 10, 24, 15, "start", "#0d1117", true,
             "s = sum(a, axis=1),  a = arange(24).reshape(2,3,4)");

    /* a as two 3 x 4 grids, a[0] and a[1]. */
    for (int64_t i = 0; i < 2; i++) {
        double gy = i == 0 ? y1 : y2;
        svg_text(f, x1, gy - 20, 12, "start", "#1f2328", true, "a[%lld, :, :]", (long long)i);
        for (int64_t k = 0; k < 4; k++)
            svg_text(f, x1 + (double)k * CELL + CELL / 2.0, gy - 4, 9, "middle", "#57606a",
                     true, "k=%lld", (long long)k);
        for (int64_t j = 0; j < 3; j++) {
            svg_text(f, x1 - 5, gy + (double)j * CELL + CELL / 2.0 + 3, 9, "end", "#57606a",
                     true, "j=%lld", (long long)j);
            for (int64_t k = 0; k < 4; k++) {
                int64_t idx[3] = { i, j, k }, off;
                TRY(nd_offset_of(&a, idx, &off));
                char fill[48];
                out_hue(output_of(i, k), 8, fill, sizeof fill);
                double cx = x1 + (double)k * CELL, cy = gy + (double)j * CELL;
                svg_rect(f, cx, cy, CELL, CELL, fill, "#57606a");
                svg_text(f, cx + CELL / 2.0, cy + CELL / 2.0 + 5, 13, "middle", "#0d1117", false,
                         "%lld", (long long)off);   /* arange: the value is the offset */
            }
        }
    }

    /* s as a 2 x 4 grid. */
    char sh[200], st[200];
    svg_text(f, x2, ys - 26, 12, "start", "#1f2328", false, "s = nd_reduce(ND_SUM, a, axes (1,))");
    svg_text(f, x2, ys - 10, 11, "start", "#1f2328", true, "shape=%s; keepdims: %s",
             tuple(s.ndim, s.shape, sh, sizeof sh), tuple(sk.ndim, sk.shape, st, sizeof st));
    for (int64_t i = 0; i < 2; i++)
        for (int64_t k = 0; k < 4; k++) {
            char fill[48];
            out_hue(output_of(i, k), 8, fill, sizeof fill);
            double cx = x2 + (double)k * 1.3 * CELL, cy = ys + (double)i * CELL;
            svg_rect(f, cx, cy, 1.3 * CELL, CELL, fill, "#1f2328");
            svg_text(f, cx + 3, cy + 10, 8, "start", "#57606a", true, "%lld,%lld", (long long)i,
                     (long long)k);
            svg_text(f, cx + 0.65 * CELL, cy + CELL / 2.0 + 7, 13, "middle", "#0d1117", false,
                     "%g", (double)sums[i * 4 + k]);
        }
    svg_text(f, x2, ys + 2 * CELL + 20, 11, "start", "#57606a", false,
             "s[i,k] = a[i,0,k] + a[i,1,k] + a[i,2,k]: the three cells");
    svg_text(f, x2, ys + 2 * CELL + 35, 11, "start", "#57606a", false,
             "of a column of a[i] (same colour). s[0,1] = 1 + 5 + 9 = %g.", (double)sums[1]);

    /* The buffer, each cell in its output's colour. */
    svg_text(f, sx, sy - 10, 12, "start", "#1f2328", false,
             "memory: a's 24 floats, in the colour of the output each is added into");
    for (int64_t off = 0; off < 24; off++) {
        char fill[48];
        out_hue(output_of(off / 12, off % 4), 8, fill, sizeof fill);
        svg_rect(f, sx + (double)off * cw, sy, cw, cw, fill, "#57606a");
        svg_text(f, sx + (double)off * cw + cw / 2, sy + cw / 2 + 5, 12, "middle", "#0d1117",
                 false, "%lld", (long long)off);
    }
    /* The run of s[0,1] in the permuted view: (0,1,j) for j < 3. */
    double ry = sy + cw + 16;
    int64_t first[3] = { 0, 1, 0 }, start;
    TRY(nd_offset_of(&v, first, &start));
    for (int64_t j = 0; j < 3; j++) {
        int64_t idx[3] = { 0, 1, j }, off;
        TRY(nd_offset_of(&v, idx, &off));
        double cx = sx + (double)off * cw + cw / 2;
        svg_line(f, cx, sy + cw + 2, cx, ry, "#0b5cad", 2);
        if (j > 0) {
            int64_t prev[3] = { 0, 1, j - 1 }, po;
            TRY(nd_offset_of(&v, prev, &po));
            svg_line(f, sx + (double)po * cw + cw / 2, ry, cx, ry, "#0b5cad", 2);
            svg_text(f, (sx + (double)po * cw + cx + cw / 2) / 2 - cw / 4, ry - 4, 10, "middle",
                     "#0b5cad", true, "+%lld", (long long)v.strides[2]);
        }
    }
    svg_text(f, sx, ry + 22, 11, "start", "#0b5cad", false,
             "s[0,1]: a run of %lld elements, %lld apart, from cell %lld",
             (long long)v.shape[2], (long long)v.strides[2], (long long)start);
    svg_text(f, sx, ry + 46, 11, "start", "#1f2328", true,
             "nd_permute(a, (0,2,1)): shape=%s strides=%s",
             tuple(v.ndim, v.shape, sh, sizeof sh), tuple(v.ndim, v.strides, st, sizeof st));
    svg_text(f, sx, ry + 64, 11, "start", "#57606a", false,
             "Kept axes first, the reduced axis last: output (i,k) folds the block v[i,k,:], "
             "the run that starts at 12i + k.");
    svg_close(f);
    nd_release(&v);
    nd_release(&sk);
    nd_release(&s);
    nd_release(&a);
    nd_release(&buf);
}

/* ------------------------------------------------------------------------ */
/* The error of a float sum, measured                                       */
/* ------------------------------------------------------------------------ */

#define NPOINTS 21   /* n = 10^2, 10^2.25, ..., 10^7 */

/* The sum of n copies of 0.1f added one by one into one float. */
static float sum_one(int64_t n)
{
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++)
        s += 0.1f;
    return s;
}

/* The same into 16 floats side by side (element i into lane i % 16), the
 * lanes added at the end: what sum_leaf does, without the pairwise split
 * that keeps each lane short. */
static float sum_lanes(int64_t n)
{
    float lane[16] = { 0 }, s = 0.0f;
    for (int64_t i = 0; i < n; i++)
        lane[i % 16] += 0.1f;
    for (int j = 0; j < 16; j++)
        s += lane[j];
    return s;
}

/* The plot's coordinates: log10 n in [2, 7] and log10 error in [-9, 0]. */
typedef struct { double x, y, w, h; } frame;
static double px(const frame *fr, double n) { return fr->x + (log10(n) - 2) / 5 * fr->w; }
static double py(const frame *fr, double e)
{
    double l = log10(e < 1e-9 ? 1e-9 : e);
    return fr->y + (0 - l) / 9 * fr->h;
}

static void series(FILE *f, const frame *fr, const double *n, const double *err,
                   const char *color, const char *dash)
{
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s points=\"",
            color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
    for (int i = 0; i < NPOINTS; i++)
        fprintf(f, "%.1f,%.1f ", px(fr, n[i]), py(fr, err[i]));
    fprintf(f, "\"/>\n");
    if (dash == NULL)
        for (int i = 0; i < NPOINTS; i++)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.8\" fill=\"%s\"/>\n",
                    px(fr, n[i]), py(fr, err[i]), color);
}

static void reduce_error(const char *dir)
{
    double n[NPOINTS], one[NPOINTS], lanes[NPOINTS], pair[NPOINTS], bn[NPOINTS], bl[NPOINTS];
    const double u = ldexp(1.0, -24);   /* the unit roundoff of float */
    float last[3] = { 0 };
    for (int i = 0; i < NPOINTS; i++) {
        int64_t count = llround(pow(10.0, 2.0 + 0.25 * i));
        nd_array x, s;
        float got;
        TRY(nd_full(ND_CPU, 1, &count, 0.1f, &x));
        TRY(nd_reduce(ND_SUM, &x, ND_ALL_AXES, NULL, false, &s));
        TRY(nd_to_host(&s, &got, 1));
        nd_release(&s);
        nd_release(&x);
        double exact = (double)count * (double)0.1f;
        float a = sum_one(count), b = sum_lanes(count);
        n[i] = (double)count;
        one[i] = fabs(a - exact) / exact;
        lanes[i] = fabs(b - exact) / exact;
        pair[i] = fabs(got - exact) / exact;
        bn[i] = (double)(count - 1) * u;         /* recursive summation's bound */
        bl[i] = ceil(log2((double)count)) * u;   /* a pairwise tree's bound */
        last[0] = a;
        last[1] = b;
        last[2] = got;
    }

    frame fr = { 80, 60, 500, 300 };
    FILE *f = svg_open(dir, "reduce-error.svg", 800, 430,
                       "Relative error of the float sum of n copies of 0.1f: one running sum, "
                       "16 lanes, and pairwise (nd_reduce)");
    svg_text(f, 10, 24, 15, "start", "#0d1117", true, "sum of n copies of 0.1f in float: "
             "relative error");
    /* Axes and grid. */
    for (int e = -9; e <= 0; e++) {
        double y = py(&fr, pow(10.0, e));
        svg_line(f, fr.x, y, fr.x + fr.w, y, e % 3 == 0 ? "#d0d7de" : "#eaeef2", 1);
        if (e % 3 == 0)
            svg_text(f, fr.x - 6, y + 4, 11, "end", "#57606a", false, "1e%d", e);
    }
    for (int e = 2; e <= 7; e++) {
        double x = px(&fr, pow(10.0, e));
        svg_line(f, x, fr.y, x, fr.y + fr.h, "#eaeef2", 1);
        svg_text(f, x, fr.y + fr.h + 16, 11, "middle", "#57606a", false, "1e%d", e);
    }
    svg_line(f, fr.x, fr.y + fr.h, fr.x + fr.w, fr.y + fr.h, "#57606a", 1);
    svg_line(f, fr.x, fr.y, fr.x, fr.y + fr.h, "#57606a", 1);
    svg_text(f, fr.x + fr.w / 2, fr.y + fr.h + 36, 12, "middle", "#1f2328", false,
             "n, the number of terms");
    svg_text(f, 16, fr.y - 14, 12, "start", "#1f2328", false, "|sum - exact| / exact");

    series(f, &fr, n, bn, "#bc4c00", "5,4");
    series(f, &fr, n, bl, "#0b5cad", "5,4");
    series(f, &fr, n, one, "#bc4c00", NULL);
    series(f, &fr, n, lanes, "#8250df", NULL);
    series(f, &fr, n, pair, "#0b5cad", NULL);

    /* Legend, at the right. */
    double lx = fr.x + fr.w + 16, ly = fr.y + 10;
    struct { const char *color, *dash, *text, *text2; } key[] = {
        { "#bc4c00", NULL, "one running float", "" },
        { "#8250df", NULL, "16 lanes, added at the end", "" },
        { "#0b5cad", NULL, "nd_reduce: leaves of 256", "in 16 lanes, then pairwise" },
        { "#bc4c00", "5,4", "bound (n-1)u", "" },
        { "#0b5cad", "5,4", "pairwise bound \u2308log\u2082 n\u2309u", "" },
    };
    for (int i = 0; i < 5; i++, ly += 36) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                   "stroke-width=\"2\"%s%s%s/>\n", lx, ly, lx + 22, ly, key[i].color,
                key[i].dash ? " stroke-dasharray=\"" : "", key[i].dash ? key[i].dash : "",
                key[i].dash ? "\"" : "");
        svg_text(f, lx + 28, ly + 4, 11, "start", "#1f2328", false, "%s", key[i].text);
        if (key[i].text2[0])
            svg_text(f, lx + 28, ly + 18, 11, "start", "#1f2328", false, "%s", key[i].text2);
    }
    svg_text(f, 10, fr.y + fr.h + 62, 11, "start", "#57606a", false,
             "At n = 10^7 (exact sum %.4f): one float gives %.1f, 16 lanes %.3f, "
             "nd_reduce %.3f. u = 2^-24.", (double)1e7 * (double)0.1f, (double)last[0],
             (double)last[1], (double)last[2]);
    svg_close(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: reduce_svg OUT_DIR\n");
        return 2;
    }
    reduce_axis1(argv[1]);
    reduce_error(argv[1]);
    return 0;
}
