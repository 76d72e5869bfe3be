/*
 * compact_svg.c -- the figures of lesson 2, drawn from what the ndarray
 * itself does (linked against the solution's libnd.a).
 *
 *     compact_svg OUT_DIR
 *
 * writes into OUT_DIR:
 *   compact-transpose.svg  nd_compact of a transpose: the order in which the
 *                          gather reads the source buffer, and the new buffer
 *                          it writes, read back with nd_buffer_to_host;
 *   compact-simplify.svg   a view's runs of memory before and after
 *                          nd_simplify_dims;
 *   compact-tiles.svg      the order in which a transpose's source is read,
 *                          row by row and by square blocks (the loop
 *                          structure of gather_plane, with 4 x 4 blocks so
 *                          that it fits in a picture; the library uses 16).
 */
#include "svg.h"

/* Lines from each source cell to the destination cell it is copied to. */
static void compact_transpose(const char *dir)
{
    int64_t s34[2] = { 3, 4 };
    int axes[2] = { 1, 0 };
    nd_array buf, a, t, c;
    TRY(nd_arange(ND_CPU, 12, &buf));
    TRY(nd_reshape(&buf, 2, s34, &a));
    TRY(nd_permute(&a, axes, &t));
    TRY(nd_compact(&t, &c));
    visit_map m = map_visits(&t);
    float out[12];
    TRY(nd_buffer_to_host(&c, out, sizeof out));

    const double x0 = 10, sy = 70, dy = 200;
    FILE *f = svg_open(dir, "compact-transpose.svg", 20 + 12 * CELL + 10, 300,
                       "nd_compact of a transposed (3,4) array: a strided gather");
    svg_text(f, 10, 22, 15, "start", "#0d1117", true, "c = nd_compact(a.T)");
    svg_text(f, 10, sy - 12, 12, "start", "#1f2328", false,
             "a.T's buffer: the gather reads cell 0, 4, 8, 1, 5, ... (numbers: read order)");
    buffer_strip(f, x0, sy, &m, 12);
    for (int64_t off = 0; off < 12; off++) {
        int64_t i = m.visits[off][0];   /* the element of a.T held in cell off */
        svg_line(f, x0 + (double)off * CELL + CELL / 2.0, sy + CELL + 2,
                 x0 + (double)i * CELL + CELL / 2.0, dy - 2, "#8c959f", 1);
    }
    for (int64_t i = 0; i < 12; i++) {
        char fill[48];
        visit_color(i, 12, fill, sizeof fill);
        svg_rect(f, x0 + (double)i * CELL, dy, CELL, CELL, fill, "#1f2328");
        svg_text(f, x0 + (double)i * CELL + 3, dy + 10, 8, "start", "#57606a", true, "%lld",
                 (long long)i);
        svg_text(f, x0 + (double)i * CELL + CELL / 2.0, dy + CELL / 2.0 + 7, 13, "middle",
                 "#0d1117", false, "%g", (double)out[i]);
    }
    char sh[200], st[200];
    svg_text(f, 10, dy + CELL + 20, 12, "start", "#1f2328", false,
             "c's new buffer, written in order 0, 1, 2, ... (numbers: the values copied)");
    svg_text(f, 10, dy + CELL + 40, 12, "start", "#1f2328", true, "a.T: shape=%s strides=%s  ->  c: strides=%s",
             tuple(t.ndim, t.shape, sh, sizeof sh), tuple(t.ndim, t.strides, st, sizeof st),
             tuple(c.ndim, c.strides, st, sizeof st));
    svg_close(f);
    nd_release(&c);
    nd_release(&t);
    nd_release(&a);
    nd_release(&buf);
}

/* Brackets under the strip at y for each run of the layout (shape,
 * strides) at `offset`: its last axis is a run when its stride is 1. */
static void runs(FILE *f, double x0, double y, double cw, int ndim, const int64_t *shape,
                 const int64_t *strides, int64_t offset, const char *color, const char *what)
{
    nd_iter it;
    TRY(nd_iter_init(&it, ndim - 1, shape));
    int n = 0;
    while (nd_iter_next(&it)) {
        int64_t start = offset;
        for (int k = 0; k < ndim - 1; k++)
            start += it.index[k] * strides[k];
        double a = x0 + (double)start * cw + 2, b = x0 + (double)(start + shape[ndim - 1]) * cw - 2;
        svg_line(f, a, y, b, y, color, 3);
        svg_line(f, a, y - 5, a, y, color, 2);
        svg_line(f, b, y - 5, b, y, color, 2);
        n++;
    }
    char sh[200], st[200];
    svg_text(f, x0, y + 16, 11, "start", color, true, "%s shape=%s strides=%s: %d runs of %lld",
             what, tuple(ndim, shape, sh, sizeof sh), tuple(ndim, strides, st, sizeof st), n,
             (long long)shape[ndim - 1]);
}

static void compact_simplify(const char *dir)
{
    int64_t s234[3] = { 2, 3, 4 };
    nd_array buf, a, v;
    TRY(nd_arange(ND_CPU, 24, &buf));
    TRY(nd_reshape(&buf, 3, s234, &a));
    nd_index ix[2] = { ND_ALL, ND_SLICE(1, 3, 1) };
    TRY(nd_slice(&a, 2, ix, &v));
    visit_map m = map_visits(&v);

    int ndim = v.ndim;
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    memcpy(shape, v.shape, sizeof shape);
    memcpy(strides, v.strides, sizeof strides);
    TRY(nd_simplify_dims(&ndim, shape, strides, NULL));

    const double cw = 26, x0 = 10, sy = 60;
    FILE *f = svg_open(dir, "compact-simplify.svg", (int)(2 * x0 + 24 * cw), 216,
                       "nd_simplify_dims merges the axes of a[:, 1:3, :] into 2 runs of 8");
    svg_text(f, 10, 22, 15, "start", "#0d1117", true, "v = a[:, 1:3, :]   with a = arange(24).reshape(2,3,4)");
    svg_text(f, 10, sy - 10, 12, "start", "#1f2328", false,
             "memory: the 24 floats of a's buffer; numbers: the order in which v visits a cell");
    for (int64_t off = 0; off < 24; off++) {
        char fill[48] = "#ffffff", label[64];
        if (m.nvisits[off])
            visit_color(m.visits[off][0], m.numel, fill, sizeof fill);
        svg_rect(f, x0 + (double)off * cw, sy, cw, cw, fill, "#6e7781");
        svg_text(f, x0 + (double)off * cw + 2, sy + 9, 7, "start", "#57606a", true, "%lld",
                 (long long)off);
        visit_label(&m, off, label, sizeof label);
        if (label[0])
            svg_text(f, x0 + (double)off * cw + cw / 2, sy + cw / 2 + 6, 12, "middle", "#0d1117",
                     false, "%s", label);
    }
    runs(f, x0, sy + cw + 14, cw, v.ndim, v.shape, v.strides, v.offset, "#8c5a00", "before:");
    runs(f, x0, sy + cw + 58, cw, ndim, shape, strides, v.offset, "#0b5cad",
         "after nd_simplify_dims:");
    svg_text(f, 10, sy + cw + 100, 11, "start", "#57606a", false,
             "Axes 1 and 2 merge: strides[1] = shape[2] \u00d7 strides[2] (4 = 4 \u00d7 1).");
    svg_text(f, 10, sy + cw + 116, 11, "start", "#57606a", false,
             "Axis 0 cannot join them: strides[0] = 12, but shape[1] \u00d7 strides[1] = 2 \u00d7 4 = 8.");
    svg_close(f);
    nd_release(&v);
    nd_release(&a);
    nd_release(&buf);
}

/* One 8 x 8 grid of the source of a transpose, each cell filled by when it
 * is read.  order[r][c] is the read number of source cell (r, c). */
static void order_grid(FILE *f, double x, double y, int n, int order[8][8], int tile)
{
    const double cw = 26;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) {
            char fill[48];
            visit_color(order[r][c], n * n, fill, sizeof fill);
            svg_rect(f, x + c * cw, y + r * cw, cw, cw, fill, "#8c959f");
            svg_text(f, x + c * cw + cw / 2, y + r * cw + cw / 2 + 4, 10, "middle", "#0d1117",
                     false, "%d", order[r][c]);
        }
    if (tile > 0)
        for (int k = 0; k <= n; k += tile) {
            svg_line(f, x + k * cw, y, x + k * cw, y + n * cw, "#1f2328", 2);
            svg_line(f, x, y + k * cw, x + n * cw, y + k * cw, "#1f2328", 2);
        }
}

static void compact_tiles(const char *dir)
{
    enum { N = 8, T = 4 };
    /* The source is b, a compact (8,8) array; the view is b.T.  Its last
     * axis walks b's columns (stride 8), its first b's rows (stride 1):
     * the dense axis p of gather_plane. */
    int64_t s88[2] = { N, N };
    int axes[2] = { 1, 0 };
    nd_array buf, b, t;
    TRY(nd_arange(ND_CPU, N * N, &buf));
    TRY(nd_reshape(&buf, 2, s88, &b));
    TRY(nd_permute(&b, axes, &t));

    /* Row by row: output element (i, j) reads b's cell offset_of(t, (i, j)). */
    int rows[N][N], tiles[N][N], k = 0;
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j++) {
            int64_t idx[2] = { i, j }, off;
            TRY(nd_offset_of(&t, idx, &off));
            rows[off / N][off % N] = k++;
        }
    /* By blocks, as gather_plane reads: block after block along p (i), in
     * rows of blocks along the last axis (j); in a block, for each j, the
     * T elements along i, which sit side by side. */
    k = 0;
    for (int64_t j0 = 0; j0 < N; j0 += T)
        for (int64_t i0 = 0; i0 < N; i0 += T)
            for (int64_t j = j0; j < j0 + T; j++)
                for (int64_t i = i0; i < i0 + T; i++) {
                    int64_t idx[2] = { i, j }, off;
                    TRY(nd_offset_of(&t, idx, &off));
                    tiles[off / N][off % N] = k++;
                }

    const double cw = 26, gy = 70, x1 = 10, x2 = 10 + N * cw + 40;
    FILE *f = svg_open(dir, "compact-tiles.svg", 600, (int)(gy + N * cw + 64),
                       "The order in which the source of a transpose is read: by rows and by blocks");
    svg_text(f, 10, 22, 15, "start", "#0d1117", true, "nd_compact(b.T), b an (8,8) array");
    svg_text(f, x1, gy - 12, 12, "start", "#1f2328", false, "row by row: down b's columns");
    svg_text(f, x2, gy - 12, 12, "start", "#1f2328", false, "by 4\u00d74 blocks: runs along b's rows");
    order_grid(f, x1, gy, N, rows, 0);
    order_grid(f, x2, gy, N, tiles, T);
    svg_text(f, 10, gy + N * cw + 22, 11, "start", "#57606a", false,
             "Each cell is one float of b (a row of the grid is a row of b, in memory order); "
             "its number: when it is read.");
    svg_text(f, 10, gy + N * cw + 40, 11, "start", "#57606a", false,
             "Row by row, each read is 8 floats after the one before; by tiles, runs of 4 "
             "neighbours are read together.");
    svg_close(f);
    nd_release(&t);
    nd_release(&b);
    nd_release(&buf);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: compact_svg OUT_DIR\n");
        return 2;
    }
    compact_transpose(argv[1]);
    compact_simplify(argv[1]);
    compact_tiles(argv[1]);
    return 0;
}
