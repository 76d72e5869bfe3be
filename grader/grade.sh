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
# file is rewritten by cu2cpp.py and compiled by g++); CUDA=emu|gpu forces
# the choice, as for make (cuda.mk decides).  The choice is printed and
# reported.  GRADE_BUILD_ONLY=1 builds the two runners (OUTDIR/runner-normal,
# OUTDIR/runner-asan) and stops: make check does so with CUDA=gpu on
# machines without a GPU.
#
# Each lesson file is compiled alone and checked (a .cu file as the
# emulator compiles it, and with a GPU also by nvcc):
#   - it compiles (with the grader's flags);
#   - it includes nothing from outside the submission and the API (a .cu
#     file also CUDA's runtime headers, and system headers);
#   - it defines exactly the global symbols its skeleton defines (C++
#     template code that g++ emits as weak symbols aside), and no
#     constructors or destructors its skeleton does not have;
#   - every symbol it uses comes from the API, the framework, libc, libm,
#     and for a .cu file libstdc++ and the CUDA runtime (the emulator's)
#     (not from Check, the test helpers or the grader).
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
# code, runs the hidden tests against them and takes every verdict; then
# grader/report writes OUTDIR/results.json, OUTDIR/junit.xml and the table.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "grade: $*" >&2; exit 2; }

# Where the CUDA lessons run, and how .cu files are built: the project's
# one CUDA recipe, cuda.mk, decides (CUDA=emu|gpu|auto as for make; the
# older GRADE_CUDA is still read).  It sets cuda_mode, nvcc, the nvcc
# flags of each build (nvcc_grade_flags, nvcc_opt, nvcc_san), cuda_libs
# and cuda_asan_options.
cuda_env=$(make -s --no-print-directory -C "$root" -f cuda.mk cuda-env \
    CUDA="${GRADE_CUDA:-${CUDA:-auto}}") || die "the CUDA recipe (cuda.mk) failed (see above)"
eval "$cuda_env"
if [ "$cuda_mode" = gpu ]; then
    gpu=$(nvidia-smi -L 2>/dev/null | sed -n '1{s/^GPU [0-9]*: //;s/ (UUID.*//;p}')
    echo "grade: CUDA lessons run on the GPU (${gpu:-none visible here}), built by nvcc" >&2
else
    [ -s "$root/build/grader/emu-normal/emu.o" ] ||
        die "the emulator is not built: run the grader through 'make grade'"
    echo "grade: CUDA lessons run on the emulator (CPU; grader/emu)" >&2
fi
# nvcc's flags for each build of the tree (see build below)
nvcc_normal=("${nvcc_grade_flags[@]}" "${nvcc_opt[@]}")
nvcc_asan=("${nvcc_grade_flags[@]}" "${nvcc_san[@]}")

# The solution's CPU seconds per test, measured once on this machine for
# each build: the limits are 10x them, at least 1 s (3 s under the
# sanitizers).  CPU time, which a busy machine does not stretch: a correct
# submission is never stopped because other work shares the machine.
times="$root/build/grader/solution-cpu-$cuda_mode"
ensure_times() {
    if [ ! -s "$times-normal.tsv" ] || [ ! -s "$times-asan.tsv" ] ||
       [ -n "$(find "$root/grader/hidden" "$root/solution/src" "$root/tests/kit" \
            "$root/grader/verdict.c" "$root/grader/emu" -newer "$times-asan.tsv" 2>/dev/null | head -n 1)" ]; then
        echo "grade: timing the solution's tests once on this machine, to set limits" >&2
        GRADE_LESSONS= GRADE_CALIBRATING=1 bash "$0" "$root/solution" "$root/build/grader/calibration" ||
            die "could not time the solution"
        for v in normal asan; do
            awk -F'\t' '$4 == "pass" { print $2 "\t" $5 }' \
                "$root/build/grader/calibration/$v.tsv" >"$times-$v.tsv.tmp" &&
                mv "$times-$v.tsv.tmp" "$times-$v.tsv"
        done
    fi
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
rm -rf "$out/outputs" "$out"/*.tsv "$out/results.json" "$out/junit.xml"
mkdir -p "$out/outputs/normal" "$out/outputs/asan" "$out/outputs/integration"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/grade.XXXXXX") || die "no scratch folder"
# GRADE_KEEP=1 keeps the scratch builds (for the grader's authors)
[ -n "${GRADE_KEEP:-}" ] && echo "grade: scratch builds kept in $scratch" >&2 ||
    trap 'rm -rf "$scratch"' EXIT

CC=${CC:-cc}
CXX=${CXX:-g++}
STUDENT_FLAGS=(-std=c11 -g -Wall -Wextra -D_POSIX_C_SOURCE=200809L)
CU_FLAGS=(-std=c++17 -g -Wall -Wextra)
SAN_FLAGS=(-O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
CHECK_LIBS=$(pkg-config --libs check)
EMU="$root/grader/emu"

# compile_cu SRC OBJ FLAGS...: a .cu file for the emulator (rewritten by
# cu2cpp.py, then g++), with the submission's src/ first for "..." headers.
compile_cu() {
    local src=$1 obj=$2 cpp="${2%.o}.cpp"
    shift 2
    python3 "$EMU/cu2cpp.py" "$src" "$cpp" || return 1
    "$CXX" "${CU_FLAGS[@]}" "$@" -I"$EMU/include" -I"$base/include" \
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
    [ -s "$root/build/grader/emu-normal/emu.o" ] && defined "$root/build/grader/emu-normal/emu.o"
    echo __gxx_personality_v0
} | sort -u >"$scratch/allowed-uses-cu"
# What a .cu file's weak symbols must not replace: anything else linked.
{
    defined "$scratch/array.o"
    defined "$scratch/device.o"
    [ -s "$root/build/grader/emu-normal/emu.o" ] && defined "$root/build/grader/emu-normal/emu.o"
    find "$root/build/grader/normal/exec" -name '*.o' -exec nm -g --defined-only {} + |
        awk 'NF == 3 {print $3}'
    libsyms libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1
} | sort -u >"$scratch/taken"

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
    rm -rf "$scratch/cand" "$scratch/skel"
    mkdir -p "$scratch/cand/src" "$scratch/skel"
    cp "$cand" "$scratch/cand/src/$name"
    cp "$base/src/"*.h "$scratch/cand/src/"
    local obj="$scratch/cand/$name.o" err="$scratch/cand/$name.err" deps
    if $cu; then
        if ! compile_cu "$scratch/cand/src/$name" "$obj" -O2 2>"$err"; then
            note "$lesson" "compile error" "src/$name does not compile: $(grep -m3 -E 'error' "$err" | sed "s|$scratch/cand/||g" | tr '\n' ' ')"
            return 1
        fi
        deps=$("$CXX" "${CU_FLAGS[@]}" -I"$EMU/include" -I"$base/include" \
               -iquote "$scratch/cand/src" -MM "$scratch/cand/$name.cpp")
    else
        if ! "$CC" "${STUDENT_FLAGS[@]}" -O2 -I"$base/include" -c "$scratch/cand/src/$name" \
                -o "$obj" 2>"$err"; then
            note "$lesson" "compile error" "src/$name does not compile: $(grep -m3 -E 'error' "$err" | sed "s|$scratch/cand/||g" | tr '\n' ' ')"
            return 1
        fi
        deps=$("$CC" "${STUDENT_FLAGS[@]}" -I"$base/include" -MM "$scratch/cand/src/$name")
    fi
    # Headers: only the API and the framework's (no reaching into the
    # grader); the emulator's CUDA headers for a .cu file.
    local bad
    bad=$(echo "$deps" | tr ' \\' '\n\n' | grep -v -e ':$' -e '^$' |
          grep -vxF -e "$scratch/cand/src/$name" -e "$scratch/cand/$name.cpp" |
          grep -vE "^($scratch/cand/src/|$base/include/|$EMU/include/)" || true)
    if [ -n "$bad" ]; then
        note "$lesson" rejected "src/$name includes files from outside the submission: $(echo $bad)"
        return 1
    fi
    local skel="$scratch/skel/$name.o"
    if $cu; then
        compile_cu "$f" "$skel" -O2 || die "the skeleton's $name does not build"
    else
        "$CC" "${STUDENT_FLAGS[@]}" -O2 -I"$base/include" -c "$f" -o "$skel"
    fi
    local sect
    for sect in init_array ctors fini_array dtors; do
        if objdump -h "$obj" | grep -qE "\.$sect\b" && ! objdump -h "$skel" | grep -qE "\.$sect\b"; then
            note "$lesson" rejected "src/$name defines a constructor or destructor (code that runs before or after main)"
            return 1
        fi
    done
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
    if $cu && [ "$cuda_mode" = gpu ] && ! "$nvcc" "${nvcc_normal[@]}" -I"$base/include" \
            -c "$scratch/cand/src/$name" -o "$scratch/cand/$name.gpu.o" 2>"$err"; then
        note "$lesson" "compile error" "src/$name does not compile with nvcc: $(grep -m3 -E 'error' "$err" | sed "s|$scratch/cand/||g" | tr '\n' ' ')"
        return 1
    fi
    # the plain build reuses this object (same compiler, flags and source)
    mkdir -p "$scratch/prebuilt"
    if ! $cu || [ "$cuda_mode" = emu ]; then cp "$obj" "$scratch/prebuilt/$name.o"
    else cp "$scratch/cand/$name.gpu.o" "$scratch/prebuilt/$name.o"; fi
    if grep -qiE 'warning' "$err"; then
        note "$lesson" warnings "src/$name compiles with warnings: $(grep -m2 -i warning "$err" | sed "s|$scratch/cand/||g" | tr '\n' ' ')"
    fi
    return 0
}

# GRADE_LESSONS="3 5" grades those lessons only: the other files are not
# even looked at (the solution's stand in), and there is no integration run.
only=" ${GRADE_LESSONS:-} "
rejected=() theirs=" "   # the lesson files taken from the submission
for f in "$base/src/"[0-9][0-9]_*.c "$base/src/"[0-9][0-9]_*.cu; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    if [ -n "${GRADE_LESSONS:-}" ] && [[ $only != *" $((10#${name%%_*})) "* ]]; then
        cp "$root/solution/src/$name" "$f"
    elif check_lesson "$f"; then
        cp "$scratch/cand/src/$name" "$f"
        theirs+="$name "
    else
        rejected+=(-R "$((10#${name%%_*}))")
        [ -f "$root/solution/src/$name" ] &&
            cp "$root/solution/src/$name" "$f"   # stands in for the other lessons' tests
    fi
done

# compile VARIANT SRC OBJ FLAGS...: one file of a tree, as the grader
# builds it for that build (a .cu file by nvcc with the CUDA recipe's flags
# of the build, or for the emulator with FLAGS)
compile() {
    local -n nvcc_variant="nvcc_$1"
    local src=$2 obj=$3
    shift 3
    case $src in
    *.c) "$CC" "${STUDENT_FLAGS[@]}" "$@" -I"$base/include" -c "$src" -o "$obj" ;;
    *)  if [ "$cuda_mode" = gpu ]; then
            "$nvcc" "${nvcc_variant[@]}" -I"$base/include" -c "$src" -o "$obj"
        else
            compile_cu "$src" "$obj" "$@"
        fi ;;
    esac
}

# The solution's lesson files, compiled once per machine and build (they
# stand in for every lesson but the one under test).
solution_objs() {   # VARIANT FLAGS...
    local v=$1 dir="$root/build/grader/solution-$cuda_mode/$1" f
    shift
    (
        flock 9
        if [ ! -e "$dir/.done" ] || [ -n "$(find "$root/solution/src" "$root/skeleton/include" \
                "$root/grader/emu/include" -newer "$dir/.done" | head -n 1)" ]; then
            rm -rf "$dir" && mkdir -p "$dir/src" "$dir/tree" || exit 1
            cp -R "$root/skeleton/include" "$dir/tree/" && cp "$root/skeleton/src/"*.h "$dir/src/"
            for f in "$root/solution/src/"[0-9][0-9]_*.c "$root/solution/src/"[0-9][0-9]_*.cu; do
                cp "$f" "$dir/src/"
                base="$dir/tree" compile "$v" "$dir/src/$(basename "$f")" "$dir/$(basename "$f").o" "$@" ||
                    exit 1
            done
            touch "$dir/.done"
        fi
    ) 9>"$root/build/grader/solution-$cuda_mode-$v.lock" 2>>"$scratch/solution-build.log"
}

build() {   # VARIANT FLAGS...: the executors of one build, in $scratch/VARIANT
    local v=$1 dir="$scratch/$1" f o name l
    shift
    mkdir -p "$dir/obj"
    solution_objs "$v" "$@" || return 1
    local framework=() mine=()
    for f in "$base/src/"*.c "$base/src/"*.cu; do
        [ -e "$f" ] || continue
        name=$(basename "$f")
        o="$dir/obj/$name.o"
        if [[ $name == [0-9][0-9]_* && $theirs != *" $name "* ]]; then
            o="$root/build/grader/solution-$cuda_mode/$v/$name.o"   # a stand-in
        elif [ "$v" = normal ] && [ -s "$scratch/prebuilt/$name.o" ]; then
            o="$scratch/prebuilt/$name.o"
        else
            compile "$v" "$f" "$o" "$@" 2>>"$dir/build.log" || return 1
        fi
        case $name in [0-9][0-9]_*) mine+=("$o") ;; *) framework+=("$o") ;; esac
    done
    local rest=("$root/build/grader/$v/exec/grader/executor.o" \
                "$root/build/grader/$v/exec/tests/kit/wire.o" \
                "$root/build/grader/$v/exec/tests/kit/exec.o" \
                "$root/build/grader/$v/exec/tests/kit/stack.o" "${framework[@]}")
    [ "$cuda_mode" = emu ] && rest+=("$root/build/grader/emu-$v/emu.o")
    link() {   # OUT OBJS...
        local out=$1
        shift
        "$CXX" "${SAN_LINK[@]}" "$@" "${rest[@]}" "${cuda_libs[@]}" -lm -o "$out" 2>>"$dir/build.log"
    }
    # lesson N: the submission's file N, the solution's others
    for o in "${mine[@]}"; do
        name=$(basename "$o" .o)
        l=$((10#${name%%_*}))
        local objs=("$o")
        for f in "$root/build/grader/solution-$cuda_mode/$v/"[0-9][0-9]_*.o; do
            [ "$(basename "$f")" = "$name.o" ] || objs+=("$f")
        done
        link "$dir/exec-$l" "${objs[@]}" || return 1
    done
    link "$dir/exec-all" "${mine[@]}"
}

SAN_LINK=()
if ! build normal -O2; then
    cat "$scratch/normal/build.log" "$scratch/solution-build.log" 2>/dev/null >&2
    die "the grader's own build failed (see above)"
fi
lessons=()
for l in ${GRADE_LESSONS:-}; do lessons+=(-l "$l"); done
verdict=("$root/build/grader/verdict" "${lessons[@]}" "${rejected[@]}")
# (cuda_asan_options: what ASan must be told on this CUDA device)
SAN_ENV=(ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:abort_on_error=0${cuda_asan_options:+:$cuda_asan_options}
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
    "${verdict[@]}" -o "$out/normal.tsv" -d "$out/outputs/normal" -x "$scratch/normal" -s 60 \
        >/dev/null || die "the calibration run failed"
    env "${SAN_ENV[@]}" "${verdict[@]}" -a -o "$out/asan.tsv" -d "$out/outputs/asan" \
        -x "$scratch/asan" -s 120 >/dev/null || die "the calibration run failed"
    exit 0
fi
ensure_times
# The sanitizer build (slow to compile) goes on while the plain one runs.
(SAN_LINK=("${SAN_FLAGS[@]}"); build asan "${SAN_FLAGS[@]}") &
asan_build=$!
"${verdict[@]}" -o "$out/normal.tsv" -d "$out/outputs/normal" -x "$scratch/normal" \
    -T "$times-normal.tsv" -m 10 -s 1 -c "$out/cuda-device.txt" >/dev/null ||
    die "the verdict runner failed"
if [ -z "${GRADE_LESSONS:-}" ]; then
    "${verdict[@]}" -i -o "$out/integration.tsv" -d "$out/outputs/integration" \
        -x "$scratch/normal" -T "$times-normal.tsv" -m 10 -s 1 >/dev/null ||
        die "the verdict runner failed (integration)"
fi
if ! wait "$asan_build"; then
    cat "$scratch/asan/build.log" >&2
    die "the grader's own sanitizer build failed (see above)"
fi
env "${SAN_ENV[@]}" "${verdict[@]}" -a -o "$out/asan.tsv" -d "$out/outputs/asan" \
    -x "$scratch/asan" -T "$times-asan.tsv" -m 10 -s 3 -k "$out/normal.tsv" >/dev/null ||
    die "the sanitizer verdict runner failed"

dev=$(head -n 1 "$out/cuda-device.txt" 2>/dev/null)
case $cuda_mode:$dev in
    *:unusable|*:) where="unusable (no CUDA test could run)" ;;
    emu:*) where="emulator (CPU)" ;;
    *) where=$dev ;;
esac
"$root/build/grader/report" -w "$root/grader/weights.tsv" -b "$notes" \
    -n "$out/normal.tsv" -a "$out/asan.tsv" $([ -s "$out/integration.tsv" ] && echo -i "$out/integration.tsv") \
    -o "$out" -s "$tree" -c "CUDA: $where"
