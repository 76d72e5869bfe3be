#!/usr/bin/env bash
# bench_grade.sh -- what a grade costs: CPU seconds of every process it
# starts (sandboxed ones included), wall seconds and peak memory, per phase
# (make bench-grade).
#
#   grader/bench_grade.sh [--quick]
#
# Warm grades (the grader built and the solution timed first, not counted)
# of the solution, the skeleton, one buggy self-test submission
# (slice_off_by_one) and the solution with every lesson file edited (a
# comment: the cost of compiling and checking all seven), each phase of each in a cgroup of its own, so that the
# executors' time under bubblewrap, which no wait status carries, is
# counted.  Prints a table per grade with the budget beside each figure and
# writes build/bench/grade.tsv (the machine, the commit, one row per
# grade and phase).  Then the solution again inside a cgroup of
# Gradescope's default container (half a CPU, 768 MB) and of a
# PrairieLearn job (0.9 CPU, 2 GiB): the wall time there, the score and
# how many processes the kernel's OOM killer stopped; last, in that
# PrairieLearn cgroup, a whole job as PrairieLearn runs one (make
# prairielearn's run.sh from a fresh folder: it builds the grader, then
# grades the solution's lesson files).
#   --pl-job  that job alone
#   --quick   lesson 1 alone of the edited solution, no limited runs (make check's
#             pass over this script)
# Needs cgroups it can write (v1's cpuacct, cpu and memory controllers, or
# v2 with cpu and memory), so root; without them it says so and stops.
#
# The budget (issue #27): a warm grade of the solution in 60 s of CPU and
# 512 MB; per phase, the share below.  The peak is the cgroup's, page
# cache included (the kernel reclaims it under a limit: the limited runs
# say whether the grade fits).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
die() { echo "bench-grade: $*" >&2; exit 2; }

# The hook grade.sh calls (GRADE_PHASES): --enter PHASE PID
if [ "${1:-}" = --enter ]; then
    [ -n "${BENCH_CG:-}" ] || exit 1
    phase=$2 pid=$3
    printf '%s\t%s\n' "$phase" "$(date +%s.%N)" >>"$BENCH_CG_LOG"
    for d in $BENCH_CG; do
        mkdir -p "$d/$phase" && echo "$pid" >"$d/$phase/cgroup.procs" || exit 1
    done
    exit 0
fi
quick=false job_only=false
[ "${1:-}" = --quick ] && quick=true
[ "${1:-}" = --pl-job ] && job_only=true

# ---- cgroups: v1 (cpuacct, cpu, memory) or v2 -------------------------
cg=/sys/fs/cgroup
if [ -f "$cg/cgroup.controllers" ]; then
    ver=2
    grep -qw cpu "$cg/cgroup.controllers" && grep -qw memory "$cg/cgroup.controllers" ||
        die "cgroup v2 here lacks the cpu or memory controller"
    echo "+cpu +memory" >"$cg/cgroup.subtree_control" 2>/dev/null
elif [ -d "$cg/cpuacct" ] && [ -d "$cg/memory" ] && [ -d "$cg/cpu" ]; then
    ver=1
else
    die "no cgroups here (v1 cpuacct, cpu and memory, or v2): the CPU of sandboxed processes cannot be counted"
fi
# dirs NAME: the folders of group NAME (one per v1 controller, one for v2)
dirs() {
    if [ "$ver" = 2 ]; then echo "$cg/ndbench/$1"
    else echo "$cg/cpuacct/ndbench/$1 $cg/cpu/ndbench/$1 $cg/memory/ndbench/$1"; fi
}
cg_new() {
    local d
    for d in $(dirs "$1"); do mkdir -p "$d" || die "cannot make the cgroup $d (not root?)"; done
    if [ "$ver" = 2 ]; then
        echo "+cpu +memory" >"$cg/ndbench/cgroup.subtree_control" 2>/dev/null
        echo "+cpu +memory" >"$cg/ndbench/$1/cgroup.subtree_control" 2>/dev/null
    fi
    return 0
}
# cpu NAME: CPU seconds of everything that ran in the group (and below)
cpu() {
    if [ "$ver" = 2 ]; then
        awk '$1 == "usage_usec" { printf "%.2f", $2 / 1e6 }' "$cg/ndbench/$1/cpu.stat"
    else
        awk '{ printf "%.2f", $1 / 1e9 }' "$cg/cpuacct/ndbench/$1/cpuacct.usage"
    fi
}
# peak NAME: its peak memory in MB (page cache included), or -
peak() {
    local f
    if [ "$ver" = 2 ]; then f="$cg/ndbench/$1/memory.peak"; else f="$cg/memory/ndbench/$1/memory.max_usage_in_bytes"; fi
    [ -r "$f" ] && awk '{ printf "%.0f", $1 / 1048576 }' "$f" || echo -
}
# ooms NAME: how many processes the OOM killer stopped in it
ooms() {
    local f
    if [ "$ver" = 2 ]; then f="$cg/ndbench/$1/memory.events"; else f="$cg/memory/ndbench/$1/memory.oom_control"; fi
    awk '$1 == "oom_kill" { print $2; found = 1 } END { if (!found) print "-" }' "$f" 2>/dev/null
}
# limit NAME CPUS MB: at most CPUS cores and MB of memory
limit() {
    local quota
    quota=$(awk -v c="$2" 'BEGIN { printf "%d", c * 100000 }')
    if [ "$ver" = 2 ]; then
        echo "$quota 100000" >"$cg/ndbench/$1/cpu.max" &&
            echo $(($3 * 1048576)) >"$cg/ndbench/$1/memory.max"
    else
        echo 100000 >"$cg/cpu/ndbench/$1/cpu.cfs_period_us" &&
            echo "$quota" >"$cg/cpu/ndbench/$1/cpu.cfs_quota_us" &&
            echo $(($3 * 1048576)) >"$cg/memory/ndbench/$1/memory.limit_in_bytes"
    fi
}
cg_rm() {   # NAME: the group and its phases (empty by then)
    local d sub
    for d in $(dirs "$1"); do
        for sub in "$d"/*/; do [ -d "$sub" ] && rmdir "$sub" 2>/dev/null; done
        rmdir "$d" 2>/dev/null
    done
    return 0
}

phases=(setup check build-plain build-profile build-asan tests-plain tests-integration tests-asan report)
declare -A budget=([setup]=3 [check]=8 [build-plain]=6 [build-profile]=6 [build-asan]=10
                   [tests-plain]=10 [tests-integration]=5 [tests-asan]=10 [report]=2)
total_budget=60 mem_budget=512

echo "bench-grade: building the grader and timing the solution (not counted)"
make -s grader-objs >/dev/null || die "the grader does not build"
bash grader/grade.sh --calibrate >/dev/null 2>&1 || die "the solution could not be timed"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-grade.XXXXXX")
chmod 711 "$work"
trap 'rm -rf "$work"; for n in "${made[@]:-}"; do [ -n "$n" ] && cg_rm "$n"; done' EXIT
made=()
mkdir -p build/bench
tsv=build/bench/grade$($quick && echo -quick)$($job_only && echo -pl-job).tsv
{
    echo "# make bench-grade$($quick && echo " (--quick)"): $(date -u +%F), commit $(git rev-parse --short HEAD 2>/dev/null)"
    echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); cgroup v$ver"
    printf 'grade\tphase\tcpu_s\twall_s\tpeak_mb\tbudget_cpu_s\n'
} >"$tsv"

# one_grade NAME TREE [CPUS MB] [LESSONS]: a grade of TREE in group NAME;
# prints its table, appends its rows
one_grade() {
    local name=$1 tree=$2 cpus=${3:-} mb=${4:-} lessons=${5:-} t0 t1 rc
    cg_new "$name"
    made+=("$name")
    [ -n "$cpus" ] && { limit "$name" "$cpus" "$mb" || die "cannot limit the cgroup $name"; }
    local log="$work/$name.phases"
    : >"$log"
    t0=$(date +%s.%N)
    BENCH_CG="$(dirs "$name")" BENCH_CG_LOG=$log GRADE_PHASES="$root/grader/bench_grade.sh --enter" \
        GRADE_LESSONS=$lessons bash -c 'for d in $BENCH_CG; do echo $$ >"$d/cgroup.procs"; done;
            exec bash grader/grade.sh "$1" "$2"' _ "$tree" "$work/$name" >"$work/$name.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    local score
    score=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); print("%.2f/%.2f" % (r["score"], r["extra_data"]["max_score"]))' \
            "$work/$name/results.json" 2>/dev/null || echo "no results")
    echo
    echo "$name: $score, $(tail -n 1 "$work/$name.log")$([ $rc -ne 0 ] && echo " (grade.sh exited $rc)")"
    if [ -n "$cpus" ]; then
        printf '  in a cgroup of %s CPU and %s MB: %.0f s of wall clock, %s s of CPU, %s processes stopped by the OOM killer\n' \
            "$cpus" "$mb" "$(echo "$t1 - $t0" | bc)" "$(cpu "$name")" "$(ooms "$name")"
        printf '%s\t%s\t%s\t%.1f\t%s\t-\n' "$name" "limited $cpus CPU, $mb MB" "$(cpu "$name")" \
            "$(echo "$t1 - $t0" | bc)" "$(peak "$name")" >>"$tsv"
        return
    fi
    printf '  %-18s %9s %8s %9s   %s\n' phase "CPU s" "wall s" "peak MB" "budget (CPU s)"
    local p i next wall c over
    for p in "${phases[@]}"; do
        [ -d "$(dirs "$name" | cut -d' ' -f1)/$p" ] || continue
        c=$(cpu "$name/$p")
        # wall: to the next phase the main shell entered (build-asan runs
        # beside the plain tests: no wall of its own)
        wall=-
        if [ "$p" != build-asan ]; then
            wall=$(awk -F'\t' -v p="$p" -v end="$t1" '
                BEGIN { n = 0 }   # (t[n] before n++ would index t[""] first)
                $1 != "build-asan" { t[n] = $2; name[n++] = $1 }
                END { for (i = 0; i < n; i++) if (name[i] == p) {
                          printf "%.1f", (i + 1 < n ? t[i + 1] : end) - t[i]; exit } }' "$log")
        fi
        over=$(awk -v c="$c" -v b="${budget[$p]}" 'BEGIN { print (c > b ? "over" : "") }')
        printf '  %-18s %9s %8s %9s   %s %s\n' "$p" "$c" "$wall" "$(peak "$name/$p")" "${budget[$p]}" "$over"
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$p" "$c" "$wall" "$(peak "$name/$p")" "${budget[$p]}" >>"$tsv"
    done
    c=$(cpu "$name")
    printf '  %-18s %9s %8.1f %9s   %s CPU s, %s MB %s\n' total "$c" "$(echo "$t1 - $t0" | bc)" \
        "$(peak "$name")" "$total_budget" "$mem_budget" \
        "$(awk -v c="$c" -v b="$total_budget" -v m="$(peak "$name")" -v mb="$mem_budget" \
              'BEGIN { print (c > b || m > mb ? "over" : "within") }')"
    printf '%s\ttotal\t%s\t%.1f\t%s\t%s\n' "$name" "$c" "$(echo "$t1 - $t0" | bc)" "$(peak "$name")" \
        "$total_budget" >>"$tsv"
}

# pl_job NAME CPUS MB: a PrairieLearn job as PrairieLearn runs one, in a
# cgroup of CPUS and MB: make prairielearn's run.sh from a folder of its
# own (PrairieLearn starts every job from the image: the grader is built
# and the course's lesson files compiled in it; the calibration comes in
# the question's tarball), the solution's lesson files uploaded
pl_job() {
    local name=$1 g="$work/pl-grade" t0 t1 score
    python3 grader/package.py prairielearn "$work/pl" >"$work/pl.log" 2>&1 ||
        { cat "$work/pl.log"; die "the PrairieLearn question could not be made"; }
    mkdir -p "$g/student" && cp -R "$work/pl/questions/ndarray-workbook/tests" "$g/" &&
        cp solution/src/[0-9][0-9]_* "$g/student/" || die "cannot lay out $g"
    cg_new "$name"
    made+=("$name")
    limit "$name" "$2" "$3" || die "cannot limit the cgroup $name"
    t0=$(date +%s.%N)
    BENCH_CG="$(dirs "$name")" PL_GRADE_ROOT=$g PL_WORK="$work/pl-work" bash -c \
        'for d in $BENCH_CG; do echo $$ >"$d/cgroup.procs"; done; exec bash "$1/tests/run.sh"' _ "$g" \
        >"$work/$name.log" 2>&1
    t1=$(date +%s.%N)
    cp "$work/$name.log" "build/bench/$name.log"
    score=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("score %s, gradable %s%s" % (r.get("score"), r.get("gradable"),
      "" if r.get("gradable") else ": " + r.get("message", "")[:300]))' \
            "$g/results/results.json" 2>/dev/null || echo "no results")
    echo
    echo "$name (a fresh job: run.sh builds the grader, then grades): $score"
    printf '  in a cgroup of %s CPU and %s MB: %.0f s of wall clock, %s s of CPU, %s processes stopped by the OOM killer\n' \
        "$2" "$3" "$(echo "$t1 - $t0" | bc)" "$(cpu "$name")" "$(ooms "$name")"
    printf '%s\t%s\t%s\t%.1f\t%s\t-\n' "$name" "limited $2 CPU, $3 MB" "$(cpu "$name")" \
        "$(echo "$t1 - $t0" | bc)" "$(peak "$name")" >>"$tsv"
}

# the solution with a comment more in each lesson file: none is the
# course's own (whose objects a grade takes as they are), so every file
# is compiled and checked, as in a submission that edited all seven
mkdir -p "$work/edited"
cp -R solution/include solution/src "$work/edited/"
for f in "$work/edited/src/"[0-9][0-9]_*; do echo "/* edited */" >>"$f"; done
if $quick; then
    one_grade solution-lesson1-edited "$work/edited" "" "" 1
elif $job_only; then
    pl_job prairielearn-job-0.9cpu-2gib 0.9 2048
else
    one_grade solution "$root/solution"
    one_grade skeleton "$root/skeleton"
    mkdir -p "$work/buggy"
    cp -R solution/include solution/src "$work/buggy/"
    patch -s -p1 -d "$work/buggy" <grader/selftest/submissions/slice_off_by_one/patch ||
        die "grader/selftest/submissions/slice_off_by_one/patch does not apply"
    one_grade slice_off_by_one "$work/buggy"
    one_grade every_file_edited "$work/edited"
    one_grade gradescope-0.5cpu-768mb "$root/solution" 0.5 768
    one_grade prairielearn-0.9cpu-2gib "$root/solution" 0.9 2048
    pl_job prairielearn-job-0.9cpu-2gib 0.9 2048
fi
echo
echo "bench-grade: wrote $tsv"
