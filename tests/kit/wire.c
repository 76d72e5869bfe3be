/*
 * wire.c -- calls to the executor and raw results back, over pipes.
 *
 * A frame is "ND", a 4-byte sequence number, a 4-byte length and the body.
 * The parent (the grader's side) trusts nothing it reads: a result must
 * answer the call in flight (its sequence number), have the size its call
 * allows, and every count and index in it must be in range; anything else
 * is a malformed result, which fails the test.  The executor trusts the
 * parent.
 */
#include "kit_impl.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FRAME ((uint32_t)1 << 30)

/* Both sides allocate and free the same sizes call after call: keep freed
 * memory (up to 256 MiB) instead of giving it back to the system, which
 * would make every call fault its pages in again. */
__attribute__((constructor)) static void keep_freed_memory(void)
{
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
}

typedef struct {
    char *p;
    size_t len, cap;
    bool oom;
} wbuf;

static void wput(wbuf *b, const void *v, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, v, n);
    b->len += n;
}

static void wbuf_floats(wbuf *b, const k_buf *f)
{
    wput(b, &f->n, sizeof f->n);
    if (f->n > 0)
        wput(b, f->v, (size_t)f->n * sizeof(float));
}

static bool wait_writable(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    return poll(&p, 1, -1) >= 0 || errno == EINTR;
}

bool (*k_wire_wait)(int fd);

static bool write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {   /* a pipe the runner made non-blocking */
            if ((k_wire_wait == NULL || !k_wire_wait(fd)) && !wait_writable(fd))
                return false;
            continue;
        }
        if (w <= 0)
            return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

/* Reads go through one buffer (each side reads one pipe at a time): a
 * frame the other side wrote at once comes in one read, not three. */
static struct {
    int fd;
    size_t pos, len;
    char buf[1 << 16];
} rd = { .fd = -1 };

/* Up to n bytes of fd: buffered ones first; 0 at its end, -1 on an error. */
static ssize_t buffered_read(int fd, char *p, size_t n)
{
    if (rd.fd != fd) {
        rd.fd = fd;
        rd.pos = rd.len = 0;
    }
    if (rd.pos == rd.len) {
        if (n >= sizeof rd.buf)
            return read(fd, p, n);
        ssize_t r = read(fd, rd.buf, sizeof rd.buf);
        if (r <= 0)
            return r;
        rd.pos = 0;
        rd.len = (size_t)r;
    }
    size_t k = rd.len - rd.pos < n ? rd.len - rd.pos : n;
    memcpy(p, rd.buf + rd.pos, k);
    rd.pos += k;
    return (ssize_t)k;
}

size_t k_wire_take(int fd, char *dst, size_t cap)
{
    if (rd.fd != fd)
        return 0;
    size_t k = rd.len - rd.pos < cap ? rd.len - rd.pos : cap;
    memcpy(dst, rd.buf + rd.pos, k);
    rd.fd = -1;   /* the caller closes fd; a later pipe may get its number */
    return k;
}

/* Read n bytes of fd: how many came before its end (or an error). */
static size_t read_all(int fd, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = buffered_read(fd, (char *)p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

static uint32_t seq_out, seq_in;

void k_wire_reset(void)
{
    seq_out = seq_in = 0;
    rd.fd = -1;
}

/* A frame is written at once: its head (FRAME_HEAD bytes, put first in
 * every wbuf by frame_start) and body. */
#define FRAME_HEAD 10
static void frame_start(wbuf *b)
{
    static const char head[FRAME_HEAD] = { 'N', 'D' };
    wput(b, head, sizeof head);
}

static bool send_frame(int fd, wbuf *b, uint32_t seq)
{
    uint32_t len = (uint32_t)(b->len - FRAME_HEAD);
    bool ok = !b->oom && b->len < MAX_FRAME;
    if (ok) {
        memcpy(b->p + 2, &seq, 4);
        memcpy(b->p + 6, &len, 4);
        ok = write_all(fd, b->p, b->len);
    }
    free(b->p);
    return ok;
}

/* A frame's body (malloc'd) or an error text; *eof on a clean end. */
static const char *recv_frame(int fd, uint32_t want_seq, char **body, uint32_t *len, bool *eof)
{
    char head[FRAME_HEAD];
    *body = NULL;
    size_t got = read_all(fd, head, sizeof head);
    *eof = got == 0;
    if (got == 0)
        return "the process ended";
    if (got < sizeof head)
        return "the process ended in the middle of a result";
    uint32_t seq;
    memcpy(&seq, head + 2, 4);
    memcpy(len, head + 6, 4);
    if (head[0] != 'N' || head[1] != 'D')
        return "a malformed result (bad frame)";
    if (seq != want_seq)
        return "a result for another call (a duplicate, or one nobody asked for)";
    if (*len > MAX_FRAME)
        return "a result too large";
    *body = malloc(*len > 0 ? *len : 1);
    if (*body == NULL)
        return "a result too large to hold";
    if (read_all(fd, *body, *len) < *len) {
        free(*body);
        *body = NULL;
        return "the process ended in the middle of a result";
    }
    return NULL;
}

/* A k_buf from the frame at *p (its count, then its floats), at most max
 * floats; false if it is not there whole. */
static bool take_floats(const char **p, const char *end, k_buf *f, int64_t max)
{
    int64_t n;
    f->v = NULL;
    if (end - *p < (ptrdiff_t)sizeof n)
        return false;
    memcpy(&n, *p, sizeof n);
    *p += sizeof n;
    if (n < 0 || n > max || (uint64_t)(end - *p) < (uint64_t)n * sizeof(float))
        return false;
    f->n = n;
    f->v = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (f->v == NULL)
        return false;
    memcpy(f->v, *p, (size_t)n * sizeof(float));
    *p += n * (int64_t)sizeof(float);
    return true;
}

/* ---------------------------------------------------------------------- */
/* Calls: parent to executor                                              */
/* ---------------------------------------------------------------------- */

uint32_t k_write_call(int fd, const k_call *c)
{
    wbuf b = { 0 };
    frame_start(&b);
    k_call head = *c;
    for (int i = 0; i < K_BUFS; i++)
        head.bufs[i].v = NULL;
    wput(&b, &head, sizeof head);
    for (int i = 0; i < c->nbufs; i++)
        wbuf_floats(&b, &c->bufs[i]);
    seq_in = ++seq_out;
    return send_frame(fd, &b, seq_out) ? seq_out : 0;
}

/* The executor's side: it trusts its parent, but still never reads past
 * the frame. */
const char *k_read_call(int fd, k_call *c, bool *eof)
{
    char *body;
    uint32_t len;
    const char *err = recv_frame(fd, seq_in + 1, &body, &len, eof);
    if (err != NULL)
        return err;
    seq_in++;
    const char *p = body, *end = body + len;
    if (len < sizeof *c) {
        free(body);
        return "a short call";
    }
    memcpy(c, p, sizeof *c);
    p += sizeof *c;
    for (int i = 0; i < c->nbufs && i < K_BUFS; i++)
        if (!take_floats(&p, end, &c->bufs[i], INT64_MAX))
            break;
    free(body);
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* Results: executor to parent                                            */
/* ---------------------------------------------------------------------- */

bool k_write_res(int fd, const k_res *r)
{
    wbuf b = { 0 };
    frame_start(&b);
    k_res head = *r;
    head.vals = NULL;
    head.out_data.v = NULL;
    for (int i = 0; i < K_BUFS; i++)
        head.after[i].v = NULL;
    wput(&b, &head, sizeof head);
    wbuf_floats(&b, &r->out_data);
    for (int i = 0; i < K_BUFS; i++)
        wbuf_floats(&b, &r->after[i]);
    if (r->nvals > 0)
        wput(&b, r->vals, (size_t)r->nvals * sizeof(int64_t));
    return send_frame(fd, &b, seq_in);
}

const char *k_read_res(int fd, const k_call *c, uint32_t seq, k_res *r)
{
    char *body;
    uint32_t len;
    bool eof;
    memset(r, 0, sizeof *r);
    const char *err = recv_frame(fd, seq, &body, &len, &eof);
    if (err != NULL)
        return err;
    const char *p = body, *end = body + len;
    err = "a malformed result";
    if (len < sizeof *r)
        goto bad;
    memcpy(r, p, sizeof *r);
    p += sizeof *r;
    r->vals = NULL;
    r->out_data = (k_buf){ 0 };
    for (int i = 0; i < K_BUFS; i++)
        r->after[i] = (k_buf){ 0 };
    r->msg[K_MSG - 1] = '\0';
    if (r->out_buf < K_NOBUF || r->out_buf >= c->nbufs || r->nvals < 0 ||
        r->nvals > (1 << 26))
        goto bad;
    if (r->ndim < 0 || r->ndim > ND_MAX_DIMS)   /* kept for the message; no axes */
        memset(r->shape, 0, sizeof r->shape + sizeof r->strides);
    if (!take_floats(&p, end, &r->out_data, (int64_t)1 << 32))
        goto bad;
    for (int i = 0; i < K_BUFS; i++)
        if (!take_floats(&p, end, &r->after[i], i < c->nbufs ? c->bufs[i].n : 0) ||
            (r->after[i].n != 0 && r->after[i].n != c->bufs[i].n))
            goto bad;
    if ((uint64_t)(end - p) != (uint64_t)r->nvals * sizeof(int64_t))
        goto bad;
    r->vals = malloc((size_t)(r->nvals > 0 ? r->nvals : 1) * sizeof(int64_t));
    if (r->vals == NULL)
        goto bad;
    memcpy(r->vals, p, (size_t)r->nvals * sizeof(int64_t));
    free(body);
    return NULL;
bad:
    free(body);
    k_res_free(r);
    return err;
}

int k_serve(int in, int out, void (*exec)(const k_call *c, k_res *r))
{
    for (;;) {
        k_call c;
        bool eof;
        memset(&c, 0, sizeof c);
        const char *err = k_read_call(in, &c, &eof);
        if (err != NULL)
            return eof ? 0 : 3;
        k_res r;
        exec(&c, &r);
        for (int i = 0; i < K_BUFS; i++)
            free(c.bufs[i].v);
        bool ok = k_write_res(out, &r);
        k_res_free(&r);
        if (!ok)
            return 3;
    }
}

void k_res_free(k_res *r)
{
    free(r->vals);
    free(r->out_data.v);
    for (int i = 0; i < K_BUFS; i++)
        free(r->after[i].v);
    memset(r, 0, sizeof *r);
}
