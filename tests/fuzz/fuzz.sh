#!/usr/bin/env bash
# fuzz.sh BINARY DEVICE SECONDS -- run the fuzzer (tests/fuzz/README.md):
#
#   1. replay every input of the committed corpus (tests/fuzz/seeds/) and
#      every input that ever found a bug (tests/fuzz/regressions/), once;
#   2. fuzz for SECONDS seconds from them, keeping what libFuzzer finds new
#      in build/fuzz/corpus-DEVICE/ (not committed);
#   3. print one line: inputs replayed, execs, and findings.
#
# Exit status 0 only if nothing was found: no crash, no sanitizer report,
# no failed check, no input over the time or memory limit.  A finding is
# saved as build/fuzz/findings/crash-* (or timeout-*, oom-*), and the
# script says how to see it and how to keep it as a regression case.
set -uo pipefail
cd "$(dirname "$0")/../.."

if [ $# -ne 3 ]; then
    echo "usage: fuzz.sh BINARY cpu|cuda SECONDS" >&2
    exit 2
fi
bin=$1 device=$2 seconds=$3
case $device in cpu|cuda) ;; *) echo "fuzz.sh: DEVICE=$device: it must be cpu or cuda" >&2; exit 2;; esac
case $seconds in ''|*[!0-9]*) echo "fuzz.sh: SECONDS=$seconds: a whole number, please" >&2; exit 2;; esac

export ND_FUZZ_DEVICE=$device
findings=build/fuzz/findings
corpus=build/fuzz/corpus-$device
logs=build/fuzz/logs
mkdir -p "$findings" "$corpus" "$logs"
# An input that takes 25 s (one normally takes milliseconds) is a hang.
flags=(-timeout=25 -rss_limit_mb=2048 -artifact_prefix="$findings/" -print_final_stats=1)

# A finding: show libFuzzer's report and say what to do with the input.
report() {
    local log=$1
    # the finding, or the sanitizer's report with the frames of the library
    grep -E 'FINDING|ERROR|runtime error|SUMMARY|fuzz_nd:|^ *#[0-9]+ .* in ' "$log" \
        | grep -vE 'fuzzer::|libc\.so|__sanitizer_|_start|__libc_|in (finding|main|abort|raise) |pthread_kill' \
        | head -n 30 | sed 's/^/    /'
    local unit
    unit=$(grep -o "Test unit written to [^ ]*" "$log" | tail -n 1 | sed 's/Test unit written to //')
    echo "fuzz ($device): FOUND a bug (full log: $log)"
    if [ -n "$unit" ]; then
        echo "  the input:       $unit"
        echo "  read it:         ND_FUZZ_DEVICE=$device ND_FUZZ_TRACE=1 $bin $unit"
        echo "  once fixed, keep it as a regression case:"
        echo "                   cp $unit tests/fuzz/regressions/<what-it-found>"
    fi
}

# 1. The corpus, one input at a time.
inputs=()
for f in tests/fuzz/seeds/* tests/fuzz/regressions/*; do
    [ -f "$f" ] && inputs+=("$f")
done
replay_log=$logs/replay-$device.log
if [ ${#inputs[@]} -gt 0 ] && ! "$bin" "${flags[@]}" "${inputs[@]}" >"$replay_log" 2>&1; then
    report "$replay_log"
    exit 1
fi

# 2. Fuzzing, from the corpus.
fuzz_log=$logs/fuzz-$device.log
if ! "$bin" "${flags[@]}" -max_total_time="$seconds" "$corpus" tests/fuzz/seeds \
        tests/fuzz/regressions >"$fuzz_log" 2>&1; then
    report "$fuzz_log"
    exit 1
fi
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$fuzz_log" | grep -o '[0-9]*$')
cov=$(grep -o 'cov: [0-9]*' "$fuzz_log" | tail -n 1 | grep -o '[0-9]*$')
echo "fuzz ($device): replayed ${#inputs[@]} inputs; ${execs:-?} execs in $seconds s," \
     "coverage ${cov:-?} edges; no finding"
