# cpu_bench.gp -- the benchmark plots of lessons 2, 3 and 4, drawn from the
# data file that `make bench` writes (tests/bench/bench_cpu.c), as recorded
# in lessons/data/bench-cpu.tsv by `make bench-record`.  `make docs` runs it:
#
#     gnuplot -e "data='lessons/data/bench-cpu.tsv'; outdir='build/site/figures'" \
#         lessons/figures/cpu_bench.gp
#
# writes, in OUTDIR:
#   compact-bench.svg  lesson 2: the transposed compact, each step of the
#                      fast path (rows "steps" of the TSV) and NumPy's
#                      np.ascontiguousarray(a.T), as % of memcpy, per shape
#   ewise-bench.svg    lesson 3: add (nd_binary) and NumPy's a + b
#   reduce-bench.svg   lesson 4: the sum over the last axis, NumPy's
#                      a.sum(-1) and the fastest read of the same array
#                      (the ceiling for a sum), as % of memcpy's bandwidth
# The machine, its load and the date come from the file's '#' header lines,
# so each plot names what it measured.

if (!exists("data")) data = 'lessons/data/bench-cpu.tsv'
if (!exists("outdir")) outdir = '.'

# "value" of the header line "# key: value"
header(key) = system(sprintf("sed -n 's/^# %s: //p' '%s' | head -n 1", key, data))
machine = header("machine")
date = header("date")
if (strlen(machine) == 0) { print "cpu_bench.gp: no '# machine:' line in ", data; exit error "no machine" }
# the 1-minute load average before the run, the first field of "# load before:"
load = word(header("load before"), 1)
subtitle = sprintf("{/*0.8 %s, load %s, %s}", machine, load, date)

set datafile separator "\t"
set datafile missing "NaN"
set border 3 lc rgb "#57606a"
set tics nomirror
set style fill solid 1.0 noborder
set style textbox opaque noborder margins 1, 1

# ---------------------------------------------------------------------------
# Lesson 2: one cluster of bars per transposed shape, one bar per step, then
# NumPy.  The awk program turns the rows into a table: shape, step 1..4,
# NumPy (% of memcpy each).
steps = sprintf("< awk -F'\t' -v OFS='\t' '/^#/ || $1 == \"group\" { next } " . \
    "$1 == \"steps\" { v[$3, substr($2, 1, 1)] = 100 * $7; if (!($3 in seen)) { seen[$3]; order[n++] = $3 } } " . \
    "$1 == \"compact\" && $2 ~ /^NumPy.*a\\.T/ { v[$3, \"np\"] = 100 * $7 } " . \
    "END { for (i = 0; i < n; i++) { s = order[i]; " . \
    "print s, v[s, 1], v[s, 2], v[s, 3], v[s, 4], (v[s, \"np\"] == \"\" ? \"NaN\" : v[s, \"np\"]) } }' '%s'", data)
nshapes = int(system(sprintf("%s | wc -l", steps[3:])))
if (nshapes == 0) { print "cpu_bench.gp: no 'steps' rows in ", data; exit error "no steps" }

set terminal svg size 760, 430 font "sans-serif,13" background "#ffffff"
set output outdir . "/compact-bench.svg"
set title "nd\\_compact of a transpose, step by step, as % of memcpy\n" . subtitle
set ylabel "% of memcpy (GB/s of bytes read + written)"
# room above the tallest bar, and always the memcpy line
top = real(system(sprintf("%s | awk -F'\t' '{ for (k = 2; k <= 6; k++) if ($k != \"NaN\" && $k > m) m = $k } END { print m + 0 }'", steps[3:])))
set yrange [0:(top * 1.15 > 110 ? top * 1.15 : 110)]
set grid ytics lc rgb "#d0d7de" lw 1 dt 1
set style data histograms
set style histogram clustered gap 1.5
set boxwidth 0.9
set xtics scale 0
set key below horizontal maxrows 2 samplen 1.5 font ",11"
# memcpy (100%) and the target of `make bench` for nd_compact (60%)
set arrow 1 from graph 0, first 100 to graph 1, first 100 nohead lc rgb "#57606a" dt 2
set label 1 "memcpy" at graph 0.01, first 100 offset 0, 0.6 font ",10" tc rgb "#57606a"
set arrow 2 from graph 0, first 60 to graph 1, first 60 nohead lc rgb "#cf222e" dt 2
set label 2 "target" at graph 0.01, first 60 offset 0, 0.6 font ",10" tc rgb "#cf222e"
# bar k (0-4) of cluster i sits at i + (k - 2) / (5 + 1.5)
bar_x(i, k) = i + (k - 2) / 6.5
colours = "#bc4c00 #d4a72c #6e9bd1 #0b5cad #8c959f"
names = "'1 row by row' '2 blocked' '3 in registers' '4 streaming stores' 'NumPy ascontiguousarray(a.T)'"
plot for [k = 0:4] steps using (column(k + 2)):xtic(1) lc rgb word(colours, k + 1) \
         title word(names, k + 1), \
     for [k = 0:4] steps using (bar_x($0, k)):(column(k + 2)):(sprintf("%.0f", column(k + 2))) \
         with labels offset 0, 0.6 font ",10" tc rgb "#1f2328" notitle
unset style data
unset style histogram
unset boxwidth
unset arrow
unset label
unset ylabel
set xtics
unset grid

# ---------------------------------------------------------------------------
# Lessons 3 and 4: the course's operation and NumPy's, as % of memcpy's
# bandwidth, one horizontal bar each, labelled with the GB/s.
do for [g in "ewise reduce"] {
    rows = sprintf("< awk -F'\t' -v OFS='\t' '/^#/ || $1 == \"group\" { next } " . \
        "$1 == \"%s\" && $8 == \"memcpy GB/s\" { n++; print n, 100 * $7, ($9 > 0 ? 100 * $9 : \"NaN\"), " . \
        "($2 ~ /^NumPy/ ? 9213343 : 744877), $2 \", \" $3, $5 }' '%s'", g, data)
    nrows = int(system(sprintf("%s | wc -l", rows[3:])))
    if (nrows == 0) { print "cpu_bench.gp: no '", g, "' rows in ", data; exit error "no rows" }
    what = g eq "ewise" ? "a + b" : "a.sum(-1)"
    set terminal svg size 760, 170 + 40 * nrows font "sans-serif,13" background "#ffffff"
    set output outdir . "/" . g . "-bench.svg"
    set title sprintf("%s, the course's code and NumPy, as %% of memcpy's bandwidth\n%s", \
        what, subtitle)
    set xlabel "% of memcpy's bandwidth (GB/s of bytes read + written)"
    set xrange [0:140]
    set xtics 0, 25, 100
    set yrange [nrows + 0.7:0.3]
    set ytics scale 0
    set grid xtics lc rgb "#d0d7de" lw 1 dt 1
    set key below horizontal samplen 1.5 font ",11"
    plot rows using 2:1:(0):2:($1 - 0.35):($1 + 0.35):4:ytic(5) \
             with boxxyerror lc rgb variable notitle, \
         rows using 3:($1 - 0.45):(0):(0.9) with vectors nohead lw 2.5 lc rgb "#cf222e" \
             title "target", \
         rows using 2:1:(sprintf("%.0f%% (%.1f GB/s)", column(2), column(6))) with labels \
             boxed left offset 0.6, 0 font ",11" tc rgb "#1f2328" notitle
    unset grid
}
