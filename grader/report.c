/*
 * report.c -- turn the runners' results into the grade.
 *
 *   report -w weights.tsv -b build-notes.tsv -n normal.tsv -a asan.tsv
 *          [-i integration.tsv] -o OUTDIR [-s SUBMISSION-NAME]
 *          [-c "CUDA: where the CUDA tests ran"]
 *
 * A test passes only if it passed in both builds (plain, and with
 * AddressSanitizer + UBSan); a build that did not run it (verdict.c: each
 * test runs in one of them) lists it as passed, "the other build's result
 * stands".  A lesson scores its weight times the share of
 * its test points passed; the integration section (-i: the hidden tests run
 * on the submission's whole tree) is scored the same way with its own
 * weight.  weights.tsv also says which tests students see when
 * (Gradescope's "visibility", a course-wide default and per test), how
 * much of the submission's own output a failing test quotes (0, the
 * default: none), and whether failure messages quote the submission's own
 * error messages (`messages quote`; `hide`, the default: grade.sh tells
 * the verdict, which writes them; here the line is only checked).
 * Every message comes from the grader; what the submission printed is
 * quoted only as that, labelled as its own, capped, and is never part of
 * a verdict (the verdict, told by grade.sh, runs the call a failure
 * reports again, alone, so that the output is that call's).
 * Writes, after every test has run:
 *   OUTDIR/results.json   Gradescope's format (written with cJSON)
 *   OUTDIR/junit.xml      for CI systems
 *   stdout                a table for people (coloured on a terminal),
 *                         then the line "N passed, N failed"
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LESSONS 16
#define INTEGRATION (MAX_LESSONS - 1)   /* the section of the whole tree */
#define MAX_TESTS 4096
#define OUTPUT_QUOTE 1500   /* at most this many bytes of output quoted */

typedef struct {
    int lesson;
    char name[160];
    double points;
    char result[16];        /* pass, fail, crash, timeout */
    char message[2048];
    char hint[512];
    char outfile[1024];
} test_row;

typedef struct {
    double weight;
    char title[100];
    char notes[2048];       /* from the build: compile errors, rejections */
    bool replaced;          /* the lesson file was missing or refused: 0 points */
    double points, earned;
    int tests, passed;
} lesson_info;

static const char *cuda_where = "";   /* -c: "CUDA: emulator (CPU)" */
static int output_quote = 0;           /* weights.tsv "output" line */
static char visibility_default[32] = "visible";
static struct { char name[160], v[32]; } visibility[256];
static int nvisibility;
static test_row rows[MAX_TESTS];
static int nrows;
static lesson_info lessons[MAX_LESSONS];

static void die(const char *what)
{
    fprintf(stderr, "report: %s\n", what);
    exit(2);
}

static FILE *open_or_die(const char *path, const char *mode)
{
    FILE *f = fopen(path, mode);
    if (f == NULL) {
        char msg[1200];
        snprintf(msg, sizeof msg, "cannot open %s", path);
        die(msg);
    }
    return f;
}

/* Split a TSV line in place into at most n fields; returns the count. */
static int split(char *line, char **field, int n)
{
    int k = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; k < n; k++) {
        field[k] = p;
        char *tab = strchr(p, '\t');
        if (tab == NULL)
            return k + 1;
        *tab = '\0';
        p = tab + 1;
    }
    return k;
}

static bool valid_visibility(const char *v)
{
    return strcmp(v, "visible") == 0 || strcmp(v, "hidden") == 0 ||
           strcmp(v, "after_due_date") == 0 || strcmp(v, "after_published") == 0;
}

static void read_weights(const char *path)
{
    FILE *f = open_or_die(path, "r");
    char line[512], *fld[3];
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (split(line, fld, 3) != 3)
            die("weights.tsv: a line is not three fields separated by tabs");
        if (strcmp(fld[0], "visibility") == 0) {
            if (!valid_visibility(fld[2]))
                die("weights.tsv: a visibility is not visible, hidden, after_due_date or "
                    "after_published");
            if (strcmp(fld[1], "default") == 0)
                snprintf(visibility_default, sizeof visibility_default, "%s", fld[2]);
            else if (nvisibility < 256) {
                snprintf(visibility[nvisibility].name, sizeof visibility[0].name, "%s", fld[1]);
                snprintf(visibility[nvisibility++].v, sizeof visibility[0].v, "%s", fld[2]);
            }
            continue;
        }
        if (strcmp(fld[0], "output") == 0) {
            output_quote = atoi(fld[1]);
            if (output_quote < 0 || output_quote > OUTPUT_QUOTE)
                die("weights.tsv: the output line's bytes must be 0..1500");
            continue;
        }
        if (strcmp(fld[0], "messages") == 0) {   /* grade.sh gives it to the verdict */
            if (strcmp(fld[1], "quote") != 0 && strcmp(fld[1], "hide") != 0)
                die("weights.tsv: the messages line must say quote or hide");
            continue;
        }
        int l = strcmp(fld[0], "integration") == 0 ? INTEGRATION : atoi(fld[0]);
        if (l < 0 || l >= MAX_LESSONS || (l == INTEGRATION && strcmp(fld[0], "integration")))
            die("weights.tsv: lesson number out of range");
        lessons[l].weight = atof(fld[1]);
        snprintf(lessons[l].title, sizeof lessons[l].title, "%s", fld[2]);
    }
    fclose(f);
}

/* A test's visibility: its own line ("name" or "name[dev]"), else the default. */
static const char *visibility_of(const char *name)
{
    for (int i = 0; i < nvisibility; i++) {
        size_t n = strlen(visibility[i].name);
        if (strncmp(name, visibility[i].name, n) == 0 && (name[n] == '\0' || name[n] == '['))
            return visibility[i].v;
    }
    return visibility_default;
}

static void read_notes(const char *path)
{
    FILE *f = open_or_die(path, "r");
    char line[4096], *fld[3];
    while (fgets(line, sizeof line, f) != NULL) {
        if (split(line, fld, 3) != 3)
            continue;
        int l = atoi(fld[0]);
        if (l < 0 || l >= MAX_LESSONS)
            continue;
        /* the file was replaced by a stand-in: its tests do not count */
        if (strcmp(fld[1], "missing") == 0 || strcmp(fld[1], "rejected") == 0 ||
            strcmp(fld[1], "compile error") == 0)
            lessons[l].replaced = true;
        size_t used = strlen(lessons[l].notes);
        snprintf(lessons[l].notes + used, sizeof lessons[l].notes - used, "%s%s",
                 used ? "; " : "", fld[2]);
    }
    fclose(f);
}

/* The plain run gives the rows; the sanitizer run can only fail them, or
 * say where a crash of the plain run was (its crash message names the bad
 * access's file and line).  The integration run's rows go to their own
 * section. */
static void read_results(const char *path, bool asan, bool integration)
{
    FILE *f = open_or_die(path, "r");
    char line[8192], *fld[8];
    int i = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        /* lesson  test  points  result  seconds  message  hint  output-file
         * (and verdict's 9th column, the CPU limit, which split leaves out) */
        if (split(line, fld, 8) != 8)
            die("a results file has a malformed line");
        test_row *r;
        if (!asan) {
            if (nrows == MAX_TESTS)
                die("too many tests");
            r = &rows[nrows++];
            r->lesson = integration ? INTEGRATION : atoi(fld[0]);
            snprintf(r->name, sizeof r->name, integration ? "%s (lesson %s)" : "%s", fld[1],
                     fld[0]);
            r->points = atof(fld[2]);
            snprintf(r->hint, sizeof r->hint, "%s", fld[6]);
        } else {
            /* same tests in the same order; check it rather than trust it */
            if (i >= nrows || strcmp(rows[i].name, fld[1]) != 0)
                die("the two builds ran different tests");
            r = &rows[i++];
            bool located = strcmp(r->result, "crash") == 0 && strcmp(fld[3], "crash") == 0 &&
                           (strstr(fld[5], "Sanitizer)") || strstr(fld[5], "(UBSan)"));
            if ((strcmp(r->result, "pass") != 0 && !located) || strcmp(fld[3], "pass") == 0)
                continue;
            if (located) {   /* the same call crashed: add where, after the call's words */
                size_t same = 0, at = 0;
                for (; r->message[same] && r->message[same] == fld[5][same]; same++)
                    if (same > 0 && r->message[same - 1] == ':' && r->message[same] == ' ')
                        at = same + 1;
                size_t used = strlen(r->message);
                snprintf(r->message + used, sizeof r->message - used,
                         ". With AddressSanitizer + UBSan: %s", fld[5] + at);
                continue;
            }
        }
        if (r->lesson < 0 || r->lesson >= MAX_LESSONS)
            die("a lesson number is out of range");
        /* (the sanitizers' words only where the plain build ran it too) */
        bool plain_ran = asan && !strstr(r->message, "build's result stands");
        snprintf(r->result, sizeof r->result, "%s", fld[3]);
        snprintf(r->message, sizeof r->message, "%s%s", plain_ran ?
                 "with AddressSanitizer + UBSan: " : "", fld[5]);
        snprintf(r->outfile, sizeof r->outfile, "%s", fld[7]);
    }
    fclose(f);
}

/* The first bytes of a test's captured output, for the report. */
static void quote_output(const char *path, char *dst, size_t cap)
{
    dst[0] = '\0';
    FILE *f = path[0] && output_quote > 0 ? fopen(path, "r") : NULL;
    if (f == NULL)
        return;
    size_t n = fread(dst, 1, cap - 1 < (size_t)output_quote ? cap - 1 : (size_t)output_quote, f);
    dst[n] = '\0';
    fclose(f);
}

static bool passed(const test_row *r) { return strcmp(r->result, "pass") == 0; }

/* What a student reads about one test. */
static void test_text(const test_row *r, char *dst, size_t cap)
{
    if (passed(r)) {
        snprintf(dst, cap, "passed");
        return;
    }
    char out[OUTPUT_QUOTE + 1];
    quote_output(r->outfile, out, sizeof out);
    snprintf(dst, cap, "%s: %s%s%s%s", r->result, r->message,
             r->hint[0] ? "\nHint: " : "", r->hint,
             out[0] ? "\nThe submission's own output, not the grader's: what its code "
                      "printed while running the failing call (at most the first bytes; never "
                      "part of the verdict):\n" : "");
    if (out[0]) {
        size_t used = strlen(dst);
        snprintf(dst + used, cap - used, "%s", out);
    }
}

static void xml_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            /* control characters other than tab/newline are not allowed in XML 1.0 */
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
        }
    }
}

static void write_json(const char *path, double score, double max)
{
    cJSON *root = cJSON_CreateObject(), *tests = cJSON_CreateArray();
    cJSON_AddNumberToObject(root, "score", score);
    cJSON_AddNumberToObject(root, "max_score", max);
    char summary[8192] = "";
    if (cuda_where[0])
        snprintf(summary, sizeof summary, "%s\n", cuda_where);
    for (int l = 0; l < MAX_LESSONS; l++) {
        if (lessons[l].notes[0]) {
            size_t used = strlen(summary);
            snprintf(summary + used, sizeof summary - used, "Lesson %d: %s\n", l,
                     lessons[l].notes);
        }
    }
    cJSON_AddStringToObject(root, "output", summary);
    cJSON_AddItemToObject(root, "tests", tests);
    static char text[OUTPUT_QUOTE + 4096];
    for (int i = 0; i < nrows; i++) {
        const test_row *r = &rows[i];
        const lesson_info *li = &lessons[r->lesson];
        double scale = li->points > 0 ? li->weight / li->points : 0;
        char name[256];
        if (r->lesson == INTEGRATION)
            snprintf(name, sizeof name, "integration: %s", r->name);
        else
            snprintf(name, sizeof name, "lesson %d: %s", r->lesson, r->name);
        test_text(r, text, sizeof text);
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", name);
        cJSON_AddNumberToObject(t, "score", passed(r) ? r->points * scale : 0);
        cJSON_AddNumberToObject(t, "max_score", r->points * scale);
        cJSON_AddStringToObject(t, "output", text);
        cJSON_AddStringToObject(t, "visibility", visibility_of(r->name));
        cJSON_AddItemToArray(tests, t);
    }
    char *json = cJSON_Print(root);
    if (json == NULL)
        die("cJSON could not print the results");
    FILE *f = open_or_die(path, "w");
    fputs(json, f);
    fputc('\n', f);
    fclose(f);
    cJSON_free(json);
    cJSON_Delete(root);
}

static void write_junit(const char *path)
{
    FILE *f = open_or_die(path, "w");
    static char text[OUTPUT_QUOTE + 4096];
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (int l = 0; l < MAX_LESSONS; l++) {
        if (lessons[l].tests == 0)
            continue;
        if (l == INTEGRATION)
            fprintf(f, "  <testsuite name=\"integration\" tests=\"%d\" failures=\"%d\">\n",
                    lessons[l].tests, lessons[l].tests - lessons[l].passed);
        else
            fprintf(f, "  <testsuite name=\"lesson %d\" tests=\"%d\" failures=\"%d\">\n", l,
                    lessons[l].tests, lessons[l].tests - lessons[l].passed);
        if (cuda_where[0]) {
            fprintf(f, "    <properties><property name=\"cuda\" value=\"");
            xml_escaped(f, cuda_where);
            fprintf(f, "\"/></properties>\n");
        }
        for (int i = 0; i < nrows; i++) {
            const test_row *r = &rows[i];
            if (r->lesson != l)
                continue;
            fprintf(f, "    <testcase classname=\"lesson%d\" name=\"", l);
            xml_escaped(f, r->name);
            fprintf(f, "\">");
            if (!passed(r)) {
                test_text(r, text, sizeof text);
                fprintf(f, "<failure message=\"");
                xml_escaped(f, r->message);
                fprintf(f, "\">");
                xml_escaped(f, text);
                fprintf(f, "</failure>");
            }
            fprintf(f, "</testcase>\n");
        }
        fprintf(f, "  </testsuite>\n");
    }
    fprintf(f, "</testsuites>\n");
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *weights = NULL, *notes = NULL, *normal = NULL, *asan = NULL, *outdir = NULL;
    const char *who = "";
    int opt;
    const char *integ = NULL;
    while ((opt = getopt(argc, argv, "w:b:n:a:i:o:s:c:")) != -1) {
        switch (opt) {
        case 'w': weights = optarg; break;
        case 'b': notes = optarg; break;
        case 'n': normal = optarg; break;
        case 'a': asan = optarg; break;
        case 'i': integ = optarg; break;
        case 'o': outdir = optarg; break;
        case 's': who = optarg; break;
        case 'c': cuda_where = optarg; break;
        default: die("usage: report -w W -b B -n N -a A -o OUTDIR [-s NAME] [-c CUDA]");
        }
    }
    if (!weights || !notes || !normal || !asan || !outdir)
        die("usage: report -w W -b B -n N -a A -o OUTDIR [-s NAME] [-c CUDA]");
    read_weights(weights);
    read_notes(notes);
    read_results(normal, false, false);
    read_results(asan, true, false);
    if (integ != NULL)
        read_results(integ, false, true);

    for (int i = 0; i < nrows; i++) {
        test_row *r = &rows[i];
        if (lessons[r->lesson].replaced) {
            snprintf(r->result, sizeof r->result, "fail");
            snprintf(r->message, sizeof r->message, "lesson %d scores 0: %.1900s", r->lesson,
                     lessons[r->lesson].notes);
            r->outfile[0] = '\0';
        }
    }
    int npass = 0;
    for (int i = 0; i < nrows; i++) {
        lesson_info *li = &lessons[rows[i].lesson];
        li->tests++;
        li->points += rows[i].points;
        if (passed(&rows[i])) {
            li->passed++;
            li->earned += rows[i].points;
            npass++;
        }
    }
    double score = 0, max = 0;
    bool colour = isatty(STDOUT_FILENO);
    const char *green = colour ? "\033[32m" : "", *red = colour ? "\033[31m" : "";
    const char *bold = colour ? "\033[1m" : "", *off = colour ? "\033[0m" : "";
    printf("%sGrade%s%s%s\n", bold, who[0] ? " of " : "", who, off);
    printf("%s\n\n", cuda_where[0] ? cuda_where : "");
    printf("  %-30s %9s %11s %13s\n", "lesson", "tests", "points", "score");
    for (int l = 0; l < MAX_LESSONS; l++) {
        lesson_info *li = &lessons[l];
        if (li->tests == 0)
            continue;
        double s = li->points > 0 ? li->weight * li->earned / li->points : 0;
        score += s;
        max += li->weight;
        const char *c = li->passed == li->tests ? green : red;
        if (l == INTEGRATION)
            printf("  %s I %-27s %4d/%-4d %5.1f/%-5.1f %6.2f/%-6.2f%s\n", c, li->title,
                   li->passed, li->tests, li->earned, li->points, s, li->weight, off);
        else
            printf("  %s%2d %-27s %4d/%-4d %5.1f/%-5.1f %6.2f/%-6.2f%s\n", c, l, li->title,
                   li->passed, li->tests, li->earned, li->points, s, li->weight, off);
        if (li->notes[0])
            printf("     %s%s%s\n", red, li->notes, off);
    }
    printf("  %-30s %9s %11s %6.2f/%-6.2f (%.1f%%)\n\n", "total", "", "", score, max,
           max > 0 ? 100 * score / max : 0);
    for (int i = 0, shown = 0; i < nrows && shown < 10; i++) {
        if (!passed(&rows[i])) {
            if (rows[i].lesson == INTEGRATION)
                printf("  %sFAIL%s integration %s: %s\n", red, off, rows[i].name,
                       rows[i].message);
            else
                printf("  %sFAIL%s lesson %d %s: %s\n", red, off, rows[i].lesson,
                       rows[i].name, rows[i].message);
            shown++;
        }
    }
    char path[2048];
    snprintf(path, sizeof path, "%s/results.json", outdir);
    write_json(path, score, max);
    snprintf(path, sizeof path, "%s/junit.xml", outdir);
    write_junit(path);
    printf("  reports: %s/results.json, %s/junit.xml\n", outdir, outdir);
    printf("%d passed, %d failed\n", npass, nrows - npass);
    return 0;
}
