/*
 * kit_impl.h -- the kit's own insides, shared by its files (not by tests).
 */
#ifndef ND_KIT_IMPL_H
#define ND_KIT_IMPL_H

#include "kit.h"

#include <stdio.h>
#include <sys/types.h>

#define K_POISON64 ((int64_t)0x5A5A5A5A5A5A5A5AULL)

/* A profiled call's counters in r->vals, after the op's own (exec.c): the
 * head (K_PROF_NONE, K_PROF_OFF, or the number of kernel launches), then,
 * summed over every launch, for each access kind (K_GLOBAL_LOAD ..
 * K_SHARED_STORE) the fields requests, lanes, bytes, sectors, wavefronts,
 * ideal, and requests by lane width 1, 2, 4, 8, 16 bytes. */
#define K_PROF_NONE (-2)      /* no CUDA emulator in the executor         */
#define K_PROF_OFF (-1)       /* the emulator, but not instrumented       */
#define K_PROF_FIELDS 11
#define K_PROF_VALS (1 + 4 * K_PROF_FIELDS)

/* Where a test's calls run. */
typedef enum { K_LOCAL, K_REMOTE } k_where;

struct k_ctx {
    const k_test *test;
    nd_device dev;
    uint64_t rng;
    /* the case's memory, freed by k_case_end */
    void **blocks;
    int nblocks, cap;
    k_res res;             /* the last call's raw result */
    bool have_res;
    k_where where;
    int to_exec, from_exec;   /* K_REMOTE: the executor's pipes */
    pid_t exec_pid;
    const char *exec_path;
    const char *exec_output;  /* where the executor's own output goes */
    double cpu_limit;         /* seconds of CPU the code under test may use */
    double exec_cpu;          /* what an ended executor used */
    double exec_peak_mb;      /* the largest peak memory of its executors */
    bool output_settled;      /* k_output_of has left the output as it stands */
    /* K_REMOTE: calls sent whose results are not judged yet (check.c) */
    struct k_pending *pending;
    int head, npending;
    int64_t pending_bytes;
};

/* Judge every call sent ahead (check.c): at the end of a test. */
void k_drain(k_ctx *k);

/* Tell the runner of a failure now, before looking for a smaller case
 * (which may crash the process): it stands if nothing follows. */
void k_provisional(const char *msg);

/* Run c where the test runs it (runner.c): in this process, or by the
 * executor (the test fails if the executor died). */
void k_dispatch(k_ctx *k, const k_call *c, k_res *r);

/* K_REMOTE, a call at a time (check.c sends calls ahead of their results):
 * k_send starts the executor if need be and sends c (its sequence number,
 * 0 if the executor is gone); k_receive reads the result of c, sent as
 * seq, and fails the test if the executor died or sent anything else;
 * k_exec_failed fails the test for call c, with why the executor did not
 * answer it (err); k_abandon ends the executor, results in flight and all
 * (the next call starts a new one). */
uint32_t k_send(k_ctx *k, const k_call *c);
void k_receive(k_ctx *k, const k_call *c, uint32_t seq, k_res *r);
void k_exec_failed(k_ctx *k, const k_call *c, const char *err);
void k_abandon(k_ctx *k);
/* End k's executor, if any, and start a new one: NULL, or why it could
 * not (it never fails the test). */
const char *k_restart(k_ctx *k);

/* The test ends with call c's failure (check.c): with k_output_alone and
 * a remote executor, empty k's output file, then run c (NULL: nothing)
 * again, alone, on a new executor, so that the file holds what c printed
 * and nothing of the test's other calls.  Its result is not judged: the
 * verdict stands. */
void k_output_of(k_ctx *k, const k_call *c);

/* The wire (wire.c): a call to the executor, a raw result back, each a
 * frame.  k_read_* validate everything and return an error text (static)
 * or NULL.  k_write_call returns c's sequence number, 0 if the executor is
 * gone; on a non-blocking fd that is full, k_wire_wait(fd) is called first
 * (to read a result, which lets the other side go on); when it is NULL or
 * returns false, having nothing to do, the wire waits until fd takes more. */
uint32_t k_write_call(int fd, const k_call *c);
extern bool (*k_wire_wait)(int fd);
void k_wire_reset(void);
/* What the wire has read of fd past the last frame (at most cap bytes), before
 * fd is closed: the wire forgets fd. */
size_t k_wire_take(int fd, char *dst, size_t cap);
const char *k_read_call(int fd, k_call *c, bool *eof);
bool k_write_res(int fd, const k_res *r);
/* The raw result of call c, sent as number seq; or what was wrong. */
const char *k_read_res(int fd, const k_call *c, uint32_t seq, k_res *r);

/* The executor's loop: read calls on fd `in`, run each with `exec` (k_exec),
 * write results to `out`, until end of input.  Returns the exit status. */
int k_serve(int in, int out, void (*exec)(const k_call *c, k_res *r));

/* Whether op writes its result into an output array struct (out). */
static inline bool k_takes_out(k_op op)
{
    switch (op) {
    case K_RESHAPE: case K_PERMUTE: case K_BROADCAST_TO: case K_SLICE: case K_DIAGONAL:
    case K_COMPACT: case K_BINARY: case K_SCALAR: case K_UNARY: case K_REDUCE:
    case K_MATMUL: case K_MATMUL_NAIVE:
        return true;
    default:
        return false;
    }
}

#endif /* ND_KIT_IMPL_H */
