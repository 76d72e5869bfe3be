/*
 * sandbox_cli.c -- grader/sandbox.c from the shell (grade.sh uses it).
 *
 *   sandbox mode
 *       prints the mode spawns get here: "namespaces (bubblewrap, uid
 *       65534)", or a fallback's name
 *   sandbox run [OPTIONS] -- PROGRAM [ARGS...]
 *       runs PROGRAM (a path, or a name looked up in PATH) sandboxed, with
 *       fds 0-2 (and 3, if open) inherited; exits with its status, 128 + N
 *       if signal N ended it, 124 when the wall clock ran out, 125 when the
 *       sandbox could not start it.
 *
 * Options of run (sizes take a K, M or G suffix):
 *   --ro PATH --rw PATH   a host path in view, read-only or writable (repeat)
 *   --cwd PATH            the working directory (default: the private tmpfs)
 *   --cpu S --wall S      CPU and wall-clock seconds
 *   --mem SIZE            address space of each process (0: no limit)
 *   --tmp SIZE            the private tmpfs (/tmp) --fsize SIZE  largest file
 *   --nofile N --nproc N  open files; processes and threads
 *   --gpu                 the NVIDIA device files in view
 *   --env NAME=VALUE      the environment (repeat; default PATH alone)
 *   --status FILE         write how it ended: a word (exited, signaled, cpu,
 *                         seccomp, memory, wall, start), a tab, the code or
 *                         signal, a tab, CPU seconds, a tab, a sentence
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sandbox.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(void)
{
    fprintf(stderr, "usage: sandbox mode\n"
                    "       sandbox run [--ro PATH] [--rw PATH] [--cwd PATH] [--cpu S] "
                    "[--wall S] [--mem SIZE]\n"
                    "                   [--tmp SIZE] [--fsize SIZE] [--nofile N] [--nproc N] "
                    "[--gpu]\n"
                    "                   [--env NAME=VALUE] [--status FILE] -- PROGRAM "
                    "[ARGS...]\n");
    exit(125);
}

static size_t size_arg(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    double unit = *end == 'K' || *end == 'k' ? 1024.0 : *end == 'M' || *end == 'm' ? 1048576.0
                  : *end == 'G' || *end == 'g'                                    ? 1073741824.0
                                                                                   : 1.0;
    if (end == s || v < 0 || (unit != 1.0 && end[1] != '\0') || (unit == 1.0 && *end != '\0')) {
        fprintf(stderr, "sandbox: '%s' is not a size\n", s);
        usage();
    }
    return (size_t)(v * unit);
}

static double num_arg(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || v < 0) {
        fprintf(stderr, "sandbox: '%s' is not a number\n", s);
        usage();
    }
    return v;
}

/* PROGRAM as an absolute path: as given, or found in the sandbox's PATH
 * (what is in view there: /usr/bin, /bin, unless --env PATH=... says). */
static const char *resolve(const char *prog, const char *path, char *buf, size_t cap)
{
    if (strchr(prog, '/') != NULL)
        return realpath(prog, buf);
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", path);
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d != NULL;
         d = strtok_r(NULL, ":", &save)) {
        char cand[PATH_MAX];
        snprintf(cand, sizeof cand, "%s/%s", d, prog);
        if (access(cand, X_OK) == 0) {
            snprintf(buf, cap, "%s", cand);
            return buf;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "mode") == 0) {
        printf("%s\n", sb_mode_name(sb_mode()));
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "run") != 0)
        usage();
    sb_opts o = sb_defaults();
    if (fcntl(3, F_GETFD) >= 0)
        o.fds[3] = 3;
    static char *env[64];
    int nro = 0, nrw = 0, nenv = 0, i;
    const char *status_path = NULL;
    for (i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(opt, "--gpu") == 0) {
            o.gpu = true;
            continue;
        }
        if (val == NULL)
            usage();
        i++;
        if (strcmp(opt, "--ro") == 0 && nro < SB_MAX_PATHS - 1)
            o.ro[nro++] = val;
        else if (strcmp(opt, "--rw") == 0 && nrw < SB_MAX_PATHS - 1)
            o.rw[nrw++] = val;
        else if (strcmp(opt, "--cwd") == 0)
            o.cwd = val;
        else if (strcmp(opt, "--cpu") == 0)
            o.cpu_s = num_arg(val);
        else if (strcmp(opt, "--wall") == 0)
            o.wall_s = num_arg(val);
        else if (strcmp(opt, "--mem") == 0)
            o.mem_bytes = size_arg(val);
        else if (strcmp(opt, "--tmp") == 0)
            o.tmp_bytes = size_arg(val);
        else if (strcmp(opt, "--fsize") == 0)
            o.file_bytes = size_arg(val);
        else if (strcmp(opt, "--nofile") == 0)
            o.nofile = (long)num_arg(val);
        else if (strcmp(opt, "--nproc") == 0)
            o.nproc = (long)num_arg(val);
        else if (strcmp(opt, "--env") == 0 && nenv < 62 && strchr(val, '=') != NULL)
            env[nenv++] = (char *)val;
        else if (strcmp(opt, "--status") == 0)
            status_path = val;
        else
            usage();
    }
    if (i + 1 >= argc)
        usage();
    char **prog = argv + i + 1;
    char path[PATH_MAX];
    const char *sandbox_path = "/usr/bin:/bin";
    for (int k = 0; k < nenv; k++)
        if (strncmp(env[k], "PATH=", 5) == 0)
            sandbox_path = env[k] + 5;
    if (resolve(prog[0], sandbox_path, path, sizeof path) == NULL) {
        fprintf(stderr, "sandbox: %s: no such program\n", prog[0]);
        return 125;
    }
    prog[0] = path;
    if (nenv > 0) {
        bool has_path = false;
        for (int k = 0; k < nenv; k++)
            has_path |= strncmp(env[k], "PATH=", 5) == 0;
        if (!has_path)
            env[nenv++] = "PATH=/usr/bin:/bin";
        env[nenv] = NULL;
        o.env = env;
    }
    sb_proc p;
    sb_result r;
    char why[300];
    if (sb_spawn(&p, &o, prog) != 0) {
        r.how = SB_START;
        snprintf(why, sizeof why, "the sandbox could not start %s: %s", prog[0], sb_error());
    } else if (sb_wait(&p, &r) != 0) {
        r.how = SB_START;
        snprintf(why, sizeof why, "the sandbox lost %s: %s", prog[0], sb_error());
    } else {
        sb_describe(&r, &o, why, sizeof why);
    }
    static const char *words[] = { "exited", "signaled", "cpu", "seccomp", "memory",
                                   "wall", "killed", "start" };
    if (status_path != NULL) {
        FILE *f = fopen(status_path, "w");
        if (f != NULL) {
            fprintf(f, "%s\t%d\t%.2f\t%s\n", words[r.how],
                    r.how == SB_EXITED ? r.code : r.sig, r.cpu_s, why);
            fclose(f);
        }
    }
    if (r.how == SB_START)
        fprintf(stderr, "sandbox: %s\n", why);
    switch (r.how) {
    case SB_EXITED: return r.code;
    case SB_WALL: return 124;
    case SB_START: return 125;
    case SB_KILLED: return 128 + 9;
    default: return 128 + r.sig;
    }
}
