# permute_bench.gp -- the benchmark plot of lesson 7: each permute as a
# percentage of the copy it is measured against, drawn from a TSV that
# `make bench` writes (the columns: group case shape seconds rate unit ratio
# baseline target verdict):
#
#   lessons/data/bench-cpu.tsv          build/bench/cpu.tsv as recorded: the
#                                       CPU compact of a transpose and of
#                                       (0,2,1,3) permutes, against memcpy
#   lessons/data/bench-gpu-permute.tsv  build/bench/gpu_permute.tsv as
#                                       recorded (not yet: no GPU run has
#                                       been committed): every version of
#                                       nd_permute_bytes, against the copy
#                                       kernel
#
# `make docs` runs it with only outdir set, and it plots the CPU file, and
# the GPU file too once it exists:
#
#     gnuplot -e "outdir='build/site/figures'" lessons/figures/permute_bench.gp
#     gnuplot -e "data='build/bench/gpu_permute.tsv'; outdir='.'" lessons/figures/permute_bench.gp
#
# It writes OUTDIR/permute-bench-cpu.svg for a file whose header has a
# '# machine:' line, OUTDIR/permute-bench-gpu.svg for one with '# gpu:'
# (bench_gpu.h), and names that machine in the title.  One horizontal bar
# per row of the "compact" or "permute" group in GB/s, except the baseline's
# own row (baseline "itself"): blue where the row met its target, orange
# where it missed it, grey where it has none; a red tick marks the target.

if (!exists("outdir")) outdir = '.'
cpu_data = 'lessons/data/bench-cpu.tsv'
gpu_data = 'lessons/data/bench-gpu-permute.tsv'
if (exists("data")) {
    files = data
} else {
    files = cpu_data
    if (system(sprintf("test -f '%s' && echo yes", gpu_data)) eq "yes") {
        files = files . " " . gpu_data
    }
}

set datafile separator "\t"
set datafile missing "NaN"
set border 3 lc rgb "#57606a"
set tics nomirror
set grid xtics lc rgb "#d0d7de" lw 1 dt 1
set style fill solid 1.0 noborder
set yrange [*:*] reverse
set offsets 0, 0, 0.6, 0.6
set style textbox opaque noborder margins 1, 1
set key below horizontal maxrows 1 reverse Left samplen 1.5 width -3 font ",11"

do for [f in files] {
    # "value" of the header line "# key: value"
    machine = system(sprintf("sed -n 's/^# machine: //p' '%s'", f))
    kind = "cpu"
    if (strlen(machine) == 0) {
        machine = system(sprintf("sed -n 's/^# gpu: //p' '%s'", f))
        kind = "gpu"
    }
    if (strlen(machine) == 0) {
        print "permute_bench.gp: no '# machine:' or '# gpu:' line in ", f
        exit error "no machine"
    }
    date = system(sprintf("sed -n 's/^# date: //p' '%s'", f))
    # The rows to draw, numbered from 1: n, % of the baseline, target % (NaN
    # for none), bar colour, label, GB/s.
    rows = sprintf("< awk -F'\t' -v OFS='\t' '/^#/ || $1 == \"group\" { next } " . \
        "($1 == \"compact\" || $1 == \"permute\") && $6 == \"GB/s\" && $8 != \"itself\" " . \
        "{ n++; c = $10 == \"met\" ? 744877 : $10 == \"MISSED\" ? 12340224 : 9213343; " . \
        "print n, 100 * $7, ($9 > 0 ? 100 * $9 : \"NaN\"), c, $2 \", \" $3, $5 }' '%s'", f)
    baseline = system(sprintf("awk -F'\t' '($1 == \"compact\" || $1 == \"permute\") && $6 == \"GB/s\" " . \
        "&& $8 != \"itself\" { print $8; exit }' '%s'", f))
    nrows = int(system(sprintf("%s | wc -l", rows[3:])))
    if (nrows == 0) {
        print "permute_bench.gp: no permute rows in ", f
        exit error "no rows"
    }

    # wide enough for the longest label, left of the bars
    maxlen = int(system(sprintf("%s | awk -F'\t' '{ if (length($5) > m) m = length($5) } END { print m + 0 }'", rows[3:])))
    set terminal svg size 480 + 8 * maxlen, 150 + 34 * nrows font "sans-serif,13" background "#ffffff"
    set output outdir . "/permute-bench-" . kind . ".svg"
    set title sprintf("Permutes made compact, as %% of %s bandwidth\n{/*0.8 %s, %s}", \
        baseline, machine, date)
    set xlabel sprintf("%% of %s (GB/s of bytes read + written)", baseline)
    set xrange [0:140]
    set xtics 0, 25, 100
    plot rows using 2:1:(0):2:($1 - 0.35):($1 + 0.35):4:ytic(5) \
             with boxxyerror lc rgb variable notitle, \
         rows using 3:($1 - 0.45):(0):(0.9) with vectors nohead lw 2.5 lc rgb "#cf222e" \
             title "target", \
         rows using 2:1:(sprintf("%.0f%% (%.1f GB/s)", column(2), column(6))) with labels \
             boxed left offset 0.6, 0 font ",11" tc rgb "#1f2328" notitle, \
         keyentry with boxes lc rgb "#0b5cad" title "met its target", \
         keyentry with boxes lc rgb "#bc4c00" title "missed it", \
         keyentry with boxes lc rgb "#8c959f" title "no target"
}
