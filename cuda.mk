# cuda.mk -- the one CUDA build recipe.
#
# Every build of CUDA code takes its decisions from here: the Makefile (the
# public tests, the benchmarks, cuda-check, gpu-report) includes it, and
# grader/grade.sh and grader/coverage.sh ask it for the same settings as
# shell variables:
#
#     eval "$(make -s --no-print-directory -f cuda.mk cuda-env CUDA=auto)"
#
# What it decides:
#   CUDA_MODE          where the CUDA device runs, from CUDA=emu|gpu|auto:
#                      gpu (nvcc builds the .cu files; kernels run on the
#                      GPU) or emu (g++ builds them against the emulator in
#                      grader/emu/, which runs kernels on the CPU).  auto:
#                      gpu when nvcc is installed and `nvidia-smi -L` lists
#                      a GPU, else emu.  CUDA=gpu builds for a GPU without
#                      one (make check does, so the GPU path cannot rot).
#   NVCC, CUDA_HOME    the compiler and the toolkit it belongs to
#   NVCC_ARCH          the machine code: sm_75 (the oldest GPU CUDA 13
#                      supports) with its PTX, which the driver compiles at
#                      load time for any later GPU, and sm_90 (H100, H200)
#   NVCC_FLAGS         nvcc for the library: its warnings are errors, and
#                      the host compiler's too (as -Werror is for C)
#   GPU_ARCH           the compute capabilities of this machine's GPUs,
#                      without the dot ("90" for an H100 or H200), asked once
#                      here, outside any sandbox: nvidia-smi
#                      --query-gpu=compute_cap, else nvcc's own device query
#                      (__nvcc_device_query, what -arch=native runs); empty
#                      without a GPU.  GPU_ARCH=NN on the command line says.
#   NVCC_GRADE_FLAGS   nvcc for a student's file in the grader: warnings
#                      reported but not fatal, and machine code for GPU_ARCH
#                      only (sm_75 where no GPU is visible, as when make
#                      check builds the GPU path; the library's NVCC_ARCH,
#                      with a warning, where a GPU is listed but its
#                      architecture cannot be found).  Not -arch=native: it
#                      would query the device inside the compile sandbox,
#                      whose limits may make the query fail, and nvcc then
#                      falls back silently to PTX that every test's
#                      executor JIT-compiles with no cache
#   NVCC_REGS_FLAGS    nvcc asked only for ptxas's registers per kernel on
#                      sm_90 (the device code alone, -cubin), for the
#                      emulator's registers x threads check
#                      (grader/emu/regs.py): make's table and the grader's
#   NVCC_OPT, NVCC_SAN host-side optimisation of a plain build, and the
#                      sanitizer flags of a SAN=1 build, one -Xcompiler per
#                      flag (nvcc splits an -Xcompiler argument at commas)
#   CXXFLAGS_CU, EMU   g++ and the emulator, for CUDA_MODE=emu
#   CUDA_LIBS          what a program linked with the library needs: the
#                      CUDA runtime (gpu), or nothing (emu: its emu.o is
#                      part of the library)
#   CUDA_ASAN_OPTIONS  what AddressSanitizer must be told on this device,
#                      appended last to ASAN_OPTIONS so that it wins: on a
#                      GPU, protect_shadow_gap=0 (the CUDA driver maps
#                      memory inside the shadow gap that ASan would
#                      protect) and detect_leaks=0 (LeakSanitizer reports
#                      the driver's own allocations, kept until exit, as
#                      leaks); nothing for the emulator
#   CUDA_SUFFIX        "-gpu" for the build folders of GPU builds
#                      (build/solution/normal-gpu/), so that the emulator's
#                      and nvcc's objects never mix

CUDA ?= auto
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
CUDA_GPU := $(shell nvidia-smi -L 2>/dev/null | grep -m1 '^GPU')
ifeq ($(CUDA),auto)
CUDA_MODE := $(if $(NVCC),$(if $(CUDA_GPU),gpu,emu),emu)
else ifneq ($(filter emu gpu,$(CUDA)),)
CUDA_MODE := $(CUDA)
else
$(error CUDA=$(CUDA): it must be emu, gpu or auto)
endif
ifeq ($(CUDA_MODE)$(NVCC),gpu)
$(error CUDA=gpu needs nvcc, which is not on PATH or in /usr/local/cuda/bin)
endif
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_SUFFIX := $(if $(filter gpu,$(CUDA_MODE)),-gpu)

# nvcc.  -Werror all-warnings covers nvcc's and ptxas's own warnings; the
# host compiler gets the C build's warnings (minus CUDA's #pragma unroll,
# which gcc does not know).
NVCC_ARCH ?= -gencode arch=compute_75,code=sm_75 -gencode arch=compute_75,code=compute_75 \
	-gencode arch=compute_90,code=sm_90
NVCC_BASE := -std=c++17 -g $(NVCC_ARCH)
NVCC_FLAGS := $(NVCC_BASE) -Werror all-warnings \
	-Xcompiler -Wall,-Wextra,-Werror,-Wshadow,-Wno-unknown-pragmas
# (each answer a compute capability, "9.0" or "90"; anything else is no answer)
ifeq ($(origin GPU_ARCH),undefined)
GPU_ARCH := $(if $(CUDA_GPU),$(shell \
	a=$$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | \
	     tr -d '. ' | grep -xE '[0-9]{2,3}'); \
	[ -n "$$a" ] || a=$$('$(CUDA_HOME)/bin/__nvcc_device_query' 2>/dev/null | \
	     tr ', ' '\n\n' | grep -xE '[0-9]{2,3}'); \
	echo "$$a" | sort -u))
endif
ifneq ($(CUDA_GPU),)
ifeq ($(GPU_ARCH),)
$(warning cuda.mk: nvidia-smi lists a GPU, but neither nvidia-smi --query-gpu=compute_cap nor __nvcc_device_query says its architecture: graded files are built for sm_75 and sm_90 with PTX (set GPU_ARCH=NN to say))
endif
endif
NVCC_GRADE_ARCH := $(if $(CUDA_GPU),$(if $(GPU_ARCH),$(foreach a,$(GPU_ARCH),-gencode \
	arch=compute_$(a),code=sm_$(a)),$(NVCC_ARCH)),-arch=sm_75)
NVCC_GRADE_FLAGS := -std=c++17 -g $(NVCC_GRADE_ARCH) \
	-Xcompiler -Wall,-Wextra,-Wno-unknown-pragmas
NVCC_OPT := -O3
NVCC_REGS_FLAGS := -std=c++17 -arch=sm_90 -Xptxas -v -cubin

# The sanitizer build's host flags, as for C (SAN=1), and their nvcc form.
SAN_CUDA_FLAGS := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
comma := ,
nvcc_host = $(foreach f,$(1),$(if $(filter -fsanitize=%,$(f)),$(foreach s,$(subst $(comma), \
	,$(patsubst -fsanitize=%,%,$(f))),-Xcompiler -fsanitize=$(s)),-Xcompiler $(f)))
NVCC_SAN := $(call nvcc_host,$(SAN_CUDA_FLAGS))

# The emulator: .cu files rewritten by cu2cpp.py, then g++ with the
# library's warnings, in C++.
EMU := grader/emu
CXX ?= g++
# -fsanitize=alignment: every typed load and store checks its address
# against its type's alignment, and a misaligned one in a kernel (a float4
# at an address that is not a multiple of 16) fails the launch with
# cudaErrorMisalignedAddress and the line, as on a GPU (the emulator
# supplies UBSan's handler: grader/emu/README.md).
CXXFLAGS_CU := -std=c++17 -g -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wvla \
	-Wmissing-declarations -fsanitize=alignment

ifeq ($(CUDA_MODE),gpu)
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
CUDA_ASAN_OPTIONS := protect_shadow_gap=0:detect_leaks=0
else
CUDA_LIBS :=
CUDA_ASAN_OPTIONS :=
endif

.PHONY: cuda-env
cuda-env: ## the CUDA recipe's settings, as shell assignments (for grade.sh and coverage.sh)
	@echo "cuda_mode=$(CUDA_MODE)"
	@echo "nvcc='$(NVCC)'"
	@echo "cuda_home='$(CUDA_HOME)'"
	@echo "nvcc_flags=($(NVCC_FLAGS))"
	@echo "gpu_arch='$(GPU_ARCH)'"
	@echo "nvcc_grade_flags=($(NVCC_GRADE_FLAGS))"
	@echo "nvcc_opt=($(NVCC_OPT))"
	@echo "nvcc_regs_flags=($(NVCC_REGS_FLAGS))"
	@echo "nvcc_san=($(NVCC_SAN))"
	@echo "cxxflags_cu=($(CXXFLAGS_CU))"
	@echo "emu='$(EMU)'"
	@echo "cuda_libs=($(CUDA_LIBS))"
	@echo "cuda_asan_options='$(CUDA_ASAN_OPTIONS)'"
	@echo "cuda_suffix='$(CUDA_SUFFIX)'"
