/* Thin include for the CPU emulator of CUDA (grader/emu). */
#pragma once
#include "cuda_runtime.h"
