#!/usr/bin/env bash
# grade-all.sh -- grade every submission in a folder: on this machine,
# several at once, or on a Slurm cluster, one job-array task each.
#
#   grader/grade-all.sh [--runner local|slurm] [--wait] SUBMISSIONS OUTDIR [JOBS]
#   grader/grade-all.sh --one TREE OUTDIR      one grade under the overall limit
#                                              (what `make grade` runs)
#   grader/grade-all.sh --gradebook OUTDIR     write the gradebook of a batch again
#   grader/grade-all.sh --task OUTDIR INDEX    grade entry INDEX of a batch (what
#                                              each worker, or Slurm task, runs)
#
# Each entry of SUBMISSIONS, whatever its name (any bytes but '/'), is one
# student's submission: a copy of skeleton/ (a folder with src/), or a
# folder holding one such copy at any depth (as an unpacked upload often
# is).  Each is graded on its own by grader/grade.sh, with its own scratch
# folder, into OUTDIR/reports/NAME/ (results.json, junit.xml, report.txt).
# An entry that cannot be graded (a file, a folder with no src/ or two, a
# grade that fails or runs past the limit) gets a row saying why; nothing
# one submission does loses another's row.
#
# The runners:
#   local  JOBS grades at a time (default: the number of cores), here.
#   slurm  sbatch: a job that times the solution on a compute node, then a
#          job array (one task per submission, GRADE_CPUS cores each, Slurm's
#          time limit a little above GRADE_TIMEOUT, requeued if a node
#          fails), then a job that writes the gradebook once every task has
#          ended (afterany).  SUBMISSIONS, OUTDIR and this repository must be
#          on a filesystem that the compute nodes share.  sbatch reads the
#          partition, account and so on from its own environment variables
#          (SBATCH_PARTITION, SBATCH_ACCOUNT, ...).  Returns once the jobs
#          are queued; --wait waits for the gradebook, and fails (exit 2)
#          if the solution could not be timed (no submission was graded
#          then: every row says so and names the calibration's log).
#
# OUTDIR/gradebook.csv (written by grader/lms.py, which documents the
# columns) has one row per entry, in the byte order of the names.  With
# CANVAS_ID set, OUTDIR/gradebook-canvas.csv is Canvas's import format too.
#
# A batch grades other people's code: it refuses the sandbox's limits-only
# mode (no namespaces, not root), in which a submission could read and
# change whatever the grader's user can, unless GRADE_SANDBOX=any says to
# (grade.sh --sandbox-check says what is missing; on Slurm the calibration
# job, on a compute node, refuses it).
#
# Environment:
#   GRADE_TIMEOUT=SECONDS  the overall limit of one grade (default 900): past
#                          it, the grade and everything it started are killed
#   GRADE_SANDBOX=POLICY   the weakest sandbox mode a grade may run in: strong
#                          (namespaces), uid (namespaces or, as root, the uid
#                          fallback: the default for a batch) or any
#   GRADE_CPUS=N           slurm: cores per task (default 1)
#   GRADE_SLURM_MEM=MB     slurm: memory per task and for the calibration
#                          (--mem; default 4096; 0: ask for none)
#   GRADE_SLURM_THROTTLE=N slurm: at most N tasks of the array at once
#                          (--array=...%N; default 64; 0: no throttle)
#   GRADE_MEMORY_MB=MB     local: the MB each grade's tests may hold at once
#                          (default: what one grade may, shared by JOBS)
#   CANVAS_ID=REGEX        student identifiers in the entry names (lms.py)
#   CANVAS_ASSIGNMENT=NAME the Canvas column(s) (lms.py)
#   CANVAS_ASSIGNMENT_ID=N Canvas's assignment ID(s) for the column(s) (lms.py)
#   GRADE_ALL_GRADER=PATH  the script that grades one tree (default
#                          grader/grade.sh; the self-tests use a stand-in)
set -uo pipefail

self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
root=$(cd "$(dirname "$0")/.." && pwd)
grader=${GRADE_ALL_GRADER:-$root/grader/grade.sh}
limit=${GRADE_TIMEOUT:-900}
die() { echo "grade-all: $*" >&2; exit 2; }
[[ $limit =~ ^[1-9][0-9]*$ ]] || die "GRADE_TIMEOUT must be a number of seconds, not '$limit'"

# limited SECONDS CMD...: run CMD; after SECONDS, kill it and everything it
# started.  In a PID namespace of its own when this machine allows one
# (everything in it dies with it, whatever process group or session a
# process moved to), with a /proc of that namespace (bubblewrap, in the
# grade, finds its processes there); otherwise through the process group
# (timeout's way).
# Sets $elapsed; returns CMD's status (137 or 124 if it was killed).
limited() {
    local secs=$1 t0=$SECONDS rc
    shift
    if unshare --pid --fork --kill-child --mount-proc true 2>/dev/null; then
        timeout --foreground -s KILL "$secs" unshare --pid --fork --kill-child --mount-proc -- "$@"
    else
        timeout -k 5 "$secs" "$@"
    fi
    rc=$?
    elapsed=$((SECONDS - t0))
    return $rc
}

# over_limit RC: whether a grade that ended with RC was stopped by the limit
over_limit() { { [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; } && [ "$elapsed" -ge "$limit" ]; }
limit_message() {
    echo "stopped after $elapsed s: a grade may take $limit s at most (GRADE_TIMEOUT); a correct submission takes about a minute, so something in this one runs far too long"
}

# grade TREE OUTDIR LOG: grade.sh under the limit, its scratch folders in a
# temporary folder of our own (removed here even when the grade was killed).
grade() {
    local tmp rc
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/grade-all.XXXXXX") || return 2
    chmod 711 "$tmp"   # the sandbox's uid passes through it to the grade's folders
    if [ "$3" = - ]; then
        GRADE_LIMITED=1 TMPDIR=$tmp limited "$limit" bash "$grader" "$1" "$2"
    else
        GRADE_LIMITED=1 TMPDIR=$tmp limited "$limit" bash "$grader" "$1" "$2" >"$3" 2>&1
    fi
    rc=$?
    rm -rf "$tmp"
    return $rc
}

# The tree of a submission: the entry itself, or the one folder below it
# that holds src/ (none, or more than one: no tree, and a reason).
tree_of() {
    local entry=$1 found=()
    if [ -d "$entry/src" ]; then
        tree=$entry
        return 0
    fi
    mapfile -d '' found < <(find -H "$entry" -mindepth 1 -maxdepth 6 -name '.*' -prune -o \
        -type d -name src -print0 2>/dev/null | head -z -n 2)
    case ${#found[@]} in
        1) tree=$(dirname "${found[0]}"); return 0 ;;
        0) why="no copy of skeleton/ (a folder with src/) in the submission" ;;
        *) why="two or more folders with src/ in the submission: keep one copy of skeleton/" ;;
    esac
    return 1
}

# The batch's list of entry names, NUL-separated, in OUTDIR/batch/names.
read_names() { mapfile -d '' names <"$1/batch/names"; }

task() {   # OUTDIR INDEX
    local out=$1 i=$2 subs name dir entry rc why tree
    read_names "$out"
    [[ $i =~ ^[0-9]+$ ]] && [ "$i" -lt "${#names[@]}" ] || die "no entry $i in $out/batch/names"
    subs=$(cat "$out/batch/submissions")
    name=${names[$i]}
    dir=$out/reports/$name
    entry=$subs/$name
    rm -rf "$dir"
    mkdir -p "$dir" || die "cannot create the report folder of entry $i"
    if [ ! -d "$entry" ]; then
        echo "not a folder: unpack each submission into a folder of its own" >"$dir/error"
        return 0
    fi
    if ! tree_of "$entry"; then
        echo "$why" >"$dir/error"
        return 0
    fi
    grade "$tree" "$dir" "$dir/report.txt"
    rc=$?
    if [ $rc -ne 0 ] && ! over_limit $rc; then   # the grader's own failure: once more
        mv "$dir/report.txt" "$dir/report-first-try.txt" 2>/dev/null
        grade "$tree" "$dir" "$dir/report.txt"
        rc=$?
    fi
    if over_limit $rc; then
        bash "$root/grader/partial_report.sh" "$dir" "$limit" >>"$dir/report.txt" 2>&1
        limit_message >"$dir/error"
    elif [ $rc -ne 0 ]; then
        echo "the grade failed (exit $rc): $(tail -n 3 "$dir/report.txt" | tr '\n' ' ')" >"$dir/error"
    fi
    return 0
}

gradebook() {   # OUTDIR
    python3 "$root/grader/lms.py" gradebook "$1" --weights "$root/grader/weights.tsv"
}

one() {   # TREE OUTDIR
    local rc
    grade "$1" "$2" -
    rc=$?
    if over_limit $rc; then
        bash "$root/grader/partial_report.sh" "$2" "$limit"
        echo "grade: $(limit_message)" >&2
        exit 1
    fi
    exit $rc
}

case ${1:-} in
    --one) [ $# -eq 3 ] || die "usage: grader/grade-all.sh --one TREE OUTDIR"
           one "$2" "$3" ;;
    --task) [ $# -eq 3 ] || die "usage: grader/grade-all.sh --task OUTDIR INDEX"
            task "$2" "$3"; exit $? ;;
    --gradebook) [ $# -eq 2 ] || die "usage: grader/grade-all.sh --gradebook OUTDIR"
                 gradebook "$2"; exit $? ;;
esac

runner=local wait=false
while [ $# -gt 0 ]; do
    case $1 in
        --runner) runner=${2:-}; shift 2 || die "--runner needs local or slurm" ;;
        --wait) wait=true; shift ;;
        --) shift; break ;;
        -*) die "unknown option $1" ;;
        *) break ;;
    esac
done
usage="usage: grader/grade-all.sh [--runner local|slurm] [--wait] SUBMISSIONS OUTDIR [JOBS]"
[ $# -ge 2 ] && [ $# -le 3 ] || die "$usage"
case $runner in
    local|slurm) ;;
    *) die "RUNNER=$runner: it must be local (this machine) or slurm (sbatch)" ;;
esac
subs=$1 out=$2 jobs=${3:-$(nproc)}
[ -d "$subs" ] || die "$subs is not a folder"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "JOBS must be a positive number, not '$jobs'"
cpus=${GRADE_CPUS:-1}
[[ $cpus =~ ^[1-9][0-9]*$ ]] || die "GRADE_CPUS must be a positive number, not '$cpus'"
if [ -n "${CANVAS_ID:-}" ]; then   # a bad pattern fails now, not after the grading
    python3 "$root/grader/lms.py" check-canvas-id --weights "$root/grader/weights.tsv" || exit 2
fi
export GRADE_SANDBOX=${GRADE_SANDBOX:-uid}
slurm_mem=${GRADE_SLURM_MEM:-4096} throttle=${GRADE_SLURM_THROTTLE:-64}
[[ $slurm_mem =~ ^[0-9]+$ ]] || die "GRADE_SLURM_MEM must be a number of MB (0: none), not '$slurm_mem'"
[[ $throttle =~ ^[0-9]+$ ]] || die "GRADE_SLURM_THROTTLE must be a number of tasks (0: no limit), not '$throttle'"
subs=$(cd "$subs" && pwd)
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
case $out/ in "$subs"/*) die "OUTDIR ($out) must not be inside SUBMISSIONS ($subs)" ;; esac

# The batch: every entry's name (any bytes but '/' and NUL), sorted.
rm -rf "$out/reports" "$out/batch" "$out/gradebook.csv" "$out/gradebook-canvas.csv"
mkdir -p "$out/reports" "$out/batch/logs"
printf '%s' "$subs" >"$out/batch/submissions"
find "$subs" -mindepth 1 -maxdepth 1 -printf '%f\0' | LC_ALL=C sort -z >"$out/batch/names"
read_names "$out"
n=${#names[@]}
[ "$n" -gt 0 ] || die "no submissions in $subs"

if [ "$runner" = local ]; then
    echo "grade-all: grading $n submissions, $jobs at a time"
    # The sandbox's mode, found once for the whole batch, and refused now
    # if GRADE_SANDBOX does not allow it: every grade runs in it or fails
    # (and is tried once more), never in a weaker one found when the
    # machine is busy (each grade also has uids of its own).
    if [ -x "$root/build/grader/sandbox" ]; then
        mode=$(bash "$root/grader/grade.sh" --sandbox-check) ||
            die "no submission graded: the sandbox is too weak for GRADE_SANDBOX=$GRADE_SANDBOX (above)"
        case $mode in
            namespaces*) export SB_MODE=namespaces ;;
            uid*) export SB_MODE=uid ;;
            *) export SB_MODE=none ;;
        esac
        echo "grade-all: sandbox mode for the whole batch: $SB_MODE ($mode; GRADE_SANDBOX=$GRADE_SANDBOX)"
    fi
    # The memory of the whole batch: what one grade alone would give its
    # tests (grade.sh --memory-budget), shared by the grades that run at
    # once, so that together they stay within it (a test larger than its
    # grade's share runs alone; each may add 2 GiB of address space at most).
    if [ -z "${GRADE_MEMORY_MB:-}" ]; then
        mb=$(bash "$grader" --memory-budget) && [[ $mb =~ ^[0-9]+$ ]] ||
            die "cannot tell how much memory the grades may use (grade.sh --memory-budget)"
        export GRADE_MEMORY_MB=$((mb / jobs > 0 ? mb / jobs : 1))
        echo "grade-all: each grade's tests may hold $GRADE_MEMORY_MB MB at once ($mb MB / $jobs)"
    fi
    # Time the solution first, once, rather than in every parallel grade.
    bash "$grader" --calibrate || die "could not time the solution"
    # (xargs stops at a worker killed by a signal: `|| true` keeps it going)
    seq 0 $((n - 1)) | xargs -P "$jobs" -n 1 sh -c 'bash "$0" --task "$1" "$2" || true' "$self" "$out"
    gradebook "$out"
    exit $?
fi

# Slurm: three submissions, chained by dependencies.
command -v sbatch >/dev/null || die "RUNNER=slurm needs sbatch (Slurm's client) on PATH"
q() { printf '%q' "$1"; }
logs=$out/batch/logs
sb() { sbatch --parsable --chdir="$root" "$@"; }
minutes=$(( (limit + 120 + 59) / 60 ))   # Slurm's own limit: a backstop past ours
mem=()
[ "$slurm_mem" -eq 0 ] || mem=(--mem="${slurm_mem}M")
# Each log is named for its job (%j, %A_%a): two batches never share one.
# A calibration that fails (the solution could not be timed, or the
# node's sandbox is too weak for GRADE_SANDBOX) leaves batch/calibration-
# failed naming its log, which the gradebook gives in every row.
cal=$(sb --job-name=grade-calibrate --cpus-per-task="$cpus" --time="$minutes" "${mem[@]}" \
      --output="$logs/calibrate-%j.out" \
      --wrap "bash $(q "$grader") --calibrate || { echo batch/logs/calibrate-\$SLURM_JOB_ID.out >$(q "$out/batch/calibration-failed"); exit 1; }") ||
    die "sbatch refused the calibration job"
cal=${cal%%;*}
array=0-$((n - 1))
[ "$throttle" -eq 0 ] || array+="%$throttle"
arr=$(sb --job-name=grade --array="$array" --cpus-per-task="$cpus" --time="$minutes" "${mem[@]}" \
      --requeue --dependency=afterok:"$cal" --kill-on-invalid-dep=yes \
      --output="$logs/grade-%A_%a.out" \
      --wrap "bash $(q "$self") --task $(q "$out") \$SLURM_ARRAY_TASK_ID") ||
    die "sbatch refused the job array of $n tasks (MaxArraySize in slurm.conf bounds it)"
arr=${arr%%;*}
book_args=(--job-name=gradebook --dependency=afterany:"$arr" --output="$logs/gradebook-%j.out"
           --wrap "bash $(q "$self") --gradebook $(q "$out")")
each="$cpus core(s)"
[ "$slurm_mem" -eq 0 ] || each+=", $slurm_mem MB"
each+=" and $minutes min each"
[ "$throttle" -eq 0 ] || each+=", at most $throttle at once"
echo "grade-all: $n submissions on Slurm: job $cal times the solution, array $arr grades" \
     "($each), then the gradebook"
if ! $wait; then
    book=$(sb "${book_args[@]}") || die "sbatch refused the gradebook job"
    echo "grade-all: gradebook job ${book%%;*}: $out/gradebook.csv once it ends (squeue -j $cal,$arr,${book%%;*})"
    exit 0
fi
book=$(sb --wait "${book_args[@]}")
rc=$?
book=${book%%;*}
cat "$logs/gradebook-$book.out" 2>/dev/null
[ $rc -eq 0 ] || die "the gradebook job failed (exit $rc): see $logs/gradebook-$book.out"
if [ -s "$out/batch/calibration-failed" ]; then
    die "no submission was graded: the calibration job (timing the solution) failed: see $out/$(cat "$out/batch/calibration-failed")"
fi
