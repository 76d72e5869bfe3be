/*
 * profile_svg.c -- the profiles of lessons 6 and 7, and lesson 7's plot of
 * modelled bandwidth, drawn from the data the build writes (never pasted):
 *
 *     profile_svg OUT_DIR
 *
 * reads (from the repository root, where `make docs` runs it):
 *   lessons/data/profile-l6.txt, profile-l7.txt   `make profile` of every
 *       profiling case (make profile-data; grader/emu/profile_cases.c)
 *   lessons/data/model-validation.tsv   the model against published
 *       measurements (make model-validation): the H100 SXM transposes
 *       drawn here, and the copy they are measured against
 *   lessons/data/profile.tsv            the model per lesson 7 version
 *   lessons/data/bench-gpu-permute.tsv  measured GPU figures, when a GPU
 *       run has been recorded (make bench on a GPU)
 * and writes into OUT_DIR:
 *   profile-CASE.svg   the profile of one case, as `make profile` prints it
 *   permute-model.svg  per kernel, % of a 16-byte-per-thread copy on an
 *       H100 SXM: the study's published measurements, the model's figure
 *       ("modelled") for the same kernels and for lesson 7's versions, and
 *       measured ones where the GPU benchmark's file has them
 * make check regenerates the data files and fails when they differ from
 * what is committed, so the figures show what the code does.
 */
#include "svg.h"

static const char *const INK = "#1f2328";
static const char *const GREY = "#57606a";
static const char *const LIGHT = "#afb8c1";
static const char *const BLUE = "#0969da";
static const char *const ORANGE = "#bc4c00";

/* Text with <, > and & escaped (kernel names hold templates). */
static void text(FILE *f, double x, double y, double size, const char *anchor, const char *fill,
                 bool mono, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"%s\" fill=\"%s\"%s "
               "xml:space=\"preserve\">",
            x, y, size, anchor, fill, mono ? " font-family=\"" MONO "\"" : "");
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    }
    fputs("</text>\n", f);
}

static char *read_file(const char *path, bool must)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        if (!must)
            return NULL;
        fprintf(stderr, "figures: cannot read %s: %s (make profile-data and make "
                        "model-validation write it)\n", path, strerror(errno));
        exit(1);
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *more = realloc(buf, cap *= 2);
            if (more == NULL)
                free(buf);
            buf = more;
        }
    }
    fclose(f);
    if (buf == NULL) {
        fprintf(stderr, "figures: out of memory reading %s\n", path);
        exit(1);
    }
    buf[n] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------ */
/* profile-CASE.svg                                                         */
/* ------------------------------------------------------------------------ */

#define LINE_H 15.0
#define CHAR_W 7.2

/* One case: the lines after its "######## name (lesson N): what" header. */
static void draw_case(const char *dir, char **lines, int n)
{
    char name[128], file[200];
    if (sscanf(lines[0], "######## %127s", name) != 1) {
        fprintf(stderr, "figures: a profile case without a name: %s\n", lines[0]);
        exit(1);
    }
    int width = 0, first = 1;
    while (first < n && lines[first][0] == '\0')
        first++;
    for (int i = first; i < n; i++)
        if ((int)strlen(lines[i]) > width)
            width = (int)strlen(lines[i]);
    int w = (int)(width * CHAR_W) + 24, h = (int)((n - first) * LINE_H) + 40;
    char title[300];
    snprintf(title, sizeof title, "make profile: %s (counts from the CUDA emulator; times modelled)",
             name);
    snprintf(file, sizeof file, "profile-%s.svg", name);
    FILE *f = svg_open(dir, file, w, h, title);
    svg_rect(f, 0.5, 0.5, w - 1, h - 1, "#f6f8fa", "#d0d7de");
    text(f, 12, 18, 11, "start", GREY, false, lines[0] + 9);
    for (int i = first; i < n; i++)
        text(f, 12, 36 + (i - first) * LINE_H, 12, "start", INK, true, lines[i]);
    svg_close(f);
}

static int draw_profiles(const char *dir, const char *path)
{
    char *buf = read_file(path, true);
    char **lines = NULL;
    int n = 0, cap = 0, cases = 0;
    for (char *s = buf; *s;) {
        char *e = strchr(s, '\n');
        if (e)
            *e = '\0';
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            char **more = realloc(lines, (size_t)cap * sizeof *lines);
            if (more == NULL) {
                fprintf(stderr, "figures: out of memory\n");
                exit(1);
            }
            lines = more;
        }
        lines[n++] = s;
        if (!e)
            break;
        s = e + 1;
    }
    int start = -1;
    for (int i = 0; i <= n; i++) {
        if (i == n || strncmp(lines[i], "######## ", 9) == 0) {
            if (start >= 0) {
                int end = i;
                while (end > start && lines[end - 1][0] == '\0')
                    end--;
                draw_case(dir, lines + start, end - start);
                cases++;
            }
            start = i;
        }
    }
    free(lines);
    free(buf);
    if (cases == 0) {
        fprintf(stderr, "figures: no profile case in %s\n", path);
        exit(1);
    }
    return cases;
}

/* ------------------------------------------------------------------------ */
/* permute-model.svg                                                        */
/* ------------------------------------------------------------------------ */

typedef struct row {
    char label[96];
    double published, modelled, measured; /* % of the copy kernel; < 0: none */
} row;

/* Field k (0-based) of a tab-separated line, into dst. */
static bool field(const char *line, int k, char *dst, size_t cap)
{
    for (int i = 0; i < k; i++) {
        line = strchr(line, '\t');
        if (line == NULL)
            return false;
        line++;
    }
    size_t len = strcspn(line, "\t\n");
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, line, len);
    dst[len] = '\0';
    return true;
}

/* Each non-comment line after the header, in turn. */
#define FOR_ROWS(buf, line)                                                            \
    for (char *save_ = NULL, *line = strtok_r(buf, "\n", &save_); line != NULL;         \
         line = strtok_r(NULL, "\n", &save_))                                          \
        if (line[0] != '#' && strncmp(line, "kernel\t", 7) != 0 && strncmp(line, "case\t", 5) != 0)

/* The measured % of copy of version v ("1 naive") for an fp32 or fp16
 * 2-D transpose of 4096 x 4096, from the GPU benchmark's rows (group,
 * case, shape, seconds, rate, unit, ratio, ...), or -1. */
static double measured(const char *bench, int v, const char *type)
{
    if (bench == NULL)
        return -1;
    char *copy = strdup(bench), want[8];
    double got = -1;
    snprintf(want, sizeof want, "%d ", v);
    FOR_ROWS(copy, line) {
        char group[32], name[96], shape[160], ratio[32];
        if (field(line, 0, group, sizeof group) && strcmp(group, "permute") == 0 &&
            field(line, 1, name, sizeof name) && strncmp(name, want, strlen(want)) == 0 &&
            field(line, 2, shape, sizeof shape) && strstr(shape, type) &&
            strstr(shape, "4096,4096") && field(line, 6, ratio, sizeof ratio)) {
            got = 100.0 * atof(ratio);
            break;
        }
    }
    free(copy);
    return got;
}

static void draw_model(const char *dir)
{
    row rows[32];
    int n = 0;
    /* the steps of the study (S1), and the 16-byte copy (S2) they are
     * measured against: its published figure is a range, drawn at its
     * middle */
    static const char *const shown[] = { "naive", "tiled", "tiled_pad", "coarsen2", "coarsen4",
                                         "vec4_t64", "copy16" };
    double copy_published = -1, copy_modelled = -1;
    char *study = read_file("lessons/data/model-validation.tsv", true);
    for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++) {
        char *copy = strdup(study);
        FOR_ROWS(copy, line) {
            char name[64], pub[32], mod[32], set[32];
            if (!field(line, 0, name, sizeof name) || strcmp(name, shown[k]) != 0 ||
                !field(line, 4, pub, sizeof pub) || !field(line, 5, mod, sizeof mod) ||
                !field(line, 7, set, sizeof set))
                continue;
            row *r = &rows[n++];
            snprintf(r->label, sizeof r->label, "%s%s", name,
                     strcmp(set, "test") == 0 ? "" : " (fitted)");
            const char *dash = strchr(pub, '-'); /* "89.5-92.5": the middle */
            r->published = dash ? (atof(pub) + atof(dash + 1)) / 2 : atof(pub);
            r->modelled = atof(mod);
            r->measured = -1;
            if (strcmp(name, "copy16") == 0) {
                copy_published = r->published;
                copy_modelled = r->modelled;
            }
            break;
        }
        free(copy);
    }
    free(study);
    if (copy_modelled <= 0 || copy_published <= 0 || n != (int)(sizeof shown / sizeof shown[0])) {
        fprintf(stderr, "figures: lessons/data/model-validation.tsv lacks a row of the plot "
                        "(naive ... vec4_t64, copy16)\n");
        exit(1);
    }
    for (int i = 0; i < n; i++) {
        rows[i].published *= 100.0 / copy_published;
        rows[i].modelled *= 100.0 / copy_modelled;
    }
    /* lesson 7's versions, modelled, and measured where recorded */
    static const struct {
        const char *name, *label, *type;
        int version;
    } l7[] = {
        { "permute_naive", "lesson 7: 1 naive, fp32", "fp32", 1 },
        { "permute_generic", "lesson 7: 2 generic, fp32", "fp32", 2 },
        { "permute_transpose", "lesson 7: 3 transpose, fp32", "fp32", 3 },
        { "permute_transpose_fp16", "lesson 7: 3 transpose, fp16", "fp16", 3 },
        { "permute_transpose2", "lesson 7: 4 transpose2, fp16", "fp16", 4 },
    };
    char *bench = read_file("lessons/data/bench-gpu-permute.tsv", false);
    char *prof = read_file("lessons/data/profile.tsv", true);
    for (size_t k = 0; k < sizeof l7 / sizeof l7[0] && n < 32; k++) {
        char *copy = strdup(prof);
        FOR_ROWS(copy, line) {
            char c[64], h100[32];
            if (field(line, 0, c, sizeof c) && strcmp(c, l7[k].name) == 0 &&
                field(line, 8, h100, sizeof h100)) {
                row *r = &rows[n++];
                snprintf(r->label, sizeof r->label, "%s", l7[k].label);
                r->published = -1;
                r->modelled = atof(h100) * 100.0 / copy_modelled;
                r->measured = measured(bench, l7[k].version, l7[k].type);
                break;
            }
        }
        free(copy);
    }
    free(prof);
    char gpu[200] = "";
    if (bench != NULL) {
        const char *g = strstr(bench, "# gpu: ");
        if (g != NULL)
            sscanf(g + 7, "%199[^\n]", gpu);
        free(bench);
    }

    const double left = 230, bar_w = 430, row_h = 30, top = 72;
    int w = (int)(left + bar_w + 90), h = (int)(top + n * row_h + 60);
    FILE *f = svg_open(dir, "permute-model.svg", w, h,
                       "Transposes on an H100 SXM as % of a 16-byte copy: published, modelled, "
                       "measured");
    text(f, 12, 20, 13, "start", INK, false,
         "Transposes on an H100 SXM, % of a 16-byte-per-thread copy kernel");
    text(f, 12, 38, 10.5, "start", GREY, false,
         "grey: published (yencal 2025: transposes of 32768 x 32768; the copy: 2^27 bytes)   "
         "blue: modelled");
    char sub[300];
    snprintf(sub, sizeof sub, "orange: measured by make bench%s%s", gpu[0] ? " on " : " (none recorded yet)",
             gpu);
    text(f, 12, 52, 10.5, "start", ORANGE, false, sub);
    for (int t = 0; t <= 100; t += 25) {
        double x = left + bar_w * t / 110.0;
        svg_line(f, x, top - 6, x, top + n * row_h, "#d0d7de", 1);
        char tick[16];
        snprintf(tick, sizeof tick, "%d%%", t);
        text(f, x, top + n * row_h + 16, 10, "middle", GREY, false, tick);
    }
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        double y = top + i * row_h;
        text(f, left - 8, y + 15, 11, "end", INK, false, r->label);
        struct {
            double v;
            const char *fill;
        } bars[3] = { { r->published, LIGHT }, { r->modelled, BLUE }, { r->measured, ORANGE } };
        double by = y + 2;
        for (int b = 0; b < 3; b++) {
            if (bars[b].v < 0)
                continue;
            double len = bar_w * (bars[b].v > 110 ? 110 : bars[b].v) / 110.0;
            svg_rect(f, left, by, len, 7.5, bars[b].fill, "none");
            char v[32];
            snprintf(v, sizeof v, "%.0f%%%s", bars[b].v, b == 1 ? " modelled" : "");
            text(f, left + len + 4, by + 7, 9, "start", GREY, false, v);
            by += 8.5;
        }
    }
    text(f, 12, h - 12, 10, "start", GREY, false,
         "Modelled figures are estimates (grader/emu/README.md, \"The model\"); rows marked "
         "fitted set a parameter, the rest test it (lessons/data/model-validation.md).");
    svg_close(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: profile_svg OUT_DIR\n");
        return 2;
    }
    draw_profiles(argv[1], "lessons/data/profile-l6.txt");
    draw_profiles(argv[1], "lessons/data/profile-l7.txt");
    draw_model(argv[1]);
    return 0;
}
