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
#   4. every public test passes on the solution
#   5. ... and again under AddressSanitizer + UBSan (+ LeakSanitizer);
#      the [cuda] cases run on a GPU if there is one, else on the emulator;
#      lesson 7's tests catch a transpose kernel without its barriers
#   6. on the skeleton, every lesson test FAILS with "not implemented" --
#      none passes, none crashes -- and it is the same set of tests; the
#      framework's tests ("lesson 0") pass there as they do on the solution
#   7. the grader's self-tests: the solution scores 100%, the skeleton 0,
#      hostile and buggy submissions get their expected scores, batch
#      grading writes its gradebook; grade-all keeps a row for every
#      submission whatever its name and stops a grade at its time limit;
#      RUNNER=slurm on a single-node Slurm started for the test gives the
#      same gradebook as a local batch; the hidden tests cover >= 95% of
#      the solution's lines
#   8. the handout holds no solution and no hidden test; its GitHub
#      Classroom workflow is valid and its commands pass on the solution
#      and fail on the skeleton; the Gradescope zip grades the solution in
#      a fake /autograder; the PrairieLearn question grades the solution,
#      the skeleton and a compile error in fake /grade layouts
#   9. the student workflow: make status (solution complete, skeleton none),
#      make test L=/T=, make watch reruns after a change (inotify and
#      polling), compile errors shown with the compiler's message,
#      compile_commands.json
#  10. the web book builds (every snippet tag exists, no pasted code, the
#      included code compiles) and every page loads in headless Chromium;
#      the EPUB passes epubcheck
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
bash grader/test_grade_all.sh >"$logs/grade-all.log" 2>&1
add_counts "grade-all: a row for every submission, the time limit, Canvas" "$logs/grade-all.log"
bash grader/test_slurm.sh >"$logs/slurm.log" 2>&1
add_counts "grade-all RUNNER=slurm on a single-node Slurm" "$logs/slurm.log"

run "make coverage (the hidden tests run at least 95% of the solution's lines)" make coverage

echo "== the student handout, GitHub Classroom, Gradescope and PrairieLearn"
run "make handout (checked: no solution code, no hidden tests)" make handout
run "GitHub Classroom workflow (valid; passes on the solution, fails on the skeleton)" \
    python3 grader/package.py check-classroom build/handout/ndarray-workbook.tar.gz
run "make gradescope (run_autograder grades the solution in a fake /autograder)" make gradescope
run "make prairielearn (run.sh in fake /grade: solution 1, skeleton 0, a compile error)" make prairielearn

echo "== the student workflow (make status, make test, make watch)"
bash tests/test_workflow.sh >"$logs/workflow.log" 2>&1
add_counts "workflow" "$logs/workflow.log"

echo "== the web book"
run "make docs-check (snippets, figures, pages in Chromium)" make docs-check
run "make epub-check (the EPUB of the lessons and guides, epubcheck clean)" make epub-check

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
