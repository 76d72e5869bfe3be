/*
 * sandbox.h -- run untrusted code (a submission's compile, link and tests)
 * so that it cannot leave: no grader file, process or secret within reach.
 *
 * Two halves:
 *
 *   sb_spawn / sb_wait / sb_kill start a program unprivileged, in an empty
 *   working directory, with only the paths it needs in view, fds placed as
 *   asked and limits that bind (CPU seconds, memory, bytes written, open
 *   files, processes, wall clock), and say how it ended.  The strong mode
 *   uses bubblewrap (Debian's `bubblewrap`): user, mount, PID, network, IPC
 *   and UTS namespaces, a private size-bounded tmpfs as /tmp, and the wall
 *   clock kills the whole PID namespace.  Where namespaces are unavailable
 *   (some Docker setups, hosted autograders) it falls back to an
 *   unprivileged uid (when the grader runs as root) or to limits alone;
 *   sb_mode() says which mode runs, and the grader's report shows it.
 *
 *   sb_lockdown() is what a test program (today's runner's test children,
 *   tomorrow the executor) calls first: an allow-list seccomp filter
 *   (default deny), the x32 and i386 ABIs refused, signals only to itself,
 *   no fork, no exec, no network, no ptrace.  A refused call kills the
 *   process with SIGSYS after writing one line to fd 2:
 *       sandbox: forbidden system call kill: the test is stopped (...)
 *   (fork, clone of a process and exec fail with EPERM instead).
 *
 * Ownership: nothing returned needs freeing; sb_proc is the caller's.
 * The functions are not thread-safe (a grader spawns from one thread).
 */
#ifndef ND_SANDBOX_H
#define ND_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How strongly the sandbox can isolate on this machine. */
typedef enum {
    SB_NAMESPACES, /* bubblewrap: namespaces, private tmpfs, unprivileged uid */
    SB_UID,        /* fallback as root: an unprivileged uid, its own session */
    SB_NONE,       /* fallback as a user without namespaces: limits only */
} sb_mode_t;

/* The mode spawns use: found once (a probe run of bubblewrap), or forced
 * with SB_MODE=namespaces|uid|none (a forced mode that cannot work makes
 * every spawn fail). */
sb_mode_t sb_mode(void);
/* "namespaces (bubblewrap)", "uid 65534 (no namespaces)", ... : static. */
const char *sb_mode_name(sb_mode_t m);

/* The uid (and gid) that sandboxed code runs as when the grader is root:
 * SB_UID from the environment, default 65534 (nobody). */
uid_t sb_uid(void);

#define SB_MAX_PATHS 32
#define SB_MAX_FDS 4

/* What a spawned program sees and may use.  Zero means "no limit" for
 * each limit; start from sb_defaults(). */
typedef struct {
    /* Host paths visible at the same path: read-only, and read-write.  In
     * the fallback modes nothing is hidden (the uid and the grader's file
     * modes decide), and the read-write ones are handed to the uid. */
    const char *ro[SB_MAX_PATHS];
    const char *rw[SB_MAX_PATHS];
    /* The working directory: one of the rw paths, or NULL for the private
     * tmpfs (in the fallback modes, a fresh private folder). */
    const char *cwd;
    /* Child fd i is the parent's fds[i] (i < SB_MAX_FDS); -1: /dev/null
     * for 0-2, closed for 3.  Every other fd is closed. */
    int fds[SB_MAX_FDS];
    /* NULL-terminated "NAME=value" list; NULL: PATH=/usr/bin:/bin alone. */
    char *const *env;
    double cpu_s;        /* RLIMIT_CPU (SIGXCPU, then SIGKILL a second later) */
    double wall_s;       /* wall clock for everything it started */
    size_t mem_bytes;    /* RLIMIT_AS of each process */
    size_t tmp_bytes;    /* size of the private tmpfs (/tmp and the default cwd) */
    size_t file_bytes;   /* RLIMIT_FSIZE: the largest file it may write */
    long nofile;         /* RLIMIT_NOFILE */
    long nproc;          /* RLIMIT_NPROC: processes and threads of its uid */
    bool gpu;            /* NVIDIA device files and /sys in view */
    uid_t uid;           /* as root: the uid and gid it runs as (0: sb_uid()) */
} sb_opts;

/* Limits a correct compile or test never reaches; fds 0-2 inherited. */
sb_opts sb_defaults(void);

/* A spawned sandbox.  Fields are the implementation's. */
typedef struct {
    pid_t pid;            /* bwrap, or the program itself */
    int pidfd;
    int status_fd;        /* bwrap's JSON status, or -1 */
    double start, wall_s, cpu_s;
    sb_mode_t mode;
    bool killed;          /* by sb_kill (the wall clock, or the caller) */
    bool wall_expired;
    char private_dir[4096]; /* the fallback modes' working folder, removed at the end */
} sb_proc;

/* How it ended. */
typedef enum {
    SB_EXITED,    /* code */
    SB_SIGNALED,  /* sig: a crash (SIGSEGV, SIGABRT, ...) */
    SB_CPU,       /* ran out of CPU time (SIGXCPU, or SIGKILL at the hard limit) */
    SB_SECCOMP,   /* killed by the sandbox: a forbidden system call (SIGSYS) */
    SB_MEMORY,    /* killed by the kernel, not by us: most likely out of memory */
    SB_WALL,      /* the wall clock ran out: everything it started was killed */
    SB_KILLED,    /* sb_kill by the caller */
    SB_START,     /* the sandbox could not start the program */
} sb_end;

typedef struct {
    sb_end how;
    int code;        /* SB_EXITED */
    int sig;         /* SB_SIGNALED, SB_CPU, SB_SECCOMP, SB_MEMORY */
    double cpu_s;    /* CPU time of everything it ran, user + system */
    double wall_s;
    long long peak_kb; /* a zygote's child: its peak resident memory (0: not known) */
} sb_result;

/* Start argv (argv[0] an absolute path inside the sandbox) with opts.
 * 0 on success; -1 with the reason in sb_error() (nothing started). */
int sb_spawn(sb_proc *p, const sb_opts *o, char *const argv[]);
/* Wait for it, killing everything it started once its wall clock runs
 * out; fills r.  0, or -1 (sb_error) if waiting failed. */
int sb_wait(sb_proc *p, sb_result *r);
/* Kill everything it started, now (sb_wait then reports SB_KILLED). */
void sb_kill(sb_proc *p);
/* One line saying how it ended, for a report ("exited with status 1",
 * "killed by the sandbox: a forbidden system call", ...). */
const char *sb_describe(const sb_result *r, const sb_opts *o, char *buf, size_t cap);
/* The reason the last call failed. */
const char *sb_error(void);

/* ---------------------------------------------------------------------- */
/* One sandbox, a fresh process per test: the zygote                      */
/* ---------------------------------------------------------------------- */

/* A program started in the sandbox once (sb_zygote_start) serves requests
 * (sb_zygote_serve): for each, it forks a child that has never run
 * anything but the program's own start-up, places the request's fds as
 * the child's 0-3, sets the child's limits and calls the program's child
 * function, which locks itself down (sb_lockdown) before it runs untrusted
 * code.  The server is the child's parent: it measures the child's CPU
 * time and enforces its limits from outside (SIGXCPU at the CPU limit,
 * which the child's own handler may turn into a message, SIGKILL half a
 * CPU-second or a wall-clock second later; SIGKILL at the wall-clock
 * limit), and reports how the child ended with its exact usage (wait4).
 * Nothing a child does to its own timers or signals changes its limits.
 * The server itself never runs the code under test, and is not dumpable:
 * a child (same uid, same sandbox) cannot read or write its memory. */

/* What one child gets. */
typedef struct {
    double cpu_s;        /* CPU seconds (0: none) */
    double wall_s;       /* wall-clock seconds (0: none) */
    size_t mem_bytes;    /* address space it may add to the server's, which
                            it starts with (RLIMIT_AS; 0: none) */
    size_t file_bytes;   /* RLIMIT_FSIZE (0: none) */
    long nofile;         /* RLIMIT_NOFILE (0: the server's) */
    char arg[256];       /* for the child function, NUL-terminated */
} sb_child_opts;

typedef struct {
    sb_proc proc;        /* the sandbox the server runs in */
    int ctl;             /* requests go here (inherited by forks of the caller) */
} sb_zygote;

/* Start argv[0] (which calls sb_zygote_serve on fd 0) in the sandbox with
 * o (o->fds[0] is replaced by the control socket).  0, or -1 (sb_error). */
int sb_zygote_start(sb_zygote *z, const sb_opts *o, char *const argv[]);
/* Ask for a child with fds[i] as its fd i (-1: /dev/null for 0-2, closed
 * for 3).  A handle (>= 0) for sb_zygote_wait or sb_zygote_kill, or -1
 * (sb_error: the server is gone).  Any process that holds z->ctl may ask;
 * requests from several processes at once are fine. */
int sb_zygote_run(const sb_zygote *z, const int fds[SB_MAX_FDS], const sb_child_opts *c);
/* Wait for that child's end; fills r (cpu_s: the child's own, from its
 * parent's wait4) and closes the handle.  0, or -1 (sb_error). */
int sb_zygote_wait(int handle, sb_result *r);
/* Kill that child now (the server reaps it) and close the handle. */
void sb_zygote_kill(int handle);
/* Close the control socket (the server kills what still runs and exits)
 * and wait for the sandbox.  0 if the server had ended on its own terms. */
int sb_zygote_stop(sb_zygote *z);

/* In the sandboxed program: serve requests on fd `ctl` until every holder
 * has closed it.  Each child, before `child` runs: the request's fds,
 * default signal dispositions, its rlimits (RLIMIT_CPU a whole-second
 * backstop above its limit), an oom_score_adj of 1000 (the kernel's OOM
 * killer takes a test before anything of the grader's), death with the
 * server; then it exits with child()'s value.  Returns 0 at the end of the
 * requests, -1 (sb_error) if the server cannot go on. */
int sb_zygote_serve(int ctl, int (*child)(const sb_child_opts *c));

/* The grader's executors (grader/verdict.c), in one place, so that the
 * self-tests run what a grade runs (grader/selftest/sandbox/cuda_start.c
 * starts the CUDA driver's stand-in under them):
 *   sb_executor_opts: the sandbox of one executor program, its server
 *   (every fd closed but 0-2, the caller fills in ro, fds, env and uid);
 *   sb_test_limits: each test's child, cpu_s CPU seconds and wall_s of
 *   wall clock.  With a GPU in view (gpu), no address-space limit (a CUDA
 *   context reserves hundreds of GiB of virtual space that it never
 *   touches) and 1024 open files (the driver holds several per device
 *   file, and a node may have 8 GPUs). */
sb_opts sb_executor_opts(bool gpu);
sb_child_opts sb_test_limits(bool gpu, double cpu_s, double wall_s);

/* The seccomp policies. */
typedef enum {
    SB_POLICY_CPU, /* tests on the CPU and the CUDA emulator */
    SB_POLICY_GPU, /* also what the CUDA runtime needs: ioctl, more of mmap */
} sb_policy;

/* Lock the calling process down for good: no new privileges, not
 * dumpable, the seccomp filter of the policy on every thread created
 * from now on.  Both policies refuse creating, writing, renaming or
 * removing any file (open for writing, mkdir, unlink, ...: EACCES): a
 * test writes only to the fds it was given, so it leaves nothing behind
 * for the next test or another grade.  Call it before any untrusted code
 * runs, from a process with one thread.  0, or -1 (sb_error). */
int sb_lockdown(sb_policy policy);

#endif /* ND_SANDBOX_H */
