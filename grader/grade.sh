#!/usr/bin/env bash
# grade.sh -- grade one submission.
#
#   grader/grade.sh TREE OUTDIR
#   grader/grade.sh --calibrate     only time the solution (see below)
#
# TREE is a student's copy of skeleton/.  Only its lesson files
# (src/NN_*.c and src/NN_*.cu) are taken; the API header and the framework
# (array.c, device.cu, internal.h, nd_cuda.h) come from the grader's own
# skeleton/, so edits to them (or to a Makefile) do not count.
#
# CUDA files run on the GPU when there is one (nvidia-smi -L finds it and
# nvcc is installed), otherwise on the CPU emulator of grader/emu/ (a .cu
# file is rewritten by cu2cpp.py and compiled by g++); GRADE_CUDA=emu|gpu
# forces the choice.  The choice is printed and reported.
#
# Every step that touches the submission runs in the sandbox
# (build/grader/sandbox, grader/sandbox.c): compiling a lesson file,
# linking, and the test runner, each unprivileged, with only what it needs
# in view and limits of its own (a compile: 30 s of CPU, 3 GB of memory,
# files of at most 64 MB; a lesson file over 1 MB is refused before).  The sandbox's mode
# (namespaces, or a fallback) is printed and reported.  A whole grade stops
# after GRADE_TIME_LIMIT seconds (default 1200), with a results.json that
# says so.
#
# Each lesson file is compiled alone and checked (a .cu file as the
# emulator compiles it, and with a GPU also by nvcc):
#   - it is at most 1 MB and compiles (with the grader's flags, in the
#     sandbox, within its limits);
#   - it includes nothing from outside the submission and the API (a .cu
#     file also CUDA's runtime headers, and system headers);
#   - its object holds only sections and symbols of an allow-list: code,
#     data, read-only data, debug information, unwind tables; nothing that
#     runs code by itself (.preinit_array, .init_array, .ctors, .init,
#     .fini*, ifunc resolvers, ...) and no executable stack;
#   - it defines exactly the global symbols its skeleton defines (C++
#     template code that g++ emits as weak symbols aside);
#   - every symbol it uses comes from the API, the framework, libc, libm,
#     and for a .cu file libstdc++ and the CUDA runtime (the emulator's)
#     (not from Check, the test helpers or the grader).
# A lesson file that is missing or fails a check scores 0 for its lesson,
# and the report says why; the solution's version of the file stands in
# for it, so that the later lessons, which call its functions, are still
# graded on their own merits.  The tree is then
# built twice (plain, and with AddressSanitizer + UBSan) in a scratch
# folder, the hidden tests run against each build, and grader/report
# writes OUTDIR/results.json, OUTDIR/junit.xml and the table.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "grade: $*" >&2; exit 2; }

# The whole grade's time limit: past it, everything the grade started is
# killed (timeout's process group; the sandboxes die with their parents),
# and results.json says why there is no score.
if [ -z "${GRADE_LIMITED:-}" ] && [ $# -eq 2 ]; then
    limit=${GRADE_TIME_LIMIT:-1200}
    [[ $limit =~ ^[1-9][0-9]*$ ]] || die "GRADE_TIME_LIMIT=$limit: it must be a number of seconds"
    GRADE_LIMITED=1 timeout -k 10 "$limit" bash "$0" "$@" &
    graded=$!
    trap 'kill -TERM -- -$graded $graded 2>/dev/null' INT TERM
    wait $graded
    rc=$?
    [ $rc -gt 128 ] && kill -0 $graded 2>/dev/null && { wait $graded; rc=$?; }
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        msg="grade: stopped after $limit s, the time limit of a whole grade (GRADE_TIME_LIMIT): no score. Its tests ran out of time one after another, or the machine is far too busy."
        mkdir -p "$2" && python3 -c 'import json, sys
json.dump({"score": 0, "output": sys.argv[1], "tests": []}, open(sys.argv[2], "w"))' \
            "$msg" "$2/results.json"
        echo "$msg" >&2
        exit 2
    fi
    exit $rc
fi

# The sandbox every step that touches the submission runs in.
SANDBOX="$root/build/grader/sandbox"
[ -x "$SANDBOX" ] || die "the grader is not built: run it through 'make grade'"
sb_mode=$("$SANDBOX" mode) || die "the sandbox does not work here"
# found once: every step of this grade runs in the same mode
case $sb_mode in
    namespaces*) export SB_MODE=namespaces ;;
    uid*) export SB_MODE=uid ;;
    *) export SB_MODE=none ;;
esac

# Where the CUDA lessons run: a GPU, or the emulator.
NVCC=$(command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
cuda_mode=${GRADE_CUDA:-auto}
if [ "$cuda_mode" = auto ]; then
    cuda_mode=emu
    if [ -n "$NVCC" ] && nvidia-smi -L 2>/dev/null | grep -q GPU; then
        cuda_mode=gpu
    fi
fi
case $cuda_mode in
    emu) ;;
    gpu) [ -n "$NVCC" ] || die "GRADE_CUDA=gpu, but nvcc is not installed" ;;
    *) die "GRADE_CUDA=$cuda_mode: it must be emu, gpu or auto" ;;
esac
if [ "$cuda_mode" = gpu ]; then
    CUDA_HOME=$(dirname "$(dirname "$NVCC")")
    NVCC_FLAGS=(-std=c++17 -g -arch=native -Xcompiler -Wall,-Wextra)
    GPU_VIEW=(--gpu)
    CUDA_LINK=(-L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcudart)
    echo "grade: CUDA lessons run on the GPU ($(nvidia-smi -L 2>/dev/null | head -n 1 |
        sed -E 's/^GPU [0-9]+: //; s/ \(UUID.*//'), built by nvcc)" >&2
else
    [ -s "$root/build/grader/emu-normal/emu.o" ] ||
        die "the emulator is not built: run the grader through 'make grade'"
    CUDA_LINK=()
    GPU_VIEW=()
    echo "grade: CUDA lessons run on the emulator (CPU; grader/emu)" >&2
fi

# The solution's time per test, measured once on this machine: timeouts
# are 10x it (30x under the sanitizers), at least 1 s (3 s): a submission
# that loops everywhere then costs about 10x the solution's whole run.
times="$root/build/grader/solution-times-$cuda_mode.tsv"
ensure_times() {
    if [ ! -s "$times" ] || [ -n "$(find "$root/grader/hidden" "$root/solution/src" \
            "$root/tests/helpers.c" "$root/grader/runner.c" "$root/grader/sandbox.c" "$root/grader/emu" -newer "$times" 2>/dev/null | head -n 1)" ]; then
        echo "grade: timing the solution's tests once on this machine, to set timeouts" >&2
        GRADE_LESSONS= GRADE_CALIBRATING=1 bash "$0" "$root/solution" "$root/build/grader/calibration" ||
            die "could not time the solution"
        awk -F'\t' '$4 == "pass" { print $2 "\t" $5 }' \
            "$root/build/grader/calibration/normal.tsv" >"$times.tmp" && mv "$times.tmp" "$times"
    fi
}
if [ "${1:-}" = --calibrate ] && [ $# -eq 1 ]; then
    ensure_times
    exit 0
fi

[ $# -eq 2 ] || die "usage: grader/grade.sh TREE OUTDIR   (or: grader/grade.sh --calibrate)"
tree=$1 out=$2
[ -d "$tree/src" ] || die "$tree has no src/ folder: is it a copy of skeleton/?"
[ -x "$root/build/grader/report" ] && [ -d "$root/build/grader/asan" ] ||
    die "the grader is not built: run it through 'make grade'"

mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
rm -rf "$out/outputs" "$out"/*.tsv
mkdir -p "$out/outputs/normal" "$out/outputs/asan"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/grade.XXXXXX") || die "no scratch folder"
# GRADE_KEEP=1 keeps the scratch builds (for the grader's authors)
[ -n "${GRADE_KEEP:-}" ] && echo "grade: scratch builds kept in $scratch" >&2 ||
    trap 'rm -rf "$scratch"' EXIT
# The sandboxed steps see folders of the scratch alone: the sandbox's uid
# may pass through it (to bind or reach them), not list it.
chmod 711 "$scratch"
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
# grader's objects.
kit="$scratch/kit"
mkdir -p "$kit/emu"
cp -R "$root/grader/emu/include" "$root/grader/emu/cu2cpp.py" "$kit/emu/"
for v in normal asan; do
    mkdir -p "$kit/$v"
    find "$root/build/grader/$v" -name '*.o' | sort | while read -r o; do
        cp "$o" "$kit/$v/$(echo "${o#"$root/build/grader/$v/"}" | tr / _)"
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
COMPILE_LIMITS=(--cpu 30 --wall 300 --mem 3G --fsize 64M --tmp 256M --nproc 64)
# The grader's own builds of accepted files (already compiled once within
# the limits above): the sanitizers' compiles are slower, and a busy
# machine must not fail them.
BUILD_LIMITS=(--cpu 300 --wall 900 --mem 4G --fsize 512M --tmp 1G --nproc 64)
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
    if grep -qE 'memory exhausted|out of memory' "$err"; then
        echo "src/$name: the compiler ran out of memory (3 GB): a preprocessor bomb, or a file far too large"
        return
    fi
    diag=$(grep -E "^src/$name:[0-9]+(:[0-9]+)?: |Error: " "$err" |
           grep -m3 -iE 'error|cannot' | cut -c1-300 | tr '\n' ' ')
    echo "src/$name does not compile${4:+ with $4}: ${diag:-its compiler messages point outside the submission}"
}

CC=${CC:-cc}
CXX=${CXX:-g++}
STUDENT_FLAGS=(-std=c11 -g -Wall -Wextra -D_POSIX_C_SOURCE=200809L)
CU_FLAGS=(-std=c++17 -g -Wall -Wextra)
SAN_FLAGS=(-O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
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

# The tree that gets built: the grader's skeleton, then accepted lesson files.
base="$scratch/tree"
mkdir -p "$base"
cp -R "$root/skeleton/include" "$root/skeleton/src" "$base/"
notes="$out/build-notes.tsv"
: >"$notes"
note() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$notes"; }

# Global symbols an object defines / uses.
defined() { nm -g --defined-only "$1" | awk '{print $3}' | sort -u; }
undefined() { nm -u "$1" | awk '{print $2}' | sed 's/@.*//' | sort -u; }

# Strong global symbols (weak ones are C++ template and inline code).
strong() { nm -g --defined-only "$1" | awk '$2 !~ /^[WVwvu]$/ {print $3}' | sort -u; }
weak() { nm -g --defined-only "$1" | awk '$2 ~ /^[WVwvu]$/ {print $3}' | sort -u; }

# What lesson code may use: the framework's and API's symbols, libc and
# libm; .cu files also libstdc++, libgcc and the CUDA runtime (the
# emulator's own symbols).
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
    echo __stack_chk_fail   # added by the compiler itself
} | sort -u >"$scratch/allowed-uses"
{
    cat "$scratch/allowed-uses"
    libsyms libstdc++.so.6 libgcc_s.so.1
    [ -s "$kit/emu-normal/emu.o" ] && defined "$kit/emu-normal/emu.o"
    echo __gxx_personality_v0
} | sort -u >"$scratch/allowed-uses-cu"
# What a .cu file's weak symbols must not replace: anything else linked.
{
    defined "$scratch/array.o"
    defined "$scratch/device.o"
    [ -s "$kit/emu-normal/emu.o" ] && defined "$kit/emu-normal/emu.o"
    find "$kit/normal" -name '*.o' -exec nm -g --defined-only {} + |
        awk 'NF == 3 {print $3}'
    libsyms libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1
} | sort -u >"$scratch/taken"

# The sections a lesson object may hold (readelf -S names and types):
# code, data, read-only and thread-local data, C++ comdat groups and
# exception tables, unwind tables, debug information, and relocations of
# those.  Nothing that runs code by itself (.preinit_array, .init_array,
# .fini_array, .ctors, .dtors, .init, .fini), and nothing the linker would
# treat specially (.gnu.warning*, .gnu.linkonce*, other notes).
SECTION_NAMES='(\.rela)?(\.text|\.data|\.bss|\.rodata|\.tdata|\.tbss|\.data\.rel\.ro|\.data\.rel|\.gcc_except_table)(\.[A-Za-z0-9_.$]+)?|\.comment|\.note\.GNU-stack|\.note\.gnu\.property|(\.rela)?\.eh_frame|\.group|\.symtab|\.symtab_shndx|\.strtab|\.shstrtab|(\.rela)?\.debug_[a-z_]+'
SECTION_TYPES='PROGBITS|NOBITS|NOTE|RELA|SYMTAB|SYMTAB_SHNDX|STRTAB|GROUP|X86_64_UNWIND'
# object_check OBJ: what in OBJ is not on the allow-lists, as a sentence
# (nothing when all is well)
object_check() {
    local obj=$1 bad
    bad=$(readelf -SW "$obj" 2>/dev/null | sed -nE 's/^ *\[ *[0-9]+\] +//p' |
          awk -v names="^($SECTION_NAMES)\$" -v types="^($SECTION_TYPES)\$" \
              '$1 == "NULL" { next }
               $1 !~ names || $2 !~ types { printf "section %s (%s), ", $1, $2 }
               $1 == ".note.GNU-stack" && $8 ~ /X/ { printf "an executable stack, " }')
    bad+=$(readelf -sW "$obj" 2>/dev/null | awk 'NR > 3 && $4 !~ /^(NOTYPE|OBJECT|FUNC|SECTION|FILE|TLS|COMMON)$/ {
              printf "symbol %s of kind %s, ", $8, $4 }')
    if ! readelf -h "$obj" >/dev/null 2>&1; then
        bad="an object readelf cannot read, "
    fi
    [ -n "$bad" ] && echo "${bad%, }"
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
    rm -rf "$scratch/cand" "$scratch/skel" "$scratch/cand".*
    mkdir -p "$scratch/cand/src" "$scratch/skel"
    cp "$cand" "$scratch/cand/src/$name"
    cp "$base/src/"*.h "$scratch/cand/src/"
    local obj="$name.o" err="$scratch/cand.err" st="$scratch/cand.status" deps
    # Compiled in the sandbox, in the candidate's folder, by relative
    # paths: the messages name src/NAME, and nothing of the grader's is in
    # view but the API's headers (and the emulator's).
    SBX=(in_sandbox "$st" "${COMPILE_LIMITS[@]}" --rw "$scratch/cand" --cwd "$scratch/cand"
         --ro "$base/include" --ro "$kit/emu" --)
    if $cu; then
        if ! (cd "$scratch/cand" && compile_cu "src/$name" "$obj" -O2 -MMD -MF "$name.d") 2>"$err"; then
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
    obj="$scratch/cand/$obj"
    deps=$(cat "$scratch/cand/$name.d" 2>/dev/null)
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
    # Nothing may run before main (or after it) but the grader's code.
    bad=$(object_check "$obj")
    if [ -n "$bad" ]; then
        note "$lesson" rejected "src/$name holds what could run code by itself, or that a lesson file has no use for: $bad (constructors, destructors, ifunc resolvers and sections of one's own are not allowed)"
        return 1
    fi
    local skel="$scratch/skel/$name.o"
    if $cu; then
        compile_cu "$f" "$skel" -O2 || die "the skeleton's $name does not build"
    else
        "$CC" "${STUDENT_FLAGS[@]}" -O2 -I"$base/include" -c "$f" -o "$skel"
    fi
    local extra missing
    extra=$(comm -23 <(strong "$obj") <(strong "$skel"))
    if [ -n "$extra" ]; then
        note "$lesson" rejected "src/$name defines global symbols its skeleton does not: $(echo $extra) (make helpers static)"
        return 1
    fi
    missing=$(comm -13 <(defined "$obj") <(strong "$skel"))
    if [ -n "$missing" ]; then
        note "$lesson" rejected "src/$name no longer defines $(echo $missing)"
        return 1
    fi
    # Weak symbols: C++ templates (kernel launches on the emulator), which
    # must not stand in for anything else the program links.
    extra=$( { weak "$obj" | grep -vxF DW.ref.__gxx_personality_v0 | grep -v '^_Z';
               weak "$obj" | comm -12 - "$scratch/taken"; } | sort -u)
    if [ -n "$extra" ]; then
        note "$lesson" rejected "src/$name defines symbols of the framework, the runtime or the grader: $(echo $extra)"
        return 1
    fi
    local allowed="$scratch/allowed-uses"
    $cu && allowed="$scratch/allowed-uses-cu"
    extra=$(comm -23 <(undefined "$obj") "$allowed")
    if [ -n "$extra" ]; then
        note "$lesson" rejected "src/$name uses symbols outside the API, $($cu && echo "the CUDA runtime, libstdc++, ")libc and libm: $(echo $extra)"
        return 1
    fi
    # With a GPU, the file must also build with nvcc (CUDA-only errors).
    if $cu && [ "$cuda_mode" = gpu ] && ! in_sandbox "$st" "${COMPILE_LIMITS[@]}" "${GPU_VIEW[@]}" \
            --rw "$scratch/cand" --cwd "$scratch/cand" --ro "$base/include" -- \
            "$NVCC" "${NVCC_FLAGS[@]}" -I"$base/include" -c "src/$name" -o "$name.gpu.o" 2>"$err"; then
        note "$lesson" "compile error" "$(compile_failure "$name" "$st" "$err" nvcc)"
        return 1
    fi
    # the plain build reuses this object (same compiler, flags and source)
    mkdir -p "$scratch/prebuilt"
    if ! $cu || [ "$cuda_mode" = emu ]; then cp "$obj" "$scratch/prebuilt/$name.o"; fi
    if grep -qiE 'warning' "$err"; then
        note "$lesson" warnings "src/$name compiles with warnings: $(grep -E "^src/$name:[0-9]+" "$err" | grep -m2 -i warning | cut -c1-300 | tr '\n' ' ')"
    fi
    return 0
}

for f in "$base/src/"[0-9][0-9]_*.c "$base/src/"[0-9][0-9]_*.cu; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    if check_lesson "$f"; then
        cp "$scratch/cand/src/$name" "$f"
    elif [ -f "$root/solution/src/$name" ]; then
        cp "$root/solution/src/$name" "$f"   # stands in; the report scores it 0
    fi
done

host_flags() {   # FLAGS...: for nvcc's host compiler (-Xcompiler splits at commas)
    local a p
    for a; do
        case $a in
        -fsanitize=*,*) p=${a#-fsanitize=}
            for p in ${p//,/ }; do echo -Xcompiler "-fsanitize=$p"; done ;;
        *) echo -Xcompiler "$a" ;;
        esac
    done
}

build() {   # VARIANT FLAGS...: the tree, linked with the grader's objects
    local v=$1 dir="$scratch/$1"
    shift
    mkdir -p "$dir"
    local objs=() o src
    # In the sandbox, from the tree's folder (messages name src/NAME).  The
    # sanitizer build sees the lesson files as the checked plain build did
    # (#ifdef __SANITIZE_ADDRESS__ cannot add code the check never saw).
    local same=()
    [ "$v" = asan ] && same=(-U__SANITIZE_ADDRESS__)
    SBX=(in_sandbox "$dir/compile.status" "${BUILD_LIMITS[@]}" "${GPU_VIEW[@]}" --ro "$base"
         --ro "$kit/emu" --rw "$dir" --cwd "$base" --)
    for f in "$base/src/"*.c "$base/src/"*.cu; do
        [ -e "$f" ] || continue
        o="$dir/$(basename "$f").o"
        src="src/$(basename "$f")"
        if [ "$v" = normal ] && [ -s "$scratch/prebuilt/$(basename "$f").o" ]; then
            objs+=("$scratch/prebuilt/$(basename "$f").o")
            continue
        fi
        case $f in
        *.c) "${SBX[@]}" "$CC" "${STUDENT_FLAGS[@]}" "$@" "${same[@]}" -I"$base/include" \
                 -c "$src" -o "$o" ;;
        *)  if [ "$cuda_mode" = gpu ]; then
                "${SBX[@]}" "$NVCC" "${NVCC_FLAGS[@]}" -Xcompiler "$(IFS=,; echo "$*")" \
                    "${same[@]}" -I"$base/include" -c "$src" -o "$o"
            else
                compile_cu "$src" "$o" "$@" "${same[@]}"
            fi ;;
        esac 2>>"$dir/build.log" || {
            echo "grade: compiling $src: $(cut -f4 "$dir/compile.status" 2>/dev/null)" >>"$dir/build.log"
            SBX=()
            return 1
        }
        objs+=("$o")
    done
    SBX=()
    [ "$cuda_mode" = emu ] && objs+=("$kit/emu-$v/emu.o")
    in_sandbox "$dir/link.status" "${BUILD_LIMITS[@]}" "${GPU_VIEW[@]}" --ro "$kit" \
        --ro "$scratch/prebuilt" --rw "$dir" --cwd "$dir" -- \
        "$CXX" "$@" "${objs[@]}" $(find "$kit/$v" -name '*.o' | sort) \
        $CHECK_LIBS "${CUDA_LINK[@]}" -lm -o "$dir/runner" 2>>"$dir/build.log" || {
        echo "grade: linking: $(cut -f4 "$dir/link.status" 2>/dev/null)" >>"$dir/build.log"
        return 1
    }
}

# run_tests VARIANT RUNNER-ARGS...: today's runner in the sandbox.  It
# sees its own build and a fresh folder for its results (times.tsv and
# plain.tsv there are its inputs), nothing else of the grader's; its
# test children lock themselves down (sb_lockdown).  Then its results
# go to OUTDIR/VARIANT.tsv and OUTDIR/outputs/VARIANT/, each output a
# plain file of that folder or nothing.
run_tests() {
    local v=$1 rd="$scratch/run-$1" rc
    shift
    local env=()
    [ "$v" = asan ] && env=(--env "ASAN_OPTIONS=$ASAN_RUN_OPTIONS" --env "UBSAN_OPTIONS=$UBSAN_RUN_OPTIONS")
    in_sandbox "$rd.status" --cpu 0 --wall "${GRADE_TIME_LIMIT:-1200}" --mem 0 --fsize 64M \
        --tmp 512M --nofile 1024 --nproc 256 "${GPU_VIEW[@]}" "${env[@]}" \
        --ro "$scratch/$v" --rw "$rd" -- \
        "$scratch/$v/runner" -o "$rd/results.tsv" -d "$rd/outputs" "$@" >/dev/null
    rc=$?
    mkdir -p "$out/outputs/$v"
    find "$rd/outputs" -mindepth 1 -maxdepth 1 -type f -name '[0-9]*.out' \
        -exec mv -t "$out/outputs/$v" -- {} +
    [ -f "$rd/cuda-device.txt" ] && [ ! -L "$rd/cuda-device.txt" ] &&
        head -c 800 "$rd/cuda-device.txt" >"$out/cuda-device.txt"
    awk -F'\t' -v OFS='\t' -v from="$rd/outputs/" -v to="$out/outputs/$v/" '{
        f = substr($8, length(from) + 1)
        $8 = index($8, from) == 1 && f ~ /^[0-9]+\.out$/ ? to f : ""
        print }' "$rd/results.tsv" >"$out/$v.tsv" 2>/dev/null
    [ $rc -eq 0 ] || echo "grade: the $v test run $(cut -f4 "$rd.status")" >&2
    return $rc
}
run_dir() {   # VARIANT: a fresh folder for run_tests, with the timings in it
    rm -rf "$scratch/run-$1"
    mkdir -p "$scratch/run-$1/outputs"
    [ -s "$times" ] && cp "$times" "$scratch/run-$1/times.tsv"
    echo "$scratch/run-$1"
}
# (CUDA's runtime maps memory where AddressSanitizer would guard it)
ASAN_RUN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:abort_on_error=0$([ "$cuda_mode" = gpu ] && echo :protect_shadow_gap=0)
UBSAN_RUN_OPTIONS=print_stacktrace=1:halt_on_error=1
gpu_runner=()
[ "$cuda_mode" = gpu ] && gpu_runner=(-g)

if ! build normal -O2; then
    cat "$scratch/normal/build.log" >&2
    die "the grader's own build failed (see above)"
fi
lessons=()
for l in ${GRADE_LESSONS:-}; do lessons+=(-l "$l"); done

# Calibration run: only the plain build, generous timeouts.
if [ -n "${GRADE_CALIBRATING:-}" ]; then
    rd=$(run_dir normal)
    run_tests normal -s 60 "${gpu_runner[@]}" "${lessons[@]}" || die "the calibration run failed"
    exit 0
fi
ensure_times
# The sanitizer build (slow to compile) goes on while the plain one runs.
build asan "${SAN_FLAGS[@]}" &
asan_build=$!
scale=${GRADE_TIMEOUT_SCALE:-1}
rd=$(run_dir normal)
run_tests normal "${lessons[@]}" -T "$rd/times.tsv" -m $((10 * scale)) -s "$scale" \
    -c "$rd/cuda-device.txt" "${gpu_runner[@]}" || die "the runner failed"

if ! wait "$asan_build"; then
    cat "$scratch/asan/build.log" >&2
    die "the grader's own sanitizer build failed (see above)"
fi
rd=$(run_dir asan)
cp "$out/normal.tsv" "$rd/plain.tsv"
run_tests asan -a "${lessons[@]}" -T "$rd/times.tsv" -m $((30 * scale)) -s $((3 * scale)) \
    -k "$rd/plain.tsv" "${gpu_runner[@]}" || die "the sanitizer runner failed"

dev=$(head -n 1 "$out/cuda-device.txt" 2>/dev/null)
case $cuda_mode:$dev in
    *:unusable|*:) where="unusable (no CUDA test could run)" ;;
    emu:*) where="emulator (CPU)" ;;
    *) where=$dev ;;
esac
"$root/build/grader/report" -w "$root/grader/weights.tsv" -b "$notes" \
    -n "$out/normal.tsv" -a "$out/asan.tsv" -o "$out" -s "$tree" -c "CUDA: $where; sandbox: $sb_mode"
