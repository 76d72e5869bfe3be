/*
 * test_sandbox.c -- the sandbox's self-tests (issue #13): probes run under
 * sb_spawn and sb_lockdown, as a test of a submission would run, try to
 * leave, and must fail.
 *
 *   test_sandbox PROBE [REPO [CUDA_START]]
 *
 * PROBE is the probe program (probe.c); REPO the grader's checkout, whose
 * real hidden tests the probes also try to read (in the namespaces mode,
 * where they are out of view).  It runs in the mode sb_mode() finds
 * (SB_MODE=uid tests the fallback), prints "ok - ..." or "not ok - ..."
 * per check, then "N passed, N failed".  The grader's files are stood in
 * for by a folder it makes: grader/hidden/h01_views.c and
 * out/build-notes.tsv, made unreadable to others as grade.sh makes the
 * real ones in the fallback mode.  CUDA_START: the stand-in for the CUDA
 * driver's start-up (cuda_start.c), run as a grade runs a test on a GPU.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sandbox.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int passed, failed;
static char dir[256], probe[512], hidden[512], notes[512], repo_hidden[1024];
static sb_mode_t mode;
static volatile sig_atomic_t usr1;
static volatile int canary = 42;

static void on_usr1(int sig)
{
    (void)sig;
    usr1 = 1;
}

static void check(bool ok, const char *name, const char *fmt, ...)
{
    char why[600] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (ok)
        passed++;
    else
        failed++;
    printf("%s - %s%s%s\n", ok ? "ok" : "not ok", name, ok ? "" : ": ", ok ? "" : why);
}

/* The options of a test: small limits, the probe in view. */
static sb_opts opts(void)
{
    sb_opts o = sb_defaults();
    static char bin[300];
    snprintf(bin, sizeof bin, "%s/bin", dir);
    o.ro[0] = bin;
    o.cpu_s = 5;
    o.wall_s = 20;
    o.mem_bytes = (size_t)512 << 20;
    o.tmp_bytes = (size_t)8 << 20;
    o.file_bytes = (size_t)4 << 20;
    o.nofile = 64;
    o.nproc = 64;
    return o;
}

/* Run the probe with o and its arguments; its output lands in out. */
static sb_result run(const sb_opts *o0, char *out, size_t cap, ...)
{
    sb_opts o = *o0;
    char capture[300];
    snprintf(capture, sizeof capture, "%s/capture", dir);
    int fd = open(capture, O_RDWR | O_CREAT | O_TRUNC, 0600);
    o.fds[1] = o.fds[2] = fd;
    char *argv[16] = { probe };
    int n = 1;
    va_list ap;
    va_start(ap, cap);
    for (char *a; n < 15 && (a = va_arg(ap, char *)) != NULL;)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    sb_result r;
    memset(&r, 0, sizeof r);
    sb_proc p;
    if (sb_spawn(&p, &o, argv) != 0 || sb_wait(&p, &r) != 0) {
        r.how = SB_START;
        snprintf(out, cap, "%s", sb_error());
    } else {
        ssize_t got = pread(fd, out, cap - 1, 0);
        out[got > 0 ? got : 0] = '\0';
    }
    close(fd);
    return r;
}

static const char *how(const sb_result *r)
{
    static char buf[300];
    sb_opts o = opts();
    return sb_describe(r, &o, buf, sizeof buf);
}

/* The attack must fail: refused (exit 0) or killed by the filter. */
static void must_fail(const char *name, const sb_opts *o, ...)
{
    char out[4096], *args[8] = { NULL };
    va_list ap;
    va_start(ap, o);
    for (int k = 0; k < 7; k++)
        if ((args[k] = va_arg(ap, char *)) == NULL)
            break;
    va_end(ap);
    sb_result r = run(o, out, sizeof out, args[0], args[1], args[2], args[3], args[4],
                      (char *)NULL);
    bool ok = ((r.how == SB_EXITED && r.code == 0) || r.how == SB_SECCOMP) &&
              strstr(out, "ESCAPE") == NULL;
    check(ok, name, "%s; it printed: %.300s", how(&r), out);
}

/* ... and be killed by the filter itself. */
static void must_be_killed(const char *name, const sb_opts *o, const char *a1, const char *a2)
{
    char out[4096];
    sb_result r = run(o, out, sizeof out, a1, a2, (char *)NULL);
    check(r.how == SB_SECCOMP && strstr(out, "sandbox: forbidden system call") != NULL, name,
          "%s; it printed: %.300s", how(&r), out);
}

static void make_file(const char *path, const char *text, mode_t m)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
    chmod(path, m);
}

static void copy(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *o = fopen(to, "wb");
    if (in == NULL || o == NULL) {
        perror(in == NULL ? from : to);
        exit(2);
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, o);
    fclose(in);
    fclose(o);
    chmod(to, 0755);
}

/* Any process whose name is token? */
static bool process_named(const char *token)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    bool found = false;
    while (d != NULL && (e = readdir(d)) != NULL && !found) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            if (fgets(comm, sizeof comm, f) != NULL && strncmp(comm, token, strlen(token)) == 0)
                found = true;
            fclose(f);
        }
    }
    if (d != NULL)
        closedir(d);
    return found;
}

/* One test in the zygote z: the probe's attack `what`, limits c; what it
 * printed lands in out. */
static sb_result zrun(const sb_zygote *z, sb_child_opts c, const char *what, char *out,
                      size_t cap)
{
    sb_result r;
    memset(&r, 0, sizeof r);
    r.how = SB_START;
    int pipefd[2];
    out[0] = '\0';
    if (pipe(pipefd) != 0)
        return r;
    snprintf(c.arg, sizeof c.arg, "%s", what);
    int fds[SB_MAX_FDS] = { -1, pipefd[1], pipefd[1], -1 };
    int h = sb_zygote_run(z, fds, &c);
    close(pipefd[1]);
    size_t got = 0;
    ssize_t n;
    while (h >= 0 && got + 1 < cap && (n = read(pipefd[0], out + got, cap - 1 - got)) > 0)
        got += (size_t)n;
    out[got] = '\0';
    close(pipefd[0]);
    if (h < 0 || sb_zygote_wait(h, &r) != 0)
        snprintf(out, cap, "%s", sb_error());
    return r;
}

/* One sandbox, a fresh process per test: what a test can do to the next,
 * to the server, and to its own limits. */
static void zygote_checks(const sb_opts *o)
{
    sb_opts zo = *o;
    zo.ro[0] = probe;   /* the program itself, not its folder */
    zo.cpu_s = zo.wall_s = 0;
    zo.mem_bytes = 0;
    char *argv[] = { probe, "serve", NULL };
    sb_zygote z;
    if (sb_zygote_start(&z, &zo, argv) != 0) {
        check(false, "a zygote starts", "%s", sb_error());
        return;
    }
    sb_child_opts c;
    memset(&c, 0, sizeof c);
    c.cpu_s = 5;
    c.wall_s = 20;
    c.mem_bytes = (size_t)512 << 20;
    c.nofile = 64;
    char out[4096], what[700];
    sb_result r = zrun(&z, c, "ok", out, sizeof out);
    check(r.how == SB_EXITED && r.code == 0, "zygote: a test runs in a fresh child", "%s: %.300s",
          how(&r), out);
    r = zrun(&z, c, "leave", out, sizeof out);
    check(r.how == SB_EXITED && r.code == 0, "zygote: a test cannot create a file anywhere",
          "%s: %.300s", how(&r), out);
    r = zrun(&z, c, "find-leftover", out, sizeof out);
    check(r.how == SB_EXITED && r.code == 0,
          "zygote: the next test finds nothing of the last (files, memory, threads)",
          "%s: %.300s", how(&r), out);
    r = zrun(&z, c, "kill-parent", out, sizeof out);
    sb_result again = zrun(&z, c, "ok", out, sizeof out);
    check(r.how != SB_EXITED || r.code == 0, "zygote: a test cannot kill the server", "%s",
          how(&r));
    check(again.how == SB_EXITED && again.code == 0, "zygote: the server serves on after that",
          "%s: %.300s", how(&again), out);
    r = zrun(&z, c, "parent-mem", out, sizeof out);
    check(r.how != SB_EXITED || r.code == 0, "zygote: a test cannot read the server's memory",
          "%s: %.300s", how(&r), out);
    sb_child_opts one = c;
    one.cpu_s = 1;
    r = zrun(&z, one, "untimed-spin", out, sizeof out);
    check(r.how == SB_CPU && r.cpu_s >= 1 && r.cpu_s < 1.6,
          "zygote: the server stops a test at its CPU limit (1 s) though it disarmed its own "
          "timers and blocked SIGXCPU", "%s after %.2f s of CPU", how(&r), r.cpu_s);
    r = zrun(&z, c, "work 300", out, sizeof out);
    check(r.how == SB_EXITED && r.code == 0 && r.cpu_s >= 0.29 && r.cpu_s < 1,
          "zygote: a test's CPU time is measured by its parent (0.3 s)", "%s, %.3f s",
          how(&r), r.cpu_s);
    sb_child_opts w = c;
    w.wall_s = 2;
    r = zrun(&z, w, "sleep 60", out, sizeof out);
    check(r.how == SB_WALL && r.wall_s < 10, "zygote: the wall clock stops a sleeping test (2 s)",
          "%s after %.1f s", how(&r), r.wall_s);
    int fds[SB_MAX_FDS] = { -1, -1, -1, -1 };
    snprintf(c.arg, sizeof c.arg, "sleep 60");
    int h = sb_zygote_run(&z, fds, &c);
    sb_zygote_kill(h);
    r = zrun(&z, c, "ok", out, sizeof out);
    check(h >= 0 && r.how == SB_EXITED && r.code == 0,
          "zygote: a test given up on is killed, and the next one runs", "%s", how(&r));
    if (mode == SB_NAMESPACES) {
        char sibling[600];
        snprintf(sibling, sizeof sibling, "%s/bin/sibling", dir);
        copy(probe, sibling);
        snprintf(what, sizeof what, "read %s", sibling);
        r = zrun(&z, c, what, out, sizeof out);
        check(r.how == SB_EXITED && r.code == 0,
              "zygote: the program sees itself, not what lies beside it", "%s: %.300s",
              how(&r), out);
    }
    check(sb_zygote_stop(&z) == 0, "zygote: the server ends when the grader is done", "%s",
          sb_error());
}

/* The CUDA driver's start-up (cuda_start.c, a stand-in that makes the
 * calls public traces of cuInit show) in an executor's sandbox with a GPU
 * in view, under a test's limits and the GPU policy, as the grader runs
 * a test (sb_executor_opts, sb_test_limits): CUDA must start.  And the
 * stand-in can fail: under the CPU policy, or the limits of a test
 * without a GPU (2 GiB of address space, 64 files), it does not. */
static void cuda_start_checks(const char *standin)
{
    static char bin[600];
    snprintf(bin, sizeof bin, "%s/bin/cuda_start", dir);
    copy(standin, bin);
    sb_opts o = sb_executor_opts(true);
    o.ro[0] = bin;
    o.fds[2] = 2;
    char *argv[] = { bin, "serve", NULL };
    sb_zygote z;
    if (sb_zygote_start(&z, &o, argv) != 0) {
        check(false, "cuda_start: an executor's sandbox with a GPU in view starts", "%s",
              sb_error());
        return;
    }
    static char out[32768];
    sb_child_opts gpu = sb_test_limits(true, 10, 60);
    sb_result r = zrun(&z, gpu, "gpu 8 141", out, sizeof out);
    printf("%s", out);
    check(r.how == SB_EXITED && r.code == 0 && strstr(out, "CUDA would start") != NULL,
          "the CUDA driver's start-up (a stand-in: 8 GPUs of 141 GiB) runs under the GPU "
          "policy and a GPU test's limits", "%s", how(&r));
    r = zrun(&z, gpu, "cpu 8 141", out, sizeof out);
    check(r.how == SB_SECCOMP && strstr(out, "sandbox: forbidden system call") != NULL,
          "... and not under the CPU policy (get_mempolicy, socket: refused)", "%s: %.300s",
          how(&r), out);
    sb_child_opts cpu = sb_test_limits(false, 10, 60);
    r = zrun(&z, cpu, "gpu 8 141", out, sizeof out);
    check(r.how == SB_EXITED && r.code == 1 && strstr(out, "ENOMEM") != NULL &&
              strstr(out, "Too many open files") != NULL,
          "... nor under the limits of a test without a GPU (2 GiB of address space, "
          "64 files)", "%s: %.400s", how(&r), out);
    check(sb_zygote_stop(&z) == 0, "cuda_start: the server ends", "%s", sb_error());
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_sandbox PROBE [REPO [CUDA_START]]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGUSR1, on_usr1);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/sandbox-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 2;
    }
    chmod(dir, 0711);
    /* the probe, where the sandbox's uid can run it */
    char path[600];
    snprintf(path, sizeof path, "%s/bin", dir);
    mkdir(path, 0755);
    snprintf(probe, sizeof probe, "%s/bin/probe", dir);
    copy(argv[1], probe);
    /* the grader's files: unreadable to others, as grade.sh leaves them */
    snprintf(path, sizeof path, "%s/grader", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/grader/hidden", dir);
    mkdir(path, 0755);
    snprintf(hidden, sizeof hidden, "%s/grader/hidden/h01_views.c", dir);
    make_file(hidden, "/* a hidden test */\n", 0644);
    snprintf(path, sizeof path, "%s/out", dir);
    mkdir(path, 0700);
    snprintf(notes, sizeof notes, "%s/out/build-notes.tsv", dir);
    make_file(notes, "1\tcompile error\tsrc/01_views.c does not compile\n", 0644);
    if (argc > 2)
        snprintf(repo_hidden, sizeof repo_hidden, "%s/grader/hidden/h01_views.c", argv[2]);

    mode = sb_mode();
    printf("# sandbox mode: %s\n", sb_mode_name(mode));
    sb_opts o = opts();
    char out[4096], me[32], addr[32], port[16];
    snprintf(me, sizeof me, "%d", (int)getpid());
    snprintf(addr, sizeof addr, "%lx", (unsigned long)(uintptr_t)&canary);

    sb_result r = run(&o, out, sizeof out, "ok", (char *)NULL);
    check(r.how == SB_EXITED && r.code == 0, "a locked-down program that does nothing forbidden runs",
          "%s: %.300s", how(&r), out);

    /* the grader's files */
    must_fail("cannot read a hidden test", &o, "read", hidden, NULL);
    if (repo_hidden[0] && mode == SB_NAMESPACES)
        must_fail("cannot read the checkout's hidden tests (out of view)", &o, "read",
                  repo_hidden, NULL);
    must_fail("cannot read the build notes", &o, "read", notes, NULL);
    must_fail("cannot write the build notes", &o, "write", notes, NULL);
    must_fail("cannot read the grader's files through /proc/1/root", &o, "read",
              "/proc/1/root/etc/shadow", NULL);
    char via_parent[700];
    snprintf(via_parent, sizeof via_parent, "/proc/%d/root%s", (int)getpid(), hidden);
    must_fail("cannot read them through the grader's /proc/PID/root", &o, "read", via_parent,
              NULL);
    must_fail("cannot write /usr", &o, "write", "/usr/sandbox-escape", NULL);
    if (mode == SB_NAMESPACES) {
        must_fail("cannot write outside the private tmpfs (/)", &o, "write", "/sandbox-escape",
                  NULL);
        must_fail("cannot write outside the private tmpfs (/etc)", &o, "write",
                  "/etc/sandbox-escape", NULL);
        r = run(&o, out, sizeof out, "fill", (char *)NULL);
        long long total = -1;
        const char *w = strstr(out, "wrote ");
        if (w != NULL)
            total = atoll(w + 6);
        check(r.how == SB_EXITED && total >= 0 && total <= (long long)o.tmp_bytes,
              "cannot write past the private tmpfs's size (8 MB)", "%s; %.200s", how(&r), out);
    }

    /* other processes */
    usr1 = 0;
    must_fail("cannot signal the grader", &o, "kill", me, NULL);
    must_fail("cannot signal the grader with tgkill", &o, "tgkill", me, NULL);
    must_fail("cannot signal the grader through a pidfd", &o, "pidfd", me, NULL);
    usleep(100000);
    check(!usr1, "the grader received no signal", "SIGUSR1 arrived");
    must_fail("cannot kill its parent", &o, "kill-parent", NULL);
    must_fail("cannot kill every process (kill -1)", &o, "kill", "-1", NULL);
    must_fail("cannot kill its process group (kill 0)", &o, "kill", "0", NULL);
    must_fail("cannot ptrace its parent", &o, "ptrace", NULL);
    must_fail("cannot ptrace the grader", &o, "ptrace", me, NULL);
    must_fail("cannot write the grader's memory (process_vm_writev)", &o, "vm-writev", me,
              addr, NULL);
    check(canary == 42, "the grader's memory is unchanged", "canary is %d", canary);

    /* the network */
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (ls >= 0 && bind(ls, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(ls, 4) == 0 &&
        getsockname(ls, (struct sockaddr *)&sa, &len) == 0) {
        snprintf(port, sizeof port, "%d", ntohs(sa.sin_port));
        must_fail("cannot reach the network (a port of the grader's machine)", &o, "connect",
                  port, NULL);
        if (mode == SB_NAMESPACES)
            must_fail("without the lock-down, the network namespace still cuts it off", &o,
                      "--nolock", "connect", port, NULL);
    }
    if (ls >= 0)
        close(ls);

    /* processes and programs */
    must_fail("cannot fork", &o, "fork", NULL);
    must_fail("cannot clone a process", &o, "clone-process", NULL);
    must_fail("cannot exec", &o, "exec", NULL);
    must_be_killed("the x32 ABI is refused", &o, "x32", NULL);
    must_be_killed("the i386 ABI (int 0x80) is refused", &o, "i386", NULL);
    must_be_killed("cannot leave its process group (setsid, setpgid)", &o, "setsid", NULL);
    must_be_killed("cannot exit with a code that reads as a signal (exit 137)", &o, "exit",
                   "137");
    must_be_killed("cannot raise its limits", &o, "rlimit", NULL);
    must_be_killed("cannot take over the sandbox's SIGSYS handler", &o, "sigsys", NULL);
    must_be_killed("cannot mount", &o, "mount", NULL);
    must_be_killed("cannot use io_uring", &o, "io_uring", NULL);
    must_be_killed("cannot make a user namespace", &o, "userns", NULL);
    if (mode == SB_NAMESPACES)
        must_fail("without the lock-down (as a compiler runs), still no user namespace", &o,
                  "--nolock", "userns", NULL);

    /* limits */
    sb_opts w = o;
    w.wall_s = 2;
    r = run(&w, out, sizeof out, "sleep", "60", (char *)NULL);
    check(r.how == SB_WALL && r.wall_s < 10, "the wall clock stops a sleeping test (2 s)",
          "%s after %.1f s", how(&r), r.wall_s);
    sb_opts c = o;
    c.cpu_s = 1;
    r = run(&c, out, sizeof out, "spin", (char *)NULL);
    check(r.how == SB_CPU, "the CPU limit stops a spinning test (1 s)", "%s", how(&r));
    r = run(&o, out, sizeof out, "memory", "1024", (char *)NULL);
    check(r.how == SB_EXITED && r.code == 0, "cannot allocate past the memory limit (512 MB)",
          "%s: %.200s", how(&r), out);
    r = run(&o, out, sizeof out, "files", (char *)NULL);
    const char *opened = strstr(out, "opened ");
    check(r.how == SB_EXITED && opened != NULL && atoi(opened + 7) < o.nofile,
          "cannot open more files than its limit (64)", "%s: %.200s", how(&r), out);
    if (mode != SB_NONE) {
        r = run(&o, out, sizeof out, "threads", (char *)NULL);
        const char *started = strstr(out, "started ");
        check(r.how == SB_EXITED && started != NULL && atoi(started + 8) < o.nproc,
              "cannot start more threads than its process limit (64)", "%s: %.200s", how(&r),
              out);
    }
    if (mode == SB_NAMESPACES) {
        /* without the lock-down (as a compiler runs), a daemon in a session
         * of its own still dies with the sandbox */
        char token[16];
        snprintf(token, sizeof token, "sbd%d", (int)getpid() % 100000);
        r = run(&o, out, sizeof out, "--nolock", "daemon", token, (char *)NULL);
        usleep(300000);
        check(r.how == SB_EXITED && !process_named(token),
              "nothing it started outlives it (a daemon in its own session)", "%s; %s",
              how(&r), process_named(token) ? "the daemon still runs" : "");
    }
    zygote_checks(&o);
    if (argc > 3)
        cuda_start_checks(argv[3]);

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_sandbox: could not remove %s\n", dir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
