#!/usr/bin/env bash
# gpu_report.sh -- the work of `make gpu-report`, on a machine with a GPU.
#
#   bash tests/gpu_report.sh debs DIR                  download the Debian packages the
#                                                      report needs into DIR (make gpu-debs)
#   bash tests/gpu_report.sh unpack DIR ROOT           unpack DIR's packages under ROOT
#   bash tests/gpu_report.sh [--dry-run] run           the report (make gpu-report)
#
# `run` reads what the Makefile built from its environment:
#   OUT          the report's folder (build/gpu-report)
#   RUNNER, RUNNER_ASAN   the public test runner's GPU builds, plain and
#                with AddressSanitizer + UBSan; SAN_ENV its sanitizer settings
#   BENCHES      the GPU benchmark programs
#   CSAN         compute-sanitizer
#   DATA         where the benchmark TSVs go (lessons/data)
# and runs, logging each step to OUT/NAME.log:
#   1. the public tests on the GPU;
#   2. at once, on the GPU and the CPU's cores: the public tests under
#      AddressSanitizer + UBSan, `make grade TREE=solution`'s grader
#      (grader/grade.sh), and compute-sanitizer's memcheck, racecheck,
#      synccheck and initcheck over lesson 6's and 7's tests (lesson 6's
#      are its own and the [cuda] cases of lessons 2-5), each limited to
#      STEP_LIMIT seconds (default 600);
#   3. alone, so that nothing else shares the GPU: the benchmarks, writing
#      DATA/bench-gpu.tsv, DATA/bench-gpu-permute.tsv and, where PyTorch
#      is installed, DATA/bench-gpu-permute-torch.tsv; the lesson's plot
#      of them where gnuplot is installed (else `make docs` draws it);
#   4. OUT/summary.txt: the GPU, one line per step (ok or FAIL, seconds,
#      its log), every benchmark row, and "N passed, N failed"; the exit
#      status is 1 if a step failed.
# --dry-run prints each step's command instead, after checking that each
# program a step would run is there (make check runs it after building
# them with CUDA=gpu, through `make -n gpu-report`).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

# The Debian packages the report needs that a GPU machine may lack: Check
# (the test runners), cJSON (the grader's report) and pkgconf (to find
# them), with what they depend on beyond libc.
PACKAGES="check libsubunit-dev libsubunit0 libcjson-dev libcjson1 pkgconf pkgconf-bin libpkgconf3"

die() { echo "gpu-report: $*" >&2; exit 2; }

case ${1:-} in
debs)
    dir=${2:?usage: gpu_report.sh debs DIR}
    mkdir -p "$dir" && cd "$dir" || die "cannot write $dir"
    command -v apt-get >/dev/null || die "apt-get is not here: run this on Debian 12"
    # apt's download sandbox user cannot write a root-owned folder; it is
    # only a download
    apt-get -q -o APT::Sandbox::User=root download $PACKAGES || die "apt-get download failed"
    echo "gpu-report: $(ls ./*.deb | wc -l) packages in $dir; carry it to the GPU machine"
    exit 0 ;;
unpack)
    dir=${2:?usage: gpu_report.sh unpack DIR ROOT} root=${3:?usage: gpu_report.sh unpack DIR ROOT}
    mkdir -p "$root"
    for deb in "$dir"/*.deb; do
        [ -e "$deb" ] || die "no .deb file in $dir (make gpu-debs writes them)"
        if command -v dpkg-deb >/dev/null; then
            dpkg-deb -x "$deb" "$root" || die "cannot unpack $deb"
        else   # a .deb is an ar archive holding data.tar.*
            t=$(mktemp -d) && (cd "$t" && ar x "$(cd "$OLDPWD" && realpath "$deb")") &&
                tar -xf "$t"/data.tar.* -C "$root" && rm -rf "$t" || die "cannot unpack $deb"
        fi
    done
    echo "gpu-report: unpacked $(ls "$dir"/*.deb | wc -l) packages under $root"
    exit 0 ;;
esac

dry=false
[ "${1:-}" = --dry-run ] && { dry=true; shift; }
[ "${1:-}" = run ] || die "usage: gpu_report.sh [--dry-run] run | debs DIR | unpack DIR ROOT"
for v in OUT RUNNER RUNNER_ASAN BENCHES CSAN DATA; do
    [ -n "${!v:-}" ] || die "$v is not set (run this through make gpu-report)"
done
limit=${STEP_LIMIT:-600}
mkdir -p "$OUT" || die "cannot write $OUT"
steps="$OUT/steps.tsv"
: >"$steps"

# The programs the steps run: all must be there (compute-sanitizer comes
# with the CUDA toolkit; without a GPU only a dry run is possible).
missing=()
for p in $RUNNER $RUNNER_ASAN $BENCHES build/grader/report; do
    [ -x "$p" ] || missing+=("$p")
done
[ -x "$CSAN" ] || command -v "$CSAN" >/dev/null || missing+=("$CSAN")
if [ ${#missing[@]} -gt 0 ]; then
    if $dry && [ "${missing[*]}" = "$CSAN" ]; then
        echo "gpu-report: (dry run) $CSAN is not installed here; the GPU machine's CUDA toolkit has it"
    else
        die "missing: ${missing[*]}"
    fi
fi

# step NAME CHECK CMD...: run CMD (at most $limit seconds) into OUT/NAME.log;
# CHECK is what else its log must show: "runner" (the test runner's
# closing line with 0 failed) or "csan" (that and compute-sanitizer's
# "ERROR SUMMARY: 0 errors" for every process) or "-".
step() {
    local name=$1 check=$2 log="$OUT/$1.log" t0=$SECONDS status=ok why=""
    shift 2
    if $dry; then
        printf 'gpu-report: (dry run) %s: %s\n' "$name" "$*"
        return
    fi
    timeout "$limit" "$@" >"$log" 2>&1
    local rc=$?
    if [ $rc -eq 124 ]; then
        status=FAIL why="stopped after $limit s"
    elif [ $rc -ne 0 ]; then
        status=FAIL why="exit $rc"
    elif [ "$check" != - ] && ! grep -qE '^[0-9]+ passed, 0 failed' "$log"; then
        status=FAIL why="no 'N passed, 0 failed' line"
    elif [ "$check" = csan ] && grep -qE 'ERROR SUMMARY: [1-9]' "$log"; then
        status=FAIL why="compute-sanitizer reported errors"
    fi
    printf '%s\t%s\t%d\t%s\t%s\n' "$name" "$status" $((SECONDS - t0)) "$log" "$why" >>"$steps"
    printf '  %-4s %-32s %4d s  %s%s\n' "$status" "$name" $((SECONDS - t0)) "$log" \
        "${why:+  ($why)}"
}

gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,temperature.gpu,power.draw --format=csv 2>&1)
$dry || printf '%s\n' "$gpu" >"$OUT/gpu.txt"
echo "gpu-report: $(echo "$gpu" | sed -n 2p)"
start=$SECONDS

# 1. The public tests on the GPU.
step tests runner "$RUNNER" -r "$OUT/tests.tsv"

# 2. The slow checks, side by side.  The tests' CPU-time limits stretch
# (ND_TEST_TIME_SCALE) under compute-sanitizer.
csan() {   # csan TOOL: compute-sanitizer TOOL over lessons 6 and 7
    step "compute-sanitizer-$1" csan env ND_TEST_TIME_SCALE=20 "$CSAN" --tool "$1" \
        --target-processes all --report-api-errors no --error-exitcode 1 \
        "$RUNNER" -l 6 -l 7
}
if $dry; then
    step tests-asan runner env $SAN_ENV "$RUNNER_ASAN" -r "$OUT/tests-asan.tsv"
    step grade runner env CUDA=gpu bash grader/grade.sh solution "$OUT/grade"
    for tool in memcheck racecheck synccheck initcheck; do csan $tool; done
else
    step tests-asan runner env $SAN_ENV "$RUNNER_ASAN" -r "$OUT/tests-asan.tsv" &
    step grade runner env CUDA=gpu bash grader/grade.sh solution "$OUT/grade" &
    for tool in memcheck racecheck synccheck initcheck; do csan $tool & done
    wait
fi

# 3. The benchmarks, alone on the GPU.
mkdir -p "$DATA"
for b in $BENCHES; do
    n=$(basename "$b")                                   # bench_gpu_permute
    tsv="bench-$(echo "${n#bench_}" | tr _ -).tsv"        # bench-gpu-permute.tsv
    step "$n" - "$b" -o "$OUT/$tsv"
    $dry || { [ -s "$OUT/$tsv" ] && cp "$OUT/$tsv" "$DATA/$tsv"; }
done
step permute_torch - python3 tests/bench/permute_torch.py -o "$OUT/bench-gpu-permute-torch.tsv"
$dry || { [ -s "$OUT/bench-gpu-permute-torch.tsv" ] &&
          cp "$OUT/bench-gpu-permute-torch.tsv" "$DATA/bench-gpu-permute-torch.tsv"; }
if command -v gnuplot >/dev/null; then
    mkdir -p "$OUT/figures"
    step plots - gnuplot -e "outdir='$OUT/figures'" lessons/figures/permute_bench.gp
else
    echo "gpu-report: gnuplot is not installed: make docs draws the plots from $DATA"
fi
$dry && exit 0

# 4. The summary.
{
    echo "make gpu-report, $(date -u '+%Y-%m-%d %H:%M UTC'), $((SECONDS - start)) s"
    echo "$gpu"
    echo
    awk -F'\t' '{ printf "%-4s  %-28s %5d s  %s%s\n", $2, $1, $3, $4, ($5 != "" ? "  (" $5 ")" : "") }' "$steps"
    echo
    for f in "$OUT"/bench-gpu*.tsv; do
        [ -s "$f" ] || continue
        echo "$DATA/${f##*/}:"
        awk -F'\t' '/^#/ { print "  " $0; next } $1 != "group" {
            printf "  %-8s %-40s %-26s %10.1f %-7s %6.1f%% of %-14s %s\n", $1, $2, $3, $5, $6,
                100 * $7, $8, $10 }' "$f"
    done
    echo
    p=$(awk -F'\t' '$2 == "ok"' "$steps" | wc -l)
    f=$(awk -F'\t' '$2 != "ok"' "$steps" | wc -l)
    echo "$p passed, $f failed"
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
! grep -qP '\tFAIL\t' "$steps"
