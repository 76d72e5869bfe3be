/*
 * cuda_svg.c -- the figure of lesson 6, drawn from what the ndarray itself
 * computes on the CPU (linked against the solution's libnd.a).
 *
 *     cuda_svg OUT_DIR
 *
 * writes OUT_DIR/cuda-index.svg: the index transform of compact(a.T) for
 * a = arange(24).reshape(2,3,4), as a launch of 2 blocks of 16 threads
 * would do it.  Top: the threads, by block, with their global id
 * gid = blockIdx.x * blockDim.x + threadIdx.x.  Middle: the multi-index of
 * a.T that each gid stands for (row-major, the last axis fastest).
 * Bottom: a's buffer, each cell labelled with the thread that reads it,
 * and a line from each thread to its cell.  Threads 24..31 have no
 * element: the guard i < n stops them.
 *
 * The multi-indices come from the lesson 2 odometer (nd_iter), the offsets
 * from lesson 1's nd_offset_of; each offset is checked against lesson 6's
 * nd_index_to_offset (the kernels' offset_of, run on the host) and against
 * the value nd_to_host reads there (arange puts value v in cell v).
 */
#include "svg.h"

#define N 24           /* elements of a.T */
#define THREADS 16     /* threads per block (256 in the library) */
#define BLOCKS 2       /* ceil(N / THREADS) */
#define PICK 17        /* the worked example of the lesson */

static const char *const RED = "#cf222e";

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cuda_svg OUT_DIR\n");
        return 2;
    }
    int64_t s234[3] = { 2, 3, 4 };
    int rev[3] = { 2, 1, 0 };
    nd_array buf, a, t;
    TRY(nd_arange(ND_CPU, N, &buf));
    TRY(nd_reshape(&buf, 3, s234, &a));
    TRY(nd_permute(&a, rev, &t));   /* a.T: shape (4,3,2), strides (1,4,12) */
    visit_map m = map_visits(&t);
    float vals[N];
    TRY(nd_to_host(&t, vals, N));

    /* index[g] and off[g] for every thread g that has an element */
    int64_t index[N][3], off[N];
    nd_iter it;
    TRY(nd_iter_init(&it, t.ndim, t.shape));
    while (nd_iter_next(&it)) {
        int64_t g = it.count - 1;
        memcpy(index[g], it.index, sizeof index[g]);
        TRY(nd_offset_of(&t, it.index, &off[g]));
        int64_t k = nd_index_to_offset(g, t.ndim, t.shape, t.strides, t.offset);
        if (k != off[g] || vals[g] != (float)off[g]) {
            fprintf(stderr, "figures: element %lld of a.T: nd_offset_of gives %lld, "
                    "nd_index_to_offset %lld, the value there is %g\n", (long long)g,
                    (long long)off[g], (long long)k, (double)vals[g]);
            return 1;
        }
    }

    const double cw = 26, gap = 14, x0 = 78;          /* thread cells */
    const double ty = 74, th = 30;                    /* thread row */
    const double iy = ty + th + 26, ih = 18;          /* index rows */
    const double by = iy + 3 * ih + 110;              /* buffer strip */
    const double bx = x0 + (BLOCKS * THREADS * cw + gap - N * CELL) / 2;
    const double w = x0 + BLOCKS * THREADS * cw + gap + 16, h = by + CELL + 104;
    FILE *f = svg_open(argv[1], "cuda-index.svg", (int)w, (int)h,
                 "The CUDA index transform: thread id, multi-index of a.T, buffer cell read");

    char sh[200], st[200];
    svg_text(f, 10, 22, 15, "start", "#0d1117", true,
             "compact(a.T), a = arange(24).reshape(2,3,4): %d blocks of %d threads",
             BLOCKS, THREADS);
    svg_text(f, 10, 42, 12, "start", "#1f2328", true, "a.T: shape=%s strides=%s offset=%lld",
             tuple(t.ndim, t.shape, sh, sizeof sh), tuple(t.ndim, t.strides, st, sizeof st),
             (long long)t.offset);

    /* Row labels */
    svg_text(f, x0 - 8, ty + th / 2 + 4, 11, "end", "#1f2328", true, "gid");
    for (int k = 0; k < 3; k++)
        svg_text(f, x0 - 8, iy + k * ih + ih / 2 + 4, 11, "end", "#1f2328", true,
                 "index[%d]", k);
    svg_text(f, bx - 8, by + CELL / 2.0 + 4, 11, "end", "#1f2328", true, "buffer");

    for (int b = 0; b < BLOCKS; b++) {
        double bx0 = x0 + b * (THREADS * cw + gap);
        svg_text(f, bx0, ty - 8, 11, "start", "#57606a", true,
                 "blockIdx.x = %d: threadIdx.x = 0..%d", b, THREADS - 1);
        svg_line(f, bx0, ty - 3, bx0 + THREADS * cw, ty - 3, "#57606a", 1.5);
    }
    /* Lines first, so that the cells are drawn over their ends. */
    for (int g = 0; g < N; g++) {
        double x = x0 + g * cw + (g >= THREADS ? gap : 0) + cw / 2;
        double xb = bx + (double)off[g] * CELL + CELL / 2.0;
        char col[48];
        snprintf(col, sizeof col, "hsl(208, 45%%, %.0f%%)", 72.0 - 30.0 * g / (N - 1));
        if (g != PICK)
            svg_line(f, x, iy + 3 * ih + 2, xb, by - 2, col, 1);
    }
    {
        double x = x0 + PICK * cw + gap + cw / 2;
        svg_line(f, x, iy + 3 * ih + 2, bx + (double)off[PICK] * CELL + CELL / 2.0, by - 2,
                 RED, 2.5);
    }
    for (int g = 0; g < BLOCKS * THREADS; g++) {
        double x = x0 + g * cw + (g >= THREADS ? gap : 0);
        bool live = g < N;
        char fill[48] = "#eaeef2";
        if (live)
            visit_color(g, N, fill, sizeof fill);
        const char *stroke = g == PICK ? RED : "#6e7781";
        svg_rect(f, x, ty, cw, th, fill, stroke);
        svg_text(f, x + cw / 2, ty + th / 2 + 5, 12, "middle", live ? "#0d1117" : "#8c959f",
                 false, "%d", g);
        for (int k = 0; k < 3; k++) {
            svg_rect(f, x, iy + k * ih, cw, ih, live ? "#ffffff" : "#eaeef2", stroke);
            if (live)
                svg_text(f, x + cw / 2, iy + k * ih + ih / 2 + 4, 11, "middle", "#0d1117", true,
                         "%lld", (long long)index[g][k]);
        }
        if (g == PICK) {   /* redraw its outline on top of the neighbours' */
            svg_rect(f, x, ty, cw, th, "none", RED);
            svg_rect(f, x, iy, cw, 3 * ih, "none", RED);
        }
    }
    {
        double x = x0 + N * cw + gap, xe = x0 + BLOCKS * THREADS * cw + gap;
        svg_text(f, (x + xe) / 2, iy + 3 * ih + 16, 10, "middle", "#57606a", false,
                 "gid \u2265 n = %d: no element", N);
    }
    buffer_strip(f, bx, by, &m, N);
    svg_rect(f, bx + (double)off[PICK] * CELL, by, CELL, CELL, "none", RED);
    svg_rect(f, bx + (double)off[PICK] * CELL + 1, by + 1, CELL - 2, CELL - 2, "none", RED);

    /* The worked example, with the numbers computed above. */
    const int64_t *ix = index[PICK];
    int64_t q = PICK / t.shape[2];
    svg_text(f, 10, by + CELL + 24, 12, "start", RED, true,
             "thread %d: %d %% %lld = %lld, %d / %lld = %lld; %lld %% %lld = %lld, "
             "%lld / %lld = %lld  \u2192  index (%lld,%lld,%lld)",
             PICK, PICK, (long long)t.shape[2], (long long)ix[2], PICK, (long long)t.shape[2],
             (long long)q, (long long)q, (long long)t.shape[1], (long long)ix[1], (long long)q,
             (long long)t.shape[1], (long long)ix[0], (long long)ix[0], (long long)ix[1],
             (long long)ix[2]);
    svg_text(f, 10, by + CELL + 42, 12, "start", RED, true,
             "offset = %lld + %lld\u00b7%lld + %lld\u00b7%lld + %lld\u00b7%lld = %lld: "
             "thread %d reads cell %lld",
             (long long)t.offset, (long long)ix[0], (long long)t.strides[0], (long long)ix[1],
             (long long)t.strides[1], (long long)ix[2], (long long)t.strides[2],
             (long long)off[PICK], PICK, (long long)off[PICK]);
    svg_text(f, 10, by + CELL + 66, 11, "start", "#57606a", false,
             "Buffer cells: the cell number (top left) and the thread that reads it. "
             "Neighbouring threads read cells 12 apart,");
    svg_text(f, 10, by + CELL + 82, 11, "start", "#57606a", false,
             "the stride of a.T's last axis: a transpose's reads are scattered, and its "
             "writes (to compact memory, in gid order) are not.");
    svg_close(f);
    nd_release(&t);
    nd_release(&a);
    nd_release(&buf);
    return 0;
}
