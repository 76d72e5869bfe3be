#!/usr/bin/env bash
# check.sh -- the project's own checks, run by `make check` (and so by CI).
#
# Each check below is counted; the last line is "N passed, N failed" and
# the exit status is 0 only if nothing failed.  Logs go to build/check/.
#
#   1. the skeleton generator's self-tests (hostile marker files)
#   2. skeleton/ is exactly what the generator makes from solution/, and
#      the kit names each of its stubs and each fault of the CUDA emulator
#      (tests/kit/check.c's tables)
#   3. both trees build with -Wall -Wextra -Werror (and with gcc 11, Ubuntu
#      22.04's, Gradescope's base image, as the grader too); the CUDA emulator's
#      self-tests (broken kernels it must catch); the GPU path, built by
#      nvcc with CUDA=gpu and no GPU: both trees' .cu files and the GPU
#      benchmarks for sm_75 and sm_90 (no kernel spills), the public test
#      runner plain and with sanitizers, the grader's two builds of the
#      solution, and `make -n gpu-report`
#      with a stand-in nvidia-smi, which also stands in for the GPU whose
#      architecture the grader's nvcc flags name (asked outside the sandbox)
#   3b. the benchmark: its build (-O3 -march=native, as make bench) has no
#      warning, and a smoke pass of it (make bench-cpu SMOKE=1) checks every
#      case, NumPy's included, and feeds the plots and tables that read its
#      TSV; OpenBLAS, in bench_cpu and in NumPy, runs kernels that fit the
#      CPU, not a fallback (and bench_cpu -T tells the two apart on known
#      cases); the recorded tables of README.md and lessons 2 and 5, and
#      every speed the lessons state, match lessons/data/bench-cpu.tsv, and
#      no lesson states a speed by hand (a planted one is caught)
#   4. every public test passes on the solution; lesson 6's also on a
#      build whose grids stop at 2 blocks (every grid loop runs many rounds)
#   5. ... and again under AddressSanitizer + UBSan (+ LeakSanitizer);
#      the [cuda] cases run on a GPU if there is one, else on the emulator;
#      lesson 7's tests catch a transpose kernel without its barriers
#   6. on the skeleton, every lesson test FAILS with "not implemented" --
#      none passes, none crashes -- and it is the same set of tests; the
#      framework's tests ("lesson 0") pass there as they do on the solution
#   7. the sandbox's probes (in its mode here and, as root, in the uid
#      fallback) fail to leave it, and a stand-in for the CUDA driver's
#      start-up runs under the GPU policy and a GPU test's limits; the checks
#      of a lesson object (grader/objcheck.py) accept and refuse each crafted
#      object as the build notes say; the grader's self-tests: the solution
#      scores 100%, the skeleton under 5%, hostile and buggy submissions get their
#      expected scores, every report stays valid whatever a submission
#      prints, a grade past its time limit stops, batch grading
#      writes its gradebook; grade-all keeps a row for every submission
#      whatever its name and stops a grade at its time limit; RUNNER=slurm
#      on a single-node Slurm started for the test gives the same gradebook
#      as a local batch; the hidden tests cover >= 95% of the solution's
#      lines
#   8. the handout holds no solution and no hidden test; its GitHub
#      Classroom workflow is valid and its commands pass on the solution
#      and fail on the skeleton; the Gradescope zip grades the solution
#      (lessons 2 and 7) in a fake /autograder; the PrairieLearn question
#      grades the solution (lessons 2 and 7), the skeleton and a compile
#      error (lessons 1 and 2) in fake /grade layouts (section 7 grades the
#      solution in full)
#   9. the student workflow: make status (solution complete, skeleton none),
#      make test L=/T=, make watch reruns after a change (inotify and
#      polling), compile errors shown with the compiler's message,
#      compile_commands.json; on a busy machine the CPU limit decides and
#      the wall-clock backstop stops only a test that sleeps, naming where;
#      make debug under gdb; make bench-loop measures the loop's latency
#  10. the CUDA emulator as a profiler and a sanitizer: the model's
#      validation table (its parameters re-fitted, its out-of-sample rows
#      judged) and the lessons' profiles are what the build makes
#      (lessons/data/), make profile L=7 profiles every lesson 7 kernel
#      version, the public tests pass on the instrumented emulator, and its
#      racecheck names the lines of a transpose without its barriers
#  11. the web book builds (every snippet tag exists, no pasted code, the
#      included code compiles) and every page loads in headless Chromium;
#      the EPUB passes epubcheck; in a copy whose lesson files are edited,
#      the examples of tool output still take the skeleton as shipped
#  12. the fuzzer (tests/fuzz/, clang's libFuzzer with ASan and UBSan)
#      replays its seeds and every input that ever found a bug, on the CPU
#      and on the CUDA device, then fuzzes 60 s (CPU) and 20 s (CUDA);
#      each run prints its exec count
set -uo pipefail
cd "$(dirname "$0")/.."

# tests/check.sh [SECTION...]: those sections alone; --quick: the
# contributor's quick tier (builds, the public tests plain and with the
# sanitizers, the skeleton, the sandbox's probes and the lesson objects'
# checks, one grade).
sections="skelgen builds compat gpu bench public public-asan skeleton sandbox grader coverage
          packaging workflow profiler book fuzz grade-one"
quick="skelgen builds public public-asan skeleton sandbox grade-one"
only=()
for a in "$@"; do
    case $a in
    --quick) only+=($quick) ;;
    *) [[ " $(echo $sections) " == *" $a "* ]] ||
           { echo "check.sh: no section '$a' (the sections: $(echo $sections))" >&2; exit 2; }
       only+=("$a") ;;
    esac
done
logs=build/check
rm -rf "$logs"
mkdir -p "$logs"
passed=0
failed=0

ok()  { passed=$((passed + 1)); printf '  ok    %s\n' "$1"; }
# edited_copy TREE DIR: TREE's include/ and src/ in DIR, each lesson file
# with a comment line more, so that none is the course's own (whose
# objects a grade takes as they are): a grade compiles and checks them all
edited_copy() {
    local f
    rm -rf "$2" && mkdir -p "$2" && cp -R "$1/include" "$1/src" "$2/" || return 1
    for f in "$2/src/"[0-9][0-9]_*; do echo "/* edited */" >>"$f"; done
}
# runner TREE [VAR=VALUE...]: where `make build` puts TREE's test runner
# (build/TREE/normal/run_tests, or normal-gpu/ when the GPU is used)
runner() { make -s --no-print-directory runner-path SAN=0 TREE="$@"; }
bad() { failed=$((failed + 1)); printf '  FAIL  %s\n' "$1"; }
# section ID TITLE: start a group of checks, after the last one's seconds
# (so that a slow CI run shows where its time went)
section() {
    [ -z "${sec_title:-}" ] || printf '        (%d s)\n' $((SECONDS - sec_t0))
    [ $# -gt 1 ] && shift
    sec_title=$1 sec_t0=$SECONDS
    [ -z "$1" ] || echo "== $1"
}
# want ID: whether section ID runs (tests/check.sh ID...: those alone)
want() { [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }

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

if want skelgen; then
section skelgen "skeleton generator"
bash grader/test_skelgen.sh >"$logs/skelgen.log" 2>&1
add_counts "skelgen self-tests" "$logs/skelgen.log"
run "skeleton/ in sync with solution/" make skeleton-check
# The grader names a skeleton stub in its own words (messages hide): from
# tests/kit/check.c's table, which must list every nd_not_implemented call.
stubs_named() {
    diff <(grep -rhoE 'nd_not_implemented\("[a-z_]+", [0-9]+\)' skeleton/src |
               sed -E 's/.*\("([a-z_]+)", ([0-9]+)\)/\1 \2/' | sort -u) \
         <(grep -oE '\{ "[a-z_]+", [0-9]+ \}' tests/kit/check.c |
               sed -E 's/\{ "([a-z_]+)", ([0-9]+) \}/\1 \2/' | sort -u)
}
run "the kit's table of the skeleton's stubs (tests/kit/check.c)" stubs_named
# ... and names a CUDA emulator's fault by a phrase of its message: each
# phrase of the kit's table must be in the emulator's messages
# (grader/emu/emu.cpp, and profile.cpp, which it includes: the sanitizer).
faults_named() {
    python3 - <<'EOF'
import re, sys
kit = open("tests/kit/check.c").read()
block = kit[kit.index("emu_faults[] = {"):]
phrases = re.findall(r'\{ "([^"]+)", "', block[:block.index("};")])
emu = re.sub(r'"\s*\n\s*"', "", open("grader/emu/emu.cpp").read() + open("grader/emu/profile.cpp").read())
missing = [p for p in phrases if p not in emu]
print(f"{len(phrases)} phrases, not in emu.cpp or profile.cpp: {missing}")
sys.exit(1 if missing or not phrases else 0)
EOF
}
run "the kit's phrases of the CUDA emulator's faults (tests/kit/check.c)" faults_named

fi
if want builds; then
section builds "builds (-Wall -Wextra -Werror)"
run "build solution" make build TREE=solution SAN=0
run "build skeleton" make build TREE=skeleton SAN=0

fi
if want compat; then
section compat "gcc 11 (Gradescope's Ubuntu 22.04), and the CUDA emulator's self-tests"
run "both trees, the emulator and the grader build with gcc/g++ 11 (Ubuntu 22.04, Gradescope's image)" make -s compat-check
bash grader/emu/test_emu.sh >"$logs/emu.log" 2>&1
add_counts "CUDA emulator self-tests" "$logs/emu.log"

fi
if want gpu; then
section gpu "the GPU path, built by nvcc without a GPU (CUDA=gpu)"
# What a GPU machine would build, built here: a GPU build that only
# compiles on a GPU machine is a bug.  Objects are shared between steps:
# cuda-check's are the plain GPU build's, and grade.sh reuses the objects
# it checked.  Then the dry run of make gpu-report, with a stand-in
# nvidia-smi that lists a GPU, checks every target and program it names.
nvcc=$(make -s --no-print-directory -f cuda.mk cuda-env CUDA=emu | sed -n "s/^nvcc='\(.*\)'$/\1/p")
# grade_gpu NAME TREE: the grader's plain and sanitizer builds of TREE with
# nvcc, its lesson files all accepted (no build notes), every one compiled
# and checked in the sandbox (an edited copy)
grade_gpu() {
    local tree=$logs/grade-gpu-tree-$1
    edited_copy "$2" "$tree" || return 1
    CUDA=gpu GRADE_BUILD_ONLY=1 bash grader/grade.sh "$tree" "$logs/grade-gpu-$1" &&
        for v in normal asan; do for l in 1 2 3 4 5 6 7 all; do
            [ -x "$logs/grade-gpu-$1/exec-$v/exec-$l" ] || { echo "no executor exec-$l ($v)"; return 1; }
        done; done &&
        { [ ! -s "$logs/grade-gpu-$1/build-notes.tsv" ] ||
          { echo "build notes:"; cat "$logs/grade-gpu-$1/build-notes.tsv"; false; }; }
}
# stand_in_smi DIR [COMPUTE_CAP]: an nvidia-smi in DIR that lists an H100,
# and answers --query-gpu=compute_cap with COMPUTE_CAP (none: it fails, as
# a driver too old for the field does)
stand_in_smi() {
    mkdir -p "$1" &&
    printf '%s\n' '#!/bin/sh' 'case "$*" in' \
        '-L*) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-stand-in)" ;;' \
        "*compute_cap*) ${2:+echo $2; exit 0;} echo 'Field \"compute_cap\" is not a valid field to query.'; exit 2 ;;" \
        '*) echo "name, driver_version"; echo "NVIDIA H100 80GB HBM3 (stand-in), 0" ;;' \
        'esac' >"$1/nvidia-smi" && chmod +x "$1/nvidia-smi"
}
# The grader builds a graded .cu file for the GPU's own architecture, which
# cuda.mk asks once, outside the compile sandbox (not -arch=native, which
# asks inside it and falls back silently to PTX when the query fails): with
# a stand-in H100 (compute capability 9.0), sm_90; with one whose driver
# cannot say, the library's sm_75 + PTX + sm_90, and a warning; with no
# GPU, sm_75; and nvcc accepts the flags.
gpu_arch_resolved() {
    local env flags
    stand_in_smi "$logs/stand-in-90" 9.0 && stand_in_smi "$logs/stand-in-old" || return 1
    env=$(PATH="$PWD/$logs/stand-in-90:$PATH" make -s --no-print-directory -f cuda.mk cuda-env CUDA=gpu) &&
    echo "$env" | grep -E '^(gpu_arch|nvcc_grade_flags)=' &&
    echo "$env" | grep -qx "gpu_arch='90'" &&
    echo "$env" | grep -q '^nvcc_grade_flags=(.* -gencode arch=compute_90,code=sm_90 ' &&
    ! echo "$env" | grep -q native || { echo "with an H100: not sm_90 alone"; return 1; }
    flags=$(echo "$env" | sed -n 's/^nvcc_grade_flags=(\(.*\))$/\1/p')
    printf '__global__ void k(float *p) { p[threadIdx.x] = 1; }\n' >"$logs/arch.cu" &&
    "$nvcc" $flags -c "$logs/arch.cu" -o "$logs/arch.o" || { echo "nvcc refuses: $flags"; return 1; }
    env=$(PATH="$PWD/$logs/stand-in-old:$PATH" make -s --no-print-directory -f cuda.mk cuda-env \
          CUDA=gpu 2>"$logs/arch-old.err") &&
    echo "$env" | grep -E '^(gpu_arch|nvcc_grade_flags)=' && cat "$logs/arch-old.err" &&
    echo "$env" | grep -q 'nvcc_grade_flags=(.*arch=compute_75,code=compute_75.*code=sm_90' &&
    grep -q 'set GPU_ARCH=NN' "$logs/arch-old.err" ||
        { echo "with a GPU that cannot say: not the library's architectures and a warning"; return 1; }
    env=$(PATH=/usr/bin:/bin make -s --no-print-directory -f cuda.mk cuda-env CUDA=gpu NVCC="$nvcc") &&
    echo "$env" | grep -E '^(gpu_arch|nvcc_grade_flags)=' &&
    echo "$env" | grep -q '^nvcc_grade_flags=(-std=c++17 -g -arch=sm_75 ' ||
        { echo "without a GPU: not sm_75"; return 1; }
}
gpu_report_dry_run() {
    stand_in_smi "$logs/stand-in" 9.0 &&
    { PATH="$PWD/$logs/stand-in:$PATH" make -n gpu-report >"$logs/gpu-report-dry-run.out" 2>&1
      local s=$?; cat "$logs/gpu-report-dry-run.out"; [ $s -eq 0 ]; } &&
    grep -q 'dry run) compute-sanitizer-racecheck' "$logs/gpu-report-dry-run.out" &&
    grep -q 'dry run) bench_gpu_permute' "$logs/gpu-report-dry-run.out" &&
    echo "== make -n bench TREE=solution, GPU part: each program it runs, built (by make cuda-check)" &&
    PATH="$PWD/$logs/stand-in:$PATH" make -n bench TREE=solution >"$logs/bench-dry-run.out" 2>&1 &&
    local progs p && progs=$(grep -o 'build/[^ ;]*/bench_gpu[a-z_0-9]*' "$logs/bench-dry-run.out" | sort -u) &&
    [ -n "$progs" ] && for p in $progs; do
        [ -x "$p" ] || { echo "make bench would run $p, which the GPU build did not make"; return 1; }
        echo "$p: built"
    done
}
if [ -z "$nvcc" ]; then
    bad "nvcc is not installed (the CUDA toolkit, in /usr/local/cuda or on PATH): the GPU path cannot be built"
else
    run "make cuda-check: both trees' .cu files and the GPU benchmarks, sm_75 and sm_90, warnings as errors" \
        make cuda-check
    run "ptxas: no kernel of the solution spills registers" \
        python3 tests/ptxas_table.py --spills build/solution/normal-gpu/lib/06_cuda.cu.o.ptxas \
        build/solution/normal-gpu/lib/07_permute.cu.o.ptxas
    run "the public test runner, GPU build" make build TREE=solution CUDA=gpu SAN=0
    run "the public test runner, GPU build with AddressSanitizer + UBSan" \
        make build TREE=solution CUDA=gpu SAN=1
    run "the grader's objects" make -s grader-objs
    run "the grader's two GPU builds of the solution" grade_gpu solution solution
    run "make -n gpu-report and make -n bench, with a stand-in nvidia-smi: every target and program they run exists" \
        gpu_report_dry_run
    run "the grader's nvcc flags: the GPU's architecture, asked outside the sandbox (stand-in nvidia-smi: sm_90; a driver that cannot say; no GPU)" \
        gpu_arch_resolved
fi
fi
if want bench; then
section bench "the benchmark (make bench's build, and a smoke pass)"
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
run "bench_cpu -T: it tells a fallback OpenBLAS core type from one that fits the CPU (known cases)" \
    build/solution/bench/bench_cpu -T
# The smoke pass chose OpenBLAS's kernels as make bench does: on a CPU
# that runs more than those kernels need, the run failed its purpose.
bench_blas_kernels() {
    local tsv=build/bench/cpu-smoke.tsv
    grep '^# openblas' "$tsv"
    grep -qx '# openblas fallback: no' "$tsv" && grep -q '^# numpy: .*kernels for' "$tsv"
}
run "make bench's OpenBLAS, in bench_cpu and NumPy, runs kernels that fit this CPU, not a fallback" \
    bench_blas_kernels
run "the recorded tables (README, lessons 2 and 5) and the lessons' speed figures match lessons/data/bench-cpu.tsv; no lesson states a speed without data" \
    python3 tests/bench/bench_tables.py --check lessons/data/bench-cpu.tsv
# ... and that check sees a speed written into a lesson by hand, even
# split over two lines, and a generated figure edited by hand (in a copy).
stray_speed_caught() {
    local t out rc
    t=$(mktemp -d) || return 1
    mkdir -p "$t/tests/bench" && cp -r README.md lessons "$t/" &&
        cp tests/bench/bench_tables.py "$t/tests/bench/" &&
        printf '\nOn this machine a + b runs at 39\nGB/s.\n' >>"$t/lessons/03-ewise.md" &&
        sed -i 's/-->[^<]*<!-- \/bench-cpu -->/-->40–45 GB\/s<!-- \/bench-cpu -->/' \
            "$t/lessons/05-matmul.md" || { rm -rf "$t"; return 1; }
    out=$(python3 "$t/tests/bench/bench_tables.py" --check lessons/data/bench-cpu.tsv 2>&1)
    rc=$?
    rm -rf "$t"
    echo "$out"
    [ "$rc" -eq 1 ] && [[ $out == *"lessons/03-ewise.md:"*": 39 GB/s"* ]] &&
        [[ $out == *"figures of 1 file(s) differ"* ]]
}
run "a speed stated in a lesson by hand, or a generated figure edited, fails that check" \
    stray_speed_caught

fi
if want public; then
section public "public tests on the solution"
"$(runner solution)" -r "$logs/solution.tsv" >"$logs/solution.log" 2>&1
add_counts "solution" "$logs/solution.log"
# Grids capped at 2 blocks along x, y and z (MAX_BLOCKS): every grid-stride
# loop, and the matmul's loops over row tiles, rows and batches, run many
# rounds, as they do on a GPU only past 65535 blocks (8388480 rows for the
# tiled matmul, too many for the emulator in a test's time).
small_grid() {
    local t=$logs/small-grid
    rm -rf "$t" && cp -R solution "$t" &&
    sed -i 's/^#define MAX_BLOCKS 65535$/#define MAX_BLOCKS 2/' "$t/src/06_cuda.cu" &&
    grep -q '^#define MAX_BLOCKS 2$' "$t/src/06_cuda.cu" &&
    make build TREE="$t" CUDA=emu SAN=0 && "$(runner "$t" CUDA=emu)" -l 6
}
run "lesson 6's tests on a build whose grids stop at 2 blocks (MAX_BLOCKS)" small_grid

fi
if want public-asan; then
section public-asan "public tests on the solution, AddressSanitizer + UBSan"
if make build TREE=solution SAN=1 >"$logs/build-asan.log" 2>&1; then
    make test TREE=solution SAN=1 >"$logs/solution-asan.log" 2>&1
    add_counts "solution (sanitizers)" "$logs/solution-asan.log"
else
    bad "build solution with sanitizers (log: $logs/build-asan.log)"
fi

fi
if want skeleton; then
section skeleton "public tests on the skeleton: each must fail cleanly"
[ -s "$logs/solution.tsv" ] || "$(runner solution)" -r "$logs/solution.tsv" >/dev/null 2>&1
"$(runner skeleton)" -r "$logs/skeleton.tsv" >"$logs/skeleton.log" 2>&1
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

fi
if want sandbox; then
section sandbox "the sandbox: probes that try to leave it, in its strong mode and its fallback; the lesson objects' checks"
# (cuda_start: a stand-in for the CUDA driver's start-up, run as a grade
# runs a test with a GPU in view: the GPU policy and a GPU test's limits
# must let it start, the CPU policy and a CPU test's limits must not)
sbt=build/grader/sandbox-test
if make -s $sbt/test_sandbox $sbt/probe $sbt/cuda_start >"$logs/sandbox-build.log" 2>&1; then
    $sbt/test_sandbox $sbt/probe "$PWD" $sbt/cuda_start >"$logs/sandbox.log" 2>&1
    add_counts "sandbox probes ($(head -n 1 "$logs/sandbox.log" | sed 's/^# sandbox mode: //'))" \
        "$logs/sandbox.log"
    if [ "$(id -u)" -eq 0 ]; then
        SB_MODE=uid $sbt/test_sandbox $sbt/probe "$PWD" $sbt/cuda_start \
            >"$logs/sandbox-uid.log" 2>&1
        add_counts "sandbox probes (the uid fallback)" "$logs/sandbox-uid.log"
    fi
else
    bad "build the sandbox's self-tests (log: $logs/sandbox-build.log)"
fi
# (what may go into an executor beside the sandbox: nothing that runs
# before main, nothing of another lesson's; seconds, no grade)
python3 grader/test_objcheck.py >"$logs/objcheck.log" 2>&1
add_counts "lesson objects' checks, a crafted object per rule (grader/objcheck.py)" "$logs/objcheck.log"

fi
if want grader; then
section grader "the grader's self-tests"
bash grader/test_grader.sh >"$logs/grader.log" 2>&1
add_counts "grader self-tests" "$logs/grader.log"
bash grader/test_reports.sh >"$logs/reports.log" 2>&1
add_counts "reports valid whatever a submission prints (Gradescope's spec, JUnit XSD, PrairieLearn, Canvas)" "$logs/reports.log"
bash grader/test_grade_all.sh >"$logs/grade-all.log" 2>&1
add_counts "grade-all: a row for every submission, the time limit, Canvas" "$logs/grade-all.log"
bash grader/test_slurm.sh >"$logs/slurm.log" 2>&1
add_counts "grade-all RUNNER=slurm on a single-node Slurm" "$logs/slurm.log"

fi
if want coverage; then
section coverage "coverage and the planted bugs"
run "make coverage (the hidden tests run at least 95% of the solution's lines)" make coverage
# make mutants grades each planted bug (an hour for all of them): here,
# every patch must still apply to solution/, and one is graded and caught.
mutants_apply() {
    local p t bad=0
    t=$(mktemp -d /tmp/nd_mutants.XXXXXX)
    for p in grader/mutants/*.patch; do
        rm -rf "$t/tree" && cp -R solution "$t/tree" &&
            patch -s -p1 --dry-run -d "$t/tree" <"$p" >/dev/null 2>&1 ||
            { echo "does not apply to solution/: $p"; bad=1; }
    done
    rm -rf "$t"
    [ "$bad" -eq 0 ] && echo "$(ls grader/mutants/*.patch | wc -l) mutants apply"
}
run "every planted bug in grader/mutants/ applies to solution/" mutants_apply
run "make mutants M=02_compact_shares_compact: a planted bug graded and caught" \
    make mutants M=02_compact_shares_compact

fi
# The student workflow's checks build their trees one file at a time, on
# one core: they run beside the packaging checks below (their trees and
# build folders are their own), and are counted after them.
if want workflow; then
    bash tests/test_workflow.sh >"$logs/workflow.log" 2>&1 &
    workflow=$!
fi
if want packaging; then
section packaging "the student handout, GitHub Classroom, Gradescope and PrairieLearn"
run "make handout (checked: no solution code, no hidden tests)" make handout
run "GitHub Classroom workflow (valid; passes on the solution, fails on the skeleton)" \
    python3 grader/package.py check-classroom build/handout/ndarray-workbook.tar.gz
run "make gradescope (run_autograder grades the solution, lessons 2 and 7, in a fake /autograder)" make gradescope
run "make prairielearn (run.sh in fake /grade: solution 1, skeleton 0, a compile error)" make prairielearn

fi
if want workflow; then
section workflow "the student workflow (make status, make test, make watch), begun beside the packaging"
wait "$workflow"
add_counts "workflow" "$logs/workflow.log"
run "the loop's latency, idle and with 4 busy processes, with the targets (make bench-loop)" \
    make bench-loop

fi
if want profiler; then
section profiler "the CUDA emulator as a profiler and a sanitizer (grader/emu/profile.mk)"
# fresh: regenerated here, they must be what lessons/data/ holds
fresh() {   # NAME TARGET FILES...: make TARGET OUT=dir, then compare each file
    local name=$1 target=$2 dir="$logs/$2"
    shift 2
    mkdir -p "$dir"
    if ! make -s "$target" TREE=solution OUT="$dir" >"$logs/$target.log" 2>&1; then
        bad "$name: make $target failed (log: $logs/$target.log)"
        tail -n 15 "$logs/$target.log" | sed 's/^/        /'
        return
    fi
    local f stale=
    for f in "$@"; do
        cmp -s "$dir/$f" "lessons/data/$f" || stale="$stale $f"
    done
    if [ -z "$stale" ]; then ok "$name"
    else bad "$name: lessons/data/ differs from what make $target writes:$stale (run make $target TREE=solution and commit)"; fi
}
fresh "the model holds the parameters its fit rows give, meets every out-of-sample published row (10 points, no pair reversed), and lessons/data/model-validation.* is current" \
    model-validation model-validation.tsv model-validation.md
# The committed table judged on its own: out-of-sample rows of more than
# one publication, more of them than fitted ones, each within 10 points.
verdict=$(awk -F'\t' '!/^#/ && $1 != "row" {
        e = $7 < 0 ? -$7 : $7
        if ($8 == "test") { test++; src[$2] = 1; if (e > worst) worst = e; if (e > 10) { far++; which = which " " $1 } }
        else fit++
    }
    END {
        for (k in src) nsrc++
        printf "%d %d %d %.1f %d%s\n", test, fit, nsrc, worst, far, which
    }' lessons/data/model-validation.tsv)
read -r n_test n_fit n_src worst far which <<<"$verdict"
if [ "${n_test:-0}" -ge 20 ] && [ "$n_test" -gt "$n_fit" ] && [ "$n_src" -ge 2 ] && [ "$far" -eq 0 ]; then
    ok "lessons/data/model-validation.tsv: $n_test out-of-sample rows from $n_src publications within 10 points (largest $worst), $n_fit rows fitted"
else
    bad "lessons/data/model-validation.tsv: $n_test out-of-sample rows from $n_src publications, $n_fit fitted, $far beyond 10 points:${which:- none}"
fi
fresh "the lessons' profiles (lessons/data/profile*) are what make profile-data writes" \
    profile-data profile.tsv profile-l6.txt profile-l7.txt
make profile L=7 TREE=solution >"$logs/profile-l7.log" 2>&1
kernels=$(grep -c '^== \(naive_kernel\|permute_kernel\|transpose_kernel\|transpose2_kernel\)' "$logs/profile-l7.log")
h100=$(grep -c '^     H100 SXM .* GB/s' "$logs/profile-l7.log")
if [ "$kernels" -ge 6 ] && [ "$h100" -eq "$kernels" ]; then
    ok "make profile L=7: a table and a modelled H100 SXM bandwidth for each of the $kernels launches of the 4 kernel versions"
else
    bad "make profile L=7: $kernels launches, $h100 modelled H100 rows (log: $logs/profile-l7.log)"
fi
make cuda-sanitize TREE=solution >"$logs/cuda-sanitize.log" 2>&1
add_counts "public tests on the instrumented emulator (racecheck, host pointers, initcheck)" "$logs/cuda-sanitize.log"
# racecheck on a transpose kernel without its barriers: the race and both lines
mutant=$(mktemp -d /tmp/nd_race.XXXXXX)
cp -r solution "$mutant/tree"
sed -i '/^\/\/@ snippet transpose_kernel/,/^\/\/@ end snippet transpose_kernel/{/^ *__syncthreads();/d}' \
    "$mutant/tree/src/07_permute.cu"
make cuda-sanitize TREE="$mutant/tree" T='permute_transpose_edges[cuda]' >"$logs/racecheck-mutant.log" 2>&1
# (the runner wraps long messages: join the lines first)
race=$(tr '\n' ' ' <"$logs/racecheck-mutant.log" | tr -s ' ')
if [[ $race == *"racecheck: a shared-memory race in kernel 'transpose_kernel"* ]] &&
    [[ $race =~ (read|wrote)\ it\ at\ 07_permute.cu:[0-9]+,\ and\ thread\ .*\ (writes|reads)\ it\ at\ 07_permute.cu:[0-9]+ ]]; then
    ok "racecheck reports a transpose without __syncthreads(), with both threads and lines"
else
    bad "racecheck missed the transpose without __syncthreads() (log: $logs/racecheck-mutant.log)"
    grep -m3 'FAIL\|race' "$logs/racecheck-mutant.log" | sed 's/^/        /'
fi
rm -rf "$mutant" "build/$(echo "$mutant/tree" | tr / _)"

fi
if want book; then
section book "the web book"
# make docs in a student's tree, in a copy whose lesson files are edited:
# lesson 1 written (the solution's file, its solution markers and all),
# lesson 3 half-written (a stub gone, where the examples plant a missing
# ';', a ';' missing, its snippet markers deleted).  The book takes the
# skeleton as shipped, generated from solution/: the snippets check passes,
# the pages are those of an unedited tree, and the examples' step, checked
# up to its runs (examples.py prepare: every scratch workbook made, every
# planted mistake applied), works on that skeleton.  The pages are built
# with the example blocks' own bodies standing in for the runs.
docs_edited_tree() {
    local t
    t=$(mktemp -d) || return 1
    mkdir -p "$t/grader" &&
        cp -r Makefile cuda.mk README.md solution skeleton tests lessons docs "$t/" &&
        cp -r grader/emu grader/skelgen.py grader/install-deps.sh "$t/grader/" &&
        (cd "$t" && python3 -c '
import os, sys
sys.path.insert(0, "docs")
import examples
os.makedirs(examples.OUT, exist_ok=True)
for page in examples.PAGES:
    for name, _, _, body in examples.blocks(page)[1]:
        open(os.path.join(examples.OUT, name + ".txt"), "w").write(body)
' && python3 grader/skelgen.py solution build/docs/skeleton &&
            DOCS_SKELETON=build/docs/skeleton python3 docs/site.py --out site-unedited) ||
        { rm -rf "$t"; return 1; }
    cp solution/src/01_views.c "$t/skeleton/src/01_views.c" &&
        sed -i -e 's/return nd_not_implemented("nd_binary", 3);/return ND_OK \/* mine *\//' \
            -e '/\/\/@ snippet/d' -e '/\/\/@ end snippet/d' "$t/skeleton/src/03_ewise.c" ||
        { rm -rf "$t"; return 1; }
    if grep -q -e 'nd_not_implemented("nd_binary", 3)' -e '//@ snippet' "$t/skeleton/src/03_ewise.c"; then
        echo "the edit of the copy's skeleton/src/03_ewise.c did not apply"; rm -rf "$t"; return 1
    fi
    (cd "$t" && make -s docs-snippets &&
        DOCS_SKELETON=build/docs/skeleton python3 docs/site.py --out site-edited &&
        diff -r site-unedited site-edited &&
        echo "the pages are those of the unedited tree" &&
        python3 docs/examples.py prepare) &&
        diff -r skeleton "$t/build/docs/examples/workbook-skeleton/skeleton" &&
        echo "the examples' workbook holds the skeleton as shipped, not the edited one"
    local rc=$?
    rm -rf "$t"
    return $rc
}
run "make docs in a tree whose lesson files are edited: snippets, pages and examples take the skeleton as shipped" \
    docs_edited_tree
run "make docs-check (snippets, figures, pages in Chromium)" make docs-check
run "make epub-check (the EPUB of the lessons and guides, epubcheck clean)" make epub-check

fi
if want fuzz; then
section fuzz "the fuzzer (the corpus, then 60 s on the CPU and 20 s on the CUDA device)"
if make fuzz-build >"$logs/fuzz-build.log" 2>&1; then
    for run in cpu:60 cuda:20; do
        dev=${run%%:*} log="$logs/fuzz-${run%%:*}.log"
        if bash tests/fuzz/fuzz.sh build/fuzz/solution/fuzz_nd "$dev" "${run#*:}" >"$log" 2>&1; then
            ok "$(tail -n 1 "$log")"
        else
            bad "fuzz ($dev) found a bug (log: $log)"
            tail -n 25 "$log" | sed 's/^/        /'
        fi
    done
else
    bad "build the fuzzer (log: $logs/fuzz-build.log)"
    tail -n 25 "$logs/fuzz-build.log" | sed 's/^/        /'
fi

fi
if want grade-one; then
section grade-one "one grade, measured: make bench-grade QUICK=1 (lesson 1 of the solution, edited)"
# (every process's CPU, per phase, needs cgroups: as root; otherwise the
# grade alone)
grade_one() {
    if [ "$(id -u)" -eq 0 ]; then
        make bench-grade QUICK=1 | tee "$logs/grade-one.out" || return 1
        grep -q '^solution-lesson1-edited	total' build/bench/grade-quick.tsv || return 1
        # each phase's wall seconds lie within the grade's
        awk -F'\t' '$1 == "solution-lesson1-edited" && $4 != "-" { w[$2] = $4 }
            END { if (!("total" in w)) exit 1
                  for (p in w) if (w[p] < 0 || w[p] > w["total"] + 1) {
                      print "phase " p ": " w[p] " s of wall clock, the grade took " w["total"]; bad = 1 }
                  exit bad }' build/bench/grade-quick.tsv || return 1
    else
        edited_copy solution "$logs/grade-one-tree" || return 1
        GRADE_LESSONS=1 bash grader/grade.sh "$logs/grade-one-tree" "$logs/grade-one" |
            tee "$logs/grade-one.out" || return 1
    fi
    grep -q '10.00/10.00' "$logs/grade-one.out" || { echo "lesson 1 of the solution: not 10.00/10.00"; return 1; }
}
run "a grade of lesson 1 of the solution, edited, each phase's CPU, wall and memory (make bench-grade QUICK=1)" \
    grade_one
fi
section ""
echo
echo "$passed passed, $failed failed (in $SECONDS s)"
[ "$failed" -eq 0 ]
