/* Tiny check helpers shared by the emulator's self-tests (real CUDA too). */
#ifndef NDEMU_TEST_CHECK_H
#define NDEMU_TEST_CHECK_H
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

static int g_failed = 0;

/* One line per check: "ok NAME" or "not ok NAME: details". */
#define CHECK(name, cond, ...)                               \
    do {                                                     \
        if (cond) {                                          \
            printf("ok %s\n", name);                         \
        } else {                                             \
            printf("not ok %s: ", name);                     \
            printf(__VA_ARGS__);                             \
            printf(" (%s:%d)\n", __FILE__, __LINE__);        \
            g_failed++;                                      \
        }                                                    \
        fflush(stdout);                                      \
    } while (0)

#define CUDA_OK(call)                                                          \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            printf("not ok %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_),   \
                   __FILE__, __LINE__);                                        \
            g_failed++;                                                        \
        }                                                                      \
    } while (0)

/* The emulator's detailed message for the last error ("" on a real GPU). */
static inline const char *emu_message(void)
{
#ifdef NDEMU
    return ndemu_last_message();
#else
    return "";
#endif
}

#endif
