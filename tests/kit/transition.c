/*
 * transition.c -- TEMPORARY, while the tests move onto the kit: an empty
 * suite for every lesson whose tests are not converted yet (weak, so a
 * converted file's suite replaces it).  Deleted when every lesson is in.
 */
#include "kit.h"

static const k_test none[1] = { { "none", NULL, 0, 0, NULL } };
#define EMPTY(var, l, name) \
    __attribute__((weak)) const k_suite var = { l, name, none, 0 };
EMPTY(public_00, 0, "00_array")
EMPTY(public_01, 1, "01_views")
EMPTY(public_02, 2, "02_compact")
EMPTY(public_03, 3, "03_ewise")
EMPTY(public_04, 4, "04_reduce")
EMPTY(public_05, 5, "05_matmul")
EMPTY(public_06, 6, "06_cuda")
EMPTY(public_07, 7, "07_permute")
EMPTY(hidden_01, 1, "01_views")
EMPTY(hidden_02, 2, "02_compact")
EMPTY(hidden_03, 3, "03_ewise")
EMPTY(hidden_04, 4, "04_reduce")
EMPTY(hidden_05, 5, "05_matmul")
EMPTY(hidden_06, 6, "06_cuda")
EMPTY(hidden_07, 7, "07_permute")
