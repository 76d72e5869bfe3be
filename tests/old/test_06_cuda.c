/*
 * test_06_cuda.c -- public tests of lesson 6: the index transform on the
 * host, and what only the CUDA device has: launches over sizes that are
 * not multiples of the block, more elements or outputs than one grid pass
 * covers, and moving arrays between devices.
 *
 * Every test of lessons 2-5 also runs on the CUDA device, as "name[cuda]";
 * those cases count for this lesson too (see main.c).  The tests here that
 * need the device are registered for it alone (T_ADD_CUDA).  The device
 * itself (memory, copies, nd_to_device) is the framework's, tested with
 * lesson 0.
 *
 * References never call lesson code: t_gather reads a host copy of the
 * buffer index by index, and the loops below compute in double.
 */
#include "nd_test.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INDEX_HINT "peel the index off i from the last axis: index[k] = i % " \
    "shape[k], i /= shape[k]; the offset is offset + sum(index[k] * strides[k])"
#define LAUNCH_HINT "round the number of blocks up (n / threads leaves the last " \
    "partial block out), and guard i < n in the kernel, or loop with a grid stride"
#define GRID_HINT "the grid is capped at MAX_BLOCKS blocks: each thread must loop, " \
    "i += gridDim.x * blockDim.x, until i >= n (a grid-stride loop)"

/* offset + sum(index[k] * strides[k]) for row-major position i. */
static int64_t ref_offset(int64_t i, int ndim, const int64_t *shape, const int64_t *strides,
                          int64_t offset)
{
    int64_t index[ND_MAX_DIMS];
    t_unravel(i, ndim, shape, index);
    for (int k = 0; k < ndim; k++)
        offset += index[k] * strides[k];
    return offset;
}

/* ---------------------------------------------------------------------- */
/* The index transform, on the host                                       */
/* ---------------------------------------------------------------------- */

/* The skeleton's offset_of returns the view's offset whatever i is. */
static void require_index_transform(void)
{
    int64_t shape[1] = { 10 }, strides[1] = { 1 };
    ck_assert_msg(nd_index_to_offset(5, 1, shape, strides, 0) != 0,
                  "nd_index_to_offset gives offset 0 for element 5 of a compact (10,): "
                  "not implemented: offset_of (lesson 6)\n  hint: %s", INDEX_HINT);
}

START_TEST(index_to_offset_cases)
{
    require_index_transform();
    static const struct {
        int ndim;
        int64_t shape[3], strides[3], offset, i, want;
        const char *what;
    } cases[] = {
        { 3, { 2, 3, 4 }, { 12, 4, 1 }, 0, 17, 17, "a compact (2,3,4): its own position" },
        { 3, { 2, 3, 4 }, { 1, 8, 2 }, 0, 17, 1 + 8 + 2, "(2,3,4) permuted: index (1,1,1)" },
        { 2, { 3, 4 }, { -4, 1 }, 8, 5, 8 - 4 + 1, "rows reversed: offset 8, index (1,1)" },
        { 2, { 3, 4 }, { 0, 1 }, 2, 11, 2 + 3, "a broadcast row: stride 0 on axis 0" },
        { 1, { 5 }, { 3 }, 1, 4, 13, "every third element from 1" },
        { 0, { 0 }, { 0 }, 7, 0, 7, "a scalar: just the offset" },
        { 3, { 1, 1, 6 }, { 99, -7, 2 }, 4, 5, 14, "size-1 axes: their strides never count" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t got = nd_index_to_offset(cases[c].i, cases[c].ndim, cases[c].shape,
                                         cases[c].strides, cases[c].offset);
        ck_assert_msg(got == cases[c].want,
                      "%s: nd_index_to_offset(i=%" PRId64 ") gave %" PRId64 ", want %" PRId64
                      "\n  hint: %s", cases[c].what, cases[c].i, got, cases[c].want, INDEX_HINT);
    }
}
END_TEST

START_TEST(index_to_offset_random)
{
    require_index_transform();
    t_rng r = t_rng_new(600);
    for (int trial = 0; trial < 2000; trial++) {
        int ndim = (int)t_int(&r, 1, ND_MAX_DIMS);
        int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
        t_random_shape(&r, ndim, 6, false, 100000, shape);
        for (int k = 0; k < ndim; k++)
            strides[k] = t_int(&r, -50, 50);
        int64_t offset = t_int(&r, 0, 1000), n = t_numel(ndim, shape);
        for (int probe = 0; probe < 20; probe++) {
            int64_t i = t_int(&r, 0, n - 1);
            int64_t want = ref_offset(i, ndim, shape, strides, offset);
            int64_t got = nd_index_to_offset(i, ndim, shape, strides, offset);
            if (got != want) {
                int64_t index[ND_MAX_DIMS];
                t_unravel(i, ndim, shape, index);
                ck_abort_msg("nd_index_to_offset(i=%" PRId64 ") for shape %s, offset %" PRId64
                             ": got %" PRId64 ", want %" PRId64 " (index %s)\n  hint: %s",
                             i, t_index_str(ndim, shape), offset, got, want,
                             t_index_str(ndim, index), INDEX_HINT);
            }
        }
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Launches: sizes that are not multiples of the block                    */
/* ---------------------------------------------------------------------- */

static const int64_t odd_sizes[] = { 1, 2, 31, 32, 33, 255, 256, 257, 1000, 4097, 65537 };
#define NODD (int)(sizeof odd_sizes / sizeof odd_sizes[0])

/* compact, setitem, fill, binary and unary over n elements of reversed
 * (negative-stride) views, against t_gather. */
START_TEST(launch_odd_sizes)
{
    for (int c = 0; c < NODD; c++) {
        int64_t n = odd_sizes[c], stride[1] = { -1 }, one[1] = { 1 };
        char what[120];
        /* compact of a reversed view: element i is buffer[n-1-i] */
        nd_array rev = t_strided(n, 1, &n, stride, n - 1), out;
        float *want = t_gather(&rev);
        T_OK(nd_compact(&rev, &out));
        snprintf(what, sizeof what, "nd_compact of a reversed view of %" PRId64 " elements", n);
        t_assert_values(&out, want, what, LAUNCH_HINT);
        /* setitem through the reversed view, from a compact array */
        nd_array dst = t_nan_array(1, &n), rdst;
        T_OK(nd_as_strided(&dst, 1, &n, stride, n - 1, &rdst));
        T_OK(nd_setitem(&rdst, &out));
        snprintf(what, sizeof what, "nd_setitem of %" PRId64 " elements through a reversed "
                 "view", n);
        t_assert_values(&rdst, want, what, LAUNCH_HINT);
        /* fill */
        T_OK(nd_setitem_scalar(&rdst, 2.5f));
        float *twos = t_floats(n);
        for (int64_t i = 0; i < n; i++)
            twos[i] = 2.5f;
        snprintf(what, sizeof what, "nd_setitem_scalar on %" PRId64 " elements", n);
        t_assert_values(&dst, twos, what, LAUNCH_HINT);
        /* binary with a broadcast scalar-shaped operand, and unary */
        nd_array s = t_array_of(1, one, (const float[]){ 10.0f }), sum, neg;
        T_OK(nd_binary(ND_ADD, &rev, &s, &sum));
        T_OK(nd_unary(ND_NEG, &rev, &neg));
        for (int64_t i = 0; i < n; i++)
            twos[i] = want[i] + 10.0f;
        snprintf(what, sizeof what, "nd_binary(ND_ADD) of %" PRId64 " elements and (1,)", n);
        t_assert_values(&sum, twos, what, LAUNCH_HINT);
        for (int64_t i = 0; i < n; i++)
            twos[i] = -want[i];
        snprintf(what, sizeof what, "nd_unary(ND_NEG) of %" PRId64 " elements", n);
        t_assert_values(&neg, twos, what, LAUNCH_HINT);
        free(twos);
        free(want);
        nd_release(&rev);
        nd_release(&out);
        nd_release(&dst);
        nd_release(&rdst);
        nd_release(&s);
        nd_release(&sum);
        nd_release(&neg);
    }
}
END_TEST

/* Sums and maxes over the last axis for lengths around the warp and the
 * block, many outputs each. */
START_TEST(reduce_odd_lengths)
{
    static const int64_t lens[] = { 1, 2, 31, 32, 33, 63, 255, 256, 257, 1025, 5000 };
    t_rng r = t_rng_new(602);
    for (size_t c = 0; c < sizeof lens / sizeof lens[0]; c++) {
        int64_t shape[2] = { 37, lens[c] }, n = shape[0] * shape[1];
        nd_array a = t_random_array(&r, 2, shape, -1.0f, 1.0f), sum, max;
        float *x = t_gather(&a), want_sum[37], want_max[37];
        int axis = 1;
        T_OK(nd_reduce(ND_SUM, &a, 1, &axis, false, &sum));
        T_OK(nd_reduce(ND_MAX, &a, 1, &axis, false, &max));
        for (int64_t i = 0; i < shape[0]; i++) {
            double s = 0;
            float m = -INFINITY;
            for (int64_t j = 0; j < shape[1]; j++) {
                s += x[i * shape[1] + j];
                m = x[i * shape[1] + j] > m ? x[i * shape[1] + j] : m;
            }
            want_sum[i] = (float)s;
            want_max[i] = m;
        }
        char what[120];
        snprintf(what, sizeof what, "sum over the last axis of (37,%" PRId64 ")", lens[c]);
        t_assert_close(&sum, want_sum, 1e-5, 1e-5 * sqrt((double)n),
                       what, "every thread of the block must fold its elements, and every "
                       "warp's value must reach the final fold");
        snprintf(what, sizeof what, "max over the last axis of (37,%" PRId64 ")", lens[c]);
        t_assert_values(&max, want_max, what, "start a max from -INFINITY (or the first "
                        "element), never from 0; idle lanes must not add 0 to a max");
        free(x);
        nd_release(&a);
        nd_release(&sum);
        nd_release(&max);
    }
}
END_TEST

/* Infinities and NaN in long rows: each thread folds many values, and a
 * compensated sum must not turn inf into NaN (inf - inf). */
START_TEST(reduce_special_values)
{
    int64_t shape[2] = { 4, 3000 };
    float *x = t_floats(shape[0] * shape[1]);
    for (int64_t i = 0; i < shape[0] * shape[1]; i++)
        x[i] = 0.25f * (float)(i % 7);
    x[0 * 3000 + 2999] = INFINITY;      /* row 0: inf last  -> inf */
    x[1 * 3000 + 700] = -INFINITY;      /* row 1: -inf      -> -inf */
    x[2 * 3000 + 5] = INFINITY;         /* row 2: inf and -inf -> nan */
    x[2 * 3000 + 2000] = -INFINITY;
    x[3 * 3000 + 1234] = NAN;           /* row 3: nan       -> nan */
    nd_array a = t_array_of(2, shape, x), sum, max;
    int axis = 1;
    T_OK(nd_reduce(ND_SUM, &a, 1, &axis, false, &sum));
    T_OK(nd_reduce(ND_MAX, &a, 1, &axis, false, &max));
    const float want_sum[4] = { INFINITY, -INFINITY, NAN, NAN };
    const float want_max[4] = { INFINITY, 1.5f, INFINITY, NAN };
    t_assert_values(&sum, want_sum, "sums of rows of 3000 holding inf, -inf and nan",
                    "a sum with inf stays inf; inf + -inf and anything + nan are nan; a "
                    "compensated (Kahan) sum must stop compensating once it is infinite");
    t_assert_values(&max, want_max, "maxes of the same rows", "max propagates nan (np.max)");
    free(x);
    nd_release(&a);
    nd_release(&sum);
    nd_release(&max);
}
END_TEST

/* Few outputs of many elements: each output's elements are split over
 * many blocks, whose partial results a second pass folds.  Sums and maxes
 * of 1 and of 3 long rows, one of them a transposed view (its reduced
 * axis has stride 3); inf, -inf and nan placed far from the first block,
 * so that only the second pass can carry them to the output. */
START_TEST(reduce_split_outputs)
{
    t_rng r = t_rng_new(606);
    static const int64_t shapes[][2] = { { 1, 1000003 }, { 70001, 3 } };
    for (int c = 0; c < 2; c++) {
        int64_t shape[2] = { shapes[c][0], shapes[c][1] };
        nd_array a = t_random_array(&r, 2, shape, -1.0f, 1.0f), v, sum, max;
        int perm[2] = { 1, 0 }, axis = 1;
        /* (1, 10^6 + 3) as it is; (70001, 3) transposed to (3, 70001) */
        if (c == 0)
            T_OK(nd_as_strided(&a, 2, a.shape, a.strides, a.offset, &v));
        else
            T_OK(nd_permute(&a, perm, &v));
        int64_t rows = v.shape[0], len = v.shape[1];
        float *x = t_gather(&v), want_sum[3], want_max[3];
        for (int64_t i = 0; i < rows; i++) {
            double s = 0;
            float m = -INFINITY;
            for (int64_t j = 0; j < len; j++) {
                s += x[i * len + j];
                m = x[i * len + j] > m ? x[i * len + j] : m;
            }
            want_sum[i] = (float)s;
            want_max[i] = m;
        }
        T_OK(nd_reduce(ND_SUM, &v, 1, &axis, false, &sum));
        T_OK(nd_reduce(ND_MAX, &v, 1, &axis, false, &max));
        char what[160];
        snprintf(what, sizeof what, "sum over the last axis of %s (%" PRId64 ",%" PRId64
                 "): the rows split over many blocks", c ? "a transposed" : "a", rows, len);
        t_assert_close(&sum, want_sum, 1e-5, 1e-6 * sqrt((double)len), what,
                       "few outputs of many elements: every block's partial result must "
                       "reach the second pass, which folds them into the output");
        snprintf(what, sizeof what, "max over the last axis of %s (%" PRId64 ",%" PRId64 ")",
                 c ? "a transposed" : "a", rows, len);
        t_assert_values(&max, want_max, what, "the second pass folds the blocks' maxes: "
                        "start it from -INFINITY too");
        free(x);
        nd_release(&sum);
        nd_release(&max);
        nd_release(&v);
        nd_release(&a);
    }
    /* 3 rows of 300000: row 0 inf near its end, row 1 inf and -inf in
     * different blocks (nan), row 2 a nan in its last block */
    int64_t shape[2] = { 3, 300000 };
    float *x = t_floats(shape[0] * shape[1]);
    for (int64_t i = 0; i < shape[0] * shape[1]; i++)
        x[i] = 0.25f * (float)(i % 5);
    x[0 * 300000 + 299990] = INFINITY;
    x[1 * 300000 + 17] = INFINITY;
    x[1 * 300000 + 250000] = -INFINITY;
    x[2 * 300000 + 299999] = NAN;
    nd_array a = t_array_of(2, shape, x), sum, max;
    int axis = 1;
    T_OK(nd_reduce(ND_SUM, &a, 1, &axis, false, &sum));
    T_OK(nd_reduce(ND_MAX, &a, 1, &axis, false, &max));
    const float want_sum[3] = { INFINITY, NAN, NAN }, want_max[3] = { INFINITY, INFINITY, NAN };
    t_assert_values(&sum, want_sum, "sums of 3 rows of 300000 with inf, -inf and nan in "
                    "different blocks", "the partial results of one output are folded like "
                    "its elements: inf stays inf, inf + -inf and anything + nan are nan");
    t_assert_values(&max, want_max, "maxes of the same rows", "max propagates nan (np.max), "
                    "in the second pass too");
    free(x);
    nd_release(&a);
    nd_release(&sum);
    nd_release(&max);
}
END_TEST

/* c = a @ b in double on the host, a and b compact. */
static void ref_matmul(const float *a, const float *b, float *c, int64_t batch, int64_t m,
                       int64_t k, int64_t n)
{
    for (int64_t z = 0; z < batch; z++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += (double)a[(z * m + i) * k + p] * b[(z * k + p) * n + j];
                c[(z * m + i) * n + j] = (float)s;
            }
}

/* Matmul for sizes around the 128 x 128 tile and the 8-deep panel. */
START_TEST(matmul_odd_sizes)
{
    static const int64_t sizes[][3] = {
        { 1, 1, 1 }, { 1, 70, 1 }, { 127, 9, 129 }, { 129, 128, 127 }, { 128, 8, 128 },
        { 257, 7, 3 }, { 3, 200, 130 },
    };
    t_rng r = t_rng_new(603);
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        int64_t m = sizes[c][0], k = sizes[c][1], n = sizes[c][2];
        int64_t sa[2] = { m, k }, sb[2] = { k, n }, sc[2] = { m, n };
        nd_array a = t_random_array(&r, 2, sa, -1, 1), b = t_random_array(&r, 2, sb, -1, 1);
        float *x = t_gather(&a), *y = t_gather(&b), *want = t_floats(m * n);
        ref_matmul(x, y, want, 1, m, k, n);
        for (int tiled = 0; tiled < 2; tiled++) {
            nd_array out;
            T_OK(tiled ? nd_matmul(&a, &b, &out) : nd_matmul_naive(&a, &b, &out));
            char what[140];
            snprintf(what, sizeof what, "%s of (%" PRId64 ",%" PRId64 ") @ (%" PRId64 ",%"
                     PRId64 ")", tiled ? "nd_matmul" : "nd_matmul_naive", m, k, k, n);
            t_assert_shape(&out, 2, sc, what);
            t_assert_close(&out, want, 1e-5, 1e-5 * (double)k, what,
                           "a tile at the edge of c must read zeros past the matrices and "
                           "write only the outputs inside c");
            nd_release(&out);
        }
        free(x);
        free(y);
        free(want);
        nd_release(&a);
        nd_release(&b);
    }
}
END_TEST

/* More rows than 65535 blocks of 16 rows: (1048577,1) @ (1,1).  The
 * naive kernel's 16-row blocks would need gridDim.y = 65537, past its
 * limit of 65535 (a launch error on a GPU and on the emulator); capped,
 * its blocks loop over rows.  (The tiled kernel passes that limit only
 * past 65535 * 128 = 8388480 rows, too many for the emulator in a test's
 * time: tests/check.sh runs these tests on a build whose MAX_BLOCKS is
 * small instead.) */
START_TEST(matmul_many_rows)
{
    int64_t m = 1048577, sa[2] = { m, 1 }, sb[2] = { 1, 1 }, sc[2] = { m, 1 };
    t_rng r = t_rng_new(607);
    nd_array a = t_random_array(&r, 2, sa, -1, 1), b = t_array_of(2, sb, (const float[]){ -2.0f });
    float *x = t_gather(&a), *want = t_floats(m);
    for (int64_t i = 0; i < m; i++)
        want[i] = -2.0f * x[i];
    for (int tiled = 0; tiled < 2; tiled++) {
        nd_array out;
        T_OK(tiled ? nd_matmul(&a, &b, &out) : nd_matmul_naive(&a, &b, &out));
        t_assert_shape(&out, 2, sc, tiled ? "nd_matmul of (1048577,1) @ (1,1)"
                                          : "nd_matmul_naive of (1048577,1) @ (1,1)");
        t_assert_values(&out, want, tiled ? "nd_matmul of (1048577,1) @ (1,1)"
                                          : "nd_matmul_naive of (1048577,1) @ (1,1)",
                        "gridDim.y stops at 65535 blocks: cap it (blocks_for) and let each "
                        "block loop over rows, i += gridDim.y * blockDim.y");
        nd_release(&out);
    }
    free(x);
    free(want);
    nd_release(&a);
    nd_release(&b);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* More than one grid pass                                                */
/* ---------------------------------------------------------------------- */

/* 65535 blocks of 256 threads are 16776960 threads: one more element
 * than that needs a second pass of the grid-stride loop. */
START_TEST(large_fill_and_add)
{
    int64_t n = 65535LL * 256 + 1001, one[1] = { 1 };
    nd_array a = t_nan_array(1, &n), s = t_array_of(1, one, (const float[]){ 1.5f }), sum;
    T_OK(nd_setitem_scalar(&a, 2.0f));
    T_OK(nd_binary(ND_ADD, &a, &s, &sum));
    float *got = t_gather(&sum);
    for (int64_t i = 0; i < n; i++)
        if (got[i] != 3.5f) {
            float g = got[i];
            free(got);
            ck_abort_msg("fill then add on %" PRId64 " elements: element %" PRId64 " is %g, "
                         "want 3.5\n  hint: %s", n, i, (double)g, GRID_HINT);
        }
    free(got);
    nd_release(&a);
    nd_release(&s);
    nd_release(&sum);
}
END_TEST

/* More outputs than blocks: 65600 sums of 40 (blocks of two warps, the
 * first blocks folding two outputs), and a batch of 70000 matrices. */
START_TEST(large_reduce_and_batch)
{
    int64_t shape[2] = { 65600, 40 };
    t_rng r = t_rng_new(605);
    nd_array a = t_random_array(&r, 2, shape, -1, 1), sum;
    int axis = 1;
    T_OK(nd_reduce(ND_SUM, &a, 1, &axis, false, &sum));
    float *x = t_gather(&a), *want = t_floats(shape[0]);
    for (int64_t i = 0; i < shape[0]; i++) {
        double s = 0;
        for (int64_t j = 0; j < shape[1]; j++)
            s += x[i * shape[1] + j];
        want[i] = (float)s;
    }
    t_assert_close(&sum, want, 1e-5, 1e-5, "sum over axis 1 of (65600,40): more outputs than "
                   "blocks", GRID_HINT "; a block that folds a second output must wait "
                   "(__syncthreads) until warp 0 has read the shared slots of the first");
    free(x);
    free(want);
    nd_release(&a);
    nd_release(&sum);

    int64_t sa[3] = { 70000, 2, 3 }, sb[3] = { 70000, 3, 2 };
    nd_array p = t_random_array(&r, 3, sa, -1, 1), q = t_random_array(&r, 3, sb, -1, 1), c;
    float *px = t_gather(&p), *qx = t_gather(&q), *cw = t_floats(70000 * 4);
    ref_matmul(px, qx, cw, 70000, 2, 3, 2);
    T_OK(nd_matmul(&p, &q, &c));
    t_assert_close(&c, cw, 1e-5, 1e-5, "nd_matmul of a batch of 70000 (2,3) @ (3,2): more "
                   "matrices than gridDim.z allows", GRID_HINT);
    nd_release(&c);
    T_OK(nd_matmul_naive(&p, &q, &c));
    t_assert_close(&c, cw, 1e-5, 1e-5, "nd_matmul_naive of a batch of 70000", GRID_HINT);
    free(px);
    free(qx);
    free(cw);
    nd_release(&p);
    nd_release(&q);
    nd_release(&c);
}
END_TEST

Suite *suite_06_cuda(void);

Suite *suite_06_cuda(void)
{
    Suite *s = t_suite(6, "06_cuda");
    T_ADD_HOST(s, index_to_offset_cases);
    T_ADD_HOST(s, index_to_offset_random);
    T_ADD_CUDA(s, launch_odd_sizes);
    T_ADD_CUDA(s, reduce_odd_lengths);
    T_ADD_CUDA(s, reduce_special_values);
    T_ADD_CUDA(s, reduce_split_outputs);
    T_ADD_CUDA(s, matmul_odd_sizes);
    T_ADD_CUDA(s, matmul_many_rows);
    T_ADD_CUDA(s, large_fill_and_add);
    T_ADD_CUDA(s, large_reduce_and_batch);
    return s;
}
