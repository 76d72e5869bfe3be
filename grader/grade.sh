#!/usr/bin/env bash
# grade.sh -- grade one submission.
#
#   grader/grade.sh TREE OUTDIR
#   grader/grade.sh --calibrate     only time the solution (see below)
#   grader/grade.sh --memory-budget the MB one grade's tests may hold at once
#   grader/grade.sh --sandbox-check the sandbox's mode here, if GRADE_SANDBOX
#                                   allows it (else why not, and exit 2)
#
# TREE is a student's copy of skeleton/.  Only its lesson files
# (src/NN_*.c and src/NN_*.cu) are taken; the API header and the framework
# (array.c, device.cu, internal.h, nd_cuda.h) come from the grader's own
# skeleton/, so edits to them (or to a Makefile) do not count.
#
# CUDA files run on the GPU when there is one (nvidia-smi -L finds it and
# nvcc is installed), otherwise on the CPU emulator of grader/emu/ (a .cu
# file is rewritten by cu2cpp.py and compiled by g++); CUDA=emu|gpu (or
# GRADE_CUDA) forces the choice, which the project's one CUDA recipe,
# cuda.mk, makes.  The choice is printed and reported.
#
# Every step that touches the submission runs in the sandbox
# (build/grader/sandbox, grader/sandbox.c): compiling a lesson file,
# linking, and each test's executor, each unprivileged, with only what it needs
# in view and limits of its own (a compile: 30 s of CPU, 3 GB of memory,
# files of at most 64 MB; a lesson file over 1 MB is refused before).  The sandbox's mode
# (namespaces, or a fallback) is printed and reported; GRADE_SANDBOX
# (strong, uid or any: the default here; grade-all asks for uid) is the
# weakest mode the grade may run in, and a weaker one stops it at once,
# saying what is missing.  A whole grade stops
# after GRADE_TIMEOUT seconds (default 900), with a results.json that
# says so.
#
# Each lesson file is compiled alone and checked (a .cu file as the
# emulator compiles it, and with a GPU also by nvcc):
#   - it is at most 1 MB and compiles (with the grader's flags, in the
#     sandbox, within its limits);
#   - it includes nothing from outside the submission and the API (a .cu
#     file also CUDA's runtime headers, and system headers);
# and its object, by grader/objcheck.py (one process, which reads the ELF
# file itself and prints the build note's sentence; python3
# grader/test_objcheck.py tests each rule on a crafted object):
#   - its object holds only sections and symbols of an allow-list: code,
#     data, read-only data, debug information, unwind tables; nothing that
#     runs code by itself (.preinit_array, .init_array, .ctors, .init,
#     .fini*, ifunc resolvers, ...) and no executable stack;
#   - it defines exactly the global symbols its skeleton defines (C++
#     template code that g++ emits as weak symbols aside, which may
#     replace nothing else the executors link);
#   - every symbol it uses comes from the API, the framework, libc, libm,
#     and for a .cu file libstdc++ and the CUDA runtime (the emulator's)
#     (not from Check, the test helpers or the grader);
#   - of the other lessons' functions it calls only those the course's own
#     version of the file calls, or of a lesson its executors carry whole
#     (grader/carries.tsv), and none of the framework's copies of whole
#     arrays.
# A lesson file that is missing or fails a check scores 0 for its lesson,
# and the report says why; the solution's version of the file stands in
# for it, so that the later lessons, which call its functions, are still
# graded on their own merits.
#
# Then, for each build (plain, and AddressSanitizer + UBSan), one EXECUTOR
# per lesson N (grader/executor.c: the program that holds submitted code
# while the grader tests it): the submission's lesson N file with the
# solution's version of every other lesson, so that a bug costs points in
# its own lesson only; and one of the submission's whole tree, for the
# integration section.  build/grader/verdict, which never loads submitted
# code, runs the hidden tests: for each test it starts an executor in the
# sandbox (locked down by its own seccomp filter before it reads a call),
# sends it the test's calls as data, takes back raw results and judges
# them; then grader/report writes OUTDIR/results.json, OUTDIR/junit.xml
# and the table.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "grade: $*" >&2; exit 2; }

# The memory the tests running at once may hold (verdict -B, from the
# solution's peaks): GRADE_MEMORY_MB (grade-all.sh gives each of the grades
# it runs at once its share), or 60% of what this grade may use,
# the smallest memory limit of its cgroups (a container's: Gradescope's
# 768 MB) or else what the machine has available (a build may run beside
# the tests).  A test larger than that runs alone.
memory_budget() {
    local mb path lim d f
    if [ -n "${GRADE_MEMORY_MB:-}" ]; then
        [[ $GRADE_MEMORY_MB =~ ^[1-9][0-9]*$ ]] || die "GRADE_MEMORY_MB must be a number of MB"
        echo "$GRADE_MEMORY_MB"
        return
    fi
    mb=$(awk '/^MemAvailable:/ { printf "%d", $2 / 1024 }' /proc/meminfo)
    # cgroup v2 ("0::PATH"), else v1's memory controller ("N:memory:PATH")
    path=$(awk -F: '$1 == "0" && $2 == "" { print $3 }' /proc/self/cgroup)
    if [ -n "$path" ] && [ -f /sys/fs/cgroup/cgroup.controllers ]; then
        d=/sys/fs/cgroup$path f=memory.max
    else
        d=/sys/fs/cgroup/memory$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
        f=memory.limit_in_bytes
    fi
    while [ -n "$d" ] && [ -d "$d" ]; do
        lim=$(cat "$d/$f" 2>/dev/null)
        [[ $lim =~ ^[0-9]+$ ]] && [ $((lim / 1048576)) -lt "$mb" ] && mb=$((lim / 1048576))
        [ "$d" = /sys/fs/cgroup ] || [ "$d" = /sys/fs/cgroup/memory ] && break
        d=$(dirname "$d")
    done
    echo $((mb * 6 / 10))
}
# Why this machine cannot give the sandbox mode GRADE_SANDBOX=$1 asks
# for ($2: the mode it gives), and what would.
sandbox_refusal() {
    local want=$1 got=$2 why=() v
    if [ -n "$sb_forced" ]; then
        why+=("SB_MODE=$sb_forced in the grader's environment chose it")
    elif ! command -v bwrap >/dev/null 2>&1; then
        why+=("bubblewrap is not installed (apt-get install bubblewrap)")
    else
        v=$(bwrap --version 2>/dev/null | awk '{ print $2 }')
        if [ -n "$v" ] && [ "$(printf '%s\n0.8.0\n' "$v" | sort -V | head -n 1)" != 0.8.0 ]; then
            why+=("bubblewrap is $v, older than the 0.8 the strong mode needs (--disable-userns; Ubuntu 22.04 has 0.6.1: install a newer one, e.g. from its backports or a build of bubblewrap's own release)")
        fi
        if [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null)" = 0 ]; then
            why+=("user namespaces are disabled (user.max_user_namespaces is 0)")
        fi
        if [ "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null)" = 0 ]; then
            why+=("unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone is 0)")
        fi
        if [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null)" = 1 ]; then
            why+=("AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1)")
        fi
        [ ${#why[@]} -gt 0 ] || why+=("bubblewrap could not make its namespaces here (in a container, its runtime may forbid them)")
    fi
    [ "$(id -u)" -eq 0 ] || why+=("the grader is not root (as root, the uid fallback would run each test as an unprivileged uid)")
    local IFS=';' asked="namespaces (bubblewrap)"
    [ "$want" = uid ] && asked="namespaces, or as root the uid fallback"
    echo "the sandbox here is '$got', and GRADE_SANDBOX=$want asks for $asked: ${why[*]}. In the limits-only mode a submission runs as this user and can read and change what this user can: a batch of other people's code (grade-all) refuses it. To get a sandbox, ask for user namespaces for unprivileged users with bubblewrap 0.8 or newer, or run the grader as root; to grade anyway, knowing this, set GRADE_SANDBOX=any (instructor guide, \"Grading on a Slurm cluster\")."
}

if [ "${1:-}" = --memory-budget ] && [ $# -eq 1 ]; then
    memory_budget
    exit 0
fi

# The whole grade's time limit: past it, everything the grade started is
# killed (timeout's process group; the sandboxes die with their parents),
# and results.json says why there is no score.
# (grade-all.sh, which make grade uses, holds the same limit from outside,
# in a PID namespace, and sets GRADE_LIMITED: this is for grade.sh run by
# hand.)
if [ -z "${GRADE_LIMITED:-}" ] && [ $# -eq 2 ]; then
    limit=${GRADE_TIMEOUT:-900}
    [[ $limit =~ ^[1-9][0-9]*$ ]] || die "GRADE_TIMEOUT=$limit: it must be a number of seconds"
    GRADE_LIMITED=1 timeout -k 10 "$limit" bash "$0" "$@" &
    graded=$!
    trap 'kill -TERM -- -$graded $graded 2>/dev/null' INT TERM
    wait $graded
    rc=$?
    [ $rc -gt 128 ] && kill -0 $graded 2>/dev/null && { wait $graded; rc=$?; }
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        # the tests that finished, and the rest as not run
        bash "$root/grader/partial_report.sh" "$2" "$limit" >&2
        echo "grade: stopped after $limit s, the time limit of a whole grade (GRADE_TIMEOUT): the score is incomplete" >&2
        exit 2
    fi
    exit $rc
fi

# The sandbox every step that touches the submission runs in.
SANDBOX="$root/build/grader/sandbox"
[ -x "$SANDBOX" ] || die "the grader is not built: run it through 'make grade'"

# As root, a block of 64 uids of this grade's own, held (a lock) while it
# runs: its compiles and links run as the first, each executor's tests as
# another (verdict -U), so that no other grade shares their count of
# processes and threads, and, without namespaces, no executor can read
# another.  GRADE_UID_BASE (default 2000000) and GRADE_UID_BLOCKS (256)
# place the blocks; the locks are in GRADE_UID_LOCKS (/run/lock/ndarray-grader).
first_uid=
sb_forced=${SB_MODE:-}   # (a mode the caller chose: grade-all, the self-tests)
if [ "$(id -u)" -eq 0 ] && [ "${SB_MODE:-}" != none ]; then
    locks=${GRADE_UID_LOCKS:-/run/lock/ndarray-grader}
    ubase=${GRADE_UID_BASE:-2000000} ublocks=${GRADE_UID_BLOCKS:-256}
    [[ $ubase =~ ^[1-9][0-9]*$ && $ublocks =~ ^[1-9][0-9]*$ ]] ||
        die "GRADE_UID_BASE and GRADE_UID_BLOCKS must be numbers"
    mkdir -p "$locks" || die "cannot make $locks (GRADE_UID_LOCKS)"
    for ((b = 0; b < ublocks; b++)); do
        exec {uid_lock}>"$locks/block-$b" || die "cannot open $locks/block-$b"
        flock -n "$uid_lock" && break
        exec {uid_lock}>&-
    done
    [ "$b" -lt "$ublocks" ] || die "all $ublocks blocks of uids are taken: too many grades at once (GRADE_UID_BLOCKS)"
    first_uid=$((ubase + 64 * b))
    export SB_UID=$first_uid
fi
mem_mb=$(memory_budget)
# uids_for PASS: the verdict's -U for its executors (pass 0, 1 or 2)
uids_for() { [ -z "$first_uid" ] || echo -U "$((first_uid + 1 + 20 * $1))"; }
sb_mode=$("$SANDBOX" mode) || die "the sandbox does not work here"
# found once: every step of this grade runs in the same mode
case $sb_mode in
    namespaces*) export SB_MODE=namespaces ;;
    uid*) export SB_MODE=uid ;;
    *) export SB_MODE=none ;;
esac
# GRADE_SANDBOX: the weakest mode a grade may run in: strong (namespaces
# alone), uid (namespaces or the uid fallback: what grade-all asks for,
# since a batch grades other people's code) or any (also limits only: a
# student's own work; a single grade's default, with a warning).
sandbox_policy=${GRADE_SANDBOX:-any}
case $sandbox_policy:$SB_MODE in
    strong:namespaces|uid:namespaces|uid:uid|any:*) ;;
    strong:*|uid:*) die "$(sandbox_refusal "$sandbox_policy" "$sb_mode")" ;;
    *) die "GRADE_SANDBOX=$sandbox_policy: it must be strong (namespaces only), uid (namespaces or, as root, the uid fallback) or any (also limits only, which protects nothing)" ;;
esac
if [ "${1:-}" = --sandbox-check ] && [ $# -eq 1 ]; then   # (grade-all, before a batch)
    echo "$sb_mode"
    exit 0
fi

# Where the CUDA lessons run, and how .cu files are built: the project's
# one CUDA recipe, cuda.mk, decides (CUDA=emu|gpu|auto as for make; the
# older GRADE_CUDA is still read).  It sets cuda_mode, nvcc, the nvcc
# flags of each build (nvcc_grade_flags, nvcc_opt, nvcc_san), cuda_libs
# and cuda_asan_options.
cuda_env=$(make -s --no-print-directory -C "$root" -f cuda.mk cuda-env \
    CUDA="${GRADE_CUDA:-${CUDA:-auto}}") || die "the CUDA recipe (cuda.mk) failed (see above)"
eval "$cuda_env"
# The compiler and the linker see no GPU: the GPU's architecture (gpu_arch,
# in nvcc_grade_flags) is asked once, by cuda.mk, out here; nvcc's
# -arch=native would ask inside the sandbox, where a failed query falls
# back silently to PTX that every test would JIT-compile.
if [ "$cuda_mode" = gpu ]; then
    gpu=$(nvidia-smi -L 2>/dev/null | sed -n '1{s/^GPU [0-9]*: //;s/ (UUID.*//;p}')
    gpu_sm=${gpu_arch:+sm_${gpu_arch// /, sm_}}
    echo "grade: CUDA lessons run on the GPU (${gpu:-none visible here}), built by nvcc for ${gpu_sm:-$(echo "${nvcc_grade_flags[*]}" | grep -oE 'sm_[0-9]+' | sort -u | paste -sd, -)}" >&2
else
    [ -s "$root/build/grader/emu-normal/emu.o" ] ||
        die "the emulator is not built: run the grader through 'make grade'"
    echo "grade: CUDA lessons run on the emulator (CPU; grader/emu)" >&2
fi
# nvcc's flags for each build of the tree (see build below)
nvcc_normal=("${nvcc_grade_flags[@]}" "${nvcc_opt[@]}")
nvcc_asan=("${nvcc_grade_flags[@]}" "${nvcc_san[@]}")

# The solution's CPU seconds per test, measured once on this machine for
# each build: the limits are 20x them, at least 2 s (5 s under the
# sanitizers).  Stale when a file they were taken from is newer (files:
# a folder unpacked from a package has the time of its unpacking).  CPU
# time, which a busy machine does not stretch: a correct submission is
# never stopped because other work shares the machine.
times="$root/build/grader/solution-cpu-$cuda_mode"
times_stale() {
    [ ! -s "$times-normal.tsv" ] || [ ! -s "$times-asan.tsv" ] ||
       [ -n "$(find "$root/grader/hidden" "$root/solution/src" "$root/tests/kit" "$root"/tests/test_0*.c \
            "$root/grader/verdict.c" "$root/grader/sandbox.c" "$root/grader/executor.c" "$root/grader/emu" \
            -type f -newer "$times-asan.tsv" 2>/dev/null | head -n 1)" ]
}
# Grades started together (grade-all, the self-tests) time the solution
# once: the first takes the lock and measures, into a folder of its own;
# the others wait, then find the times fresh.
ensure_times() {
    times_stale || return 0
    mkdir -p "$root/build/grader"
    (
        flock 8
        times_stale || exit 0
        echo "grade: timing the solution's tests once on this machine, to set limits" >&2
        out=$(mktemp -d "${TMPDIR:-/tmp}/grade-calibration.XXXXXX") || exit 1
        GRADE_LESSONS= GRADE_PHASES= GRADE_CALIBRATING=1 bash "$0" "$root/solution" "$out" || { rm -rf "$out"; exit 1; }
        for v in normal asan; do
            awk -F'\t' '$4 == "pass" { print $2 "\t" $5 "\t" $10 }' "$out/$v.tsv" >"$times-$v.tsv.tmp" &&
                mv "$times-$v.tsv.tmp" "$times-$v.tsv" || { rm -rf "$out"; exit 1; }
        done
        rm -rf "$out"
    ) 8>"$root/build/grader/calibration.lock" || die "could not time the solution"
}
if [ "${1:-}" = --calibrate ] && [ $# -eq 1 ]; then
    ensure_times
    exit 0
fi

[ $# -eq 2 ] || die "usage: grader/grade.sh TREE OUTDIR   (or: grader/grade.sh --calibrate)"
tree=$1 out=$2
[ -d "$tree/src" ] || die "$tree has no src/ folder: is it a copy of skeleton/?"
[ -x "$root/build/grader/report" ] && [ -x "$root/build/grader/verdict" ] &&
    [ -d "$root/build/grader/asan/exec" ] ||
    die "the grader is not built: run it through 'make grade'"

mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
rm -rf "$out/outputs" "$out/.pending" "$out"/*.tsv "$out"/*.tsv.done "$out/results.json" "$out/junit.xml"
mkdir -p "$out/outputs/normal" "$out/outputs/asan" "$out/outputs/integration"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/grade.XXXXXX") || die "no scratch folder"
# GRADE_KEEP=1 keeps the scratch builds (for the grader's authors)
[ -n "${GRADE_KEEP:-}" ] && echo "grade: scratch builds kept in $scratch" >&2 ||
    trap 'rm -rf "$scratch"' EXIT
# The sandboxed steps see folders of the scratch alone: the sandbox's uid
# may pass through it (to bind or reach them), not list it.
chmod 711 "$scratch"
# ... which it can only do if every folder above the scratch lets it pass
# (bubblewrap finds the folders it binds as that uid): a TMPDIR made by
# mktemp -d (mode 700) would fail every build of the grade.
if [ "$SB_MODE" != none ]; then
    d=$scratch
    while d=$(dirname "$d"); [ "$d" != / ]; do
        case $(stat -c %A "$d") in
        *[xt]) ;;
        *) die "the sandbox's uid cannot reach the scratch folder $scratch: $d is closed to other users (chmod o+x it, or set TMPDIR to another folder)" ;;
        esac
    done
fi
echo "grade: sandbox: $sb_mode" >&2
echo "$sb_mode" >"$out/sandbox-mode.txt"
case $sb_mode in
uid*)   # no namespaces: what uid 65534 cannot read stays out of reach
    if [ "$(id -u)" -eq 0 ]; then
        chmod o-rwx "$root" "$out" ||
            die "cannot make the grader's folder unreadable to the sandbox's uid"
        echo "grade: sandbox fallback: $root made unreadable to other users (chmod o-rwx)" >&2
    fi ;;
limits*) echo "grade: WARNING: no namespaces and not root: the tests run as you, with" \
              "limits and the seccomp filter alone" >&2 ;;
esac

# What the sandboxed steps use, copied out of the grader's tree (which a
# fallback sandbox cannot read): the emulator's headers and rewriter, the
# executor's own objects (no test, no reference: grader/executor.c and the
# kit's exec.c and wire.c).
# phase NAME: what follows is the grade's phase NAME; with GRADE_PHASES
# (grader/bench_grade.sh, make bench-grade) that command moves this shell,
# and so everything it then starts, into that phase's accounting.
phase() { [ -z "${GRADE_PHASES:-}" ] || $GRADE_PHASES "$1" "$BASHPID" || die "GRADE_PHASES failed"; }
phase setup
kit="$scratch/kit"
mkdir -p "$kit/emu"
cp -R "$root/grader/emu/include" "$root/grader/emu/cu2cpp.py" "$kit/emu/"
for v in normal asan; do
    mkdir -p "$kit/$v"
    find "$root/build/grader/$v/exec" -name '*.o' | sort | while read -r o; do
        cp "$o" "$kit/$v/$(echo "${o#"$root/build/grader/$v/exec/"}" | tr / _)"
    done
    if [ -s "$root/build/grader/emu-$v/emu.o" ]; then
        mkdir -p "$kit/emu-$v"
        cp "$root/build/grader/emu-$v/emu.o" "$kit/emu-$v/emu.o"
    fi
done

# in_sandbox STATUS [OPTIONS] -- CMD...: a step that touches the submission
# (sandbox_cli.c: the options; STATUS: how it ended).
in_sandbox() {
    local st=$1
    shift
    "$SANDBOX" run --status "$st" "$@"
}
# A compile of submitted code: limits no correct lesson file comes near.
# (--nproc counts every process and thread of the sandbox's uid on this
# machine, so the grades running at once share it: sized for many at once.)
COMPILE_LIMITS=(--cpu 30 --wall 300 --mem 3G --fsize 64M --tmp 256M --nproc 1024)
# The grader's own builds of accepted files (already compiled once within
# the limits above): the sanitizers' compiles are slower, and a busy
# machine must not fail them.
BUILD_LIMITS=(--cpu 300 --wall 900 --mem 4G --fsize 512M --tmp 1G --nproc 1024)
MAX_LESSON_BYTES=$((1024 * 1024))

# What a failed compile says: the compiler's diagnostics located in the
# submission's file (never a line of any other file), or how the sandbox
# stopped it.  NAME STATUS ERRFILE [COMPILER]
compile_failure() {
    local name=$1 st=$2 err=$3 how diag
    how=$(cut -f1 "$st" 2>/dev/null)
    case $how in
    cpu)  echo "src/$name: the compiler ran out of time (30 s of CPU): a preprocessor bomb, or a file far too large"; return ;;
    wall) echo "src/$name: the compiler took more than 300 s: a preprocessor bomb, or a file far too large"; return ;;
    memory|signaled)
          echo "src/$name: the compiler was stopped ($(cut -f4 "$st")): a preprocessor bomb, or a file far too large"; return ;;
    start) echo "src/$name: the sandbox could not run the compiler: $(cut -f4 "$st")"; return ;;
    esac
    # (grep -a: a compiler's message quotes the source, whose bytes may not
    # be text; report.c makes the notes valid text)
    if grep -aqE 'memory exhausted|out of memory' "$err"; then
        echo "src/$name: the compiler ran out of memory (3 GB): a preprocessor bomb, or a file far too large"
        return
    fi
    diag=$(grep -aE "^src/$name:[0-9]+(:[0-9]+)?: |Error: " "$err" |
           grep -am3 -iE 'error|cannot' | cut -c1-300 | tr '\n\t' '  ')
    echo "src/$name does not compile${4:+ with $4}: ${diag:-its compiler messages point outside the submission}"
}

CC=${CC:-cc}
CXX=${CXX:-g++}
STUDENT_FLAGS=(-std=c11 -g -Wall -Wextra -D_POSIX_C_SOURCE=200809L)
CU_FLAGS=(-std=c++17 -g -Wall -Wextra -fsanitize=alignment) # misaligned accesses: cuda.mk
# (-g1: the line tables and functions a sanitizer's report names, without
# the variables' debug information, which made the sanitizer build of a
# lesson 7 file take 28 s of CPU instead of 18)
SAN_FLAGS=(-O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
CHECK_LIBS=$(pkg-config --libs check)

# compile_cu SRC OBJ FLAGS...: a .cu file for the emulator (rewritten by
# cu2cpp.py, then g++), with the submission's src/ first for "..." headers.
# $SBX (a command prefix, or empty) runs both in the sandbox.
SBX=()
compile_cu() {
    local src=$1 obj=$2 cpp="${2%.o}.cpp"
    shift 2
    "${SBX[@]}" python3 "$kit/emu/cu2cpp.py" "$src" "$cpp" || return 1
    "${SBX[@]}" "$CXX" "${CU_FLAGS[@]}" "$@" -I"$kit/emu/include" -I"$base/include" \
        -iquote "$(dirname "$src")" -c "$cpp" -o "$obj"
}

# regs_object DIR NAME OUT [PREFIX...]: ptxas's registers per kernel of
# DIR/src/NAME (nvcc with cuda.mk's NVCC_REGS_FLAGS, run from DIR by
# PREFIX, then grader/emu/regs.py --c), as OUT: an object the executors
# link beside NAME's, so that the emulator refuses a launch whose
# registers x threads a GPU would refuse (emulator only, nvcc installed).
regs_object() {
    local dir=$1 name=$2 out=$3
    shift 3
    mkdir -p "$(dirname "$out")" || return 1
    (cd "$dir" && "$@" "$nvcc" "${nvcc_regs_flags[@]}" -I"$base/include" "src/$name" \
        -o "$name.cubin") >"$out.log" 2>&1 &&
        python3 "$root/grader/emu/regs.py" --c "$out.log" >"$out.c" && "$CC" -c "$out.c" -o "$out"
}
regs_wanted() { [ "$cuda_mode" = emu ] && [ -n "$nvcc" ] && [[ $1 == *.cu ]]; }
# regs_of OBJ: the registers object linked beside the lesson object OBJ,
# if it has one (the course's: made with its objects; a submission's: by
# its check)
regs_of() {
    local o=$1 r
    [[ $o == *.cu.o ]] || return 1
    case $o in
    "$kit"/course-*/*) r="$kit/course-normal/regs/${o#"$kit"/course-*/}" ;;
    *) r="$scratch/prebuilt/regs/$(basename "$o")" ;;
    esac
    [ -s "$r" ] && echo "$r"
}

# The tree that gets built: the grader's skeleton, then accepted lesson files.
base="$scratch/tree"
mkdir -p "$base"
cp -R "$root/skeleton/include" "$root/skeleton/src" "$base/"
notes="$out/build-notes.tsv"
: >"$notes"
note() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$notes"; }

# Global symbols an object defines.
defined() { nm -g --defined-only "$1" | awk '{print $3}' | sort -u; }

# What lesson code may use (grader/objcheck.py's --allowed): the
# framework's and API's symbols, libc and libm; .cu files also libstdc++,
# libgcc and the CUDA runtime (the emulator's own symbols).
"$CC" "${STUDENT_FLAGS[@]}" -O2 -I"$base/include" -c "$base/src/array.c" -o "$scratch/array.o"
compile_cu "$base/src/device.cu" "$scratch/device.o" -O2 ||
    die "the framework's device.cu does not build for the emulator"
mkdir -p "$scratch/prebuilt"
cp "$scratch/array.o" "$scratch/prebuilt/array.c.o"
[ "$cuda_mode" = emu ] && cp "$scratch/device.o" "$scratch/prebuilt/device.cu.o"
libsyms() {
    for lib in "$@"; do
        path=$("$CC" -print-file-name="$lib")
        nm -D --defined-only "$path" 2>/dev/null | awk '{print $3}' | sed 's/@.*//'
    done
}
{
    defined "$scratch/array.o"
    defined "$scratch/device.o"
    grep -ohE '\bnd_[a-z0-9_]+\b' "$base/include/nd.h"
    # the framework's internal functions, lesson 6's nd_cuda_* among them
    grep -ohE '\bnd_[a-z0-9_]+\b' "$base/src/"*.h
    libsyms libc.so.6 libm.so.6
    # named by the compiler and the assembler themselves (gas names the
    # GOT, which the linker makes, beside a thread-local's relocations)
    echo __stack_chk_fail
    echo _GLOBAL_OFFSET_TABLE_
} | sort -u >"$scratch/allowed-uses"
{
    cat "$scratch/allowed-uses"
    libsyms libstdc++.so.6 libgcc_s.so.1
    # the emulator's runtime, but not its counters: the profile API
    # (ndemu_profile.h), the sampled launches' switch and the
    # instrumentation's callbacks, which only the grader's code and the
    # instrumented build may call
    [ -s "$kit/emu-normal/emu.o" ] && defined "$kit/emu-normal/emu.o" |
        grep -vE '^(__tsan_|ndemu_(profile|launch|model|gpu|sample)_?)'
    echo __gxx_personality_v0
} | sort -u >"$scratch/allowed-uses-cu"
# What a lesson file's weak symbols must not replace (objcheck.py's
# --taken): anything else linked.
{
    defined "$scratch/array.o"
    defined "$scratch/device.o"
    [ -s "$kit/emu-normal/emu.o" ] && defined "$kit/emu-normal/emu.o"
    find "$kit/normal" -name '*.o' -exec nm -g --defined-only {} + |
        awk 'NF == 3 {print $3}'
    libsyms libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1
} | sort -u >"$scratch/taken"

# once_per_machine NAME KITNAME MAKER [ARGS...]: objects of the grader's
# own (the solution's lesson files, the skeleton's), built outside the
# sandbox into build/grader/NAME by `MAKER ARGS... DIR`, once per machine:
# again only when a file they are made from is newer (lesson files,
# headers, the emulator's, this script, the CUDA recipe).  Grades started
# together build them once, under a lock.  Then copied into the sandbox's
# view, $kit/KITNAME.
once_per_machine() {
    local dir="$root/build/grader/$1" kitname=$2
    shift 2
    mkdir -p "$(dirname "$dir")" || return 1
    (
        flock 9
        if [ ! -e "$dir/.done" ] || [ -n "$(find "$root/solution/src" "$root/skeleton/src" \
                "$root/skeleton/include" "$root/grader/emu/include" "$root/grader/emu/cu2cpp.py" \
                "$root/grader/grade.sh" "$root/grader/carries.tsv" "$root/grader/skelgen.py" \
                "$root/cuda.mk" -type f -newer "$dir/.done" | head -n 1)" ]; then
            rm -rf "$dir" && mkdir -p "$dir" && "$@" "$dir" && touch "$dir/.done"
        fi
    ) 9>"$dir.lock" || return 1
    rm -rf "${kit:?}/$kitname" && cp -R "$dir" "$kit/$kitname"
}


check_lesson() {   # FILE: 0 if the submission's version is accepted
    local f=$1 name lesson cand cu=false
    name=$(basename "$f")
    lesson=$((10#${name%%_*}))
    cand="$tree/src/$name"
    case $name in *.cu) cu=true ;; esac
    if [ ! -e "$cand" ]; then
        note "$lesson" missing "src/$name is missing"
        return 1
    fi
    if [ -L "$cand" ] || [ ! -f "$cand" ]; then
        note "$lesson" rejected "src/$name is not a plain file"
        return 1
    fi
    local size
    size=$(stat -c %s "$cand")
    if [ "$size" -gt "$MAX_LESSON_BYTES" ]; then
        note "$lesson" rejected "src/$name is $(awk -v b="$size" 'BEGIN { printf "%.1f MB", b / 1048576 }'); a lesson file may be at most 1 MB"
        return 1
    fi
    local cdir="$scratch/cand-$name"
    rm -rf "$cdir" && mkdir -p "$cdir/src"
    cp "$cand" "$cdir/src/$name"
    cp "$base/src/"*.h "$cdir/src/"
    local obj="$name.o" err="$cdir.err" st="$cdir.status" deps
    # Compiled in the sandbox, in the candidate's folder, by relative
    # paths: the messages name src/NAME, and nothing of the grader's is in
    # view but the API's headers (and the emulator's).
    SBX=(in_sandbox "$st" "${COMPILE_LIMITS[@]}" --rw "$cdir" --cwd "$cdir"
         --ro "$base/include" --ro "$kit/emu" --)
    if $cu; then
        if ! (cd "$cdir" && compile_cu "src/$name" "$obj" -O2 -MMD -MF "$name.d") 2>"$err"; then
            SBX=()
            note "$lesson" "compile error" "$(compile_failure "$name" "$st" "$err")"
            return 1
        fi
    else
        if ! "${SBX[@]}" "$CC" "${STUDENT_FLAGS[@]}" -O2 -I"$base/include" -c "src/$name" \
                -o "$obj" -MMD -MF "$name.d" 2>"$err"; then
            SBX=()
            note "$lesson" "compile error" "$(compile_failure "$name" "$st" "$err")"
            return 1
        fi
    fi
    SBX=()
    obj="$cdir/$obj"
    deps=$(cat "$cdir/$name.d" 2>/dev/null)
    # Headers: only the API and the framework's (no reaching into the
    # grader); the emulator's CUDA headers for a .cu file.
    local bad
    bad=$(echo "$deps" | tr ' \\' '\n\n' | grep -v -e ':$' -e '^$' |
          grep -vxF -e "src/$name" -e "$name.cpp" -e "$name.o" |
          grep -vE "^(src/|$base/include/|$kit/emu/include/)" || true)
    if [ -n "$bad" ]; then
        note "$lesson" rejected "src/$name includes files from outside the submission: $(echo $bad)"
        return 1
    fi
    # The object: nothing in it may run before main (or after it), it
    # defines what its skeleton does, and it uses only what it may
    # (grader/objcheck.py says why not, in the note's words).
    local why rc allowed="$scratch/allowed-uses"
    $cu && allowed+=-cu
    why=$(python3 "$root/grader/objcheck.py" --course "$kit/course-normal" \
              --carries "$root/grader/carries.tsv" --allowed "$allowed" --taken "$scratch/taken" \
              "$obj" "$name")
    rc=$?
    if [ $rc -eq 1 ] && [ -n "$why" ]; then
        note "$lesson" rejected "$why"
        return 1
    fi
    [ $rc -eq 0 ] || { echo "grade: grader/objcheck.py failed on src/$name (above)" >&2; return 2; }
    if regs_wanted "$name" && ! regs_object "$cdir" "$name" "$scratch/prebuilt/regs/$name.o" \
            in_sandbox "$st" "${COMPILE_LIMITS[@]}" --rw "$cdir" --cwd "$cdir" --ro "$base/include" --; then
        note "$lesson" warnings "nvcc cannot compile the kernels of src/$name, so the emulator cannot refuse a launch that needs more registers than a GPU has: $(grep -am1 -E 'error|rror:' "$scratch/prebuilt/regs/$name.o.log" | cut -c1-300)"
    fi
    # With a GPU, the file must also build with nvcc (CUDA-only errors).
    if $cu && [ "$cuda_mode" = gpu ] && ! in_sandbox "$st" "${COMPILE_LIMITS[@]}" \
            --rw "$cdir" --cwd "$cdir" --ro "$base/include" -- \
            "$nvcc" "${nvcc_normal[@]}" -I"$base/include" -c "src/$name" -o "$name.gpu.o" 2>"$err"; then
        note "$lesson" "compile error" "$(compile_failure "$name" "$st" "$err" nvcc)"
        return 1
    fi
    # the plain build reuses this object (same compiler, flags and source)
    mkdir -p "$scratch/prebuilt"
    if ! $cu || [ "$cuda_mode" = emu ]; then cp "$obj" "$scratch/prebuilt/$name.o"
    else cp "$cdir/$name.gpu.o" "$scratch/prebuilt/$name.o"; fi
    if grep -aqiE 'warning' "$err"; then
        note "$lesson" warnings "src/$name compiles with warnings: $(grep -aE "^src/$name:[0-9]+" "$err" | grep -am2 -i warning | cut -c1-300 | tr '\n\t' '  ')"
    fi
    return 0
}

# compile VARIANT SRC OBJ FLAGS...: one file of a tree, as the grader
# builds it for that build (a .cu file by nvcc with the CUDA recipe's
# flags of the build, or for the emulator with FLAGS).  SRC is relative to
# the tree's folder, the working directory; $SBX runs it in the sandbox.
compile() {
    local -n nvcc_variant="nvcc_$1"
    local src=$2 obj=$3
    shift 3
    case $src in
    *.c) "${SBX[@]}" "$CC" "${STUDENT_FLAGS[@]}" "$@" -I"$base/include" -c "$src" -o "$obj" ;;
    *)  if [ "$cuda_mode" = gpu ]; then
            "${SBX[@]}" "$nvcc" "${nvcc_variant[@]}" -I"$base/include" -c "$src" -o "$obj"
        else
            compile_cu "$src" "$obj" "$@"
        fi ;;
    esac
}

# The course's own lesson files that stand beside a submission's
# (grader/carries.tsv), compiled once per machine and build, the .cu
# files of PATTERN (*: all):
#   sol/NAME.o      the solution's file (the integration section's stand-in
#                   for a file that was not accepted)
#   skel/NAME.o     the skeleton's
#   part/N/NAME.o   lesson N's version: the skeleton's with the solution's
#                   regions carries.tsv lists for N
course_maker() {   # VARIANT PATTERN FLAGS... DIR
    local v=$1 pattern=$2 dir=${*: -1} f name n keep
    local flags=("${@:3:$#-3}")
    mkdir -p "$dir/tree" || return 1
    cp -R "$root/skeleton/include" "$dir/tree/" || return 1
    # one_object KIND SRC: compile SRC (a lesson file) into KIND/NAME.o, as
    # src/NAME (a submission's file is compiled by that name: its
    # messages, __FILE__ and line tables are the same in either object)
    one_object() {
        local kind=$1 src=$2 name
        name=$(basename "$src")
        mkdir -p "$dir/$kind-src/src" "$dir/$kind" && cp "$root/skeleton/src/"*.h "$dir/$kind-src/src/" &&
            { [ "$src" = "$dir/$kind-src/src/$name" ] || cp "$src" "$dir/$kind-src/src/$name"; } ||
            return 1
        if [ "$v" = profile ]; then
            (cd "$dir/$kind-src" && base="$dir/tree" compile_cu "src/$name" "$dir/$kind/$name.o" \
                "${flags[@]}")
        else
            (cd "$dir/$kind-src" && base="$dir/tree" compile "$v" "src/$name" "$dir/$kind/$name.o" \
                "${flags[@]}")
        fi
    }
    for f in "$root/solution/src/"[0-9][0-9]_$pattern; do
        name=$(basename "$f")
        one_object sol "$f" && one_object skel "$root/skeleton/src/$name" || return 1
        if [ "$v" = normal ] && regs_wanted "$name"; then
            base="$dir/tree" regs_object "$dir/sol-src" "$name" "$dir/regs/sol/$name.o" || return 1
        fi
        while IFS=$'\t' read -r n keep; do
            [ "$keep" = '*' ] && continue
            mkdir -p "$dir/part/$n-src/src" &&
                python3 "$root/grader/skelgen.py" --partial "$f" "$dir/part/$n-src/src/$name" $keep &&
                one_object "part/$n" "$dir/part/$n-src/src/$name" || return 1
        done < <(carries_of "$name")
    done
}
# carries_of NAME: "N<TAB>regions" for each lesson whose executor carries
# some of the solution's file NAME
carries_of() {
    awk -F'\t' -v f="$1" '!/^#/ && NF >= 3 && $2 == f { print $1 "\t" $3 }' "$root/grader/carries.tsv"
}
# carried N NAME VARIANT: the object of lesson file NAME in lesson N's
# executors of that build
carried() {
    local keep v=$3
    [ "$v" = profile ] && [[ $2 != *.cu ]] && v=normal
    keep=$(awk -F'\t' -v n="$1" -v f="$2" '!/^#/ && $1 == n && $2 == f { print $3 }' \
           "$root/grader/carries.tsv")
    case $keep in
    '') echo "$kit/course-$v/skel/$2.o" ;;
    '*') echo "$kit/course-$v/sol/$2.o" ;;
    *) echo "$kit/course-$v/part/$1/$2.o" ;;
    esac
}
course_objs() {   # VARIANT FLAGS...
    once_per_machine "course-$cuda_mode/$1" "course-$1" course_maker "$1" '*.c*' "${@:2}" \
        2>>"$scratch/solution-build.log"
}

# GRADE_LESSONS="3 5" grades those lessons only: the other files are not
# even looked at (the solution's stand in), and there is no integration run.
only=" ${GRADE_LESSONS:-} "
# (the course's own objects of the plain build: the skeleton's give the
# symbols each lesson file must define, the solution's those it may call
# of the other lessons: grader/objcheck.py)
course_objs normal -O2 || die "the course's own lesson files do not build (see $scratch/solution-build.log)"
# The lesson files are checked two at a time (they are compiles), each
# check's notes apart, gathered in lesson order.
phase check
checks=()
# A lesson file the same, byte for byte, as the course's own version of it
# (the solution's, or the skeleton's: a lesson not begun) is graded as
# that file: the course's objects of each build stand for it (compiled
# once per machine from the same source, as src/NAME, with the same
# compiler and flags, and checked by make check), and nothing is compiled
# again.  course_copy[NAME]: sol or skel.
declare -A course_copy=()
for f in "$base/src/"[0-9][0-9]_*.c "$base/src/"[0-9][0-9]_*.cu; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    if [ -n "${GRADE_LESSONS:-}" ] && [[ $only != *" $((10#${name%%_*})) "* ]]; then
        cp "$root/solution/src/$name" "$f"
        continue
    fi
    cand="$tree/src/$name"
    if [ -f "$cand" ] && [ ! -L "$cand" ]; then
        if cmp -s "$cand" "$root/solution/src/$name"; then course_copy[$name]=sol
        elif cmp -s "$cand" "$root/skeleton/src/$name"; then course_copy[$name]=skel; fi
        [ -n "${course_copy[$name]:-}" ] && { cp "$cand" "$f"; continue; }
    fi
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
    (notes="$scratch/notes-$name"; check_lesson "$f"; echo $? >"$scratch/check-$name") &
    checks+=("$f")
done
wait
rejected=() theirs=" "   # the lesson files taken from the submission
for name in "${!course_copy[@]}"; do theirs+="$name "; done
for f in "${checks[@]}"; do
    name=$(basename "$f")
    [ -f "$scratch/notes-$name" ] && cat "$scratch/notes-$name" >>"$notes"
    case $(cat "$scratch/check-$name" 2>/dev/null) in
    0)  cp "$scratch/cand-$name/src/$name" "$f"
        theirs+="$name " ;;
    1)  rejected+=(-R "$((10#${name%%_*}))")
        [ -f "$root/solution/src/$name" ] &&
            cp "$root/solution/src/$name" "$f" ;;  # stands in for the other lessons' tests
    *)  die "checking src/$name failed" ;;
    esac
done
# Every test of each run, listed as not run before any runs (verdict -L):
# the report of a grade that its time limit stops (partial_report.sh).
mkdir -p "$out/.pending" && printf '%s' "$tree" >"$out/.pending/tree" ||
    die "cannot write $out/.pending"
listed=("$root/build/grader/verdict" -L -x "$scratch/normal" -d "$out/.pending" "${rejected[@]}")
for l in ${GRADE_LESSONS:-}; do listed+=(-l "$l"); done
"${listed[@]}" -P -o "$out/.pending/normal.tsv" && "${listed[@]}" -a -o "$out/.pending/asan.tsv" &&
    { [ -n "${GRADE_LESSONS:-}" ] || "${listed[@]}" -i -o "$out/.pending/integration.tsv"; } ||
    die "the verdict could not list the tests"


build() {   # VARIANT FLAGS...: the executors of one build, in $scratch/VARIANT
    local v=$1 dir="$scratch/$1" f o name l
    shift
    mkdir -p "$dir/obj"
    course_objs "$v" "$@" || return 1
    # In the sandbox, from the tree's folder (messages name src/NAME).  The
    # sanitizer build sees the lesson files as the checked plain build did
    # (#ifdef __SANITIZE_ADDRESS__ cannot add code the check never saw).
    local same=()
    [ "$v" = asan ] && same=(-U__SANITIZE_ADDRESS__)
    SBX=(in_sandbox "$dir/compile.status" "${BUILD_LIMITS[@]}" --ro "$base"
         --ro "$kit/emu" --rw "$dir" --cwd "$base" --)
    local framework=() mine=()
    for f in "$base/src/"*.c "$base/src/"*.cu; do
        [ -e "$f" ] || continue
        name=$(basename "$f")
        o="$dir/obj/$name.o"
        if [[ $name == [0-9][0-9]_* && $theirs != *" $name "* ]]; then
            o="$kit/course-$v/sol/$name.o"   # a stand-in
        elif [ -n "${course_copy[$name]:-}" ]; then
            o="$kit/course-$v/${course_copy[$name]}/$name.o"   # the course's own file
        elif [ "$v" = normal ] && [ -s "$scratch/prebuilt/$name.o" ]; then
            o="$scratch/prebuilt/$name.o"
        elif ! (cd "$base" && compile "$v" "src/$name" "$o" "$@" "${same[@]}") 2>>"$dir/build.log"; then
            echo "grade: compiling src/$name: $(cut -f4 "$dir/compile.status" 2>/dev/null)" >>"$dir/build.log"
            SBX=()
            return 1
        fi
        case $name in [0-9][0-9]_*) mine+=("$o") ;; *) framework+=("$o") ;; esac
    done
    SBX=()
    local rest=("$kit/$v/grader_executor.o" "$kit/$v/grader_sandbox.o" "$kit/$v/tests_kit_wire.o"
                "$kit/$v/tests_kit_exec.o" "$kit/$v/tests_kit_stack.o" "${framework[@]}")
    [ "$cuda_mode" = emu ] && rest+=("$kit/emu-$v/emu.o")
    # (the plain build's executors carry no symbol table: nothing reads
    # it there; the sanitizers' reports read theirs for file:line)
    local strip=()
    [ "$v" = normal ] && strip=(-s)
    link() {   # OUT OBJS...: one executor, linked in the sandbox
        local to=$1 x regs=()
        shift
        for x in "$@"; do x=$(regs_of "$x") && regs+=("$x"); done
        in_sandbox "$dir/link.status" "${BUILD_LIMITS[@]}" --ro "$kit" \
            --ro "$scratch/prebuilt" --rw "$dir" --cwd "$dir" -- \
            "$CXX" "${SAN_LINK[@]}" "$@" "${regs[@]}" "${rest[@]}" "${cuda_libs[@]}" -lm -o "$to" "${strip[@]}" \
            2>>"$dir/build.log" || {
            echo "grade: linking $(basename "$to"): $(cut -f4 "$dir/link.status" 2>/dev/null)" \
                >>"$dir/build.log"
            return 1
        }
    }
    # lesson N: the submission's file N, and what carries.tsv gives lesson
    # N of the course's other files
    for o in "${mine[@]}"; do
        name=$(basename "$o" .o)
        l=$((10#${name%%_*}))
        local objs=("$o")
        for f in "$kit/course-$v/sol/"[0-9][0-9]_*.o; do
            f=$(basename "$f" .o)
            [ "$f" = "$name" ] || objs+=("$(carried "$l" "$f" "$v")")
        done
        link "$dir/exec-$l" "${objs[@]}" || return 1
    done
    link "$dir/exec-all" "${mine[@]}"
}

SAN_LINK=()
phase build-plain
if ! build normal -O2; then
    cat "$scratch/normal/build.log" "$scratch/solution-build.log" >&2 2>/dev/null
    die "the grader's own build failed (see above)"
fi
# The performance tests' executors (K_PROFILED tests: lessons 6 and 7):
# exec-6-profile and exec-7-profile, the plain build's executors with
# every .cu file built for the emulator with its instrumentation
# (grader/emu/README.md, "Profiling"), whether a GPU runs the other tests
# or not: the counts are exact and the same on every machine.  Only these
# executors are instrumented; every other test runs on the plain ones.
# The flags are profile.mk's PROF_INST (keep them the same).
PROF_FLAGS=(-gdwarf-4 -O2 -fsanitize=thread --param=tsan-instrument-func-entry-exit=0
            -fno-tree-sra -DNDEMU_INSTRUMENTED)
profiled_solution() {   # the solution's .cu files, instrumented, once per machine
    once_per_machine course-profile course-profile course_maker profile '*.cu' \
        "${PROF_FLAGS[@]}" 2>>"$scratch/solution-build.log"
}
build_profiled() {
    local dir="$scratch/normal" f name o l objs
    [ -s "$kit/emu-normal/emu.o" ] || { echo "grade: the emulator is not built" >>"$dir/build.log"; return 1; }
    profiled_solution || return 1
    cp "$scratch/device.o" "$scratch/prebuilt/device.emu.o"
    cp "$scratch/array.o" "$scratch/prebuilt/array.emu.o"
    mkdir -p "$dir/profile"
    # objs[name]: what each lesson file is in these executors; the
    # submission's .cu files compiled again, instrumented, in the sandbox
    local -A theirs_obj=()
    SBX=(in_sandbox "$dir/compile.status" "${BUILD_LIMITS[@]}" --ro "$base" --ro "$kit/emu"
         --rw "$dir" --cwd "$base" --)
    for f in "$base/src/"[0-9][0-9]_*.c "$base/src/"[0-9][0-9]_*.cu; do
        [ -e "$f" ] || continue
        name=$(basename "$f")
        [[ $theirs == *" $name "* ]] || continue
        case ${course_copy[$name]:+course}$name in
        course*.cu) o="$kit/course-profile/${course_copy[$name]}/$name.o" ;;
        course*) o="$kit/course-normal/${course_copy[$name]}/$name.o" ;;
        *.cu) o="$dir/profile/$name.o"
              if ! (cd "$base" && compile_cu "src/$name" "$o" "${PROF_FLAGS[@]}") 2>>"$dir/build.log"; then
                  echo "grade: compiling src/$name (instrumented): $(cut -f4 "$dir/compile.status" 2>/dev/null)" >>"$dir/build.log"
                  SBX=()
                  return 1
              fi ;;
        *) o="$scratch/prebuilt/$name.o"
           [ -s "$o" ] || o="$dir/obj/$name.o" ;;
        esac
        theirs_obj[$name]=$o
    done
    SBX=()
    local rest=("$kit/normal/grader_executor.o" "$kit/normal/grader_sandbox.o"
                "$kit/normal/tests_kit_wire.o" "$kit/normal/tests_kit_exec.o"
                "$kit/normal/tests_kit_stack.o" "$scratch/prebuilt/array.emu.o"
                "$scratch/prebuilt/device.emu.o" "$kit/emu-normal/emu.o")
    # one executor: lesson L's file from the submission, what carries.tsv
    # gives lesson L of the course's others
    for l in 6 7; do   # (the integration section has no performance test)
        [ -n "${GRADE_LESSONS:-}" ] && [[ $only != *" $l "* ]] && continue
        objs=()
        for f in "$base/src/"[0-9][0-9]_*.c "$base/src/"[0-9][0-9]_*.cu; do
            [ -e "$f" ] || continue
            name=$(basename "$f")
            if [ -n "${theirs_obj[$name]:-}" ] && [ "$((10#${name%%_*}))" = "$l" ]; then
                objs+=("${theirs_obj[$name]}")
            else
                objs+=("$(carried "$l" "$name" profile)")
            fi
        done
        for f in "${objs[@]}"; do f=$(regs_of "$f") && objs+=("$f"); done
        in_sandbox "$dir/link.status" "${BUILD_LIMITS[@]}" --ro "$kit" --ro "$scratch/prebuilt" \
            --rw "$dir" --cwd "$dir" -- "$CXX" "${objs[@]}" "${rest[@]}" -lm \
            -o "$dir/exec-$l-profile" 2>>"$dir/build.log" || {
            echo "grade: linking exec-$l-profile: $(cut -f4 "$dir/link.status" 2>/dev/null)" >>"$dir/build.log"
            return 1
        }
    done
}
phase build-profile
if ! build_profiled; then
    cat "$scratch/normal/build.log" "$scratch/solution-build.log" >&2 2>/dev/null
    die "the grader's own instrumented build (the performance tests) failed (see above)"
fi
lessons=()
for l in ${GRADE_LESSONS:-}; do lessons+=(-l "$l"); done
# The verdict: the grader's own program, outside the sandbox; it starts
# each test's executor in it, in the mode SB_MODE names (-g: a GPU in view).
verdict=("$root/build/grader/verdict" "${lessons[@]}" "${rejected[@]}" -B "$mem_mb")
[ "$cuda_mode" = gpu ] && verdict+=(-g)
# What students read besides the grader's words (weights.tsv): -M quotes
# the submission's error messages in failure messages (`messages quote`;
# hidden by default); -O, when the report quotes what a failing test
# printed (`output` above 0), runs the call the failure reports again,
# alone, so that the output quoted is that call's and no other's.
weights=${GRADE_WEIGHTS:-$root/grader/weights.tsv}
[ -f "$weights" ] || die "GRADE_WEIGHTS=$weights: no such file"
messages=$(awk -F'\t' '$1 == "messages" { m = $2 } END { print m }' "$weights")
quoted=$(awk -F'\t' '$1 == "output" { n = $2 } END { print n + 0 }' "$weights")
case ${messages:-hide} in
    quote) verdict+=(-M) ;;
    hide) ;;
    *) die "weights.tsv: the messages line must say quote or hide, not '$messages'" ;;
esac
[ "$quoted" -gt 0 ] && verdict+=(-O)
# (cuda_asan_options: what ASan must be told on this CUDA device.)  Each
# test may add 2 GiB of address space to what its executor started with
# (verdict.c; the sanitizer's shadow is reserved before): past it malloc
# returns NULL, as in the plain build.  Freed memory waits in a quarantine
# of 32 MB, not ASan's 256 (a use after free is still seen while the freed
# block is among the last 32 MB freed): a test held 830 MB with 256, 277
# with 32.
SAN_ENV=(ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:abort_on_error=0:quarantine_size_mb=32${cuda_asan_options:+:$cuda_asan_options}
         UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)

if [ -n "${GRADE_BUILD_ONLY:-}" ]; then
    if ! (SAN_LINK=("${SAN_FLAGS[@]}"); build asan "${SAN_FLAGS[@]}"); then
        cat "$scratch/asan/build.log" >&2
        die "the grader's own sanitizer build failed (see above)"
    fi
    for v in normal asan; do
        rm -rf "$out/exec-$v" && mkdir -p "$out/exec-$v" &&
            cp "$scratch/$v/"exec-* "$out/exec-$v/" || die "cannot copy the executors to $out"
    done
    echo "grade: built the executors of both builds in $out/exec-normal and $out/exec-asan" \
         "($cuda_mode); no test ran"
    exit 0
fi

# Calibration: the solution, generous limits, both builds.
if [ -n "${GRADE_CALIBRATING:-}" ]; then
    SAN_LINK=("${SAN_FLAGS[@]}")
    build asan "${SAN_FLAGS[@]}" || { cat "$scratch/asan/build.log" >&2; die "calibration build failed"; }
    "${verdict[@]}" $(uids_for 0) -o "$out/normal.tsv" -d "$out/outputs/normal" \
        -x "$scratch/normal" -s 60 >/dev/null || die "the calibration run failed"
    env "${SAN_ENV[@]}" "${verdict[@]}" $(uids_for 2) -a -o "$out/asan.tsv" \
        -d "$out/outputs/asan" -x "$scratch/asan" -s 120 >/dev/null || die "the calibration run failed"
    exit 0
fi
ensure_times
# The sanitizer build (slow to compile) goes on while the plain one runs,
# where the memory allows both: compiling a CUDA lesson under the
# sanitizers holds about 400 MB, the plain tests up to 600.  Under a
# smaller budget (Gradescope's 768 MB container: the kernel killed the
# compiler when they ran together) it goes first, alone.
build_asan() { (phase build-asan; SAN_LINK=("${SAN_FLAGS[@]}"); build asan "${SAN_FLAGS[@]}"); }
if [ "$mem_mb" -ge 1000 ]; then
    build_asan &
    asan_build=$!
else
    build_asan
    asan_built=$?
fi
# Each test runs once per section: the lessons' tests under the
# sanitizers, but for the large and performance tests (K_PLAIN), which
# run here, in the plain build (-P); the integration section in the plain
# build, without those (verdict.c).
phase tests-plain
"${verdict[@]}" $(uids_for 0) -P -o "$out/normal.tsv" -d "$out/outputs/normal" -x "$scratch/normal" \
    -T "$times-normal.tsv" -m 20 -s 2 -c "$out/cuda-device.txt" >/dev/null ||
    die "the verdict runner failed"
if [ -z "${GRADE_LESSONS:-}" ]; then
    phase tests-integration
    "${verdict[@]}" $(uids_for 1) -i -o "$out/integration.tsv" -d "$out/outputs/integration" \
        -x "$scratch/normal" -T "$times-normal.tsv" -m 20 -s 2 >/dev/null ||
        die "the verdict runner failed (integration)"
fi
if [ -n "${asan_build:-}" ]; then
    wait "$asan_build"
    asan_built=$?
fi
if [ "$asan_built" -ne 0 ]; then
    cat "$scratch/asan/build.log" >&2
    die "the grader's own sanitizer build failed (see above)"
fi
phase tests-asan
env "${SAN_ENV[@]}" "${verdict[@]}" $(uids_for 2) -a -o "$out/asan.tsv" -d "$out/outputs/asan" \
    -x "$scratch/asan" -T "$times-asan.tsv" -m 20 -s 5 -k "$out/normal.tsv" >/dev/null ||
    die "the sanitizer verdict runner failed"

dev=$(head -n 1 "$out/cuda-device.txt" 2>/dev/null)
case $cuda_mode:$dev in
    *:unusable|*:) where="unusable (no CUDA test could run)" ;;
    emu:*) where="emulator (CPU)" ;;
    *) where=$dev ;;
esac
phase report
"$root/build/grader/report" -w "$weights" -b "$notes" \
    -n "$out/normal.tsv" -a "$out/asan.tsv" $([ -s "$out/integration.tsv" ] && echo -i "$out/integration.tsv") \
    -o "$out" -s "$tree" -c "CUDA: $where; sandbox: $sb_mode" -e "$SECONDS"
rc=$?
rm -rf "$out/.pending"
exit $rc
