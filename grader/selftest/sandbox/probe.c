/*
 * probe.c -- one attack on the sandbox from inside it, as lesson code
 * would try it (test_sandbox.c runs every attack and judges).
 *
 *   probe [--nolock] ATTACK [ARG...]
 *   probe serve              a zygote (sandbox.h): each request's arg is
 *                            "ATTACK [ARG...]", run by a fresh child after
 *                            its lock-down, as a grader's test is
 *
 * Unless --nolock, the probe first calls sb_lockdown(SB_POLICY_CPU), as a
 * test program's main does.  It exits 0 when the attack failed (the call
 * was refused), 1 when it worked (an escape), and prints what it saw; a
 * refused call may also kill it with SIGSYS (the sandbox's filter).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

static int worked(const char *what)
{
    printf("ESCAPE: %s\n", what);
    return 1;
}

static int refused(const char *what)
{
    printf("refused: %s (%s)\n", what, strerror(errno));
    return 0;
}

static void *idle(void *arg)
{
    (void)arg;
    pause();
    return NULL;
}

/* What a zygote's test leaves behind, and what the next one looks for. */
static int leftover_mark;

static int attack(int argc, char **argv);

/* A zygote's child: the lock-down, then the attack its request names. */
static int child(const sb_child_opts *c)
{
    static char line[256];
    char *argv[16] = { "probe" };
    int argc = 1;
    snprintf(line, sizeof line, "%s", c->arg);
    for (char *t = strtok(line, " "); t != NULL && argc < 15; t = strtok(NULL, " "))
        argv[argc++] = t;
    argv[argc] = NULL;
    return attack(argc, argv);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "serve") == 0) {
        if (sb_zygote_serve(0, child) != 0) {
            fprintf(stderr, "probe: %s\n", sb_error());
            return 3;
        }
        return 0;
    }
    return attack(argc, argv);
}

static int attack(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int i = 1;
    if (i < argc && strcmp(argv[i], "--nolock") == 0)
        i++;
    else if (sb_lockdown(SB_POLICY_CPU) != 0) {
        fprintf(stderr, "probe: %s\n", sb_error());
        return 3;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: probe [--nolock] ATTACK [ARG...]\n");
        return 2;
    }
    const char *a = argv[i], *arg = i + 1 < argc ? argv[i + 1] : "";
    long n = i + 1 < argc ? strtol(arg, NULL, 10) : 0;

    if (strcmp(a, "read") == 0) {   /* read ARG (a grader's file) */
        char buf[64];
        int fd = open(arg, O_RDONLY);
        if (fd < 0 || read(fd, buf, sizeof buf) <= 0)
            return refused(arg);
        return worked(arg);
    }
    if (strcmp(a, "write") == 0) {   /* write or create ARG */
        int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || write(fd, "forged\n", 7) != 7)
            return refused(arg);
        return worked(arg);
    }
    if (strcmp(a, "fill") == 0) {   /* write files in the cwd until refused */
        static char block[1 << 16];
        memset(block, 'x', sizeof block);
        signal(SIGXFSZ, SIG_IGN);   /* a file past RLIMIT_FSIZE: EFBIG, next file */
        long long total = 0;
        for (int f = 0; f < 1000; f++) {
            char name[32];
            snprintf(name, sizeof name, "fill%d", f);
            int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd < 0)
                break;
            ssize_t w;
            while ((w = write(fd, block, sizeof block)) > 0)
                total += w;
            close(fd);
            if (errno == ENOSPC || total > (64 << 20))
                break;
        }
        printf("wrote %lld bytes in all (%s)\n", total, strerror(errno));
        return 0;   /* the harness judges the total */
    }
    if (strcmp(a, "kill") == 0) {   /* kill(ARG, SIGUSR1); ARG -1 or 0: groups */
        if (kill((pid_t)n, n > 0 ? SIGUSR1 : SIGKILL) != 0)
            return refused("kill");
        return worked("kill");
    }
    if (strcmp(a, "kill-parent") == 0) {
        if (kill(getppid(), SIGKILL) != 0)
            return refused("kill(getppid())");
        return worked("kill(getppid())");
    }
    if (strcmp(a, "tgkill") == 0) {
        if (syscall(SYS_tgkill, (pid_t)n, (pid_t)n, SIGUSR1) != 0)
            return refused("tgkill");
        return worked("tgkill");
    }
    if (strcmp(a, "pidfd") == 0) {   /* pidfd_open(ARG) + pidfd_send_signal */
        int fd = (int)syscall(SYS_pidfd_open, (pid_t)n, 0);
        if (fd < 0 || syscall(SYS_pidfd_send_signal, fd, SIGUSR1, NULL, 0) != 0)
            return refused("pidfd_send_signal");
        return worked("pidfd_send_signal");
    }
    if (strcmp(a, "ptrace") == 0) {   /* attach to ARG (or the parent) */
        pid_t pid = n > 0 ? (pid_t)n : getppid();
        if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) != 0)
            return refused("ptrace");
        return worked("ptrace");
    }
    if (strcmp(a, "vm-writev") == 0) {   /* ARG: pid, next: hex address */
        uintptr_t addr = (uintptr_t)strtoull(i + 2 < argc ? argv[i + 2] : "0", NULL, 16);
        int forged = 666;
        struct iovec local = { &forged, sizeof forged }, remote = { (void *)addr, sizeof forged };
        if (syscall(SYS_process_vm_writev, (pid_t)n, &local, 1, &remote, 1, 0) != sizeof forged)
            return refused("process_vm_writev");
        return worked("process_vm_writev");
    }
    if (strcmp(a, "connect") == 0) {   /* TCP to 127.0.0.1:ARG */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)n) };
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) != 0)
            return refused("connect");
        return worked("connect");
    }
    if (strcmp(a, "fork") == 0) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid < 0)
            return refused("fork");
        return worked("fork");
    }
    if (strcmp(a, "clone-process") == 0) {   /* raw clone, a new process */
        long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
        if (pid == 0)
            _exit(0);
        if (pid < 0)
            return refused("clone");
        return worked("clone");
    }
    if (strcmp(a, "exec") == 0) {
        char *args[] = { "/bin/true", NULL };
        execv(args[0], args);
        return refused("execv");
    }
    if (strcmp(a, "x32") == 0) {   /* getpid through the x32 ABI */
        long r = syscall(0x40000000 | SYS_getpid);
        if (r < 0)
            return refused("x32 getpid");
        return worked("x32 getpid");
    }
    if (strcmp(a, "i386") == 0) {   /* getpid (20) through int 0x80 */
        long r = 20;
        __asm__ volatile("int $0x80" : "+a"(r) : : "memory");
        if (r < 0)
            return refused("int 0x80");
        return worked("int 0x80");
    }
    if (strcmp(a, "setsid") == 0) {   /* leave the process group, then outlive */
        if (setsid() < 0 && setpgid(0, 0) < 0)
            return refused("setsid and setpgid");
        sleep(60);
        return worked("setsid");
    }
    if (strcmp(a, "daemon") == 0) {   /* without the lock-down: a grandchild
                                         named ARG in its own session outlives */
        pid_t pid = fork();
        if (pid == 0) {
            if (fork() == 0) {
                setsid();
                prctl(PR_SET_NAME, arg, 0, 0, 0);
                for (;;)
                    pause();
            }
            _exit(0);
        }
        if (pid < 0)
            return refused("fork");
        waitpid(pid, NULL, 0);
        goto done;
    }
    if (strcmp(a, "sleep") == 0) {   /* outlive the wall clock */
        sleep((unsigned)n);
        goto done;
    }
    if (strcmp(a, "spin") == 0) {   /* outlive the CPU limit */
        for (volatile unsigned long k = 0;; k++) {
        }
    }
    if (strcmp(a, "exit") == 0)   /* exit(ARG): a code of 128+ would read as a signal */
        exit((int)n);
    if (strcmp(a, "rlimit") == 0) {   /* raise a limit */
        struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };
        if (setrlimit(RLIMIT_CPU, &r) != 0)
            return refused("setrlimit");
        return worked("setrlimit");
    }
    if (strcmp(a, "sigsys") == 0) {   /* take the sandbox's SIGSYS handler */
        if (signal(SIGSYS, SIG_IGN) == SIG_ERR)
            return refused("signal(SIGSYS)");
        return worked("signal(SIGSYS)");
    }
    if (strcmp(a, "mount") == 0) {
        if (mount("none", "/tmp", "tmpfs", 0, NULL) != 0)
            return refused("mount");
        return worked("mount");
    }
    if (strcmp(a, "userns") == 0) {   /* a user namespace of its own */
        if (unshare(CLONE_NEWUSER) != 0)
            return refused("unshare(CLONE_NEWUSER)");
        return worked("unshare(CLONE_NEWUSER)");
    }
    if (strcmp(a, "io_uring") == 0) {   /* io_uring could pass by seccomp */
        char params[120] = { 0 };
        if (syscall(SYS_io_uring_setup, 4, params) < 0)
            return refused("io_uring_setup");
        return worked("io_uring_setup");
    }
    if (strcmp(a, "files") == 0) {   /* open until refused; prints the count */
        int k = 0;
        while (open("/dev/null", O_RDONLY) >= 0)
            k++;
        printf("opened %d\n", k);
        return 0;
    }
    if (strcmp(a, "threads") == 0) {   /* start threads until refused */
        int k = 0;
        pthread_t t;
        while (k < 100000 && pthread_create(&t, NULL, idle, NULL) == 0)
            k++;
        printf("started %d threads\n", k);
        return 0;
    }
    if (strcmp(a, "memory") == 0) {   /* allocate and touch ARG MB */
        size_t bytes = (size_t)n << 20;
        char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return refused("mmap");
        memset(p, 1, bytes);
        return worked("allocated past the memory limit");
    }
    if (strcmp(a, "leave") == 0) {   /* leave what the next test could find */
        leftover_mark = 1;
        int made = 0;
        const char *files[] = { "/tmp/sb-leftover", "sb-leftover", "/dev/shm/sb-leftover" };
        for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
            int fd = open(files[k], O_WRONLY | O_CREAT | O_TRUNC, 0666);
            if (fd >= 0) {
                printf("made %s\n", files[k]);
                made++;
                close(fd);
            }
        }
        if (mkdir("/tmp/sb-leftover.d", 0777) == 0) {
            printf("made /tmp/sb-leftover.d\n");
            made++;
        }
        pthread_t t;   /* a thread that would outlive the test */
        pthread_create(&t, NULL, idle, NULL);
        return made ? worked("left files behind") : refused("leaving a file behind");
    }
    if (strcmp(a, "find-leftover") == 0) {   /* what an earlier test left */
        if (leftover_mark)
            return worked("the last test's memory");
        const char *files[] = { "/tmp/sb-leftover", "sb-leftover", "/dev/shm/sb-leftover",
                                "/tmp/sb-leftover.d" };
        for (size_t k = 0; k < sizeof files / sizeof files[0]; k++)
            if (access(files[k], F_OK) == 0)
                return worked(files[k]);
        int threads = 0;
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        while (f != NULL && fgets(line, sizeof line, f) != NULL)
            if (strncmp(line, "Threads:", 8) == 0)
                threads = atoi(line + 8);
        if (f != NULL)
            fclose(f);
        if (threads != 1)
            return worked("the last test's thread");
        return refused("finding anything of the last test");
    }
    if (strcmp(a, "parent-mem") == 0) {   /* read the zygote server's memory */
        char path[64], buf[16];
        snprintf(path, sizeof path, "/proc/%d/mem", (int)getppid());
        int fd = open(path, O_RDONLY);
        if (fd < 0 || pread(fd, buf, sizeof buf, (off_t)(uintptr_t)&leftover_mark) <= 0)
            return refused(path);
        return worked(path);
    }
    if (strcmp(a, "untimed-spin") == 0) {   /* disarm its own CPU timer, then spin */
        struct itimerval off;
        memset(&off, 0, sizeof off);
        setitimer(ITIMER_PROF, &off, NULL);
        setitimer(ITIMER_VIRTUAL, &off, NULL);
        sigset_t xcpu;   /* (its handler cannot be changed: the filter keeps it) */
        sigemptyset(&xcpu);
        sigaddset(&xcpu, SIGXCPU);
        sigprocmask(SIG_BLOCK, &xcpu, NULL);
        for (volatile unsigned long k = 0;; k++) {
        }
    }
    if (strcmp(a, "work") == 0) {   /* ARG milliseconds of CPU, then exit 0 */
        struct timespec t0, t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        do {
            for (volatile int k = 0; k < 100000; k++) {
            }
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < n);
        goto done;
    }
    if (strcmp(a, "ok") == 0)   /* does nothing forbidden: must exit 0 */
        goto done;
    fprintf(stderr, "probe: unknown attack %s\n", a);
    return 2;
done:
    return 0;
}
