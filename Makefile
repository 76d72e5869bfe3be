# The workbook's only entry point.  `make help` lists the targets.
#
# Variables you may set on the command line:
#   TREE=skeleton|solution|PATH   the tree to build and test (default: skeleton,
#                                 the student's)
#   L=N                           only lesson N's tests
#   T=NAME                        only the test NAME (e.g. T=reshape_random)
#   SAN=1                         build with AddressSanitizer and UBSan
#   V=1                           show every compiler command
#   F=GROUP                       make bench: only compact, ewise, reduce or matmul
#   SMOKE=1                       make bench-cpu: a smoke pass (small shapes, seconds)
#   CUDA=emu|gpu                  where the CUDA device runs (default: a GPU when
#                                 nvidia-smi sees one and nvcc is installed,
#                                 otherwise the emulator in grader/emu/)

TREE ?= skeleton
SAN ?= 0
L ?=
T ?=

SHELL := /bin/bash
Q := $(if $(filter 1,$(V)),,@)
.DEFAULT_GOAL := intro
MAKEFLAGS += --no-print-directory

# The CUDA device: lesson .cu files built by nvcc for the GPU here, or by
# g++ for the emulator (grader/emu/), which runs kernels on the CPU.
CUDA ?= auto
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
ifeq ($(CUDA),auto)
CUDA_MODE := $(if $(NVCC),$(if $(shell nvidia-smi -L 2>/dev/null | grep -m1 GPU),gpu,emu),emu)
else ifneq ($(filter emu gpu,$(CUDA)),)
CUDA_MODE := $(CUDA)
else
$(error CUDA=$(CUDA): it must be emu, gpu or auto)
endif
ifeq ($(CUDA_MODE)$(NVCC),gpu)
$(error CUDA=gpu needs nvcc, which is not on PATH or in /usr/local/cuda/bin)
endif

# Build outputs go to build/<tree>/<variant>/, e.g. build/solution/normal
# (build/solution/normal-gpu for a GPU build).
TREE_ABS := $(abspath $(TREE))
TREE_ID := $(subst /,_,$(patsubst $(CURDIR)/%,%,$(TREE_ABS)))
# BENCH=1 is the benchmark build (make bench sets it): tuned for this CPU.
VARIANT := $(if $(filter 1,$(SAN)),asan,$(if $(filter 1,$(BENCH)),bench,normal))$(if $(filter gpu,$(CUDA_MODE)),-gpu)
B := build/$(TREE_ID)/$(VARIANT)

CC ?= cc
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)

# Both trees, and the tests, build warning-free or not at all.
CFLAGS_COMMON := -std=c11 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L
# The library is held to a little more.
CFLAGS_LIB := -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wformat=2
ifeq ($(SAN),1)
OPT := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(BENCH),1)
# What GCC warns about after inlining and vectorising (maybe-uninitialized,
# array bounds, string and memory operations) depends on the optimiser and
# on the CPU that -march=native names: on another machine or another GCC,
# code that is clean here can draw one.  So in this build they stay
# warnings, and a user's benchmark builds; tests/check.sh builds it too and
# fails on any warning at all.  (Clang has no such warnings.)
BENCH_FLOW_WARNINGS := maybe-uninitialized array-bounds stringop-overflow stringop-overread \
	stringop-truncation restrict free-nonheap-object use-after-free dangling-pointer
OPT := -O3 -march=native $(if $(shell $(CC) --version 2>/dev/null | grep -i clang),,\
	$(addprefix -Wno-error=,$(BENCH_FLOW_WARNINGS)))
else
OPT := -O2
endif

LIB_SRCS := $(sort $(wildcard $(TREE)/src/*.c))
LIB_CU_SRCS := $(sort $(wildcard $(TREE)/src/*.cu))
LIB_OBJS := $(patsubst $(TREE)/src/%.c,$(B)/lib/%.o,$(LIB_SRCS)) \
	$(patsubst $(TREE)/src/%.cu,$(B)/lib/%.cu.o,$(LIB_CU_SRCS))

# C++ for the .cu files under the emulator: the library's warnings, in C++.
CXX ?= g++
CXXFLAGS_CU := -std=c++17 -g -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wvla \
	-Wmissing-declarations
EMU := grader/emu
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
# nvcc: for the GPU in this machine; the host compiler sees the same
# warnings as for C, minus CUDA's #pragma unroll, which gcc does not know.
NVCC_FLAGS := -std=c++17 -g -arch=native -Werror all-warnings \
	-Xcompiler -Wall,-Wextra,-Werror,-Wshadow,-Wno-unknown-pragmas
ifeq ($(CUDA_MODE),gpu)
CUDA_OBJS :=
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
else
CUDA_OBJS := $(B)/lib/emu.o
CUDA_LIBS :=
endif
TEST_SRCS := $(sort $(wildcard tests/*.c))
TEST_OBJS := $(patsubst tests/%.c,$(B)/tests/%.o,$(TEST_SRCS))
RUNNER := $(B)/run_tests

# Sanitizer runs: slower, so Check's timeouts stretch; any report is fatal.
SAN_ENV := CK_TIMEOUT_MULTIPLIER=4 \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
RUN_ENV := $(if $(filter 1,$(SAN)),$(SAN_ENV))

.PHONY: intro help deps build test bench bench-cpu bench-record grade skeleton skeleton-check check clean cuda-check

intro: deps ## (no target) what this is, and where to start
	@echo "A workbook: you build a strided n-dimensional array in C (CUDA to come),"
	@echo "one lesson at a time, in skeleton/src/ (one file per lesson), until the"
	@echo "public tests pass."
	@echo
	@echo "  1. Read lessons/01-views.md."
	@echo "  2. make status      where you are: a bar per lesson, the next failing test, its hint"
	@echo "  3. make watch       rebuilds and reruns the current lesson's tests each time you save"
	@echo
	@echo "  make test L=1       lesson 1's tests once (T=name: one test; SAN=1: with sanitizers)"
	@echo "  make help           every target"
	@echo
	@echo "Everything works on skeleton/, your tree; TREE=path points it at a copy."

help: ## list every target
	@grep -hE '^[a-zA-Z_.-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-22s %s\n", $$1, $$2}'
	@echo
	@echo "  Variables: TREE=skeleton (default)|solution|PATH  L=lesson  T=test  SAN=1 (sanitizers)"

deps: ## install missing Debian packages (needs root; otherwise says what to run)
	@bash grader/install-deps.sh

build: $(RUNNER) ## build TREE's library and the public tests

test: deps ## run the public tests on TREE (L=N one lesson, T=name one test)
	@echo "Testing $(TREE) ($(VARIANT) build; CUDA device: $(if $(filter gpu,$(CUDA_MODE)),the GPU,the emulator))"
	@$(WORKFLOW) test -- $(if $(L),-l $(L)) $(if $(T),-t $(T)) $(if $(filter 1,$(V)),-v)

# NumPy's side of the CPU benchmark runs on Debian's python3-numpy, so on
# Debian's python3 (a python3 that comes first on PATH, pyenv's say, may
# not have it).
BENCH_PYTHON := $(or $(wildcard /usr/bin/python3),python3)

bench: bench-cpu ## benchmarks of TREE: CPU beside memcpy, OpenBLAS and NumPy (build/bench/cpu.tsv, installs them), and GPU ones when there is a GPU
ifeq ($(CUDA_MODE),gpu)
	@$(MAKE) BENCH=1 TREE=$(TREE) CUDA=gpu $(patsubst tests/bench/%.cu,build/$(TREE_ID)/bench-gpu/%,$(wildcard tests/bench/bench_gpu*.cu))
	@for b in build/$(TREE_ID)/bench-gpu/bench_gpu*; do \
	  n=$$(basename $$b); $$b -o build/bench/$${n#bench_}.tsv $(if $(F),-f $(F)) || exit 1; \
	  echo "wrote build/bench/$${n#bench_}.tsv"; done
	@if [ -f tests/bench/permute_torch.py ]; then python3 tests/bench/permute_torch.py -o build/bench/gpu_permute_torch.tsv; fi
else
	@echo "GPU benchmarks skipped: no GPU here (the CUDA device is the emulator, whose timings mean nothing)"
endif

# SMOKE=1: small shapes, one round, every result still checked, in a few
# seconds (make check runs it); its figures mean nothing.
BENCH_CPU_TSV := build/bench/cpu$(if $(filter 1,$(SMOKE)),-smoke).tsv

bench-cpu: ## the CPU benchmarks alone (SMOKE=1: a smoke pass of a few seconds, as make check runs)
	@bash grader/install-deps.sh --bench
	@$(MAKE) BENCH=1 TREE=$(TREE) CUDA=emu build/$(TREE_ID)/bench/bench_cpu
	@mkdir -p build/bench
	@# Both users of OpenBLAS (bench_cpu and NumPy) on one thread, with the
	@# kernels OpenBLAS picks for this CPU: some machines set
	@# OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE to force others.  Cleared for
	@# this command only.
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
		build/$(TREE_ID)/bench/bench_cpu -o $(BENCH_CPU_TSV) $(if $(F),-f $(F)) \
		$(if $(filter 1,$(SMOKE)),-s) -n '$(BENCH_PYTHON) tests/bench/bench_numpy.py'
	@echo "wrote $(BENCH_CPU_TSV)"

# Targets for the course's authors: they need solution/, which the
# student handout does not have.
AUTHORS_ONLY = @test -d solution || { echo "make $@: this needs solution/, which the \
student handout does not have" >&2; exit 2; }

bench-record: ## make bench TREE=solution, then record it: lessons/data/bench-cpu.tsv, its tables in README.md and lesson 2, the plots
	$(AUTHORS_ONLY)
	@if [ -n "$(F)" ]; then echo "make bench-record records a whole run: leave out F=" >&2; exit 2; fi
	@$(MAKE) bench TREE=solution
	@cp build/bench/cpu.tsv lessons/data/bench-cpu.tsv
	@python3 tests/bench/bench_tables.py --write lessons/data/bench-cpu.tsv
	@$(MAKE) docs-plots
	@echo "recorded lessons/data/bench-cpu.tsv and the tables of README.md and lessons/02-compact.md;"
	@echo "plots in $(DOCS_SITE)/figures; review them (git diff), then commit"

skeleton: ## regenerate skeleton/ from solution/
	$(AUTHORS_ONLY)
	@python3 grader/skelgen.py solution skeleton
	@echo "skeleton/ regenerated from solution/"

skeleton-check: ## fail if skeleton/ differs from what `make skeleton` would write
	$(AUTHORS_ONLY)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	python3 grader/skelgen.py solution "$$tmp/skeleton" && \
	if diff -r "$$tmp/skeleton" skeleton >/dev/null; then echo "skeleton/ is in sync with solution/"; \
	else echo "skeleton/ is out of date: run 'make skeleton' and commit it" >&2; \
	diff -r "$$tmp/skeleton" skeleton | head -20 >&2; exit 1; fi

check: ## the project's own checks (CI runs this)
	$(AUTHORS_ONLY)
	@bash grader/install-deps.sh --check
	@bash tests/check.sh

clean: ## remove build/
	rm -rf build

$(B)/lib/%.o: $(TREE)/src/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) $(CFLAGS_LIB) $(OPT) -MMD -MP -I$(TREE)/include -c $< -o $@

# .cu files on the emulator: rewrite the kernel launches, then g++.  The
# rewritten .cpp stays (make would delete it as an intermediate file).
.SECONDARY:
$(B)/lib/%.cpp: $(TREE)/src/%.cu $(EMU)/cu2cpp.py
	@mkdir -p $(@D)
	$(Q)python3 $(EMU)/cu2cpp.py $< $@

ifeq ($(CUDA_MODE),gpu)
$(B)/lib/%.cu.o: $(TREE)/src/%.cu
	@mkdir -p $(@D)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_FLAGS) $(if $(filter 1,$(SAN)),-O1,-O3) -MMD -MP -I$(TREE)/include -c $< -o $@
else
$(B)/lib/%.cu.o: $(B)/lib/%.cpp
	@$(if $(Q),echo "  CXX     $(TREE)/src/$*.cu (emulator)")
	$(Q)$(CXX) $(CXXFLAGS_CU) $(OPT) -MMD -MP -I$(EMU)/include -I$(TREE)/include -iquote $(TREE)/src -c $< -o $@
endif

$(B)/lib/emu.o: $(EMU)/emu.cpp $(wildcard $(EMU)/include/*.h)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(CXXFLAGS_CU) $(OPT) -I$(EMU)/include -c $< -o $@

$(B)/libnd.a: $(LIB_OBJS) $(CUDA_OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^

# With nvcc installed, every .cu file of both trees must also build for a
# real GPU, warning-free: sm_75 (the oldest CUDA 13 supports) and sm_90.
NVCC_CHECK_FLAGS := -std=c++17 -gencode arch=compute_75,code=sm_75 \
	-gencode arch=compute_90,code=sm_90 -Werror all-warnings \
	-Xcompiler -Wall,-Wextra,-Werror,-Wshadow,-Wno-unknown-pragmas
cuda-check: ## compile every .cu file of both trees with nvcc (sm_75, sm_90), warnings as errors
	@if [ -z "$(NVCC)" ]; then echo "cuda-check: nvcc not found; skipped"; exit 0; fi; \
	fail=0; for t in solution skeleton; do [ -d $$t ] || continue; \
	  for f in $$t/src/*.cu tests/bench/*.cu; do [ -f "$$f" ] || continue; \
	    case $$f in tests/*) [ $$t = solution ] || continue;; esac; \
	    o=build/nvcc/$$t/$$(basename $$f .cu).o; mkdir -p $$(dirname $$o); \
	    if $(NVCC) $(NVCC_CHECK_FLAGS) -I$$t/include -c $$f -o $$o; then echo "nvcc ok: $$f"; \
	    else echo "nvcc FAILED: $$f" >&2; fail=1; fi; done; done; exit $$fail

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) $(OPT) -MMD -MP -I$(TREE)/include -Itests $(CHECK_CFLAGS) -c $< -o $@

$(RUNNER): $(TEST_OBJS) $(B)/libnd.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(OPT) $^ $(CHECK_LIBS) $(CUDA_LIBS) -lm -o $@

# The student handout has neither (no hidden tests, a prebuilt web book).
-include grader/grader.mk
-include docs/docs.mk
-include tests/workflow.mk

# The GPU benchmarks: nvcc, cuBLAS; only on a GPU (make bench).
$(B)/bench_%: tests/bench/bench_%.cu tests/bench/bench_gpu.h $(B)/libnd.a
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_FLAGS) -O3 -I$(TREE)/include $< $(B)/libnd.a -lcublas -o $@

# The benchmark links OpenBLAS, which only `make bench` needs, through its
# own pkg-config file: its cblas.h, not whichever BLAS's the system's
# cblas.h points at.  --wrap: bench_cpu keeps the library's large blocks
# for reuse (see the top of bench_cpu.c).
$(B)/bench_cpu: tests/bench/bench_cpu.c $(B)/libnd.a
	@$(if $(Q),echo "  CC      $<")
	@pkg-config --exists openblas || { echo "bench_cpu needs OpenBLAS: run grader/install-deps.sh --bench (Debian package libopenblas-dev)" >&2; exit 1; }
	$(Q)$(CXX) -x c $(CFLAGS_COMMON) $(OPT) -I$(TREE)/include $$(pkg-config --cflags openblas) $< \
		-x none $(B)/libnd.a $(CUDA_LIBS) $$(pkg-config --libs openblas) -lm \
		-Wl,--wrap=aligned_alloc,--wrap=free -o $@

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(CUDA_OBJS:.o=.d)
