#!/usr/bin/env bash
# check.sh -- the project's own checks, run by `make check` (and so by CI).
#
# Each check below is counted; the last line is "N passed, N failed" and
# the exit status is 0 only if nothing failed.  Logs go to build/check/.
#
#   1. the skeleton generator's self-tests (hostile marker files)
#   2. skeleton/ is exactly what the generator makes from solution/
#   3. both trees build with -Wall -Wextra -Werror; with nvcc installed,
#      every .cu file of both trees also builds for sm_75 and sm_90; the
#      CUDA emulator's self-tests (broken kernels it must catch)
#   3b. the benchmark: its build (-O3 -march=native, as make bench) has no
#      warning, and a smoke pass of it (make bench-cpu SMOKE=1) checks every
#      case, NumPy's included, and feeds the plots and tables that read its
#      TSV; the recorded tables of README.md and lesson 2 match
#      lessons/data/bench-cpu.tsv
#   4. every public test passes on the solution
#   5. ... and again under AddressSanitizer + UBSan (+ LeakSanitizer);
#      the [cuda] cases run on a GPU if there is one, else on the emulator;
#      lesson 7's tests catch a transpose kernel without its barriers
#   6. on the skeleton, every lesson test FAILS with "not implemented" --
#      none passes, none crashes -- and it is the same set of tests; the
#      framework's tests ("lesson 0") pass there as they do on the solution
#   7. the grader's self-tests: the solution scores 100%, the skeleton 0,
#      hostile and buggy submissions get their expected scores, batch
#      grading writes its gradebook; the hidden tests cover >= 95% of the
#      solution's lines
#   8. the handout holds no solution and no hidden test; the Gradescope
#      zip grades the solution in a fake /autograder
#   9. the student workflow: make status (solution complete, skeleton none),
#      make test L=/T=, make watch reruns after a change (inotify and
#      polling), compile errors shown with the compiler's message,
#      compile_commands.json
#  10. the web book builds (every snippet tag exists, no pasted code, the
#      included code compiles) and every page loads in headless Chromium
set -uo pipefail
cd "$(dirname "$0")/.."

logs=build/check
rm -rf "$logs"
mkdir -p "$logs"
passed=0
failed=0

ok()  { passed=$((passed + 1)); printf '  ok    %s\n' "$1"; }
bad() { failed=$((failed + 1)); printf '  FAIL  %s\n' "$1"; }

# run NAME CMD...: one counted check; on failure show the log's tail.
run() {
    local name=$1 log
    log="$logs/$(echo "$name" | tr -c 'A-Za-z0-9_\n-' '_').log"
    shift
    if "$@" >"$log" 2>&1; then
        ok "$name"
    else
        bad "$name (log: $log)"
        tail -n 25 "$log" | sed 's/^/        /'
    fi
}

# add_counts NAME LOG: fold a sub-run's closing "N passed, N failed" line
# into the totals (and fail loudly if it has none).
add_counts() {
    local name=$1 log=$2 line p f
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$line" ]; then
        bad "$name: no 'N passed, N failed' line (log: $log)"
        tail -n 25 "$log" | sed 's/^/        /'
        return
    fi
    p=${line%% passed*}
    f=${line#*passed, }
    f=${f%% failed*}
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -eq 0 ]; then
        printf '  ok    %s: %s\n' "$name" "$line"
    else
        printf '  FAIL  %s: %s (log: %s)\n' "$name" "$line" "$log"
        grep -E '^  (FAIL|CRASH)|^not ok' "$log" | head -n 20 | sed 's/^/      /'
    fi
}

echo "== skeleton generator"
bash grader/test_skelgen.sh >"$logs/skelgen.log" 2>&1
add_counts "skelgen self-tests" "$logs/skelgen.log"
run "skeleton/ in sync with solution/" make skeleton-check

echo "== builds (-Wall -Wextra -Werror)"
run "build solution" make build TREE=solution
run "build skeleton" make build TREE=skeleton
run "nvcc: both trees' .cu files build for sm_75 and sm_90, warnings as errors" make cuda-check
bash grader/emu/test_emu.sh >"$logs/emu.log" 2>&1
add_counts "CUDA emulator self-tests" "$logs/emu.log"

echo "== the benchmark (make bench's build, and a smoke pass)"
# From scratch, so that every file is compiled: in this build the
# optimiser's warnings (-O3 -march=native) are not errors, so that a user's
# benchmark always builds (Makefile), but here any warning fails.
bench_build() {
    local log=$logs/bench-build.log status
    make -B BENCH=1 TREE=solution CUDA=emu build/solution/bench/bench_cpu >"$log" 2>&1
    status=$?
    cat "$log"
    [ "$status" -eq 0 ] || return 1
    if grep -q 'warning:' "$log"; then
        echo "the benchmark build has warnings (above): each is an error in every other build"
        return 1
    fi
}
run "benchmark build (-O3 -march=native) without a warning" bench_build
bench_smoke() {
    make bench-cpu TREE=solution SMOKE=1 || return 1
    local tsv=build/bench/cpu-smoke.tsv p
    mkdir -p "$logs/bench-plots"
    for p in lessons/figures/*_bench.gp; do
        gnuplot -e "data='$tsv'; outdir='$logs/bench-plots'" "$p" || return 1
    done
    python3 tests/bench/bench_tables.py --print "$tsv" >/dev/null
}
run "make bench-cpu SMOKE=1: every case checked, NumPy beside it; plots and tables drawn from it" \
    bench_smoke
run "README's and lesson 2's benchmark tables match lessons/data/bench-cpu.tsv" \
    python3 tests/bench/bench_tables.py --check lessons/data/bench-cpu.tsv

echo "== public tests on the solution"
build/solution/normal/run_tests -r "$logs/solution.tsv" >"$logs/solution.log" 2>&1
add_counts "solution" "$logs/solution.log"

echo "== public tests on the solution, AddressSanitizer + UBSan"
if make build TREE=solution SAN=1 >"$logs/build-asan.log" 2>&1; then
    make test TREE=solution SAN=1 >"$logs/solution-asan.log" 2>&1
    add_counts "solution (sanitizers)" "$logs/solution-asan.log"
else
    bad "build solution with sanitizers (log: $logs/build-asan.log)"
fi

if [ -f tests/selftest_permute_nosync.sh ]; then
    bash tests/selftest_permute_nosync.sh >"$logs/permute-nosync.log" 2>&1
    add_counts "lesson 7's tests catch a transpose without __syncthreads()" \
        "$logs/permute-nosync.log"
fi

echo "== public tests on the skeleton: each must fail cleanly"
build/skeleton/normal/run_tests -r "$logs/skeleton.tsv" >"$logs/skeleton.log" 2>&1
status=$?
if [ "$status" -eq 1 ]; then ok "skeleton run exits 1"; else bad "skeleton run exits $status, expected 1"; fi
# Same tests as the solution ran: none missing, none extra.
if diff <(cut -f1,2 "$logs/solution.tsv" | sort) <(cut -f1,2 "$logs/skeleton.tsv" | sort) \
        >"$logs/skeleton-names.log"; then
    ok "skeleton runs the same $(wc -l <"$logs/skeleton.tsv") tests as the solution"
else
    bad "skeleton and solution ran different tests (log: $logs/skeleton-names.log)"
fi
clean=0 framework=0
while IFS=$'\t' read -r lesson test result msg; do
    if [ "$lesson" = 0 ]; then
        if [ "$result" = pass ]; then
            framework=$((framework + 1))
            passed=$((passed + 1))
        else
            bad "skeleton: framework test $test: $result: $msg"
        fi
    elif [ "$result" != fail ]; then
        bad "skeleton: lesson $lesson $test: $result, expected a clean failure${msg:+: $msg}"
    elif [[ $msg != *"not implemented"* ]]; then
        bad "skeleton: lesson $lesson $test failed without saying 'not implemented': $msg"
    else
        clean=$((clean + 1))
        passed=$((passed + 1))
    fi
done <"$logs/skeleton.tsv"
printf '  ok    skeleton: %d framework tests passed, %d lesson tests failed cleanly with "not implemented"\n' \
    "$framework" "$clean"

echo "== the grader's self-tests"
bash grader/test_grader.sh >"$logs/grader.log" 2>&1
add_counts "grader self-tests" "$logs/grader.log"

run "make coverage (the hidden tests run at least 95% of the solution's lines)" make coverage

echo "== the student handout and the Gradescope autograder"
run "make handout (checked: no solution code, no hidden tests)" make handout
run "make gradescope (run_autograder grades the solution in a fake /autograder)" make gradescope

echo "== the student workflow (make status, make test, make watch)"
bash tests/test_workflow.sh >"$logs/workflow.log" 2>&1
add_counts "workflow" "$logs/workflow.log"

echo "== the web book"
run "make docs-check (snippets, figures, pages in Chromium)" make docs-check

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
