/*
 * matmul_svg.c -- the figures of lesson 5, drawn from arrays that the
 * ndarray itself makes (linked against the solution's libnd.a).
 *
 *     matmul_svg OUT_DIR
 *
 * writes into OUT_DIR:
 *   matmul-tiles.svg  C = A @ B cut into MR x NR blocks, numbered in the
 *                     order tiled_2d calls the micro-kernel on them, with
 *                     the slivers of A and B that one call reads, and the
 *                     zero padding at the edges;
 *   matmul-pack.svg   how pack_a copies a strided view of A (a transpose)
 *                     into slivers of MR rows, column by column.
 *
 * The figures use MR = 3 and NR = 4 so that they fit on a page; the
 * library's micro-kernel is 12 x 32.  The loops that number the calls and
 * fill the packed slivers follow tiled_2d and pack_a in
 * solution/src/05_matmul.c; the values come from the views, read with
 * nd_offset_of and nd_to_host.
 */
#include "svg.h"

enum { FMR = 3, FNR = 4 };   /* the figure's MR and NR */

static int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

/* A cell of a grid: fill, optional text; `pad` draws it as zero padding
 * (dashed, grey). */
static void cell(FILE *f, double x, double y, double cw, const char *fill, bool pad)
{
    if (pad)
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#eef0f2\" "
                   "stroke=\"#8c959f\" stroke-dasharray=\"3,3\"/>\n", x, y, cw, cw);
    else
        svg_rect(f, x, y, cw, cw, fill, "#afb8c1");
}

/* Thick lines every `every` cells across a rows x cols grid at (x, y). */
static void blocks(FILE *f, double x, double y, double cw, int64_t rows, int64_t cols,
                   int64_t every_r, int64_t every_c)
{
    for (int64_t r = 0; r <= rows; r += every_r)
        svg_line(f, x, y + (double)r * cw, x + (double)cols * cw, y + (double)r * cw, "#1f2328", 2);
    for (int64_t c = 0; c <= cols; c += every_c)
        svg_line(f, x + (double)c * cw, y, x + (double)c * cw, y + (double)rows * cw, "#1f2328", 2);
}

static const char *HIGHLIGHT = "hsl(32, 95%, 72%)";

static void matmul_tiles(const char *dir)
{
    int64_t sa[2] = { 7, 5 }, sb[2] = { 5, 10 };
    nd_array ra, rb, a, b, c;
    TRY(nd_arange(ND_CPU, 35, &ra));
    TRY(nd_reshape(&ra, 2, sa, &a));
    TRY(nd_arange(ND_CPU, 50, &rb));
    TRY(nd_reshape(&rb, 2, sb, &b));
    TRY(nd_matmul(&a, &b, &c));
    const int64_t m = c.shape[0], n = c.shape[1], k = a.shape[1];
    const int64_t pm = round_up(m, FMR), pn = round_up(n, FNR);   /* padded */
    const int64_t hi_ir = 1, hi_jr = 1;   /* the call drawn in orange */

    const double cw = 30, xa = 70, xc = xa + (double)k * cw + 40, yb = 96;
    const double yc = yb + (double)k * cw + 40;
    const double w = xc + (double)pn * cw + 30, h = yc + (double)pm * cw + 112;
    FILE *f = svg_open(dir, "matmul-tiles.svg", (int)w, (int)h,
                       "C = A @ B cut into MR x NR blocks, in the order of the micro-kernel "
                       "calls, with zero padding at the edges");
    svg_text(f, 10, 24, 15, "start", "#0d1117", true, "C = A @ B:  (%lld,%lld) @ (%lld,%lld),  "
             "MR = %d, NR = %d", (long long)m, (long long)k, (long long)k, (long long)n, FMR, FNR);

    /* B: k x pn, slivers of NR columns. */
    svg_text(f, xc, yb - 30, 12, "start", "#1f2328", false,
             "packed B: slivers of NR = %d columns", FNR);
    for (int64_t t = 0; t < pn / FNR; t++)
        svg_text(f, xc + ((double)t + 0.5) * FNR * cw, yb - 8, 10, "middle", "#57606a", true,
                 "sliver %lld", (long long)t);
    for (int64_t p = 0; p < k; p++)
        for (int64_t j = 0; j < pn; j++)
            cell(f, xc + (double)j * cw, yb + (double)p * cw, cw,
                 j / FNR == hi_jr ? HIGHLIGHT : "#ffffff", j >= n);
    blocks(f, xc, yb, cw, k, pn, k, FNR);

    /* A: pm x k, slivers of MR rows. */
    svg_text(f, 10, yc - 10, 12, "start", "#1f2328", false, "packed A: slivers of MR = %d rows",
             FMR);
    for (int64_t s = 0; s < pm / FMR; s++)
        svg_text(f, xa - 8, yc + ((double)s + 0.5) * FMR * cw + 4, 10, "end", "#57606a", true,
                 "sliver %lld", (long long)s);
    for (int64_t i = 0; i < pm; i++)
        for (int64_t p = 0; p < k; p++)
            cell(f, xa + (double)p * cw, yc + (double)i * cw, cw,
                 i / FMR == hi_ir ? HIGHLIGHT : "#ffffff", i >= m);
    blocks(f, xa, yc, cw, pm, k, FMR, k);

    /* C: pm x pn, the blocks numbered in call order (jr outer, ir inner,
     * as tiled_2d loops). */
    for (int64_t i = 0; i < pm; i++)
        for (int64_t j = 0; j < pn; j++) {
            bool hi = i / FMR == hi_ir && j / FNR == hi_jr;
            cell(f, xc + (double)j * cw, yc + (double)i * cw, cw, hi ? HIGHLIGHT : "#f6f8fa",
                 i >= m || j >= n);
        }
    blocks(f, xc, yc, cw, pm, pn, FMR, FNR);
    int call = 0;
    for (int64_t jr = 0; jr < n; jr += FNR)
        for (int64_t ir = 0; ir < m; ir += FMR, call++) {
            int64_t mr = m - ir < FMR ? m - ir : FMR, nr = n - jr < FNR ? n - jr : FNR;
            double cx = xc + ((double)jr + FNR / 2.0) * cw, cy = yc + ((double)ir + FMR / 2.0) * cw;
            svg_text(f, cx, cy + 2, 20, "middle", "#0d1117", false, "%d", call);
            svg_text(f, cx, cy + 18, 10, "middle", "#57606a", true, "%lld\u00d7%lld",
                     (long long)mr, (long long)nr);
        }
    svg_text(f, xc, yc + (double)pm * cw + 20, 12, "start", "#1f2328", false,
             "C (%lld,%lld): blocks numbered in call order", (long long)m, (long long)n);

    double ny = yc + (double)pm * cw + 48;
    svg_text(f, 10, ny, 11, "start", "#57606a", false,
             "Call %lld (orange) multiplies sliver %lld of A by sliver %lld of B into C's rows "
             "%lld-%lld, columns %lld-%lld.",
             (long long)(hi_jr * (pm / FMR) + hi_ir), (long long)hi_ir, (long long)hi_jr,
             (long long)(hi_ir * FMR), (long long)(hi_ir * FMR + FMR - 1),
             (long long)(hi_jr * FNR), (long long)(hi_jr * FNR + FNR - 1));
    svg_text(f, 10, ny + 16, 11, "start", "#57606a", false,
             "Under each number, the block's valid size. Dashed: zero padding in the packed "
             "slivers;");
    svg_text(f, 10, ny + 32, 11, "start", "#57606a", false,
             "the kernel computes whole blocks, and only their valid part is added to C.");
    svg_text(f, 10, ny + 48, 11, "start", "#57606a", false,
             "The library's blocks are 12\u00d732; 3\u00d74 fits the picture.");
    /* The top left corner: what one call does. */
    svg_text(f, 10, yb + 20, 12, "start", "#1f2328", false, "one micro-kernel call:");
    svg_text(f, 10, yb + 40, 11, "start", "#1f2328", true, "C block += A sliver");
    svg_text(f, 10, yb + 56, 11, "start", "#1f2328", true, "  \u00d7 B sliver,");
    svg_text(f, 10, yb + 76, 11, "start", "#57606a", false, "k = %lld steps of", (long long)k);
    svg_text(f, 10, yb + 92, 11, "start", "#57606a", false, "MR\u00d7NR multiply-adds");
    svg_close(f);
    nd_release(&c);
    nd_release(&b);
    nd_release(&rb);
    nd_release(&a);
    nd_release(&ra);
}

static void matmul_pack(const char *dir)
{
    int64_t s57[2] = { 5, 7 };
    int axes[2] = { 1, 0 };
    nd_array r, base, a;
    TRY(nd_arange(ND_CPU, 35, &r));
    TRY(nd_reshape(&r, 2, s57, &base));
    TRY(nd_permute(&base, axes, &a));   /* A = base.T: (7,5), strides (1,7) */
    const int64_t m = a.shape[0], k = a.shape[1], pm = round_up(m, FMR);
    float vals[35];
    TRY(nd_to_host(&a, vals, 35));

    const double cw = 28, xa = 40, ya = 96, gap = 8;
    const double xp = xa + (double)k * cw + 70;
    const double pw = (double)(k * FMR) * cw + (double)(k - 1) * gap;
    const double w = xp + pw + 20, h = ya + (double)pm * cw + 96;
    char fills[3][48];
    for (int s = 0; s < 3; s++)
        snprintf(fills[s], sizeof fills[s], "hsl(%d, 65%%, 82%%)", 200 + 55 * s);

    FILE *f = svg_open(dir, "matmul-pack.svg", (int)w, (int)h,
                       "pack_a copies a strided view of A into slivers of MR rows, column by "
                       "column, padded with zeros");
    char sh[200], st[200];
    svg_text(f, 10, 24, 15, "start", "#0d1117", true, "pack_a(A), MR = %d", FMR);
    svg_text(f, 10, 44, 12, "start", "#1f2328", true,
             "A = arange(35).reshape(5,7).T: shape=%s strides=%s",
             tuple(a.ndim, a.shape, sh, sizeof sh), tuple(a.ndim, a.strides, st, sizeof st));

    /* A as a grid, rows coloured by sliver; padding rows dashed. */
    svg_text(f, xa, ya - 20, 12, "start", "#1f2328", false, "A, a view");
    for (int64_t p = 0; p < k; p++)
        svg_text(f, xa + ((double)p + 0.5) * cw, ya - 4, 9, "middle", "#57606a", true, "p=%lld",
                 (long long)p);
    for (int64_t i = 0; i < pm; i++) {
        svg_text(f, xa - 5, ya + (double)i * cw + cw / 2 + 3, 9, "end", "#57606a", true, "%lld",
                 (long long)i);
        for (int64_t p = 0; p < k; p++) {
            double x = xa + (double)p * cw, y = ya + (double)i * cw;
            cell(f, x, y, cw, fills[i / FMR], i >= m);
            svg_text(f, x + cw / 2, y + cw / 2 + 5, 12, "middle", i < m ? "#0d1117" : "#8c959f",
                     false, "%g", i < m ? (double)vals[i * k + p] : 0.0);
        }
    }
    blocks(f, xa, ya, cw, pm, k, FMR, k);

    /* The packed buffer: one strip per sliver, MR floats per column p. */
    svg_text(f, xp, ya - 20, 12, "start", "#1f2328", false,
             "the packed buffer, one sliver per line, read front to back by the micro-kernel");
    for (int64_t s = 0; s < pm / FMR; s++) {
        double y = ya + (double)s * (cw + 30) + 10;
        svg_text(f, xp - 8, y + cw / 2 + 4, 10, "end", "#57606a", true, "%lld", (long long)s);
        for (int64_t p = 0; p < k; p++) {
            double gx = xp + (double)(p * FMR) * cw + (double)p * gap;
            if (s == 0)
                svg_text(f, gx + FMR * cw / 2, ya + 4, 9, "middle", "#57606a", true,
                         "p=%lld", (long long)p);
            for (int64_t i = 0; i < FMR; i++) {
                int64_t row = s * FMR + i;
                double x = gx + (double)i * cw;
                cell(f, x, y, cw, fills[s], row >= m);
                if (row < m) {
                    int64_t idx[2] = { row, p }, off;
                    TRY(nd_offset_of(&a, idx, &off));   /* arange: value = buffer cell */
                    svg_text(f, x + cw / 2, y + cw / 2 + 5, 12, "middle", "#0d1117", false,
                             "%lld", (long long)off);
                } else {
                    svg_text(f, x + cw / 2, y + cw / 2 + 5, 12, "middle", "#8c959f", false, "0");
                }
            }
        }
    }
    double ny = ya + (double)pm * cw + 30;
    svg_text(f, 10, ny, 11, "start", "#57606a", false,
             "Sliver s holds rows %ds to %ds+%d of A, column by column: %d floats for each "
             "step p of the dot products.", FMR, FMR, FMR - 1, FMR);
    svg_text(f, 10, ny + 16, 11, "start", "#57606a", false,
             "pack_a reads A through its strides (here a transpose: row stride %lld, column "
             "stride %lld); the kernel sees only this buffer.",
             (long long)a.strides[0], (long long)a.strides[1]);
    svg_text(f, 10, ny + 32, 11, "start", "#57606a", false,
             "Rows %lld and %lld do not exist: zeros (dashed), so every sliver is whole. pack_b "
             "is the same with rows and columns swapped.", (long long)m, (long long)m + 1);
    svg_close(f);
    nd_release(&a);
    nd_release(&base);
    nd_release(&r);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: matmul_svg OUT_DIR\n");
        return 2;
    }
    matmul_tiles(argv[1]);
    matmul_pack(argv[1]);
    return 0;
}
