#!/usr/bin/env bash
# test_slurm.sh -- `make grade-all RUNNER=slurm` against a real Slurm, run by
# `make check` (as root: the daemons run as root).
#
# Starts a single-node Slurm of its own in a scratch folder: munged on its
# own socket and key, slurmctld and slurmd on free ports of localhost, from
# a generated slurm.conf (no cgroups, no accounting), so that it touches no
# Slurm or MUNGE this machine may already run.  Grades one folder twice,
# with the real grader: locally (`make grade-all`) and on Slurm
# (`make grade-all RUNNER=slurm WAIT=1`), and compares the two gradebooks
# row by row.  The folder holds the solution, the skeleton (under a name
# that is not UTF-8) and an upload with no copy of skeleton/ in it: three
# entries.  Then the same batch on a node whose sandbox is limits only
# (SB_MODE=none): refused, the batch failed, every row naming the
# calibration's log.  What is tested is the way through Slurm, not the grading
# (make check grades in full elsewhere), so both runs grade lesson 1 alone
# (GRADE_LESSONS=1, which sbatch passes on with the rest of the
# environment): seconds a grade instead of minutes.  The overall limit is
# an hour (GRADE_TIMEOUT=3600) for both: a busy machine must not stop one.
# Prints "ok - ..." / "not ok - ..." per check, then "N passed, N failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
unset MAKELEVEL MAKEFLAGS MFLAGS
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; shift; for l in "$@"; do echo "    # $l"; done; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

for cmd in munged mungekey slurmctld slurmd sbatch sinfo; do
    if ! command -v "$cmd" >/dev/null; then
        not_ok "$cmd is not installed (Debian's slurm-wlm and munge: grader/install-deps.sh --check)"
        finish
    fi
done
if [ "$(id -u)" -ne 0 ]; then
    not_ok "the test Slurm's daemons run as root: run this as root"
    finish
fi

# munged wants every folder above its socket searchable by all.
work=$(mktemp -d "${TMPDIR:-/tmp}/slurm-selftest.XXXXXX")
chmod 711 "$work"
cluster=$work/cluster
mkdir -p "$cluster/state" "$cluster/spool"
stop() {
    local d
    for d in slurmd slurmctld munged; do
        [ -s "$cluster/$d.pid" ] && kill "$(cat "$cluster/$d.pid")" 2>/dev/null
    done
    sleep 1
    rm -rf "$work"
}
trap stop EXIT

# --- the cluster ------------------------------------------------------------
t0=$SECONDS
mungekey --create --keyfile="$cluster/munge.key" >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$cluster/munge.key" bs=128 count=1 status=none
chmod 400 "$cluster/munge.key"
munged --socket="$cluster/munge.socket" --key-file="$cluster/munge.key" \
    --log-file="$cluster/munged.log" --pid-file="$cluster/munged.pid" \
    --seed-file="$cluster/munged.seed" || { not_ok "munged did not start" "$(tail -n 3 "$cluster/munged.log")"; finish; }
read -r ctld_port slurmd_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')
cpus=$(nproc)
mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
cat >"$cluster/slurm.conf" <<EOF
# A single-node Slurm for grader/test_slurm.sh, made afresh on each run.
ClusterName=gradeselftest
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$cluster/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/slurmctld.pid
SlurmdPidFile=$cluster/slurmd.pid
SlurmctldLogFile=$cluster/slurmctld.log
SlurmdLogFile=$cluster/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
NodeName=gradenode NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=grade Nodes=gradenode Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$cluster/slurm.conf
slurmctld -f "$SLURM_CONF" && slurmd -f "$SLURM_CONF" -N gradenode ||
    { not_ok "slurmctld or slurmd did not start" "$(tail -n 5 "$cluster"/slurm*.log)"; finish; }
up=false
for _ in $(seq 60); do
    sinfo -h -o '%T' 2>/dev/null | grep -qx idle && { up=true; break; }
    sleep 0.5
done
if $up; then
    ok "a single-node Slurm is up ($cpus CPUs, slurmctld on port $ctld_port, $((SECONDS - t0)) s)"
else
    not_ok "the node never came up idle" "$(sinfo 2>&1 | tail -n 2)" "$(tail -n 5 "$cluster/slurmctld.log")"
    finish
fi

# --- the submissions ---------------------------------------------------------
subs=$work/submissions
mkdir -p "$subs/empty upload/notes"
cp -R solution "$subs/solution"
cp -R skeleton "$subs/"$'skeleton-\xe9'           # Latin-1: not UTF-8
echo "only notes" >"$subs/empty upload/notes/readme.txt"

# --- the same folder, graded here and on Slurm ---------------------------------
export GRADE_TIMEOUT=3600 GRADE_LESSONS=1
t0=$SECONDS
make -s grade-all SUBMISSIONS="$subs" GRADE_ALL_OUT="$work/local" JOBS="$cpus" >"$work/local.log" 2>&1
rc=$? local_s=$((SECONDS - t0))
[ $rc -eq 0 ] && ok "make grade-all (here): $local_s s" ||
    not_ok "make grade-all (here) exited $rc" "$(tail -n 5 "$work/local.log")"
t0=$SECONDS
GRADE_CPUS=1 GRADE_SLURM_MEM=2048 GRADE_SLURM_THROTTLE=2 make -s grade-all RUNNER=slurm WAIT=1 \
    SUBMISSIONS="$subs" GRADE_ALL_OUT="$work/slurm" >"$work/slurm.log" 2>&1
rc=$? slurm_s=$((SECONDS - t0))
[ $rc -eq 0 ] && ok "make grade-all RUNNER=slurm WAIT=1: $slurm_s s" ||
    not_ok "make grade-all RUNNER=slurm exited $rc" "$(tail -n 5 "$work/slurm.log")"

# The jobs did run on Slurm: the controller started each task (the main
# scheduler logs "Allocate JobId=J_T(...)", the backfill one "Started
# JobId=J_T(...)"), and each task left its log, named for its job; the
# array asked for 2048 MB a task, 2 at a time.
tasks=$(grep -oE '(Allocate|Started) JobId=[0-9]+_[0-9]+' "$cluster/slurmctld.log" | sort -u | wc -l)
logs=$(ls "$work/slurm/batch/logs" 2>/dev/null | tr '\n' ' ')
arr=$(sed -n 's/.*array \([0-9]*\) grades.*/\1/p' "$work/slurm.log")
shown=$(scontrol -o show job "$arr" 2>/dev/null)
if [ "$tasks" -eq 3 ] && [[ " $logs" == *" grade-${arr}_2.out "* ]] &&
   [[ " $logs" == *" calibrate-"[0-9]*".out "* ]] && [[ " $logs" == *" gradebook-"[0-9]*".out "* ]] &&
   [[ $shown == *"MinMemoryNode=2G"* ]] && grep -q "at most 2 at once" "$work/slurm.log"; then
    ok "Slurm ran the calibration job, 3 array tasks (2048 MB each, 2 at a time) and the gradebook job (logs: $logs)"
else
    not_ok "the batch did not run as Slurm jobs" "$tasks array tasks started; logs: $logs" \
        "$(grep -E 'Allocate|Started|error' "$cluster/slurmctld.log" | tail -n 5)"
fi

why=$(python3 - "$work/local/gradebook.csv" "$work/slurm/gradebook.csv" <<'EOF'
import csv, re, sys
# (the sandbox column names the uid a grade ran as: the first of whichever
# block of uids was free when it started, which depends on what else ran
# then, not on the gradebook)
def rows(p):
    try:
        return [[re.sub(r"\buid [0-9]+", "uid N", cell) for cell in row]
                for row in csv.reader(open(p, encoding="utf-8", newline=""))]
    except OSError as e:
        print(f"{p}: {e.strerror}")
        sys.exit()
here, there = rows(sys.argv[1]), rows(sys.argv[2])
if here != there:
    for a, b in zip(here, there):
        if a != b:
            print(f"here {a} / slurm {b}")
    if len(here) != len(there):
        print(f"{len(here)} rows here, {len(there)} on Slurm")
    sys.exit()
by = {r[0]: r for r in here[1:]}
total, top, status = here[0].index("total"), here[0].index("max"), here[0].index("status")
checks = [("solution", lambda r: r[status] == "graded" and r[total] == r[top]),
          # (the given code alone passes a few tests: argument checks, empty arrays)
          ("skeleton-\\xe9", lambda r: r[status] == "graded" and float(r[total]) < 0.05 * float(r[top])),
          ("empty upload", lambda r: r[status].startswith("error: no copy of skeleton/"))]
for name, good in checks:
    if name not in by or not good(by[name]):
        print(f"{name}: {by.get(name)}")
if len(by) != 3:
    print(f"{len(by)} rows, expected 3")
EOF
)
[ -z "$why" ] && ok "the two gradebooks are identical: solution full, skeleton under 5%, the empty upload an error row" ||
    not_ok "gradebooks differ or are wrong" "$why"

# A node whose sandbox is limits only (SB_MODE=none forces it on the
# compute node, through sbatch's environment): the calibration job refuses
# it (a batch asks GRADE_SANDBOX=uid), so no submission is graded, the
# batch fails, and every row names the calibration's log, which says why.
t0=$SECONDS
SB_MODE=none GRADE_CPUS=1 make -s grade-all RUNNER=slurm WAIT=1 SUBMISSIONS="$subs" \
    GRADE_ALL_OUT="$work/weak" >"$work/weak.log" 2>&1
rc=$?
why=$(python3 - "$work/weak" <<'EOF'
import csv, glob, os, sys
out = sys.argv[1]
cal = glob.glob(f"{out}/batch/logs/calibrate-*.out")
if len(cal) != 1:
    print(f"calibration logs: {cal}")
    sys.exit()
log = "batch/logs/" + os.path.basename(cal[0])
if "limits only" not in open(cal[0], errors="replace").read():
    print(f"{log} does not say the sandbox is limits only")
rows = list(csv.DictReader(open(f"{out}/gradebook.csv", encoding="utf-8", newline="")))
bad = [r["submission"] for r in rows if not (r["status"].startswith("error: not graded") and
                                             log in r["status"])]
if len(rows) != 3 or bad:
    print(f"{len(rows)} rows; these do not name {log}: {bad}")
EOF
)
if [ $rc -ne 0 ] && grep -q "no submission was graded: the calibration job" "$work/weak.log" && [ -z "$why" ]; then
    ok "a limits-only node: the calibration refuses it, the batch fails (exit $rc, $((SECONDS - t0)) s), every row names the calibration's log"
else
    not_ok "a batch on a limits-only node" "exit $rc: $(tail -n 3 "$work/weak.log")" "$why"
fi

finish
