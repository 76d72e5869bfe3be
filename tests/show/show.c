/*
 * show.c -- `make show E='arange(24).reshape(2,3,4)[:, ::-1, 1]'`: build a
 * view from a NumPy-like expression with the tree's own lesson 1 functions
 * (this program links the tree's libnd.a), and draw it, in the terminal and
 * as SVG: each step's shape, strides and offset, the elements of the final
 * view as the buffer cells they read, and the order in which the view
 * reaches the cells of its buffer.
 *
 *     show [-o FILE.svg] 'EXPR'
 *
 * The expression: a source, arange(n), zeros(shape) or ones(shape), then
 * any chain of .reshape(shape), .transpose(axes) / .permute(axes) / .T,
 * .broadcast_to(shape) or broadcast_to(x, shape), indexing x[...] with
 * integers, slices start:stop:step (negative steps too) and one "...",
 * .diagonal(offset=0, axis1=0, axis2=1), and .copy() (lesson 2's
 * nd_compact).  "np." in front of a name is allowed.
 *
 * Each lesson function runs in a child process with a time limit (10 s;
 * SHOW_SECONDS=n in the environment changes it), so that a crash or an
 * endless loop in it is reported as such, naming the step;
 * this process only rebuilds the view the child describes (nd_as_strided,
 * given code) and draws it.  Exit status: 0 drawn; 1 a lesson function
 * failed, crashed or hung (said which, and how); 2 the expression is wrong
 * (said where); 3 the SVG could not be written.
 */
#define MAX_CELLS 1024       /* buffer cells drawn in the SVG (svg.h) */
#include "svg.h"

#include "show.h"

#include <ctype.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_STEPS 32
#define MAX_ARANGE 1000000   /* elements a source may have */
/* A view function that runs longer is stuck (SHOW_SECONDS=n changes it). */
static int step_seconds = 10;
#define GRID_MAX 256         /* view positions drawn in the SVG */

static const char *expr;     /* the expression, as given */

/* ---------------------------------------------------------------------- */
/* Parsing                                                                */
/* ---------------------------------------------------------------------- */

typedef struct {
    const char *s;
    int pos;
    show_op ops[MAX_STEPS];
    int nops;
} parser;

/* A bad expression: the message, the expression and a caret under `pos`. */
static _Noreturn void syntax(const parser *p, int pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "make show: error at column %d of the expression: ", pos + 1);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n    %s\n    %*s^\n", p->s, pos, "");
    exit(2);
}

static void skip(parser *p)
{
    while (isspace((unsigned char)p->s[p->pos]))
        p->pos++;
}

static bool eat(parser *p, char c)
{
    skip(p);
    if (p->s[p->pos] != c)
        return false;
    p->pos++;
    return true;
}

static void expect(parser *p, char c, const char *what)
{
    if (!eat(p, c))
        syntax(p, p->pos, "expected '%c' %s", c, what);
}

static bool peek(parser *p, char c)
{
    skip(p);
    return p->s[p->pos] == c;
}

/* A name (letters, digits, '_'), with a leading "np." or "numpy." dropped. */
static bool name(parser *p, char *dst, size_t cap)
{
    skip(p);
    int start = p->pos;
    for (;;) {
        int n = 0;
        while (isalnum((unsigned char)p->s[p->pos + n]) || p->s[p->pos + n] == '_')
            n++;
        if (n == 0 || isdigit((unsigned char)p->s[p->pos])) {
            p->pos = start;
            return false;
        }
        if (((n == 2 && strncmp(p->s + p->pos, "np", 2) == 0) ||
             (n == 5 && strncmp(p->s + p->pos, "numpy", 5) == 0)) && p->s[p->pos + n] == '.') {
            p->pos += n + 1;
            continue;
        }
        snprintf(dst, cap, "%.*s", n, p->s + p->pos);
        p->pos += n;
        return true;
    }
}

/* An integer, maybe negative.  Returns false (and moves nothing) if none. */
static bool integer(parser *p, int64_t *v)
{
    skip(p);
    int at = p->pos, i = at;
    if (p->s[i] == '-' || p->s[i] == '+')
        i++;
    while (isspace((unsigned char)p->s[i]))
        i++;
    if (!isdigit((unsigned char)p->s[i]))
        return false;
    bool neg = p->s[at] == '-';
    uint64_t x = 0;
    for (; isdigit((unsigned char)p->s[i]); i++) {
        unsigned d = (unsigned)(p->s[i] - '0');
        if (x > (UINT64_MAX - d) / 10 || x * 10 + d > (uint64_t)INT64_MAX + neg)
            syntax(p, at, "the number is too large for 64 bits");
        x = x * 10 + d;
    }
    if (p->s[i] == '.' && isdigit((unsigned char)p->s[i + 1]))
        syntax(p, i, "a number here must be an integer");
    *v = neg ? (int64_t)(0 - x) : (int64_t)x;
    p->pos = i;
    return true;
}

static int64_t need_integer(parser *p, const char *what)
{
    int64_t v;
    if (!integer(p, &v))
        syntax(p, p->pos, "expected %s (an integer)", what);
    return v;
}

/* A list of integers, as the arguments of reshape(2, 3) or a tuple (2, 3),
 * (2,) or (); `close` is the character that ends it.  At most max. */
static int int_list(parser *p, int64_t *v, int max, char close, const char *what)
{
    int n = 0;
    if (peek(p, close))
        return 0;
    do {
        if (peek(p, close))
            break;                      /* a trailing comma: (2,) */
        if (n == max)
            syntax(p, p->pos, "more than %d %s", max, what);
        v[n++] = need_integer(p, what);
    } while (eat(p, ','));
    return n;
}

/* The arguments of reshape, zeros, broadcast_to...: either one tuple,
 * (2, 3), or the integers themselves, 2, 3.  Up to the closing ')'. */
static int shape_args(parser *p, int64_t *v, const char *what)
{
    skip(p);
    int at = p->pos;
    if (eat(p, '(')) {
        int n = int_list(p, v, ND_MAX_DIMS + 1, ')', what);
        expect(p, ')', "to close the tuple");
        if (!peek(p, ')'))
            syntax(p, p->pos, "expected ')' after the tuple that begins at column %d", at + 1);
        return n;
    }
    return int_list(p, v, ND_MAX_DIMS + 1, ')', what);
}

static show_op *add(parser *p, show_kind kind, int from)
{
    if (p->nops == MAX_STEPS)
        syntax(p, from, "more than %d steps", MAX_STEPS);
    show_op *op = &p->ops[p->nops++];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->from = from;
    op->ellipsis = -1;
    return op;
}

/* diagonal's arguments after the array: offset, axis1, axis2, positional
 * or as offset=..., axis1=..., axis2=... */
static void diagonal_args(parser *p, show_op *op)
{
    op->offset = 0;
    op->axis1 = 0;
    op->axis2 = 1;
    int positional = 0;
    bool named = false;
    while (!peek(p, ')')) {
        if (positional + named > 0 && !eat(p, ','))
            syntax(p, p->pos, "expected ',' or ')' in diagonal's arguments");
        if (peek(p, ')'))
            break;
        int at = p->pos;
        char key[32];
        int64_t v;
        if (name(p, key, sizeof key)) {
            if (!eat(p, '='))
                syntax(p, p->pos, "expected '=' after %s", key);
            v = need_integer(p, key);
            named = true;
            if (strcmp(key, "offset") == 0)
                op->offset = v;
            else if (strcmp(key, "axis1") == 0 || strcmp(key, "axis2") == 0) {
                if (v < INT32_MIN || v > INT32_MAX)
                    syntax(p, at, "%s is far out of range", key);
                *(key[4] == '1' ? &op->axis1 : &op->axis2) = (int)v;
            } else
                syntax(p, at, "diagonal has no argument '%s' (offset, axis1, axis2)", key);
        } else {
            if (named)
                syntax(p, p->pos, "a positional argument after a named one");
            v = need_integer(p, "offset, axis1 or axis2");
            if (positional == 3)
                syntax(p, at, "diagonal takes at most 3 arguments (offset, axis1, axis2)");
            if (positional > 0 && (v < INT32_MIN || v > INT32_MAX))
                syntax(p, at, "the axis is far out of range");
            if (positional == 0)
                op->offset = v;
            else
                *(positional == 1 ? &op->axis1 : &op->axis2) = (int)v;
            positional++;
        }
    }
}

/* transpose's or permute's axes: none (reverse them all), a tuple, or the
 * integers themselves. */
static void axes_args(parser *p, show_op *op)
{
    op->n = shape_args(p, op->v, "axes");
    op->reverse = op->n == 0;
    for (int k = 0; k < op->n; k++)
        if (op->v[k] < INT32_MIN || op->v[k] > INT32_MAX)
            syntax(p, p->pos, "axis %" PRId64 " is far out of range", op->v[k]);
}

static void expression(parser *p);

/* A function call: a source, or a function applied to an expression
 * (broadcast_to(x, shape), transpose(x), reshape(x, shape), diagonal(x)). */
static void call(parser *p, const char *fn, int from)
{
    show_op *op;
    if (strcmp(fn, "arange") == 0) {
        op = add(p, SHOW_ARANGE, from);
        int at = p->pos;
        op->v[0] = need_integer(p, "arange's length");
        op->n = 1;
        if (eat(p, ','))
            syntax(p, p->pos, "arange takes one argument here, the length n (nd_arange(n) "
                   "gives 0, 1, ..., n-1)");
        if (op->v[0] < 0 || op->v[0] > MAX_ARANGE)
            syntax(p, at, "arange(%" PRId64 "): the length must be 0..%d", op->v[0],
                   MAX_ARANGE);
    } else if (strcmp(fn, "zeros") == 0 || strcmp(fn, "ones") == 0) {
        op = add(p, fn[0] == 'z' ? SHOW_ZEROS : SHOW_ONES, from);
        int at = p->pos;
        op->n = shape_args(p, op->v, "sizes");
        int64_t n = 1;
        for (int k = 0; k < op->n; k++) {
            if (op->v[k] < 0)
                syntax(p, at, "%s: a size is negative", fn);
            n = op->v[k] > 0 && n > MAX_ARANGE / op->v[k] ? MAX_ARANGE + 1 : n * op->v[k];
        }
        if (op->n > ND_MAX_DIMS || n > MAX_ARANGE)
            syntax(p, at, "%s: at most %d axes and %d elements", fn, ND_MAX_DIMS, MAX_ARANGE);
    } else if (strcmp(fn, "broadcast_to") == 0 || strcmp(fn, "reshape") == 0 ||
               strcmp(fn, "transpose") == 0 || strcmp(fn, "permute_dims") == 0 ||
               strcmp(fn, "diagonal") == 0) {
        expression(p);
        bool more = eat(p, ',');
        if (fn[0] == 'd') {
            op = add(p, SHOW_DIAGONAL, from);
            diagonal_args(p, op);       /* after the ',', or none: the defaults */
        } else if (fn[0] == 't' || fn[0] == 'p') {
            op = add(p, SHOW_PERMUTE, from);
            if (more)
                axes_args(p, op);
            else
                op->reverse = true;
        } else {
            if (!more)
                syntax(p, p->pos, "expected ', shape' after the array: %s(x, shape)", fn);
            op = add(p, fn[0] == 'b' ? SHOW_BROADCAST : SHOW_RESHAPE, from);
            op->n = shape_args(p, op->v, "sizes");
        }
    } else {
        syntax(p, from, "unknown function '%s' (sources: arange, zeros, ones; then "
               "reshape, transpose, broadcast_to, diagonal, indexing, .T, .copy())", fn);
    }
    expect(p, ')', "to close the call");
    op->to = p->pos;
}

/* One entry of an index: an integer, a slice, or "...". */
static void index_entry(parser *p, show_op *op)
{
    skip(p);
    int at = p->pos;
    if (op->nidx == ND_MAX_DIMS + 1)
        syntax(p, at, "more than %d index entries", ND_MAX_DIMS);
    nd_index *e = &op->idx[op->nidx];
    if (strncmp(p->s + at, "...", 3) == 0) {
        if (op->ellipsis >= 0)
            syntax(p, at, "an index can only have a single ellipsis ('...')");
        p->pos += 3;
        op->ellipsis = op->nidx++;
        *e = ND_ALL;
        return;
    }
    char word[32];
    if (name(p, word, sizeof word)) {
        if (strcmp(word, "None") == 0 || strcmp(word, "newaxis") == 0)
            syntax(p, at, "None (np.newaxis) inserts an axis, which nd_slice does not do; "
                   "reshape to add a size-1 axis");
        syntax(p, at, "'%s' in an index: only integers, slices and '...'", word);
    }
    if (peek(p, '['))
        syntax(p, p->pos, "an index with a list is fancy indexing, which copies: not a view");
    int64_t start = ND_NONE, stop = ND_NONE, step = 1;
    bool has_start = integer(p, &start);
    if (!eat(p, ':')) {
        if (!has_start)
            syntax(p, p->pos, "expected an integer, a slice or '...' in the index");
        *e = ND_AT(start);
        op->nidx++;
        return;
    }
    if (!integer(p, &stop))
        stop = ND_NONE;
    if (eat(p, ':')) {
        int st = p->pos;
        if (integer(p, &step)) {
            if (step == 0)
                syntax(p, st, "a slice step cannot be zero");
        } else
            step = 1;
    }
    if (start == ND_NONE && has_start)
        syntax(p, at, "the start is too small");
    *e = ND_SLICE(start, stop, step);
    op->nidx++;
}

static void postfix(parser *p)
{
    for (;;) {
        skip(p);
        int from = p->pos;
        if (eat(p, '[')) {
            show_op *op = add(p, SHOW_SLICE, from);
            if (!peek(p, ']'))
                do {
                    if (peek(p, ']'))
                        break;
                    index_entry(p, op);
                } while (eat(p, ','));
            expect(p, ']', "to close the index");
            op->to = p->pos;
            continue;
        }
        if (!eat(p, '.'))
            return;
        char m[32];
        if (!name(p, m, sizeof m))
            syntax(p, p->pos, "expected a method name after '.'");
        if (strcmp(m, "T") == 0 || strcmp(m, "mT") == 0) {
            show_op *op = add(p, SHOW_PERMUTE, from);
            op->reverse = true;
            op->to = p->pos;
            continue;
        }
        if (!eat(p, '('))
            syntax(p, p->pos, "expected '(' after .%s", m);
        show_op *op;
        if (strcmp(m, "reshape") == 0 || strcmp(m, "view") == 0) {
            op = add(p, SHOW_RESHAPE, from);
            op->n = shape_args(p, op->v, "sizes");
        } else if (strcmp(m, "transpose") == 0 || strcmp(m, "permute") == 0) {
            op = add(p, SHOW_PERMUTE, from);
            axes_args(p, op);
        } else if (strcmp(m, "broadcast_to") == 0 || strcmp(m, "expand") == 0) {
            op = add(p, SHOW_BROADCAST, from);
            op->n = shape_args(p, op->v, "sizes");
        } else if (strcmp(m, "diagonal") == 0) {
            op = add(p, SHOW_DIAGONAL, from);
            diagonal_args(p, op);
        } else if (strcmp(m, "copy") == 0 || strcmp(m, "contiguous") == 0) {
            op = add(p, SHOW_COPY, from);
        } else {
            syntax(p, from + 1, "unknown method '.%s' (reshape, transpose, permute, .T, "
                   "broadcast_to, diagonal, copy)", m);
        }
        expect(p, ')', "to close the call");
        op->to = p->pos;
    }
}

static void expression(parser *p)
{
    skip(p);
    int from = p->pos;
    char fn[32];
    if (eat(p, '(')) {
        expression(p);
        expect(p, ')', "to close the parenthesis");
    } else if (name(p, fn, sizeof fn)) {
        if (!eat(p, '('))
            syntax(p, p->pos, "expected '(' after %s: an expression starts with "
                   "arange(n), zeros(shape) or ones(shape)", fn);
        call(p, fn, from);
    } else {
        syntax(p, from, "expected arange(n), zeros(shape) or ones(shape)");
    }
    postfix(p);
}

static void parse(parser *p, const char *s)
{
    memset(p, 0, sizeof *p);
    p->s = s;
    skip(p);
    if (p->s[p->pos] == '\0')
        syntax(p, 0, "the expression is empty: try E='arange(24).reshape(2,3,4)[:, ::-1, 1]'");
    expression(p);
    skip(p);
    if (p->s[p->pos] != '\0')
        syntax(p, p->pos, "unexpected '%c' after a complete expression", p->s[p->pos]);
    if (p->ops[0].kind > SHOW_ONES)
        syntax(p, 0, "an expression starts with arange(n), zeros(shape) or ones(shape)");
}

/* ---------------------------------------------------------------------- */
/* Running the steps: lesson code in a child, the view rebuilt here       */
/* ---------------------------------------------------------------------- */

/* The lesson function a step calls. */
static const char *function_of(const show_op *op)
{
    static const char *const names[] = {
        [SHOW_ARANGE] = "nd_arange",     [SHOW_ZEROS] = "nd_zeros",
        [SHOW_ONES] = "nd_full",         [SHOW_RESHAPE] = "nd_reshape",
        [SHOW_PERMUTE] = "nd_permute",   [SHOW_BROADCAST] = "nd_broadcast_to",
        [SHOW_SLICE] = "nd_slice",       [SHOW_DIAGONAL] = "nd_diagonal",
        [SHOW_COPY] = "nd_compact",
    };
    return names[op->kind];
}

/* What make show itself refuses before any lesson code runs, as NumPy
 * would: axes or indices that do not fit the array.  False, with v set. */
static bool precheck(const show_op *op, const nd_array *in, show_view *v)
{
    int given = op->kind == SHOW_SLICE ? op->nidx - (op->ellipsis >= 0) : op->n;
    if (op->kind == SHOW_PERMUTE && !op->reverse && op->n != in->ndim)
        snprintf(v->message, sizeof v->message, "axes don't match the array: %d axes given "
                 "for an array of %d", op->n, in->ndim);
    else if (op->kind == SHOW_SLICE && given > in->ndim)
        snprintf(v->message, sizeof v->message, "too many indices for an array of %d axes: "
                 "%d were given", in->ndim, given);
    else
        return true;
    v->status = op->kind == SHOW_PERMUTE ? ND_ERR_AXIS : ND_ERR_INDEX;
    v->refused = true;
    return false;
}

/* The step itself, on `in`, prechecked: what the child runs. */
static nd_status apply(const show_op *op, const nd_array *in, nd_array *out)
{
    int axes[ND_MAX_DIMS];
    nd_index idx[ND_MAX_DIMS];
    int n = 0;
    switch (op->kind) {
    case SHOW_RESHAPE:
        return nd_reshape(in, op->n, op->v, out);
    case SHOW_PERMUTE:
        for (int k = 0; k < in->ndim; k++)
            axes[k] = op->reverse ? in->ndim - 1 - k : (int)op->v[k];
        return nd_permute(in, axes, out);
    case SHOW_BROADCAST:
        return nd_broadcast_to(in, op->n, op->v, out);
    case SHOW_SLICE:
        /* "..." stands for as many whole axes as the other entries leave */
        for (int i = 0; i < op->nidx; i++)
            if (i != op->ellipsis)
                idx[n++] = op->idx[i];
            else
                for (int k = op->nidx - 1; k < in->ndim; k++)
                    idx[n++] = ND_ALL;
        return nd_slice(in, n, idx, out);
    case SHOW_DIAGONAL:
        return nd_diagonal(in, op->offset, op->axis1, op->axis2, out);
    default:
        return nd_compact(in, out);
    }
}

/* What a child sends back: the view it made (or the failure), and for a
 * copy its values. */
typedef struct {
    show_view v;
    bool same_buffer;
} reply;

static bool write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Read n bytes from fd within the deadline; false on EOF, error or time. */
static bool read_all(int fd, void *buf, size_t n, const struct timespec *deadline)
{
    char *p = buf;
    while (n > 0) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long ms = (long)(deadline->tv_sec - now.tv_sec) * 1000 +
                  (deadline->tv_nsec - now.tv_nsec) / 1000000;
        if (ms <= 0)
            return false;
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        if (poll(&pf, 1, (int)ms) <= 0)
            return false;
        ssize_t r = read(fd, p, n);
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

static void describe_view(const nd_array *a, show_view *v)
{
    v->status = ND_OK;
    v->ndim = a->ndim;
    memcpy(v->shape, a->shape, sizeof v->shape);
    memcpy(v->strides, a->strides, sizeof v->strides);
    v->offset = a->offset;
    v->size = (int64_t)(a->buf->nbytes / sizeof(float));
}

/* Run step `op` on `in` in a child.  On success *out is the result (a view
 * of in's buffer rebuilt here, or a new array for a copy) and v describes
 * it; otherwise v says why (status and message), and false is returned. */
static bool run_step(const show_op *op, const nd_array *in, nd_array *out, show_view *v)
{
    memset(v, 0, sizeof *v);
    if (!precheck(op, in, v))
        return false;
    int fd[2];
    if (pipe(fd) != 0) {
        v->status = ND_ERR_ARG;
        snprintf(v->message, sizeof v->message, "make show: cannot make a pipe");
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        alarm((unsigned)step_seconds + 2);             /* a last resort if the parent is gone */
        nd_array r;
        reply rep;
        memset(&rep, 0, sizeof rep);
        rep.v.status = apply(op, in, &r);
        if (rep.v.status != ND_OK) {
            snprintf(rep.v.message, sizeof rep.v.message, "%s", nd_last_error());
            _exit(write_all(fd[1], &rep, sizeof rep) ? 0 : 1);
        }
        describe_view(&r, &rep.v);
        rep.same_buffer = r.buf == in->buf;
        bool ok = write_all(fd[1], &rep, sizeof rep);
        if (ok && op->kind == SHOW_COPY) {
            int64_t n = nd_numel(&r);
            float *vals = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
            ok = vals != NULL && nd_to_host(&r, vals, (size_t)n) == ND_OK &&
                 write_all(fd[1], vals, (size_t)n * sizeof(float));
            free(vals);
        }
        _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    if (pid < 0) {
        close(fd[0]);
        v->status = ND_ERR_ARG;
        snprintf(v->message, sizeof v->message, "make show: cannot fork");
        return false;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += step_seconds;
    reply rep;
    bool got = read_all(fd[0], &rep, sizeof rep, &deadline);
    float *vals = NULL;
    int64_t n = 0;
    if (got && rep.v.status == ND_OK && op->kind == SHOW_COPY) {
        n = 1;
        for (int k = 0; k < rep.v.ndim && k < ND_MAX_DIMS; k++)
            n *= rep.v.shape[k];
        vals = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
        got = vals != NULL && n <= nd_numel(in) &&
              read_all(fd[0], vals, (size_t)n * sizeof(float), &deadline);
    }
    close(fd[0]);
    int status = 0;
    if (!got)
        kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    if (!got) {
        free(vals);
        v->status = ND_ERR_ARG;
        if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
            snprintf(v->message, sizeof v->message, "%s crashed: %s (signal %d)",
                     function_of(op), strsignal(WTERMSIG(status)), WTERMSIG(status));
        else if (WIFSIGNALED(status))
            snprintf(v->message, sizeof v->message, "%s did not return within %d s: an "
                     "endless loop?", function_of(op), step_seconds);
        else
            snprintf(v->message, sizeof v->message, "%s ended the program (exit status %d) "
                     "instead of returning", function_of(op), WEXITSTATUS(status));
        return false;
    }
    *v = rep.v;
    if (v->status != ND_OK) {
        free(vals);
        return false;
    }
    nd_status s;
    if (op->kind == SHOW_COPY) {
        s = nd_from_host(ND_CPU, v->ndim, v->shape, vals, out);
        free(vals);
    } else if (!rep.same_buffer) {
        v->status = ND_ERR_ARG;
        snprintf(v->message, sizeof v->message, "%s returned a view of another buffer: a "
                 "view function never copies (end with nd_as_strided on a)", function_of(op));
        return false;
    } else {
        s = nd_as_strided(in, v->ndim, v->shape, v->strides, v->offset, out);
    }
    if (s != ND_OK) {
        v->status = s;
        snprintf(v->message, sizeof v->message, "%s returned a view that is not valid: %s",
                 function_of(op), nd_last_error());
        return false;
    }
    describe_view(out, v);
    return true;
}

/* A source step, given code (src/array.c): run here. */
static bool run_source(const show_op *op, nd_array *out, show_view *v)
{
    memset(v, 0, sizeof *v);
    nd_status s = op->kind == SHOW_ARANGE ? nd_arange(ND_CPU, op->v[0], out)
                  : op->kind == SHOW_ZEROS ? nd_zeros(ND_CPU, op->n, op->v, out)
                                           : nd_full(ND_CPU, op->n, op->v, 1.0f, out);
    if (s != ND_OK) {
        v->status = s;
        snprintf(v->message, sizeof v->message, "%s", nd_last_error());
        return false;
    }
    describe_view(out, v);
    return true;
}

/* ---------------------------------------------------------------------- */
/* Drawing in the terminal                                                */
/* ---------------------------------------------------------------------- */

static int term_width(void)
{
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col < 60 ? 60 : ws.ws_col > 140 ? 140 : ws.ws_col;
    return 100;
}

static const char *tup(int n, const int64_t *v, char *dst, size_t cap)
{
    return nd_shape_str(n, v, dst, cap);
}

static bool same_view(const show_view *a, const show_view *b)
{
    if (a->status != b->status)
        return false;
    if (a->status != ND_OK)
        return true;
    if (a->ndim != b->ndim || a->offset != b->offset)
        return false;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k] || a->strides[k] != b->strides[k])
            return false;
    return true;
}

static void view_line(const show_view *v, char *dst, size_t cap)
{
    char sh[200], st[200];
    if (v->status != ND_OK)
        snprintf(dst, cap, "%s", nd_status_name(v->status));
    else
        snprintf(dst, cap, "shape %s strides %s offset %" PRId64,
                 tup(v->ndim, v->shape, sh, sizeof sh), tup(v->ndim, v->strides, st, sizeof st),
                 v->offset);
}

/* The table of steps: text, function, shape, strides, offset (and the
 * reference's, where it differs). */
static void print_steps(const parser *p, int done, const show_view *views, const show_view *ref)
{
    int tw = 4;
    for (int i = 0; i < done; i++)
        if (p->ops[i].to - p->ops[i].from > tw)
            tw = p->ops[i].to - p->ops[i].from;
    if (tw > 40)
        tw = 40;
    printf("  %-*s  %-16s %-14s %-16s %s\n", tw, "step", "function", "shape", "strides",
           "offset");
    for (int i = 0; i < done; i++) {
        const show_op *op = &p->ops[i];
        const show_view *v = &views[i];
        char sh[200] = "", st[200] = "", off[40] = "";
        if (v->status == ND_OK) {
            tup(v->ndim, v->shape, sh, sizeof sh);
            tup(v->ndim, v->strides, st, sizeof st);
            snprintf(off, sizeof off, "%" PRId64, v->offset);
        }
        int len = op->to - op->from;
        char row[1200];
        snprintf(row, sizeof row, "  %-*.*s%s  %-16s %-14s %-16s %s", len > tw ? tw - 3 : tw,
                 len > tw ? tw - 3 : len, p->s + op->from, len > tw ? "..." : "",
                 function_of(op), v->status == ND_OK ? sh : "failed", st, off);
        for (size_t e = strlen(row); e > 0 && row[e - 1] == ' '; e--)
            row[e - 1] = '\0';
        printf("%s\n", row);
        if (ref != NULL && !same_view(v, &ref[i])) {
            char line[600];
            view_line(&ref[i], line, sizeof line);
            printf("  %-*s  %sthe reference: %s\n", tw, "", "!= ", line);
        }
    }
}

/* The view's elements as the buffer cells they read, nested as NumPy
 * prints arrays; more than 200 positions are summarised (3 at each end of
 * each axis). */
static int line_items;        /* numbers a line of print_offsets holds */

static void print_offsets(const show_view *v, int axis, int64_t base, int width, bool summ,
                          int indent)
{
    if (axis == v->ndim) {
        printf("%*" PRId64, width, base);
        return;
    }
    putchar('[');
    int64_t n = v->shape[axis];
    bool last = axis == v->ndim - 1;
    for (int64_t i = 0; i < n; i++) {
        if (summ && n > 6 && i == 3) {
            printf("%*s", last ? width : 0, "...");
            i = n - 4;                       /* the loop goes on at n - 3 */
        } else {
            print_offsets(v, axis + 1, base + i * v->strides[axis], width, summ, indent + 1);
        }
        if (i + 1 < n) {
            if (!last)
                printf(",\n%*s", indent + 1, "");
            else if ((i + 1) % line_items == 0)
                printf(",\n%*s", indent + 1, "");
            else
                printf(", ");
        }
    }
    putchar(']');
}

/* For each buffer cell: how many positions of the view reach it, and the
 * first (row-major) that does; -1 for none. */
typedef struct {
    int64_t size, numel;
    int64_t *first, *count;
} reach;

static reach reach_of(const show_view *v)
{
    reach r = { .size = v->size, .numel = 1 };
    for (int k = 0; k < v->ndim; k++)
        r.numel *= v->shape[k];
    r.first = malloc((size_t)(r.size > 0 ? r.size : 1) * sizeof(int64_t));
    r.count = calloc((size_t)(r.size > 0 ? r.size : 1), sizeof(int64_t));
    if (r.first == NULL || r.count == NULL) {
        fprintf(stderr, "make show: out of memory\n");
        exit(3);
    }
    for (int64_t c = 0; c < r.size; c++)
        r.first[c] = -1;
    /* The definition of a view, position by position: offset + sum of
     * index * stride (the lesson's formula, not the lesson's code). */
    for (int64_t i = 0; i < r.numel; i++) {
        int64_t rest = i, off = v->offset;
        for (int k = v->ndim - 1; k >= 0; k--) {
            off += rest % v->shape[k] * v->strides[k];
            rest /= v->shape[k];
        }
        if (off >= 0 && off < r.size) {
            if (r.first[off] < 0)
                r.first[off] = i;
            r.count[off]++;
        }
    }
    return r;
}

static void print_buffer(const reach *r, int width)
{
    int digits = 1;
    for (int64_t x = r->size > r->numel ? r->size : r->numel; x >= 10; x /= 10)
        digits++;
    int cellw = digits + 2, per_row = (width - 10) / cellw;
    int64_t shown = r->size > 200 ? 200 : r->size;
    bool repeats = false;
    if (r->size == 0)
        printf("  (empty: no cells)\n");
    for (int64_t start = 0; start < shown; start += per_row) {
        int64_t end = start + per_row < shown ? start + per_row : shown;
        printf("  cell  ");
        for (int64_t c = start; c < end; c++)
            printf("%*" PRId64, cellw, c);
        printf("\n  order ");
        for (int64_t c = start; c < end; c++) {
            if (r->first[c] < 0)
                printf("%*s", cellw, ".");
            else
                printf("%*" PRId64 "%s", cellw - (r->count[c] > 1), r->first[c],
                       r->count[c] > 1 ? "+" : "");
            repeats |= r->count[c] > 1;
        }
        printf("\n");
    }
    if (shown < r->size)
        printf("  ... and %" PRId64 " more cells\n", r->size - shown);
    if (repeats)
        printf("  (+: the first of several positions that reach the cell: a stride of 0)\n");
}

/* ---------------------------------------------------------------------- */
/* Drawing as SVG, with lessons/figures/svg.h                             */
/* ---------------------------------------------------------------------- */

static void fill_visits(const show_view *v, visit_map *m)
{
    memset(m, 0, sizeof *m);
    m->size = v->size > MAX_CELLS ? MAX_CELLS : v->size;
    m->numel = 1;
    for (int k = 0; k < v->ndim; k++)
        m->numel *= v->shape[k];
    for (int64_t i = 0; i < m->numel; i++) {
        int64_t rest = i, off = v->offset;
        for (int k = v->ndim - 1; k >= 0; k--) {
            off += rest % v->shape[k] * v->strides[k];
            rest /= v->shape[k];
        }
        if (off < 0 || off >= m->size)
            continue;
        if (m->nvisits[off] < MAX_VISITS)
            m->visits[off][m->nvisits[off]] = i;
        m->nvisits[off]++;
    }
}

/* The view's positions as cells (last axis across, the one before down,
 * the leading ones as blocks one under the other), each showing the buffer
 * cell it reads, coloured by its order.  Returns the height used. */
static double view_cells(FILE *f, double x, double y, const show_view *v)
{
    int64_t numel = 1;
    for (int k = 0; k < v->ndim; k++)
        numel *= v->shape[k];
    int64_t cols = v->ndim >= 1 ? v->shape[v->ndim - 1] : 1;
    int64_t rows = v->ndim >= 2 ? v->shape[v->ndim - 2] : 1;
    if (numel == 0) {
        svg_text(f, x, y + 14, 12, "start", "#57606a", false, "(no elements)");
        return 22;
    }
    double h = 0;
    for (int64_t i = 0; i < numel && i < GRID_MAX; i++) {
        int64_t block = i / (rows * cols), r = i / cols % rows, c = i % cols;
        int64_t rest = i, off = v->offset;
        for (int k = v->ndim - 1; k >= 0; k--) {
            off += rest % v->shape[k] * v->strides[k];
            rest /= v->shape[k];
        }
        double by = y + (double)block * ((double)rows * CELL + 18);
        if (r == 0 && c == 0 && v->ndim > 2) {
            char label[200] = "[", *p = label + 1;
            int64_t rest2 = block;
            int64_t idx[ND_MAX_DIMS];
            for (int k = v->ndim - 3; k >= 0; k--) {
                idx[k] = rest2 % v->shape[k];
                rest2 /= v->shape[k];
            }
            for (int k = 0; k < v->ndim - 2; k++)
                p += snprintf(p, sizeof label - (size_t)(p - label), "%" PRId64 ", ", idx[k]);
            snprintf(p, sizeof label - (size_t)(p - label), ":, :]");
            svg_text(f, x, by + 10, 10, "start", "#57606a", true, "%s", label);
        }
        double cy = by + (v->ndim > 2 ? 14 : 0) + (double)r * CELL, cx = x + (double)c * CELL;
        char fill[48];
        visit_color(i, numel, fill, sizeof fill);
        svg_rect(f, cx, cy, CELL, CELL, fill, "#1f2328");
        svg_text(f, cx + CELL / 2.0, cy + CELL / 2.0 + 5, 12, "middle", "#0d1117", false,
                 "%" PRId64, off);
        if (cy + CELL - y > h)
            h = cy + CELL - y;
    }
    if (numel > GRID_MAX) {
        svg_text(f, x, y + h + 14, 11, "start", "#57606a", false,
                 "... %" PRId64 " positions in all; the first %d are drawn", numel, GRID_MAX);
        h += 20;
    }
    return h;
}

static void write_svg(const char *path, const parser *p, int nsteps, const show_view *views,
                      const show_view *ref)
{
    const show_view *v = &views[nsteps - 1];
    visit_map *m = malloc(sizeof *m);
    if (m == NULL) {
        fprintf(stderr, "make show: out of memory\n");
        exit(3);
    }
    fill_visits(v, m);
    int per_row = 24;
    int64_t cols = v->ndim >= 1 ? v->shape[v->ndim - 1] : 1;
    double w = 60 + (double)per_row * CELL;
    double grid_w = 60 + (double)(cols < 24 ? cols : 24) * CELL;
    if (grid_w > w)
        w = grid_w;
    /* Measure first: draw into /dev/null to learn the grid's height. */
    FILE *null = fopen("/dev/null", "w");
    double grid_h = null ? view_cells(null, 0, 0, v) : 0;
    if (null)
        fclose(null);
    double strip_rows = (double)((m->size + per_row - 1) / per_row);
    double steps_h = 20.0 * nsteps + 30;
    bool differs = false;
    if (ref != NULL)
        for (int i = 0; i < nsteps; i++)
            differs |= !same_view(&views[i], &ref[i]);
    double h = 50 + steps_h + 40 + grid_h + 60 + strip_rows * CELL + 50 + (differs ? 60 : 0);

    /* Columns placed by hand: SVG text collapses runs of spaces.  12 px
     * monospace is about 7.3 px a character. */
    int tw = 4;
    for (int i = 0; i < nsteps; i++)
        if (p->ops[i].to - p->ops[i].from > tw)
            tw = p->ops[i].to - p->ops[i].from;
    if (tw > 40)
        tw = 40;
    double fx = 28 + 7.3 * (tw + 2), vx = fx + 7.3 * 17;
    if (vx + 7.3 * 52 > w)
        w = vx + 7.3 * 52;

    char dir[600], name[300];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    snprintf(name, sizeof name, "%s", slash ? slash + 1 : path);
    char title[600];
    snprintf(title, sizeof title, "make show: %s", p->s);
    for (char *c = title; *c; c++)          /* the title is XML text */
        if (*c == '<' || *c == '>' || *c == '&')
            *c = ' ';
    FILE *f = svg_open(dir, name, (int)w, (int)h, title);
    double y = 28;
    svg_text(f, 20, y, 15, "start", "#1f2328", true, "%s", title + 11);
    y += 28;
    svg_text(f, 20, y, 11, "start", "#57606a", false, "step by step (shape, strides and "
             "offset in elements):");
    y += 18;
    for (int i = 0; i < nsteps; i++) {
        char line[600];
        view_line(&views[i], line, sizeof line);
        int len = p->ops[i].to - p->ops[i].from;
        bool bad = ref != NULL && !same_view(&views[i], &ref[i]);
        const char *ink = bad ? "#cf222e" : "#1f2328";
        svg_text(f, 28, y, 12, "start", ink, true, "%.*s", len > tw ? tw : len,
                 p->s + p->ops[i].from);
        svg_text(f, fx, y, 12, "start", ink, true, "%s", function_of(&p->ops[i]));
        svg_text(f, vx, y, 12, "start", ink, true, "%s", line);
        y += 20;
        if (bad) {
            view_line(&ref[i], line, sizeof line);
            svg_text(f, fx, y, 12, "start", "#1a7f37", true, "the reference:");
            svg_text(f, vx, y, 12, "start", "#1a7f37", true, "%s", line);
            y += 20;
        }
    }

    y += 22;
    svg_text(f, 20, y, 11, "start", "#57606a", false, "the view: each position shows the buffer "
             "cell it reads, coloured by its order (row-major)");
    y += 12;
    view_cells(f, 30, y, v);
    y += grid_h + 40;
    svg_text(f, 20, y - 14, 11, "start", "#57606a", false, "the buffer (%" PRId64 " cells): "
             "each cell shows the positions of the view that reach it%s", v->size,
             v->size > MAX_CELLS ? "; the first cells only" : "");
    buffer_strip(f, 30, y, m, per_row);
    y += strip_rows * CELL + 20;
    if (differs)
        svg_text(f, 20, y + 10, 12, "start", "#cf222e", false, "red steps differ from the "
                 "reference (green): the first of them is where to look");
    svg_close(f);
    free(m);
}

/* ---------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: show [-o FILE.svg] 'EXPR'\n"
            "  e.g. show 'arange(24).reshape(2,3,4)[:, ::-1, 1]'\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *svg = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "o:")) != -1) {
        if (opt == 'o')
            svg = optarg;
        else
            usage();
    }
    if (optind != argc - 1)
        usage();
    expr = argv[optind];
    const char *secs = getenv("SHOW_SECONDS");
    if (secs != NULL && atoi(secs) > 0)
        step_seconds = atoi(secs);
    static parser p;
    parse(&p, expr);

    static show_view views[MAX_STEPS], ref[MAX_STEPS];
    nd_array cur, next;
    int done = 0;
    bool ok = run_source(&p.ops[0], &cur, &views[0]);
    done = 1;
    while (ok && done < p.nops) {
        ok = run_step(&p.ops[done], &cur, &next, &views[done]);
        if (ok) {
            nd_release(&cur);
            cur = next;
        }
        done++;
    }
    char why[300] = "";
    bool have_ref = show_reference(expr, p.ops, p.nops, ref, why, sizeof why);

    printf("%s\n\n", expr);
    print_steps(&p, done, views, have_ref ? ref : NULL);
    if (!ok) {
        const show_op *op = &p.ops[done - 1];
        if (views[done - 1].refused) {
            printf("\nstep %d, %.*s: %s (so %s was not called)\n", done, op->to - op->from,
                   expr + op->from, views[done - 1].message, function_of(op));
            nd_release(&cur);
            return 2;
        }
        printf("\nstep %d, %.*s: %s returned %s: %s\n", done, op->to - op->from,
               expr + op->from, function_of(op), nd_status_name(views[done - 1].status),
               views[done - 1].message);
        if (have_ref && ref[done - 1].status == ND_OK) {
            char line[600];
            view_line(&ref[done - 1], line, sizeof line);
            printf("the reference gives %s\n", line);
        }
        nd_release(&cur);
        return 1;
    }
    const show_view *v = &views[done - 1];
    char sh[200], st[200];
    printf("\nThe view: shape %s, strides %s, offset %" PRId64 " (in elements), over a "
           "buffer of %" PRId64 " float%s.\n", tup(v->ndim, v->shape, sh, sizeof sh),
           tup(v->ndim, v->strides, st, sizeof st), v->offset, v->size,
           v->size == 1 ? "" : "s");
    reach r = reach_of(v);
    int digits = 1;
    for (int64_t x = v->size; x >= 10; x /= 10)
        digits++;
    line_items = (term_width() - 4 - v->ndim) / (digits + 2);
    if (line_items < 4)
        line_items = 4;
    printf("\nIts elements, in row-major order, are these cells of the buffer:\n  ");
    print_offsets(v, 0, v->offset, digits, r.numel > 200, 2);
    char *text = NULL;
    if (r.numel > 100) {
        printf("\n");                           /* the values would be a page of numbers */
    } else if (nd_format(&cur, &text) == ND_OK) {
        char *cut = strstr(text, ", shape=");   /* the layout, said above already */
        if (cut)
            strcpy(cut, ")");
        printf("\nholding\n");
        for (const char *c = text; *c; c++)   /* indented, no spaces on blank lines */
            printf("%s%c", (c == text || c[-1] == '\n') && *c != '\n' ? "  " : "", *c);
        printf("\n");
        free(text);
    } else
        printf("\n");
    printf("\nThe buffer, and the position (row-major) at which the view first reaches "
           "each cell (.: never):\n");
    print_buffer(&r, term_width());
    free(r.first);
    free(r.count);
    if (have_ref) {
        bool differs = false;
        for (int i = 0; i < done; i++)
            differs |= !same_view(&views[i], &ref[i]);
        printf("\n%s\n", differs ? "The reference differs at the steps marked '!=' above: "
               "the first of them is where to look."
               : "The reference gives the same views at every step.");
    }
    if (svg != NULL) {
        write_svg(svg, &p, done, views, have_ref ? ref : NULL);
        printf("\nwrote %s: open it in a browser to see the view drawn\n", svg);
    }
    nd_release(&cur);
    return 0;
}
