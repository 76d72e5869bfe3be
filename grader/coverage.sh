#!/usr/bin/env bash
# coverage.sh -- how much of the solution the hidden tests run.
#
# Builds solution/ with gcov instrumentation (-O0 --coverage; the .cu files
# for the CUDA emulator, as the grader builds them) into the grader's
# executor, runs every hidden test through the grader's verdict -- and the framework's
# own tests (the public "lesson 0": students never write the framework, so
# no hidden test is about it) -- and has gcovr write
# build/coverage/index.html (line by line) and a summary.  Fails if the
# hidden tests run less than MIN_LINES percent (default 95) of the lines of
# the lesson files and the framework.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
out=build/coverage obj=build/coverage/obj
min=${MIN_LINES:-95}
rm -rf "$out"
mkdir -p "$obj" "$out/outputs"

CC=${CC:-cc}
CXX=${CXX:-g++}
# The .cu files are built as the CUDA recipe (cuda.mk) builds them for the
# emulator: its g++ flags (cxxflags_cu) and its emulator (emu).
cuda_env=$(make -s --no-print-directory -f cuda.mk cuda-env CUDA=emu) ||
    { echo "coverage: the CUDA recipe (cuda.mk) failed" >&2; exit 2; }
eval "$cuda_env"
objs=()
for f in solution/src/*.c; do
    o="$obj/$(basename "$f" .c).o"
    "$CC" -std=c11 -g -O0 --coverage -Wall -Wextra -D_POSIX_C_SOURCE=200809L \
        -Isolution/include -c "$f" -o "$o" || exit 1
    objs+=("$o")
done
# The .cu files run on the emulator: rewritten by cu2cpp.py, whose #line
# directive keeps the .cu file's name and lines for gcov.
for f in solution/src/*.cu; do
    o="$obj/$(basename "$f" .cu).o"
    python3 "$emu/cu2cpp.py" "$f" "$obj/$(basename "$f" .cu).cpp" || exit 1
    "$CXX" "${cxxflags_cu[@]}" -O0 --coverage -I"$emu/include" -Isolution/include \
        -iquote solution/src -c "$obj/$(basename "$f" .cu).cpp" -o "$o" || exit 1
    objs+=("$o")
done
objs+=(build/grader/emu-normal/emu.o)
# One executor of the instrumented solution serves every lesson (exec-N
# and exec-all), run by the grader's own verdict.  The solution is trusted
# here, and gcov must write its counts into $obj as each test's process
# exits: no sandbox (SB_MODE=none) and no seccomp filter (the sandbox
# built with SB_NO_LOCKDOWN, whose sb_lockdown does nothing).  Each test's
# process ends with _exit after calling __gcov_dump, a weak reference that
# only --undefined makes the link resolve.
"$CC" -std=c11 -O0 -D_GNU_SOURCE -DSB_NO_LOCKDOWN -Igrader -c grader/sandbox.c \
    -o "$obj/sandbox-nolockdown.o" || exit 1
exec=(build/grader/normal/exec/grader/executor.o build/grader/normal/exec/tests/kit/wire.o
      build/grader/normal/exec/tests/kit/exec.o build/grader/normal/exec/tests/kit/stack.o
      "$obj/sandbox-nolockdown.o")
"$CXX" --coverage -Wl,--undefined=__gcov_dump "${exec[@]}" "${objs[@]}" -lm -o "$obj/executor" || exit 1
# (The performance tests' executors, exec-N-profile, are the same one:
# not instrumented for the emulator's counters, those tests stop here at
# their setup, with a message saying so, and are left out of the check
# below: coverage counts lines; the grader's own runs grade them.)
for l in 1 2 3 4 5 6 7 all; do
    ln -sf executor "$obj/exec-$l"
    ln -sf executor "$obj/exec-$l-profile"
done
SB_MODE=none build/grader/verdict -o "$out/results.tsv" -d "$out/outputs" -x "$PWD/$obj" -s 120 | tail -n 1
# The framework's tests: the public runner (lesson 0), linked to the same objects.
tobjs=()
for f in tests/run_tests.c tests/kit/*.c tests/test_*.c; do
    o="$obj/t_$(basename "$f" .c).o"
    "$CC" -std=c11 -g -O0 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -Isolution/include -Itests/kit \
        $(pkg-config --cflags check) -c "$f" -o "$o" || exit 1
    tobjs+=("$o")
done
"$CXX" --coverage -Wl,--undefined=__gcov_dump "${objs[@]}" "${tobjs[@]}" $(pkg-config --libs check) -lm \
    -o "$obj/framework" ||
    exit 1
"$obj/framework" -l 0 -q | tail -n 1
not_here="this executor's CUDA emulator is not instrumented"
if grep -v -P '\tpass\t' "$out/results.tsv" | grep -qvF "$not_here"; then
    echo "coverage: some hidden tests failed on the solution:" >&2
    grep -v -P '\tpass\t' "$out/results.tsv" | grep -vF "$not_here" | cut -f2,6 | head -n 5 >&2
    exit 1
fi
echo "coverage: $(grep -cF "$not_here" "$out/results.tsv") performance tests not run here (they need the emulator's instrumented build)"
gcovr --root . --filter 'solution/src/' --object-directory "$obj" \
    --html-details "$out/index.html" --print-summary --fail-under-line "$min" \
    "$obj" | tee "$out/summary.txt"
status=${PIPESTATUS[0]}
echo "coverage: build/coverage/index.html; lines must be at least $min% covered"
exit "$status"
