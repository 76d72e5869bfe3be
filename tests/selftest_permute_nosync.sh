#!/usr/bin/env bash
# selftest_permute_nosync.sh -- a test of lesson 7's tests: a transpose
# kernel without its __syncthreads() must fail them on the emulator.
#
#   bash tests/selftest_permute_nosync.sh        (from the repository root)
#
# For each of the two tiled kernels (transpose_kernel, transpose2_kernel)
# it copies solution/ to a scratch directory, deletes the __syncthreads()
# lines of that kernel only (all of them; then, in another copy, only the
# last, which guards the tile between a block's tiles), builds the copy
# with the emulator (which must succeed) and runs lesson 7's public
# tests.  Each check must hold:
#   - the build succeeds;
#   - the [cuda] tests of that kernel fail (a thread reads tile entries
#     that other threads have not written yet);
#   - tests that never run that kernel still pass (simplify_*, [cpu]).
# Prints one line per check and ends with "N passed, N failed"; exits 1 if
# any check failed.
set -u
cd "$(dirname "$0")/.."

passed=0
failed=0
check() {   # check NAME CONDITION-STATUS
    if [ "$2" -eq 0 ]; then
        echo "  ok    $1"
        passed=$((passed + 1))
    else
        echo "  FAIL  $1"
        failed=$((failed + 1))
    fi
}

scratch=$(mktemp -d /tmp/nd_nosync.XXXXXX)
trap 'rm -rf "$scratch"; for d in "${builds[@]}"; do rm -rf "$d"; done' EXIT
builds=()

# kernel name, which barriers go (all, or only the last: the one that
# keeps a block's next tile from overwriting the tile before everyone has
# read it, which matters only when a block moves several tiles), then the
# tests that must fail
mutants=(
    "transpose_kernel:all:permute_transpose_edges[cuda] permute_transpose_after_simplify[cuda] permute_choice[cuda] compact_permuted_views[cuda]"
    "transpose2_kernel:all:permute_transpose2[cuda] permute_transpose_edges[cuda]"
    "transpose_kernel:last:permute_large_grid[cuda]"
    "transpose2_kernel:last:permute_large_grid[cuda]"
)
# tests that do not run the tiled kernels on the emulator
must_pass="simplify_known simplify_random simplify_errors permute_random[cpu] permute_transpose_edges[cpu] permute_transpose2[cpu] permute_movement[cuda]"

for m in "${mutants[@]}"; do
    kernel=${m%%:*}
    rest=${m#*:}
    which=${rest%%:*}
    want_fail=${rest#*:}
    name="$kernel, $which barriers removed"
    tree="$scratch/$kernel-$which"
    cp -r solution "$tree"
    f="$tree/src/07_permute.cu"
    before=$(grep -c '^ *__syncthreads();' "$f")
    # Between the kernel's first line and the end of its snippet, delete
    # every line that is a __syncthreads() call, or only the last one.
    if [ "$which" = all ]; then
        sed -i "/static __global__ void $kernel(/,/\/\/@ end snippet $kernel\$/{/^ *__syncthreads();/d}" "$f"
        want=2
    else
        line=$(sed -n "/static __global__ void $kernel(/,/\/\/@ end snippet $kernel\$/{/^ *__syncthreads();/=}" "$f" | tail -1)
        [ -n "$line" ] && sed -i "${line}d" "$f"
        want=1
    fi
    after=$(grep -c '^ *__syncthreads();' "$f")
    check "$name: sed removed $((before - after)) lines, expected $want" \
        "$([ $((before - after)) -eq $want ]; echo $?)"

    log="$tree.log"
    make -s build TREE="$tree" CUDA=emu >"$log" 2>&1
    status=$?
    check "$name: the tree still builds" "$status"
    if [ "$status" -ne 0 ]; then
        tail -20 "$log"
        continue
    fi
    id=$(echo "${tree#/}" | tr / _)
    builds+=("build/_$id")
    runner=$(ls -d build/_"$id"/normal*/run_tests 2>/dev/null | head -1)
    results="$tree.tsv"
    "$runner" -l 7 -q -r "$results" >/dev/null 2>&1
    for t in $want_fail; do
        r=$(awk -F'\t' -v t="$t" '$2 == t { print $3 }' "$results")
        check "$name: $t fails (got: ${r:-not run})" \
            "$([ "$r" = fail ] || [ "$r" = crash ]; echo $?)"
    done
    for t in $must_pass; do
        r=$(awk -F'\t' -v t="$t" '$2 == t { print $3 }' "$results")
        check "$name: $t still passes (got: ${r:-not run})" \
            "$([ "$r" = pass ]; echo $?)"
    done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
