# matmul_bench.gp -- the benchmark plot of lesson 5, drawn from the measured
# data file that `make bench` writes (tests/bench/bench_cpu.c), as recorded
# in lessons/data/bench-cpu.tsv.  `make docs` runs it:
#
#     gnuplot -e "data='lessons/data/bench-cpu.tsv'; outdir='build/site/figures'" \
#         lessons/figures/matmul_bench.gp
#
# writes OUTDIR/matmul-bench.svg: GFLOP/s of nd_matmul_naive, nd_matmul,
# OpenBLAS's cblas_sgemm (one thread) and NumPy's a @ b (OpenBLAS too, one
# thread, through Python) against n, for n x n x n products.  The
# machine, the date, the compiler and OpenBLAS come from the file's '#'
# header lines, so the plot always names what it measured.

if (!exists("data")) data = 'lessons/data/bench-cpu.tsv'
if (!exists("outdir")) outdir = '.'

# "value" of the header line "# key: value"
header(key) = system(sprintf("sed -n 's/^# %s: //p' '%s'", key, data))
machine = header("machine")
date = header("date")
compiler = header("compiler")
openblas = header("openblas")
openblas = openblas[1:strstrt(openblas, " ") + strstrt(openblas[strstrt(openblas, " ") + 1:], " ") - 1]
if (strlen(machine) == 0) { print "matmul_bench.gp: no '# machine:' line in ", data; exit error "no machine" }

set datafile separator "\t"
set datafile missing NaN
# n of a shape "256x256x256"
n(s) = real(substr(s, 1, strstrt(s, "x") - 1))
# x for the rows of case c of the matmul group, NaN for every other row
x(c) = (strcol(1) eq "matmul" && strcol(2) eq c) ? n(strcol(3)) : NaN

set terminal svg size 760,500 font "sans-serif,13" background "#ffffff"
set output outdir . "/matmul-bench.svg"
set title sprintf("Single-precision matmul, n\303\227n\303\227n, one thread\n{/*0.8 %s, %s, %s, %s}", \
    machine, compiler, openblas, date)
set xlabel "n"
set ylabel "GFLOP/s (log scale)"
set logscale x 2
set logscale y 10
set xrange [200:2600]
set yrange [0.2:800]
set xtics ("256" 256, "512" 512, "1024" 1024, "2048" 2048)
set ytics ("0.3" 0.3, "1" 1, "3" 3, "10" 10, "30" 30, "100" 100, "300" 300)
set grid ytics lc rgb "#d0d7de" lw 1 dt 1
set border 3 lc rgb "#57606a"
set tics nomirror
set key below maxrows 2 reverse Left spacing 1.2 width -4 font ",11"

blas = "OpenBLAS sgemm, 1 thread"
tiled = "tiled (nd_matmul)"
naive = "naive (nd_matmul_naive)"
numpy = "NumPy a @ b"
plot data using (x(blas)):5 with linespoints lw 2 pt 7 ps 0.8 lc rgb "#57606a" \
         title "OpenBLAS cblas\\_sgemm", \
     data using (x(numpy)):5 with linespoints lw 2 pt 9 ps 0.9 dt 2 lc rgb "#8250df" \
         title "NumPy a @ b (OpenBLAS too, through Python)" noenhanced, \
     data using (x(blas)):5:(sprintf("%.0f", column(5))) with labels offset 0,1.1 \
         tc rgb "#57606a" font ",11" notitle, \
     data using (x(tiled)):5 with linespoints lw 2.5 pt 7 ps 0.9 lc rgb "#0b5cad" \
         title "nd\\_matmul (tiled, packed, 12\303\22732 kernel)", \
     data using (x(tiled)):5:(sprintf("%.0f", column(5))) with labels offset 0,-1.1 \
         tc rgb "#0b5cad" font ",11" notitle, \
     data using (x(naive)):5 with linespoints lw 2.5 pt 5 ps 0.8 lc rgb "#bc4c00" \
         title "nd\\_matmul\\_naive (triple loop)", \
     data using (x(naive)):5:(sprintf("%.2f", column(5))) with labels offset 0,1.1 \
         tc rgb "#bc4c00" font ",11" notitle
