/*
 * cuda_start.c -- a stand-in for the CUDA driver's start-up (cuInit and the
 * first context), as a graded test's first CUDA call runs it: after the
 * executor's lock-down, under the limits a grade gives a test with a GPU
 * in view.  It makes the system calls, reservations and file accesses
 * that public traces of cuInit and context creation show (the table
 * below, each with where it was seen), so that make check proves, without
 * a GPU, that the GPU policy (sandbox.c, SB_POLICY_GPU) and the limits
 * (sb_executor_opts, sb_test_limits) let CUDA start.
 *
 *   cuda_start [cpu|gpu] [GPUS] [GIB]
 *                       once, in this process: the lock-down of that
 *                       policy (default gpu), then the start-up for GPUS
 *                       devices (default 8) of GIB GiB each (default 141,
 *                       an H200)
 *   cuda_start serve    a zygote (sandbox.h): each request's arg is
 *                       "[cpu|gpu] [GPUS] [GIB]", run by a fresh child
 *
 * It prints one line per step and exits 0 when CUDA would have started,
 * 1 when a step failed as the driver would fail on it (CUDA error 304,
 * "OS call failed", or 2, out of memory); a call the filter refuses
 * outright kills it with SIGSYS.  Where a device file is absent (no GPU
 * here), the driver would get ENOENT; the stand-in then holds /dev/null
 * in its place, so that the open files of a GPUS-GPU node are counted.
 *
 * Sources (public traces, cited per step as [n]):
 *  [1] NVIDIA/cuda-checkpoint#10: strace of cuInit (in cuda-checkpoint)
 *      on a machine with two NUMA nodes and at least two GPUs:
 *      /proc/self/status, /sys/devices/system/node, get_mempolicy,
 *      /sys/devices/system/cpu/online, sched_get_priority_*,
 *      prlimit64(RLIMIT_STACK) read, socket(AF_UNIX, SOCK_SEQPACKET) +
 *      setsockopt(SO_PASSCRED) + connect("/tmp/nvidia-mps/control") =
 *      ENOENT, readlink of /proc/self and /proc/PID/exe, /proc/modules,
 *      /dev/nvidiactl and /dev/nvidiaN opened O_RDWR|O_CLOEXEC, fcntl
 *      F_GETFD, ioctl(0x46, ...) on them, /proc/driver/nvidia/params,
 *      stat of /dev/nvidiaN, and (as root) unlink + symlink of
 *      /dev/char/195:N
 *  [2] intel/libva#575: strace of the NVIDIA user-mode driver's start-up:
 *      /sys/devices/system/node/node0/cpumap, get_mempolicy, /proc/modules,
 *      /proc/devices, stat("/dev/nvidia-uvm"), ioctls on the control fd
 *  [3] snapcore/snapd, interfaces/builtin/opengl.go, its "# cuda" AppArmor
 *      rules: /proc/sys/vm/mmap_min_addr, /proc/devices,
 *      /sys/devices/system/memory/block_size_bytes, /proc/driver/nvidia/
 *      params, /dev/nvidia* rw, and unix (bind, listen) type=seqpacket on
 *      the abstract address "@cuda-uvmfd-NS-PID" (an ffmpeg snap's notes,
 *      found by their text, show its CUDA init failing, "Cannot init
 *      CUDA", on AppArmor's denials of exactly these)
 *  [4] NVIDIA/OpenShell#1696: a seccomp filter that refused memfd_create
 *      made every cuInit fail with error 304 (driver 570)
 *  [5] nolabs-ai/nono#673 and NVIDIA/OpenShell#1486: driver 570+ names its
 *      threads by writing /proc/self/task/TID/comm during init (EACCES
 *      there is error 304), reads /proc/driver/nvidia and
 *      /proc/driver/nvidia-uvm, and opens /dev/nvidia-uvm-tools
 *  [6] google/gvisor#10331: nvproxy's strace of a CUDA program: munmap of
 *      part of a reservation, mmap(MAP_SHARED|MAP_FIXED) of /dev/nvidia-uvm
 *      into it, getcpu, ioctls on /dev/nvidia-uvm
 *  [7] opencv/opencv#7637: /proc/self/maps of a CUDA process: the unified
 *      address range from 0x200000000, mappings of /dev/nvidiactl with
 *      PROT_NONE reserved gaps between them
 *  [8] NVIDIA/cuda-python#2458: creating the default memory pool reserves
 *      host virtual address space of about twice the device's memory
 *  [9] open-mpi/ompi#11783: strace of a CUDA-aware program's start:
 *      /sys/devices/system/cpu/online, sched_getaffinity (EINVAL for a
 *      small mask, then a 128 KiB one)
 * [10] ofiwg/libfabric#6160 (a comment): cuInit called fork(); the
 *      comment gives no reason (nvidia-modprobe, which the driver runs to
 *      create missing device files, is the likely one: with the device
 *      files bound it has nothing to do); the filter answers EPERM
 * [11] issue #29 of this project lists eventfd, prctl and pipes/threads
 *      among what straces of CUDA show; no public trace of these was
 *      found in writing this, so they are the word, not a trace's
 * [12] the sandbox module of conduit-venus (a public repository, found
 *      by its text; strace -f of libcuda brought up by NVIDIA's Vulkan
 *      driver): libcuda fails to start if bind or listen on its
 *      cuda-uvmfd socket is refused, and starts with connect and accept
 *      refused
 *
 * Not modelled: the ioctls' arguments (the driver's ABI; the GPU policy
 * allows every ioctl, and only NVIDIA device files, null, zero, urandom
 * and the tty are in view), and an MPS daemon (connect is refused: a
 * test runs on the GPU directly).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* The driver holds about this many fds per GPU once a context exists: a
 * published fd listing of a one-GPU CUDA process (found by its text, no
 * stable address) shows 16 on /dev/nvidia0; [1] opens each device at
 * cuInit already.  An estimate, not a trace of an 8-GPU node. */
#define FDS_PER_GPU 16

static int failures;

/* One step: ok says whether the driver would go on. */
static void step(bool ok, const char *name, const char *src, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void step(bool ok, const char *name, const char *src, const char *fmt, ...)
{
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!ok)
        failures++;
    printf("%s %-34s %s %s\n", ok ? "ok  " : "FAIL", name, src, what);
}

/* Read a file as the driver does (open, fstat, read); absent files are
 * fine (a GPU-less machine, or a kernel without the entry). */
static void read_file(const char *path, const char *src)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        step(errno == ENOENT || errno == ENOTDIR, path, src, "open: %s", strerror(errno));
        return;
    }
    struct stat st;
    char buf[1024];
    ssize_t n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof buf) : -1;
    int e = errno;
    close(fd);
    if (n >= 0)
        step(true, path, src, "read %zd bytes", n);
    else
        step(false, path, src, "read: %s", strerror(e));
}

/* A device file, O_RDWR as the driver opens it: absent here (ENOENT) is
 * what a machine without that GPU gives; /dev/null then holds the fd. */
static int open_device(const char *path, const char *src, int *absent)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
        int flags = fcntl(fd, F_GETFD);
        step(flags >= 0, path, src, "opened read-write");
        return fd;
    }
    int e = errno;
    if (e == ENOENT)
        (*absent)++;
    else
        step(false, path, src, "open: %s (the driver: error 304)", strerror(e));
    return open("/dev/null", O_RDWR | O_CLOEXEC);
}

static void *worker(void *arg)
{
    int efd = *(int *)arg;
    uint64_t v;
    /* the driver's event thread waits on its fds */
    if (read(efd, &v, sizeof v) != sizeof v)
        return (void *)1;
    return NULL;
}

static int start(const char *policy_name, int gpus, long gib)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    sb_policy policy = strcmp(policy_name, "cpu") == 0 ? SB_POLICY_CPU : SB_POLICY_GPU;
    if (sb_lockdown(policy) != 0) {
        fprintf(stderr, "cuda_start: %s\n", sb_error());
        return 3;
    }
    printf("# the CUDA driver's start-up, after the %s lock-down: %d GPUs of %ld GiB\n",
           policy_name, gpus, gib);
    char path[512];
    int absent = 0;

    /* process and machine: [1] [2] [9] */
    read_file("/proc/self/status", "[1]");
    DIR *d = opendir("/sys/devices/system/node");
    step(d != NULL || errno == ENOENT, "/sys/devices/system/node", "[1]", "%s",
         d != NULL ? "listed" : strerror(errno));
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strncmp(e->d_name, "node", 4) == 0) {
                snprintf(path, sizeof path, "/sys/devices/system/node/%s/cpumap", e->d_name);
                read_file(path, "[1][2]");
            }
        closedir(d);
    }
    unsigned long mask[16] = { 0 };
    long r = syscall(SYS_get_mempolicy, NULL, mask, 64 * 16, NULL, 0);
    step(r == 0, "get_mempolicy", "[1][2]", "%s", r == 0 ? "0" : strerror(errno));
    read_file("/sys/devices/system/cpu/online", "[1][9]");
    static unsigned char big[131072];
    r = syscall(SYS_sched_getaffinity, 0, sizeof big, big);
    step(r > 0, "sched_getaffinity", "[9]", "%ld", r);
    int pmax = sched_get_priority_max(SCHED_RR), pmin = sched_get_priority_min(SCHED_RR);
    step(pmax >= 0 && pmin >= 0, "sched_get_priority_max/min", "[1]", "%d, %d", pmax, pmin);
    struct rlimit stack;
    r = syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &stack);
    step(r == 0, "prlimit64(RLIMIT_STACK) read", "[1]", "%s", r == 0 ? "0" : strerror(errno));
    int cpu = -1;
    r = syscall(SYS_getcpu, &cpu, NULL, NULL);
    step(r == 0, "getcpu", "[6]", "cpu %d", cpu);

    /* the MPS control daemon: none (connect refused or absent) [1] */
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0) {
        step(false, "socket(AF_UNIX, SOCK_SEQPACKET)", "[1]", "%s (the driver: error 304)",
             strerror(errno));
    } else {
        int one = 1;
        r = setsockopt(s, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
        step(r == 0, "setsockopt(SO_PASSCRED)", "[1]", "%s", r == 0 ? "0" : strerror(errno));
        struct sockaddr_un mps = { .sun_family = AF_UNIX };
        snprintf(mps.sun_path, sizeof mps.sun_path, "/tmp/nvidia-mps/control");
        r = connect(s, (struct sockaddr *)&mps, sizeof mps);
        /* no daemon: the driver goes on without MPS [1][12] */
        step(r != 0, "connect(/tmp/nvidia-mps/control)", "[1][12]", "%s",
             r == 0 ? "connected (an MPS daemon in view)" : strerror(errno));
        close(s);
    }

    /* where the program is: [1] */
    char link[512];
    const char *links[] = { "/proc", "/proc/self", "/proc/self/exe" };
    for (size_t k = 0; k < sizeof links / sizeof links[0]; k++) {
        ssize_t n = readlink(links[k], link, sizeof link - 1);
        step(n >= 0 || errno == EINVAL, "readlink", "[1]", "%s: %s", links[k],
             n >= 0 ? "a link" : strerror(errno));
    }
    read_file("/proc/modules", "[1][2]");
    read_file("/proc/devices", "[2][3]");
    read_file("/proc/sys/vm/mmap_min_addr", "[3]");
    read_file("/sys/devices/system/memory/block_size_bytes", "[3]");
    read_file("/proc/driver/nvidia/params", "[1][3]");
    d = opendir("/proc/driver/nvidia-uvm");
    step(d != NULL || errno == ENOENT, "/proc/driver/nvidia-uvm", "[5]", "%s",
         d != NULL ? "listed" : strerror(errno));
    if (d != NULL)
        closedir(d);
    read_file("/proc/self/maps", "[7]");

    /* the device files: the control device, UVM, then each GPU [1][2][5] */
    struct stat st;
    r = stat("/dev/nvidia-uvm", &st);
    step(r == 0 || errno == ENOENT, "stat(/dev/nvidia-uvm)", "[2]", "%s",
         r == 0 ? "a device" : strerror(errno));
    int ctl = open_device("/dev/nvidiactl", "[1]", &absent);
    int uvm = open_device("/dev/nvidia-uvm", "[3][6]", &absent);
    int tools = open_device("/dev/nvidia-uvm-tools", "[5]", &absent);
    step(uvm >= 0 && tools >= 0, "UVM fds held", "[5][6]", "%d, %d", uvm, tools);
    char ioc[64] = { 0 };
    if (ctl >= 0) {   /* ENOTTY on /dev/null: only that the call is allowed */
        r = ioctl(ctl, _IOWR(0x46, 0x2a, char[0x20]), ioc);
        step(r == 0 || errno == ENOTTY || errno == EINVAL, "ioctl(nvidiactl, 0x46 0x2a)",
             "[1][2]", "%s", r == 0 ? "0" : strerror(errno));
    }
    int held = 0;
    for (int g = 0; g < gpus; g++) {
        snprintf(path, sizeof path, "/dev/nvidia%d", g);
        r = stat(path, &st);
        bool there = r == 0;
        step(there || errno == ENOENT, "stat", "[1]", "%s: %s", path,
             there ? "a device" : strerror(errno));
        /* as root the driver refreshes /dev/char/195:N; as anyone else,
         * or in a read-only /dev, that fails and it goes on */
        char ch[64], target[64];
        snprintf(ch, sizeof ch, "/dev/char/195:%d", g);
        snprintf(target, sizeof target, "../nvidia%d", g);
        if (unlink(ch) != 0 && symlink(target, ch) != 0)
            step(true, "unlink+symlink /dev/char/195:N", "[1]", "%s: %s (ignored)", ch,
                 strerror(errno));
        for (int k = 0; k < FDS_PER_GPU; k++) {
            int fd = open_device(path, "[1]", &absent);
            if (fd < 0) {
                step(false, "open a GPU's device file", "[1]",
                     "%s, fd %d of %d: %s (the driver: error 304)", path, k + 1, FDS_PER_GPU,
                     strerror(errno));
                break;
            }
            held++;
            if (k == 0) {
                r = ioctl(fd, _IOWR(0x46, 0xc9, int), ioc);
                step(r == 0 || errno == ENOTTY || errno == EINVAL, "ioctl(nvidiaN, 0x46 0xc9)",
                     "[1]", "%s", r == 0 ? "0" : strerror(errno));
            }
        }
    }
    step(true, "device fds held", "[1]", "%d for %d GPUs (%d device files absent here)", held,
         gpus, absent);

    /* the UVM fd's abstract socket, which the driver binds and listens on:
     * refusing either fails cuInit [3] */
    s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0) {
        step(false, "socket(AF_UNIX, SOCK_SEQPACKET)", "[3]", "%s (the driver: error 304)",
             strerror(errno));
    } else {
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        int len = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "cuda-uvmfd-%s-%d",
                           "4026531840", (int)getpid());
        socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
        r = bind(s, (struct sockaddr *)&a, alen);
        step(r == 0, "bind(@cuda-uvmfd-NS-PID)", "[3][12]", "%s",
             r == 0 ? "0" : strerror(errno));
        r = listen(s, 8);
        step(r == 0, "listen(@cuda-uvmfd-NS-PID)", "[3][12]", "%s",
             r == 0 ? "0" : strerror(errno));
    }

    /* memory: the unified address space, reserved and never touched
     * (twice each GPU's memory [8], from 0x200000000 [7]), then a piece
     * mapped over it, as UVM maps its device file there [6] */
    size_t reserve = (size_t)gpus * 2 * (size_t)gib << 30;
    void *va = mmap((void *)0x200000000UL, reserve, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    step(va != MAP_FAILED, "mmap(PROT_NONE) reservation", "[7][8]", "%zu GiB at %p%s",
         reserve >> 30, va == MAP_FAILED ? NULL : va,
         va == MAP_FAILED ? ": ENOMEM (the driver: out of memory, error 2)" : "");
    if (va != MAP_FAILED) {
        char *piece = (char *)va + ((size_t)1 << 30);
        r = munmap(piece, (size_t)2 << 20);
        void *m = mmap(piece, (size_t)2 << 20, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED)
            memset(m, 0, (size_t)2 << 20);
        step(r == 0 && m == piece, "munmap + mmap(MAP_FIXED) inside it", "[6]", "%s",
             m == piece ? "2 MiB mapped and touched" : strerror(errno));
    }
    int mfd = (int)syscall(SYS_memfd_create, "cuda", MFD_CLOEXEC);
    step(mfd >= 0, "memfd_create", "[4]", "%s", mfd >= 0 ? "an fd" : strerror(errno));

    /* threads, named through /proc (driver 570+) and prctl [5][11] */
    int efd = eventfd(0, EFD_CLOEXEC);
    step(efd >= 0, "eventfd2", "[11]", "%s", efd >= 0 ? "an fd" : strerror(errno));
    int pfd[2];
    r = pipe2(pfd, O_CLOEXEC);
    step(r == 0, "pipe2", "[11]", "%s", r == 0 ? "0" : strerror(errno));
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)gettid());
    int cfd = open(path, O_WRONLY | O_CLOEXEC);
    r = cfd >= 0 && write(cfd, "cuda-start", 10) == 10 ? 0 : -1;
    step(r == 0, "open O_WRONLY + write", "[5]", "%s: %s", path,
         r == 0 ? "named" : strerror(errno));
    if (cfd >= 0)
        close(cfd);
    r = prctl(PR_SET_NAME, "cuda-start", 0, 0, 0);
    step(r == 0, "prctl(PR_SET_NAME)", "[11]", "%s", r == 0 ? "0" : strerror(errno));
    pthread_t t;
    int tr = efd >= 0 ? pthread_create(&t, NULL, worker, &efd) : EINVAL;
    step(tr == 0, "clone (a thread)", "[11]", "%s", tr == 0 ? "started" : strerror(tr));
    if (tr == 0) {
        /* (glibc names another thread through /proc/self/task/TID/comm) */
        int nr = pthread_setname_np(t, "cuda-EvtHandlr");
        step(nr == 0, "write /proc/self/task/TID/comm", "[5]", "%s",
             nr == 0 ? "named" : strerror(nr));
        uint64_t one = 1;
        void *ret = (void *)1;
        if (write(efd, &one, sizeof one) == sizeof one)
            pthread_join(t, &ret);
        step(ret == NULL, "eventfd wakes the thread", "[11]", "%s",
             ret == NULL ? "joined" : "no");
    }
    /* the device-file helper: EPERM, and the driver goes on [10] */
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    step(true, "fork (the device-file helper)", "[10]", "%s",
         pid > 0 ? "forked" : strerror(errno));

    printf("%s: %d steps failed\n", failures ? "CUDA would not start" : "CUDA would start",
           failures);
    return failures ? 1 : 0;
}

static int parse_and_start(char *args)
{
    char *words[4] = { NULL };
    int n = 0;
    for (char *w = strtok(args, " "); w != NULL && n < 4; w = strtok(NULL, " "))
        words[n++] = w;
    const char *policy = n > 0 ? words[0] : "gpu";
    int gpus = n > 1 ? atoi(words[1]) : 8;
    long gib = n > 2 ? atol(words[2]) : 141;
    if (gpus < 0 || gpus > 64 || gib < 0 || gib > 4096) {
        fprintf(stderr, "cuda_start: 0-64 GPUs of 0-4096 GiB\n");
        return 2;
    }
    return start(policy, gpus, gib);
}

static int child(const sb_child_opts *c)
{
    char args[256];
    snprintf(args, sizeof args, "%s", c->arg);
    return parse_and_start(args);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "serve") == 0) {
        if (sb_zygote_serve(0, child) != 0) {
            fprintf(stderr, "cuda_start: %s\n", sb_error());
            return 3;
        }
        return 0;
    }
    char args[256] = "";
    for (int i = 1; i < argc; i++) {
        strncat(args, argv[i], sizeof args - strlen(args) - 2);
        strcat(args, " ");
    }
    return parse_and_start(args);
}
