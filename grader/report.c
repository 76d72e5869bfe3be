/*
 * report.c -- turn the runners' results into the grade.
 *
 *   report -w weights.tsv -b build-notes.tsv -n normal.tsv -a asan.tsv
 *          [-i integration.tsv] -o OUTDIR [-s SUBMISSION-NAME]
 *          [-c "CUDA: where the CUDA tests ran"] [-e SECONDS-SO-FAR]
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
 * Whatever bytes a submission printed, every report is valid: each text
 * goes in through clean_text (valid UTF-8, no control characters, cut
 * between characters), then is escaped for its format.
 * Writes, after every test has run (each file whole or not at all):
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
#include <time.h>
#include <unistd.h>

#define MAX_LESSONS 16
#define INTEGRATION (MAX_LESSONS - 1)   /* the section of the whole tree */
#define MAX_TESTS 4096
#define OUTPUT_QUOTE 1500   /* at most this many bytes of output quoted */

typedef struct {
    int lesson;
    char name[160];
    double points;
    char result[16];        /* pass, fail, crash, timeout, skipped (not run) */
    double seconds;         /* CPU seconds, both builds together */
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
static long elapsed = -1;              /* -e: the grade's seconds so far */
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

/* What any report may hold of a text the submission had a hand in (its
 * printed output, its error messages, compiler messages quoting its
 * source): at most cap - 1 bytes of valid UTF-8, cut only between
 * characters, read from at most n bytes of src.  A byte that does not
 * begin a valid UTF-8 sequence (a stray continuation byte, an overlong
 * form, a surrogate, past U+10FFFF, a sequence cut short), a control
 * character other than newline and tab (NUL, ESC and the rest of C0, DEL,
 * C1) and the noncharacters U+FFFE and U+FFFF (which XML 1.0 forbids)
 * each become U+FFFD.  What is left is valid JSON text once escaped, valid
 * XML 1.0 once <, > and & are, and shows no terminal escape.  Returns how
 * many bytes of src it read. */
static size_t clean_text(char *dst, size_t cap, const char *src, size_t n)
{
    static const char fffd[] = "\xEF\xBF\xBD";
    const unsigned char *s = (const unsigned char *)src;
    size_t i = 0, o = 0;
    while (i < n) {   /* (a NUL among the n bytes is a control character) */
        unsigned c = s[i], len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 :
                                 c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        unsigned cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
        bool ok = len > 0 && i + len <= n;
        for (unsigned k = 1; ok && k < len; k++) {
            ok = (s[i + k] & 0xC0) == 0x80;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        /* overlong 3- and 4-byte forms, surrogates, past U+10FFFF */
        ok = ok && !(len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) &&
             !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF));
        bool control = ok && ((cp < 0x20 && cp != '\n' && cp != '\t') ||
                              (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF);
        size_t take = ok ? len : 1;   /* a bad byte is replaced alone */
        const char *put = ok && !control ? src + i : fffd;
        size_t put_n = ok && !control ? len : 3;
        if (o + put_n >= cap)
            break;
        memcpy(dst + o, put, put_n);
        o += put_n;
        i += take;
    }
    if (cap > 0)
        dst[o] = '\0';
    return i;
}

/* Append src to the text in dst (cap bytes in all), cleaned: every text
 * the reports hold is put together with these two, never with snprintf
 * (which would cut a character in half). */
static void append_text(char *dst, size_t cap, const char *src)
{
    size_t used = strlen(dst);
    if (used + 1 < cap)
        clean_text(dst + used, cap - used, src, strlen(src));
}

static void set_text(char *dst, size_t cap, const char *src)
{
    dst[0] = '\0';
    append_text(dst, cap, src);
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
    char *line = NULL, *fld[3];
    size_t linecap = 0;
    while (getline(&line, &linecap, f) != -1) {
        if (split(line, fld, 3) != 3)
            continue;
        int l = atoi(fld[0]);
        if (l < 0 || l >= MAX_LESSONS)
            continue;
        /* the file was replaced by a stand-in: its tests do not count */
        if (strcmp(fld[1], "missing") == 0 || strcmp(fld[1], "rejected") == 0 ||
            strcmp(fld[1], "compile error") == 0)
            lessons[l].replaced = true;
        if (lessons[l].notes[0])
            append_text(lessons[l].notes, sizeof lessons[l].notes, "; ");
        append_text(lessons[l].notes, sizeof lessons[l].notes, fld[2]);
    }
    free(line);
    fclose(f);
}

/* The plain run gives the rows; the sanitizer run can only fail them, or
 * say where a crash of the plain run was (its crash message names the bad
 * access's file and line).  The integration run's rows go to their own
 * section. */
static void read_results(const char *path, bool asan, bool integration)
{
    FILE *f = open_or_die(path, "r");
    char *line = NULL, *fld[8];
    size_t linecap = 0;
    int i = 0;
    while (getline(&line, &linecap, f) != -1) {
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
            set_text(r->name, sizeof r->name, fld[1]);
            if (integration) {
                append_text(r->name, sizeof r->name, " (lesson ");
                append_text(r->name, sizeof r->name, fld[0]);
                append_text(r->name, sizeof r->name, ")");
            }
            r->points = atof(fld[2]);
            set_text(r->hint, sizeof r->hint, fld[6]);
        } else {
            /* same tests in the same order; check it rather than trust it */
            if (i >= nrows || strcmp(rows[i].name, fld[1]) != 0)
                die("the two builds ran different tests");
            r = &rows[i++];
            r->seconds += atof(fld[4]);
            bool located = strcmp(r->result, "crash") == 0 && strcmp(fld[3], "crash") == 0 &&
                           (strstr(fld[5], "Sanitizer)") || strstr(fld[5], "(UBSan)"));
            if ((strcmp(r->result, "pass") != 0 && !located) || strcmp(fld[3], "pass") == 0)
                continue;
            if (located) {   /* the same call crashed: add where, after the call's words */
                char asan_msg[sizeof r->message];
                set_text(asan_msg, sizeof asan_msg, fld[5]);
                size_t same = 0, at = 0;
                for (; r->message[same] && r->message[same] == asan_msg[same]; same++)
                    if (same > 0 && r->message[same - 1] == ':' && r->message[same] == ' ')
                        at = same + 1;
                append_text(r->message, sizeof r->message, ". With AddressSanitizer + UBSan: ");
                append_text(r->message, sizeof r->message, asan_msg + at);
                continue;
            }
        }
        if (r->lesson < 0 || r->lesson >= MAX_LESSONS)
            die("a lesson number is out of range");
        /* (the sanitizers' words only where the plain build ran it too) */
        bool plain_ran = asan && !strstr(r->message, "build's result stands");
        if (strcmp(fld[3], "pass") != 0 && strcmp(fld[3], "fail") != 0 &&
            strcmp(fld[3], "crash") != 0 && strcmp(fld[3], "timeout") != 0 &&
            strcmp(fld[3], "skipped") != 0)
            die("a results file has a result that is not pass, fail, crash, timeout or skipped");
        snprintf(r->result, sizeof r->result, "%s", fld[3]);
        if (!asan)
            r->seconds = atof(fld[4]);
        set_text(r->message, sizeof r->message, plain_ran ? "with AddressSanitizer + UBSan: " : "");
        append_text(r->message, sizeof r->message, fld[5]);
        snprintf(r->outfile, sizeof r->outfile, "%s", fld[7]);
    }
    free(line);
    fclose(f);
}

/* The first bytes of a test's captured output, for the report: at most
 * output_quote bytes (cap - 1 at most), cleaned (clean_text), and a line
 * that says so when there was more. */
static void quote_output(const char *path, char *dst, size_t cap)
{
    dst[0] = '\0';
    FILE *f = path[0] && output_quote > 0 ? fopen(path, "rb") : NULL;
    if (f == NULL)
        return;
    char raw[OUTPUT_QUOTE + 8];
    size_t want = (size_t)output_quote + 4;   /* room to finish the last character */
    size_t n = fread(raw, 1, want, f);
    bool more = n == want || fgetc(f) != EOF;
    fclose(f);
    size_t keep = cap - 1 < (size_t)output_quote ? cap : (size_t)output_quote + 1;
    size_t used = clean_text(dst, keep, raw, n);
    if (used < n || more)
        append_text(dst, cap, "\n[... the rest of what it printed is not shown]");
}

static bool passed(const test_row *r) { return strcmp(r->result, "pass") == 0; }

/* What a student reads about one test. */
static void test_text(const test_row *r, char *dst, size_t cap)
{
    if (passed(r)) {
        snprintf(dst, cap, "passed");
        return;
    }
    char out[OUTPUT_QUOTE + 64];
    quote_output(r->outfile, out, sizeof out);
    set_text(dst, cap, r->result);
    append_text(dst, cap, ": ");
    append_text(dst, cap, r->message);
    if (r->hint[0]) {
        append_text(dst, cap, "\nHint: ");
        append_text(dst, cap, r->hint);
    }
    if (out[0]) {
        append_text(dst, cap, "\nThe submission's own output, not the grader's: what its code "
                              "printed while running the failing call (at most the first "
                              "bytes, made valid text; never part of the verdict):\n");
        append_text(dst, cap, out);
    }
}

/* Text as XML 1.0 character data or an attribute value in double quotes
 * (cleaned again: whatever reaches here, the file stays well-formed). */
static void xml_escaped(FILE *f, const char *text)
{
    static char s[OUTPUT_QUOTE + 8192];
    clean_text(s, sizeof s, text, strlen(text));
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\n': fputs("&#10;", f); break;   /* kept in attributes, too */
        case '\t': fputs("&#9;", f); break;
        default: fputc(*p, f);
        }
    }
}

/* Gradescope's results.json, with only the fields its specification
 * lists (gradescope-autograders.readthedocs.io, "Autograder
 * Specifications"; grader/schemas/results.schema.json holds this file to it).
 * Every text is shown as plain text ("text"), so that nothing a
 * submission printed is read as HTML or Markdown; the most points, the
 * CUDA device and the sandbox go in extra_data, which Gradescope keeps. */
static void write_json(const char *path, double score, double max)
{
    cJSON *root = cJSON_CreateObject(), *tests = cJSON_CreateArray();
    cJSON_AddNumberToObject(root, "score", score);
    if (elapsed >= 0)
        cJSON_AddNumberToObject(root, "execution_time", elapsed);
    char summary[8192] = "";
    if (cuda_where[0]) {
        append_text(summary, sizeof summary, cuda_where);
        append_text(summary, sizeof summary, "\n");
    }
    for (int l = 0; l < MAX_LESSONS; l++) {
        if (lessons[l].notes[0]) {
            char head[32];
            snprintf(head, sizeof head, "Lesson %d: ", l);
            append_text(summary, sizeof summary, head);
            append_text(summary, sizeof summary, lessons[l].notes);
            append_text(summary, sizeof summary, "\n");
        }
    }
    cJSON_AddStringToObject(root, "output", summary);
    cJSON_AddStringToObject(root, "output_format", "text");
    cJSON_AddStringToObject(root, "test_output_format", "text");
    cJSON_AddStringToObject(root, "test_name_format", "text");
    cJSON *extra = cJSON_AddObjectToObject(root, "extra_data");
    cJSON_AddNumberToObject(extra, "max_score", max);
    cJSON_AddStringToObject(extra, "environment", cuda_where);
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
        cJSON_AddStringToObject(t, "status", passed(r) ? "passed" : "failed");
        cJSON_AddStringToObject(t, "output", text);
        cJSON_AddStringToObject(t, "visibility", visibility_of(r->name));
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(t, "extra_data"), "cpu_seconds",
                                r->seconds);
        cJSON_AddItemToArray(tests, t);
    }
    char *json = cJSON_Print(root);
    if (json == NULL)
        die("cJSON could not print the results");
    FILE *f = open_or_die(path, "w");
    fputs(json, f);
    fputc('\n', f);
    if (fclose(f) != 0)
        die("cannot write results.json");
    cJSON_free(json);
    cJSON_Delete(root);
}

/* junit.xml: what both common readings of JUnit's XML accept, the strict
 * one of Ant's junitreport (every <testsuite> with its package, id,
 * timestamp, hostname, counts and time, then <properties>, its test
 * cases, <system-out> and <system-err>; no attributes on <testsuites>, no
 * <skipped>) and the looser one of Jenkins, GitLab and the xunit readers
 * (grader/schemas/junit.xsd holds this file to both).  A wrong result is
 * a <failure>; a crash, a timeout or a test not run (the grade out of
 * time) an <error>, whose type says which.  A test's time is its CPU
 * seconds in both builds. */
static bool junit_error(const test_row *r)
{
    return strcmp(r->result, "crash") == 0 || strcmp(r->result, "timeout") == 0 ||
           strcmp(r->result, "skipped") == 0;
}

static void write_junit(const char *path)
{
    FILE *f = open_or_die(path, "w");
    static char text[OUTPUT_QUOTE + 4096];
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", gmtime_r(&now, &tm));
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (int l = 0, id = 0; l < MAX_LESSONS; l++) {
        if (lessons[l].tests == 0)
            continue;
        int fails = 0, errs = 0;
        double secs = 0;
        for (int i = 0; i < nrows; i++) {
            if (rows[i].lesson == l) {
                fails += !passed(&rows[i]) && !junit_error(&rows[i]);
                errs += junit_error(&rows[i]);
                secs += rows[i].seconds;
            }
        }
        char name[32];
        snprintf(name, sizeof name, l == INTEGRATION ? "integration" : "lesson %d", l);
        fprintf(f, "  <testsuite name=\"%s\" package=\"ndarray-workbook\" id=\"%d\" "
                   "timestamp=\"%s\" hostname=\"grader\" tests=\"%d\" failures=\"%d\" "
                   "errors=\"%d\" time=\"%.3f\">\n    <properties>", name, id++, stamp,
                lessons[l].tests, fails, errs, secs);
        if (cuda_where[0]) {
            fprintf(f, "<property name=\"environment\" value=\"");
            xml_escaped(f, cuda_where);
            fprintf(f, "\"/>");
        }
        fprintf(f, "</properties>\n");
        for (int i = 0; i < nrows; i++) {
            const test_row *r = &rows[i];
            if (r->lesson != l)
                continue;
            fprintf(f, "    <testcase classname=\"%s\" name=\"", name);
            xml_escaped(f, r->name);
            fprintf(f, "\" time=\"%.3f\">", r->seconds);
            if (!passed(r)) {
                const char *tag = junit_error(r) ? "error" : "failure";
                test_text(r, text, sizeof text);
                fprintf(f, "<%s type=\"%s\" message=\"", tag, r->result);
                xml_escaped(f, r->message);
                fprintf(f, "\">");
                xml_escaped(f, text);
                fprintf(f, "</%s>", tag);
            }
            fprintf(f, "</testcase>\n");
        }
        fprintf(f, "    <system-out></system-out>\n    <system-err></system-err>\n"
                   "  </testsuite>\n");
    }
    fprintf(f, "</testsuites>\n");
    if (fclose(f) != 0)
        die("cannot write junit.xml");
}

int main(int argc, char **argv)
{
    const char *weights = NULL, *notes = NULL, *normal = NULL, *asan = NULL, *outdir = NULL;
    const char *who = "";
    int opt;
    const char *integ = NULL;
    while ((opt = getopt(argc, argv, "w:b:n:a:i:o:s:c:e:")) != -1) {
        switch (opt) {
        case 'w': weights = optarg; break;
        case 'b': notes = optarg; break;
        case 'n': normal = optarg; break;
        case 'a': asan = optarg; break;
        case 'i': integ = optarg; break;
        case 'o': outdir = optarg; break;
        case 's': who = optarg; break;
        case 'c': cuda_where = optarg; break;
        case 'e': elapsed = atol(optarg); break;
        default: die("usage: report -w W -b B -n N -a A -o OUTDIR [-s NAME] [-c CUDA] [-e SECONDS]");
        }
    }
    if (!weights || !notes || !normal || !asan || !outdir)
        die("usage: report -w W -b B -n N -a A -o OUTDIR [-s NAME] [-c CUDA] [-e SECONDS]");
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
            snprintf(r->message, sizeof r->message, "lesson %d scores 0: ", r->lesson);
            append_text(r->message, sizeof r->message, lessons[r->lesson].notes);
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
    char who_text[512];   /* a submission's name: shown as text, no terminal escape */
    set_text(who_text, sizeof who_text, who);
    printf("%sGrade%s%s%s\n", bold, who[0] ? " of " : "", who_text, off);
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
    /* each written beside, then renamed: never half a report */
    char path[2048], tmp[2100];
    snprintf(path, sizeof path, "%s/results.json", outdir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    write_json(tmp, score, max);
    if (rename(tmp, path) != 0)
        die("cannot rename results.json.tmp");
    snprintf(path, sizeof path, "%s/junit.xml", outdir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    write_junit(tmp);
    if (rename(tmp, path) != 0)
        die("cannot rename junit.xml.tmp");
    printf("  reports: %s/results.json, %s/junit.xml\n", outdir, outdir);
    printf("%d passed, %d failed\n", npass, nrows - npass);
    return 0;
}
