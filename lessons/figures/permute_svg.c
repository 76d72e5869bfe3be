/*
 * permute_svg.c -- the figures of lesson 7, drawn from what the ndarray
 * itself computes on the CPU (linked against the solution's libnd.a).
 *
 *     permute_svg OUT_DIR
 *
 * writes into OUT_DIR:
 *   permute-banks.svg     the transpose kernel's shared-memory tile, 32 x 32
 *                         floats, stored with rows of 32 and of 33 floats:
 *                         the bank (word mod 32) of every element, and the
 *                         banks that one warp hits when it reads one column
 *                         (tile[tx][c], tx = 0..31), as the kernel does when
 *                         it writes the result.  Each tile is a view made
 *                         with nd_as_strided over a buffer of 32 x 32 or
 *                         32 x 33 words, the column an nd_slice of it, and
 *                         every word address comes from nd_offset_of.
 *   permute-simplify.svg  the simplification of shape (3,4,5,6) by perm
 *                         (2,3,0,1) into (12,30) by (1,0): the source axes,
 *                         the result axes, and the groups that merge.  The
 *                         simplified shape and perm come from
 *                         nd_simplify_permutation; the groups drawn are
 *                         checked against it, and the two permutes are
 *                         checked to move the same bytes (nd_permute_bytes
 *                         on the CPU).
 */
#include "svg.h"

static const char *const RED = "#cf222e";
static const char *const INK = "#1f2328";
static const char *const GREY = "#57606a";

/* ------------------------------------------------------------------------ */
/* permute-banks.svg                                                        */
/* ------------------------------------------------------------------------ */

#define TILE 32      /* the kernel's tile: TILE x TILE floats */
#define BANKS 32     /* shared-memory banks, 4 bytes wide */
#define COL 5        /* the column that one warp reads in the figure */
#define S 13.0       /* side of a cell, px */

/* One tile stored with rows of `ld` floats (32 or 33) at (x, y): every
 * cell shows its bank, the padding words are grey, and column COL, which
 * one warp reads, is red.  Below, the 32 banks with the number of the
 * warp's accesses that land in each.  Returns the accesses of the busiest
 * bank: the steps the warp's read takes. */
static int tile_panel(FILE *f, double x, double y, int64_t ld)
{
    nd_array buf, tile, col;
    int64_t shape[2] = { TILE, TILE }, strides[2] = { ld, 1 };
    TRY(nd_arange(ND_CPU, TILE * ld, &buf));
    TRY(nd_as_strided(&buf, 2, shape, strides, 0, &tile));
    nd_index ix[2] = { ND_ALL, ND_AT(COL) };
    TRY(nd_slice(&tile, 2, ix, &col));      /* tile[:, COL]: what the warp reads */

    svg_text(f, x, y - 46, 14, "start", "#0d1117", true, "float tile[%d][%lld]", TILE,
             (long long)ld);
    svg_text(f, x, y - 28, 11, "start", INK, true, "word = %lld\u00b7row + column,  "
             "bank = word mod %d", (long long)ld, BANKS);
    for (int64_t c = 0; c < ld; c++)
        if (c % 8 == 0 || c == COL || c == TILE - 1 || c == TILE)
            svg_text(f, x + (double)c * S + S / 2, y - 4, 8, "middle",
                     c == COL ? RED : GREY, true, "%lld", (long long)c);
    for (int64_t r = 0; r < TILE; r++) {
        if (r % 8 == 0 || r == TILE - 1)
            svg_text(f, x - 4, y + (double)r * S + S / 2 + 3, 8, "end", GREY, true, "%lld",
                     (long long)r);
        for (int64_t c = 0; c < ld; c++) {
            double cx = x + (double)c * S, cy = y + (double)r * S;
            if (c >= TILE) {    /* padding: in the buffer, not in the view */
                svg_rect(f, cx, cy, S, S, "#eaeef2", "#d0d7de");
                continue;
            }
            int64_t index[2] = { r, c }, word;
            TRY(nd_offset_of(&tile, index, &word));
            bool hit = c == COL;
            svg_rect(f, cx, cy, S, S, hit ? "#ffd8d3" : "#ffffff", hit ? RED : "#d0d7de");
            svg_text(f, cx + S / 2, cy + S / 2 + 2.5, 7, "middle", hit ? "#82071e" : "#8c959f",
                     true, "%lld", (long long)(word % BANKS));
        }
    }
    if (ld > TILE)
        svg_text(f, x + (double)TILE * S + S / 2, y + TILE * S + 12, 8, "middle", GREY, false,
                 "pad");
    svg_text(f, x - 4, y - 16, 8, "end", GREY, false, "row");

    /* The warp: thread tx reads element tx of the column. */
    int count[BANKS] = { 0 };
    for (int64_t tx = 0; tx < TILE; tx++) {
        int64_t word;
        TRY(nd_offset_of(&col, &tx, &word));
        count[word % BANKS]++;
    }
    int steps = 0;
    for (int b = 0; b < BANKS; b++)
        steps = count[b] > steps ? count[b] : steps;

    double by = y + TILE * S + 34;
    svg_text(f, x, by - 6, 11, "start", INK, false,
             "banks hit by one warp reading column %d (tx = 0..31):", COL);
    for (int b = 0; b < BANKS; b++) {
        char fill[48] = "#ffffff";
        if (count[b] > 0)
            snprintf(fill, sizeof fill, "hsl(355, 80%%, %.0f%%)",
                     88.0 - 40.0 * (count[b] - 1) / (TILE - 1));
        svg_rect(f, x + b * S, by, S, S + 4, fill, "#6e7781");
        if (count[b] > 0)
            svg_text(f, x + b * S + S / 2, by + S / 2 + 4.5, count[b] > 9 ? 7 : 8, "middle",
                     "#0d1117", true, "%d", count[b]);
        if (b % 8 == 0 || b == BANKS - 1)
            svg_text(f, x + b * S + S / 2, by + S + 15, 8, "middle", GREY, true, "%d", b);
    }
    svg_text(f, x + BANKS * S + 6, by + S / 2 + 5, 8, "start", GREY, false, "bank");
    if (steps == 1)
        svg_text(f, x, by + S + 36, 12, "start", "#1a7f37", false,
                 "32 different banks: the warp reads in 1 step");
    else
        svg_text(f, x, by + S + 36, 12, "start", RED, false,
                 "%d threads in bank %lld: the warp reads in %d steps", steps,
                 (long long)(COL % BANKS), steps);
    nd_release(&col);
    nd_release(&tile);
    nd_release(&buf);
    return steps;
}

static void banks(const char *dir)
{
    const double x0 = 34, y0 = 110, gap = 64;
    const double w = x0 + 2 * (TILE + 1) * S + gap + 30, h = y0 + TILE * S + 110;
    FILE *f = svg_open(dir, "permute-banks.svg", (int)w, (int)h,
                       "Shared-memory banks of one column of the transpose tile, "
                       "rows of 32 and of 33 floats");
    svg_text(f, 10, 22, 15, "start", "#0d1117", true,
             "transpose_kernel's tile: the bank of each element, and one warp reading a column");
    svg_text(f, 10, 42, 11, "start", GREY, false,
             "Cell numbers: the bank of the element, (word address) mod 32. Red: column %d, "
             "which threads tx = 0..31 read as tile[tx][%d].", COL, COL);
    int s32 = tile_panel(f, x0, y0, TILE);
    int s33 = tile_panel(f, x0 + (TILE + 1) * S + gap, y0, TILE + 1);
    if (s32 != TILE || s33 != 1) {
        fprintf(stderr, "figures: bank conflicts: %d steps without padding, %d with; "
                "expected %d and 1\n", s32, s33, TILE);
        exit(1);
    }
    svg_close(f);
}

/* ------------------------------------------------------------------------ */
/* permute-simplify.svg                                                     */
/* ------------------------------------------------------------------------ */

static const char *const GROUP_FILL[] = { "hsl(208, 75%, 88%)", "hsl(32, 90%, 84%)",
                                          "hsl(140, 45%, 84%)", "hsl(280, 45%, 88%)" };
static const char *const GROUP_LINE[] = { "hsl(208, 70%, 40%)", "hsl(28, 85%, 42%)",
                                          "hsl(140, 50%, 32%)", "hsl(280, 45%, 45%)" };

#define BW 74.0     /* axis box */
#define BH 40.0

static void axis_box(FILE *f, double x, double y, int g, const char *top, int64_t size)
{
    svg_rect(f, x, y, BW, BH, GROUP_FILL[g % 4], GROUP_LINE[g % 4]);
    svg_text(f, x + BW / 2, y + 14, 10, "middle", GREY, true, "%s", top);
    svg_text(f, x + BW / 2, y + 33, 15, "middle", "#0d1117", true, "%lld", (long long)size);
}

/* A bracket under (or over, with dir = -1) the boxes from x1 to x2, with a label. */
static void bracket(FILE *f, double x1, double x2, double y, int dir, const char *col,
                    const char *label)
{
    svg_line(f, x1 + 2, y, x2 - 2, y, col, 1.5);
    svg_line(f, x1 + 2, y, x1 + 2, y - 6 * dir, col, 1.5);
    svg_line(f, x2 - 2, y, x2 - 2, y - 6 * dir, col, 1.5);
    svg_text(f, (x1 + x2) / 2, y + (dir > 0 ? 15 : -6), 11, "middle", col, true, "%s", label);
}

/* One permutation as two rows of axis boxes, source on top and result
 * below, with a line from each source axis to the result axis it becomes.
 * group[a] is the group of source axis a; groups sit apart by `ggap`.
 * Returns the x just past the wider row. */
static double perm_diagram(FILE *f, double x, double y, int n, const int64_t *shape,
                           const int *perm, const int *group, double ggap, bool brackets)
{
    const double dy = 150, step = BW + 8;
    double sx[ND_MAX_DIMS], rx[ND_MAX_DIMS];
    double px = x;
    for (int a = 0; a < n; a++) {
        if (a > 0 && group[a] != group[a - 1])
            px += ggap;
        sx[a] = px;
        px += step;
    }
    double right = px;
    px = x;
    for (int i = 0; i < n; i++) {
        if (i > 0 && group[perm[i]] != group[perm[i - 1]])
            px += ggap;
        rx[i] = px;
        px += step;
    }
    right = px > right ? px : right;
    for (int i = 0; i < n; i++)
        svg_line(f, sx[perm[i]] + BW / 2, y + BH, rx[i] + BW / 2, y + dy, GROUP_LINE[group[perm[i]] % 4], 1.8);
    char top[48];
    for (int a = 0; a < n; a++) {
        snprintf(top, sizeof top, "axis %d", a);
        axis_box(f, sx[a], y, group[a], top, shape[a]);
    }
    for (int i = 0; i < n; i++) {
        snprintf(top, sizeof top, "perm[%d]=%d", i, perm[i]);
        axis_box(f, rx[i], y + dy, group[perm[i]], top, shape[perm[i]]);
    }
    if (brackets) {   /* each group's product, over the source and under the result */
        for (int a = 0; a < n;) {
            int b = a;
            int64_t prod = 1;
            char label[64] = "", *p = label;
            while (b < n && group[b] == group[a]) {
                p += snprintf(p, (size_t)(label + sizeof label - p), "%s%lld", b > a ? "\u00b7" : "",
                              (long long)shape[b]);
                prod *= shape[b++];
            }
            snprintf(p, (size_t)(label + sizeof label - p), " = %lld", (long long)prod);
            bracket(f, sx[a], sx[b - 1] + BW, y - 8, -1, GROUP_LINE[group[a] % 4], label);
            a = b;
        }
        for (int i = 0; i < n;) {
            int j = i;
            int64_t prod = 1;
            while (j < n && group[perm[j]] == group[perm[i]])
                prod *= shape[perm[j++]];
            char label[32];
            snprintf(label, sizeof label, "%lld", (long long)prod);
            bracket(f, rx[i], rx[j - 1] + BW, y + dy + BH + 8, 1, GROUP_LINE[group[perm[i]] % 4],
                    label);
            i = j;
        }
    }
    return right;
}

static void simplify(const char *dir)
{
    enum { N = 4 };
    const int64_t shape[N] = { 3, 4, 5, 6 };
    const int perm[N] = { 2, 3, 0, 1 };
    int sn;
    int64_t sshape[ND_MAX_DIMS];
    int sperm[ND_MAX_DIMS];
    TRY(nd_simplify_permutation(N, shape, perm, &sn, sshape, sperm));

    /* The groups by the lesson's rule (no size-1 axes here): source axis a
     * joins a - 1 when the result holds a right after a - 1. */
    int group[N], ngroups = 0, where[N];
    for (int i = 0; i < N; i++)
        where[perm[i]] = i;
    for (int a = 0; a < N; a++) {
        if (shape[a] == 1) {
            fprintf(stderr, "figures: permute-simplify draws no size-1 axes\n");
            exit(1);
        }
        group[a] = a > 0 && where[a] == where[a - 1] + 1 ? group[a - 1] : ngroups++;
    }
    /* They must be what the library computed: one axis per group, of the
     * group's size, in the result's order. */
    bool same = sn == ngroups;
    for (int g = 0; same && g < ngroups; g++) {
        int64_t prod = 1;
        for (int a = 0; a < N; a++)
            if (group[a] == g)
                prod *= shape[a];
        same = sshape[g] == prod;
    }
    for (int i = 0, k = 0; same && i < N; i++)
        if (i == 0 || group[perm[i]] != group[perm[i - 1]])
            same = k < sn && sperm[k++] == group[perm[i]];
    if (!same) {
        fprintf(stderr, "figures: the groups drawn differ from nd_simplify_permutation\n");
        exit(1);
    }
    /* And the simplified permute moves the same bytes as the original. */
    enum { NUMEL = 3 * 4 * 5 * 6 };
    float src[NUMEL], d4[NUMEL], d2[NUMEL];
    for (int i = 0; i < NUMEL; i++)
        src[i] = (float)i;
    TRY(nd_permute_bytes(ND_CPU, src, d4, sizeof(float), N, shape, perm));
    int ran;
    TRY(nd_permute_bytes_version(ND_CPU, src, d2, sizeof(float), sn, sshape, sperm, 0, &ran));
    if (memcmp(d4, d2, sizeof d4) != 0) {
        fprintf(stderr, "figures: the simplified permute moves different bytes\n");
        exit(1);
    }

    char sh[200], pe[200], rs[200];
    int64_t rshape[ND_MAX_DIMS], p64[ND_MAX_DIMS];
    FILE *f = svg_open(dir, "permute-simplify.svg", 860, 330,
                       "Simplifying shape (3,4,5,6) by perm (2,3,0,1) into (12,30) by (1,0)");
    for (int i = 0; i < N; i++) {
        rshape[i] = shape[perm[i]];
        p64[i] = perm[i];
    }
    svg_text(f, 10, 22, 15, "start", "#0d1117", true, "(3,4,5,6) by perm %s \u2192 %s",
             tuple(N, p64, pe, sizeof pe), tuple(N, rshape, rs, sizeof rs));
    svg_text(f, 10, 42, 11, "start", GREY, false,
             "Source axes that stay neighbours, in order, in the result merge into one axis "
             "(same colour).");
    svg_text(f, 10, 100, 11, "start", INK, false, "source");
    svg_text(f, 10, 250, 11, "start", INK, false, "result");
    double right = perm_diagram(f, 62, 80, N, shape, perm, group, 26, true);

    /* The simplified permutation, from nd_simplify_permutation. */
    int sgroup[ND_MAX_DIMS];
    for (int g = 0; g < sn; g++)
        sgroup[g] = g;
    double x2 = right + 70;
    svg_text(f, x2 - 35, 186, 24, "middle", GREY, false, "=");
    perm_diagram(f, x2, 80, sn, sshape, sperm, sgroup, 26, false);
    for (int i = 0; i < sn; i++)
        p64[i] = sperm[i];
    svg_text(f, x2, 60, 12, "start", INK, true, "%s by %s",
             tuple(sn, sshape, sh, sizeof sh), tuple(sn, p64, pe, sizeof pe));
    svg_text(f, x2, 300, 11, "start", GREY, false, "nd_simplify_permutation: "
             "%d axes, a transpose", sn);
    svg_close(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: permute_svg OUT_DIR\n");
        return 2;
    }
    banks(argv[1]);
    simplify(argv[1]);
    return 0;
}
