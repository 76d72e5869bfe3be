#!/bin/sh
# Self-tests of the CPU emulator of CUDA (grader/emu): builds tests/*.cu
# with it (-O2, and -O1 with AddressSanitizer + UBSan), runs them, checks
# the broken kernels are caught, checks that kernels and cudaMemcpy refuse
# host memory where device memory must be (tests/host_arg.cu,
# tests/memcpy_kind.cu, in every build), checks sampled launches
# (tests/sampled.cu), checks cu2cpp.py, checks the instrumented build's
# counters and sanitizer (tests/sanitize.cu, tests/global_race.cu) and the registers x
# threads limit (tests/registers.cu, regs.py), and checks that the tests
# are real CUDA with nvcc when it is installed.
# Prints one line per check and ends with "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${NDEMU_TEST_DIR:-$root/build/emu-test}
rm -rf "$out"
mkdir -p "$out"
cd "$root" || exit 2

CXX=${CXX:-g++}
# -fsanitize=alignment as cuda.mk's CXXFLAGS_CU: misaligned accesses in kernels are faults.
WARN="-std=c++17 -g -Wall -Wextra -Werror -Wshadow -fsanitize=alignment -I grader/emu/include -iquote grader/emu/tests"
OPT="$WARN -O2"
SAN="$WARN -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
ASAN_ONLY="$WARN -O1 -fsanitize=address -fno-omit-frame-pointer"
# The instrumented build (README, "Profiling"): device code only; the
# runtime is the plain -O2 object, and nothing links ThreadSanitizer.
INST="$WARN -gdwarf-4 -O2 -fsanitize=thread --param=tsan-instrument-func-entry-exit=0 -fno-tree-sra -DNDEMU_INSTRUMENTED"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# The runtime, once per build mode (in parallel).
$CXX $OPT -c grader/emu/emu.cpp -o "$out/emu_opt.o" 2>"$out/emu_opt.log" &
$CXX $SAN -c grader/emu/emu.cpp -o "$out/emu_san.o" 2>"$out/emu_san.log" &
$CXX $ASAN_ONLY -c grader/emu/emu.cpp -o "$out/emu_asan.o" 2>"$out/emu_asan.log" &
wait
for m in opt san asan; do
    if [ -s "$out/emu_$m.o" ]; then ok "[$m] emu.cpp compiles without warnings"
    else bad "[$m] emu.cpp does not compile:"; cat "$out/emu_$m.log"; fi
done

# Rewrite and build one test: build NAME MODE FLAGS
build() {
    name=$1 mode=$2 flags=$3
    python3 grader/emu/cu2cpp.py "grader/emu/tests/$name.cu" "$out/$name.cpp" 2>"$out/$name.$mode.log" || return 1
    if [ "$mode" = inst ]; then
        $CXX $flags -c "$out/$name.cpp" -o "$out/$name.inst.o" 2>>"$out/$name.$mode.log" &&
            $CXX "$out/$name.inst.o" "$out/emu_opt.o" -o "$out/$name.$mode" 2>>"$out/$name.$mode.log"
    else
        $CXX $flags "$out/$name.cpp" "$out/emu_$mode.o" -o "$out/$name.$mode" 2>>"$out/$name.$mode.log"
    fi
}

# Run a test program and turn its "ok" / "not ok" lines into checks.
run_checks() {
    name=$1 mode=$2
    shift 2
    "$out/$name.$mode" "$@" >"$out/$name.$mode.out" 2>"$out/$name.$mode.err"
    rc=$?
    while IFS= read -r line; do
        case $line in
        "ok "*) ok "[$mode] $name: ${line#ok }" ;;
        "not ok "*) bad "[$mode] $name: ${line#not ok }" ;;
        "time: "*) echo "      [$mode] $line" ;;
        esac
    done <"$out/$name.$mode.out"
    if [ $rc -ne 0 ] && ! grep -q '^not ok' "$out/$name.$mode.out"; then
        bad "[$mode] $name exited with status $rc:"
        tail -n 30 "$out/$name.$mode.err"
    fi
}

for t in basic broken; do
    for mode in opt san; do
        if [ "$mode" = opt ]; then flags=$OPT; else flags=$SAN; fi
        if build "$t" "$mode" "$flags"; then
            ok "[$mode] $t.cu builds with -Wall -Wextra -Werror -Wshadow"
            run_checks "$t" "$mode"
        else
            bad "[$mode] $t.cu does not build:"
            cat "$out/$t.$mode.log"
        fi
    done
done

# Issue #32: uninitialised __shared__ reads (poison), misaligned float4,
# shuffles on two sides of a branch, races between blocks (shuffled block
# order), __launch_bounds__, in the plain, sanitizer and instrumented builds.
for mode in opt san inst; do
    case $mode in opt) flags=$OPT ;; san) flags=$SAN ;; inst) flags=$INST ;; esac
    if build gaps "$mode" "$flags"; then
        ok "[$mode] gaps.cu builds"
        run_checks gaps "$mode"
    else
        bad "[$mode] gaps.cu does not build:"
        cat "$out/gaps.$mode.log"
    fi
done
# Static __shared__ over 48 KiB: one array fails to compile at its line (as
# ptxas refuses it); two arrays fail the launch, naming the second.
bline=$(grep -n 'BIG:' grader/emu/tests/big_shared.cu | cut -d: -f1)
if build big_shared opt "$OPT"; then
    bad "[opt] big_shared.cu (64 KiB of __shared__) builds"
elif grep -q "big_shared.cu:$bline:.*48 KiB" "$out/big_shared.opt.log"; then
    ok "[opt] big_shared: a 64 KiB __shared__ array is a compile error at big_shared.cu:$bline"
else
    bad "[opt] big_shared: no error at big_shared.cu:$bline:"; head -n 10 "$out/big_shared.opt.log"
fi
for mode in opt san; do
    if [ "$mode" = opt ]; then flags=$OPT; else flags=$SAN; fi
    if build two_shared "$mode" "$flags"; then run_checks two_shared "$mode"
    else bad "[$mode] two_shared.cu does not build:"; cat "$out/two_shared.$mode.log"; fi
done

# The broken kernels that only a sanitizer catches: an out-of-bounds write
# to cudaMalloc'd memory, and an out-of-bounds read of a __shared__ array.
for t in oob_global oob_shared; do
    line=$(grep -n 'OOB:' "grader/emu/tests/$t.cu" | cut -d: -f1)
    if [ "$t" = oob_global ]; then kind=heap-buffer-overflow; else kind=global-buffer-overflow; fi
    for mode in asan san; do
        if [ "$mode" = asan ]; then flags=$ASAN_ONLY; else flags=$SAN; fi
        if ! build "$t" "$mode" "$flags"; then
            bad "[$mode] $t.cu does not build:"
            cat "$out/$t.$mode.log"
            continue
        fi
        ASAN_OPTIONS=detect_stack_use_after_return=1 "$out/$t.$mode" >"$out/$t.$mode.out" 2>"$out/$t.$mode.err"
        rc=$?
        if [ "$mode" = asan ]; then
            # AddressSanitizer alone: the kind of overflow, and the kernel's
            # line as the first frame of the stack trace.
            if [ $rc -ne 0 ] && grep -q "ERROR: AddressSanitizer: $kind" "$out/$t.$mode.err" &&
                grep -q "#0 .* grader/emu/tests/$t.cu:$line" "$out/$t.$mode.err"; then
                ok "[$mode] $t: AddressSanitizer reports a $kind at $t.cu:$line"
            else
                bad "[$mode] $t: no $kind reported at $t.cu:$line (status $rc):"
                head -n 20 "$out/$t.$mode.err"
            fi
        else
            # With UBSan too, either sanitizer may see it first.
            if [ $rc -ne 0 ] && grep -q "grader/emu/tests/$t.cu:$line" "$out/$t.$mode.err"; then
                ok "[$mode] $t: the sanitizers report the access at $t.cu:$line"
            else
                bad "[$mode] $t: nothing reported at $t.cu:$line (status $rc):"
                head -n 20 "$out/$t.$mode.err"
            fi
        fi
    done
done

# Device memory is not host memory, in every build: a kernel given a host
# pointer does not run, and stderr names the kernel, the argument and the
# launch (the line marked HOST_ARG); a cudaMemcpy whose kind does not match
# its pointers fails, and says so on stderr.
hline=$(grep -n 'HOST_ARG' grader/emu/tests/host_arg.cu | tail -n 1 | cut -d: -f1)
for t in host_arg memcpy_kind; do
    for mode in opt san asan inst; do
        case $mode in opt) flags=$OPT ;; san) flags=$SAN ;; asan) flags=$ASAN_ONLY ;; inst) flags=$INST ;; esac
        if ! build "$t" "$mode" "$flags"; then
            bad "[$mode] $t.cu does not build:"
            cat "$out/$t.$mode.log"
            continue
        fi
        run_checks "$t" "$mode"
        if [ "$t" = host_arg ]; then
            want="^ndemu: kernel 'twice' (host_arg\\.cu:$hline) was given a host pointer as argument 2 (0x[0-9a-f]*): kernels may only read and write device memory (cudaMalloc)"
            what="stderr names the kernel, host_arg.cu:$hline and argument 2, once"
        else
            want="^ndemu: cudaMemcpy(0x[0-9a-f]*, 0x[0-9a-f]*, 1024 bytes, cudaMemcpyHostToDevice): the destination: 0x[0-9a-f]* is not device memory.*the pointers say cudaMemcpyDeviceToHost"
            what="stderr says what is wrong with a swapped cudaMemcpy, once"
        fi
        if [ "$(grep -c "$want" "$out/$t.$mode.err")" -eq 1 ]; then ok "[$mode] $t: $what"
        else bad "[$mode] $t: $what; stderr:"; head -n 20 "$out/$t.$mode.err"; fi
    done
done

# Sampled launches (README.md): few blocks, block 0 and the grid's last
# threads among them; guards around cudaMalloc's blocks, so that an int
# index that wraps past 2^31 - 1 crashes at once.  The plain build (the
# grader's tests that sample run there only).
if build sampled opt "$OPT"; then
    ok "[opt] sampled.cu builds with -Wall -Wextra -Werror -Wshadow"
    run_checks sampled opt
else
    bad "[opt] sampled.cu does not build:"
    cat "$out/sampled.opt.log"
fi

# The instrumented build: exact counts of small kernels, and the sanitizer
# (a race, a host pointer, an uninitialised read) reporting their lines.
if build sanitize inst "$INST"; then
    ok "[inst] sanitize.cu builds with the instrumentation, warning-free"
    run_checks sanitize inst
    if grep -q '^   by line' "$out/sanitize.inst.out" && grep -q 'modelled (not measured' "$out/sanitize.inst.out"; then
        ok "[inst] ndemu_profile_print: the table by line and the modelled times"
    else
        bad "[inst] ndemu_profile_print printed no table:"; tail -n 20 "$out/sanitize.inst.out"
    fi
else
    bad "[inst] sanitize.cu does not build:"
    cat "$out/sanitize.inst.log"
fi
# Racecheck between the blocks of a launch (global memory): the broken
# reductions reported with both lines, the correct patterns not.
if build global_race inst "$INST"; then
    ok "[inst] global_race.cu builds with the instrumentation, warning-free"
    run_checks global_race inst
else
    bad "[inst] global_race.cu does not build:"
    cat "$out/global_race.inst.log"
fi
# Without the instrumentation nothing is recorded, and nothing is checked.
if build sanitize opt "$OPT"; then
    "$out/sanitize.opt" >"$out/sanitize.opt.out" 2>&1
    if grep -q '^not ok the instrumented build records' "$out/sanitize.opt.out"; then
        ok "[opt] the plain build records nothing (ndemu_profile_enabled() is 0)"
    else
        bad "[opt] the plain build claims to record:"; head -n 5 "$out/sanitize.opt.out"
    fi
else
    bad "[opt] sanitize.cu does not build:"; cat "$out/sanitize.opt.log"
fi

# Registers x threads: a table giving fat() 128 registers refuses 1024
# threads (128 x 1024 > 65536); 64 registers do not.
if build registers opt "$OPT"; then
    for r in 128 64; do
        printf 'fat(float*)\t%d\t0\n' "$r" >"$out/registers.$r.tsv"
        NDEMU_REGISTERS="$out/registers.$r.tsv" "$out/registers.opt" "$r" >"$out/registers.opt.out" 2>&1
        while IFS= read -r line; do
            case $line in
            "ok "*) ok "[opt] registers ($r per thread): ${line#ok }" ;;
            "not ok "*) bad "[opt] registers ($r per thread): ${line#not ok }" ;;
            esac
        done <"$out/registers.opt.out"
    done
    # No NDEMU_REGISTERS: the table beside the program or one folder up
    # (make build writes build/TREE/ndemu-registers.tsv with nvcc installed).
    mkdir -p "$out/regdir/bin"
    cp "$out/registers.opt" "$out/regdir/bin/"
    printf 'fat(float*)\t128\t0\n' >"$out/regdir/ndemu-registers.tsv"
    env -u NDEMU_REGISTERS "$out/regdir/bin/registers.opt" 128 >"$out/registers.dflt.out" 2>&1
    while IFS= read -r line; do
        case $line in
        "ok "*) ok "[opt] registers (ndemu-registers.tsv found by default): ${line#ok }" ;;
        "not ok "*) bad "[opt] registers (ndemu-registers.tsv found by default): ${line#not ok }" ;;
        esac
    done <"$out/registers.dflt.out"
    # Linked: regs.py --c's object beside the kernel's (as the grader links
    # its executors), no file at all; two such objects in one program.
    printf "ptxas info    : Compiling entry function '_Z3fatPf' for 'sm_90'\nptxas info    : Used 128 registers, 352 bytes cmem[0]\n" >"$out/ptxas.fat.log"
    printf "ptxas info    : Compiling entry function '_Z5otherPi' for 'sm_90'\nptxas info    : Used 9 registers, 352 bytes cmem[0]\n" >"$out/ptxas.other.log"
    if python3 grader/emu/regs.py --c "$out/ptxas.fat.log" >"$out/regs.fat.c" &&
        python3 grader/emu/regs.py --c "$out/ptxas.other.log" >"$out/regs.other.c" &&
        gcc -Wall -Wextra -Werror -c "$out/regs.fat.c" -o "$out/regs.fat.o" 2>"$out/registers.linked.log" &&
        gcc -Wall -Wextra -Werror -c "$out/regs.other.c" -o "$out/regs.other.o" 2>>"$out/registers.linked.log" &&
        $CXX $OPT "$out/registers.cpp" "$out/emu_opt.o" "$out/regs.other.o" "$out/regs.fat.o" \
            -o "$out/registers.linked" 2>>"$out/registers.linked.log"; then
        NDEMU_REGISTERS= "$out/registers.linked" 128 >"$out/registers.linked.out" 2>&1
        while IFS= read -r line; do
            case $line in
            "ok "*) ok "[opt] registers (linked with regs.py --c's object): ${line#ok }" ;;
            "not ok "*) bad "[opt] registers (linked with regs.py --c's object): ${line#not ok }" ;;
            esac
        done <"$out/registers.linked.out"
    else
        bad "[opt] registers.cu with regs.py --c's objects does not build:"; cat "$out/registers.linked.log"
    fi
else
    bad "[opt] registers.cu does not build:"; cat "$out/registers.opt.log"
fi
# regs.py: keys as the emulator looks them up, from ptxas's own report.
printf "ptxas info    : Compiling entry function '_ZN4demo6kernelILi4EfEEvPKT0_PS1_l' for 'sm_90'\nptxas info    : Used 40 registers, 4224 bytes smem, 380 bytes cmem[0]\nptxas info    : Compiling entry function '_Z3fatPf' for 'sm_90'\nptxas info    : Used 8 registers, 352 bytes cmem[0]\n" >"$out/ptxas.log"
if python3 grader/emu/regs.py "$out/ptxas.log" >"$out/regs.tsv" 2>"$out/regs.err" &&
    printf 'fat(float*)\t8\t0\nkernel(float const*, float*, long)\t40\t4224\n' | cmp -s - "$out/regs.tsv"; then
    ok "regs.py: one line per kernel, without namespace, template arguments or return type"
else
    bad "regs.py: unexpected table:"; cat "$out/regs.tsv" "$out/regs.err"
fi

# cu2cpp.py: line numbers, multi-line arguments, templates, comments and
# strings, and launches it cannot rewrite.
cu=$out/lines.cu
cat >"$cu" <<'EOF'
#include <cuda_runtime.h>
template <int N, typename T> __global__ void k(T *p, int n) { p[n] = (T)N; }
void host(float *p)
{
    /* k<<<1, 1>>>(p, 0); in a comment */ const char *s = "k<<<1,1>>>(p, 0)";
    k<4, float><<<dim3(2, 1), 32, 0, 0>>>(p,
                                          1);
    (void)s;
#pragma unroll
    for (int i = 0; i < 4; i++) p[i] = 0.0f;
#pragma unroll 4
    for (int i = 0; i < 4; i++) p[i] = 0.0f;
    p[0] = not_declared_anywhere;
}
EOF
if python3 grader/emu/cu2cpp.py "$cu" "$out/lines.cpp" 2>"$out/lines.log"; then
    if [ "$(head -n 1 "$out/lines.cpp")" = "#line 1 \"$cu\"" ]; then ok "cu2cpp: the output starts with #line 1 \"IN.cu\""
    else bad "cu2cpp: first line is $(head -n 1 "$out/lines.cpp")"; fi
    if [ $(($(wc -l <"$out/lines.cpp") - 1)) -eq "$(wc -l <"$cu")" ]; then ok "cu2cpp: keeps the number of lines"
    else bad "cu2cpp: the number of lines changed"; fi
    if grep -q '::ndemu::launch("k<4, float>", __FILE__, __LINE__, k<4, float>, dim3(2, 1), 32, 0, 0)(p,' "$out/lines.cpp"; then
        ok "cu2cpp: rewrites a template launch with shmem and stream, arguments over two lines"
    else bad "cu2cpp: template launch not rewritten as expected:"; sed -n 7p "$out/lines.cpp"; fi
    if grep -q 'k<<<1, 1>>>(p, 0); in a comment \*/ const char \*s = "k<<<1,1>>>(p, 0)"' "$out/lines.cpp"; then
        ok "cu2cpp: leaves comments and strings alone"
    else bad "cu2cpp: changed a comment or string:"; sed -n 6p "$out/lines.cpp"; fi
    if [ "$(sed -n 10p "$out/lines.cpp")" = "#pragma GCC unroll 8" ] &&
       [ "$(sed -n 12p "$out/lines.cpp")" = "#pragma GCC unroll 4" ]; then
        ok "cu2cpp: a bare #pragma unroll becomes #pragma GCC unroll 8 (nvcc unrolls a constant loop), #pragma unroll 4 GCC's 4"
    else bad "cu2cpp: #pragma unroll not rewritten as expected:"; sed -n '10p;12p' "$out/lines.cpp"; fi
    $CXX $OPT -c "$out/lines.cpp" -o "$out/lines.o" 2>"$out/lines.err"
    if grep -q "^$cu:13:.*not_declared_anywhere" "$out/lines.err" && [ "$(grep -c 'error' "$out/lines.err")" -eq 1 ]; then
        ok "cu2cpp: g++ reports the error at IN.cu:13, and the #pragma unroll lines pass -Werror"
    else bad "cu2cpp: the compile error is not reported at $cu:13 alone:"; cat "$out/lines.err"; fi
else
    bad "cu2cpp failed on a valid file:"
    cat "$out/lines.log"
fi
printf '__global__ void k(int *p) {}\nvoid f(int *p)\n{\n    k<<<1,\n        1>>>(p);\n}\n' >"$out/unrewritable.cu"
python3 grader/emu/cu2cpp.py "$out/unrewritable.cu" "$out/unrewritable.cpp" 2>"$out/unrewritable.log"
rc=$?
if [ $rc -ne 0 ] && grep -qx "$out/unrewritable.cu:4: cannot rewrite this kernel launch for the emulator" "$out/unrewritable.log"; then
    ok "cu2cpp: a launch it cannot rewrite is an error naming IN.cu:LINE"
else
    bad "cu2cpp: unrewritable launch: status $rc, $(cat "$out/unrewritable.log")"
fi

# Timings (printed, not asserted): 16M threads at -O2, 1M under the sanitizers.
if build perf opt "$OPT"; then run_checks perf opt 16777216; else bad "[opt] perf.cu does not build"; cat "$out/perf.opt.log"; fi
if build perf san "$SAN"; then run_checks perf san 1048576; else bad "[san] perf.cu does not build"; cat "$out/perf.san.log"; fi

# The tests are real CUDA: they compile with nvcc.
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ -x "$NVCC" ] || command -v "$NVCC" >/dev/null 2>&1; then
    for f in grader/emu/tests/*.cu; do
        b=$(basename "$f" .cu)
        case $b in big_shared | two_shared)
            # ptxas must refuse these (the emulator mirrors it)
            if "$NVCC" -arch=sm_90 -c "$f" -o "$out/$b.nvcc.o" >"$out/$b.nvcc.log" 2>&1; then
                bad "nvcc compiles tests/$b.cu, which has more than 48 KiB of static __shared__"
            else
                ok "nvcc refuses tests/$b.cu (more than 48 KiB of static __shared__)"
            fi
            continue ;;
        esac
        if "$NVCC" -arch=sm_90 -Werror all-warnings -c "$f" -o "$out/$b.nvcc.o" >"$out/$b.nvcc.log" 2>&1; then
            ok "nvcc compiles tests/$b.cu (sm_90, warnings as errors)"
        else
            bad "nvcc does not compile tests/$b.cu:"
            cat "$out/$b.nvcc.log"
        fi
    done
    # ptxas's own register count, looked up by the emulator's key
    if "$NVCC" -arch=sm_90 -Xptxas -v -c grader/emu/tests/registers.cu -o "$out/registers.nvcc.o" \
        >"$out/registers.ptxas.log" 2>&1 && python3 grader/emu/regs.py "$out/registers.ptxas.log" >"$out/registers.nvcc.tsv" &&
        grep -q '^fat(float\*)	[0-9]' "$out/registers.nvcc.tsv"; then
        ok "regs.py reads nvcc's ptxas report: fat(float*) uses $(cut -f2 "$out/registers.nvcc.tsv") registers"
    else
        bad "regs.py found no fat(float*) in nvcc's ptxas report:"; cat "$out/registers.ptxas.log" "$out/registers.nvcc.tsv"
    fi
else
    echo "note: nvcc not found (set NVCC=...); skipped the check that the tests are real CUDA"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
