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
#include <sys/uio.h>
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

/* A frame goes out as a list of pieces (writev): its head, the call's or
 * result's struct, and each buffer's count and floats from where they
 * lie, never copied into one block first (a call of two 67 MB buffers
 * would otherwise hold them twice on each side). */
#define MAX_PIECES (3 + 2 * (K_BUFS + 1))
typedef struct {
    struct iovec v[MAX_PIECES];
    int n;
    size_t len;
} frame;

static void piece(frame *f, const void *p, size_t n)
{
    if (n > 0 && f->n < MAX_PIECES) {
        f->v[f->n++] = (struct iovec){ (void *)p, n };
        f->len += n;
    }
}

static void piece_floats(frame *f, const k_buf *b)
{
    piece(f, &b->n, sizeof b->n);
    if (b->n > 0)
        piece(f, b->v, (size_t)b->n * sizeof(float));
}

static bool wait_writable(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    return poll(&p, 1, -1) >= 0 || errno == EINTR;
}

bool (*k_wire_wait)(int fd);

/* Write the pieces of f, whatever the pipe takes at a time. */
static bool write_frame(int fd, frame *f)
{
    struct iovec *v = f->v;
    int n = f->n;
    while (n > 0) {
        ssize_t w = writev(fd, v, n);   /* (n <= MAX_PIECES, far below IOV_MAX) */
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {   /* a pipe the runner made non-blocking */
            if ((k_wire_wait == NULL || !k_wire_wait(fd)) && !wait_writable(fd))
                return false;
            continue;
        }
        if (w <= 0)
            return false;
        for (size_t done = (size_t)w; done > 0;) {   /* drop what went out */
            size_t k = done < v->iov_len ? done : v->iov_len;
            v->iov_base = (char *)v->iov_base + k;
            v->iov_len -= k;
            done -= k;
            if (v->iov_len == 0)
                v++, n--;
        }
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

/* A frame: its head (FRAME_HEAD bytes: "ND", the sequence number, the
 * body's length), then its body. */
#define FRAME_HEAD 10
static bool send_frame(int fd, frame *f, char *head, uint32_t seq)
{
    uint32_t len = (uint32_t)(f->len - FRAME_HEAD);
    if (f->n == MAX_PIECES || f->len - FRAME_HEAD >= MAX_FRAME)
        return false;
    head[0] = 'N';
    head[1] = 'D';
    memcpy(head + 2, &seq, 4);
    memcpy(head + 6, &len, 4);
    return write_frame(fd, f);
}

/* The head of the next frame: its body's length, or an error text; *eof
 * on a clean end. */
static const char *recv_head(int fd, uint32_t want_seq, uint32_t *len, bool *eof)
{
    char head[FRAME_HEAD] = { 0 };
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
    return NULL;
}

/* Read n bytes of the frame's body into p, of *left still to come. */
static bool take(int fd, void *p, size_t n, uint32_t *left)
{
    if (n > *left || read_all(fd, p, n) < n)
        return false;
    *left -= (uint32_t)n;
    return true;
}

/* A k_buf from the frame (its count, then its floats, read straight into
 * their own block), at most max floats; false if it is not there whole. */
static bool take_floats(int fd, k_buf *f, int64_t max, uint32_t *left)
{
    int64_t n;
    f->v = NULL;
    f->n = 0;
    if (!take(fd, &n, sizeof n, left) || n < 0 || n > max ||
        (uint64_t)n * sizeof(float) > *left)
        return false;
    f->v = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (f->v == NULL || !take(fd, f->v, (size_t)n * sizeof(float), left)) {
        free(f->v);
        f->v = NULL;
        return false;
    }
    f->n = n;
    return true;
}

/* ---------------------------------------------------------------------- */
/* Calls: parent to executor                                              */
/* ---------------------------------------------------------------------- */

uint32_t k_write_call(int fd, const k_call *c)
{
    char head[FRAME_HEAD] = { 0 };
    frame f = { .n = 0 };
    piece(&f, head, sizeof head);
    k_call h = *c;
    for (int i = 0; i < K_BUFS; i++)
        h.bufs[i].v = NULL;
    piece(&f, &h, sizeof h);
    for (int i = 0; i < c->nbufs; i++)
        piece_floats(&f, &c->bufs[i]);
    seq_in = ++seq_out;
    return send_frame(fd, &f, head, seq_out) ? seq_out : 0;
}

/* The executor's side: it trusts its parent, but still never reads past
 * the frame. */
const char *k_read_call(int fd, k_call *c, bool *eof)
{
    uint32_t left;
    const char *err = recv_head(fd, seq_in + 1, &left, eof);
    if (err != NULL)
        return err;
    seq_in++;
    if (!take(fd, c, sizeof *c, &left))
        return "a short call";
    for (int i = 0; i < K_BUFS; i++)
        c->bufs[i].v = NULL;
    for (int i = 0; i < c->nbufs && i < K_BUFS; i++)
        if (!take_floats(fd, &c->bufs[i], INT64_MAX, &left))
            return "a malformed call";
    return left == 0 ? NULL : "a malformed call";
}

/* ---------------------------------------------------------------------- */
/* Results: executor to parent                                            */
/* ---------------------------------------------------------------------- */

bool k_write_res(int fd, const k_res *r)
{
    char head[FRAME_HEAD] = { 0 };
    frame f = { .n = 0 };
    piece(&f, head, sizeof head);
    k_res h = *r;
    h.vals = NULL;
    h.out_data.v = NULL;
    for (int i = 0; i < K_BUFS; i++)
        h.after[i].v = NULL;
    piece(&f, &h, sizeof h);
    piece_floats(&f, &r->out_data);
    for (int i = 0; i < K_BUFS; i++)
        piece_floats(&f, &r->after[i]);
    if (r->nvals > 0)
        piece(&f, r->vals, (size_t)r->nvals * sizeof(int64_t));
    return send_frame(fd, &f, head, seq_in);
}

const char *k_read_res(int fd, const k_call *c, uint32_t seq, k_res *r)
{
    uint32_t left;
    bool eof;
    memset(r, 0, sizeof *r);
    const char *err = recv_head(fd, seq, &left, &eof);
    if (err != NULL)
        return err;
    err = "a malformed result";
    if (!take(fd, r, sizeof *r, &left)) {
        memset(r, 0, sizeof *r);
        return err;
    }
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
    if (!take_floats(fd, &r->out_data, (int64_t)1 << 32, &left))
        goto bad;
    for (int i = 0; i < K_BUFS; i++)
        if (!take_floats(fd, &r->after[i], i < c->nbufs ? c->bufs[i].n : 0, &left) ||
            (r->after[i].n != 0 && r->after[i].n != c->bufs[i].n))
            goto bad;
    if ((uint64_t)left != (uint64_t)r->nvals * sizeof(int64_t))
        goto bad;
    r->vals = malloc((size_t)(r->nvals > 0 ? r->nvals : 1) * sizeof(int64_t));
    if (r->vals == NULL || !take(fd, r->vals, left, &left))
        goto bad;
    return NULL;
bad:
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
