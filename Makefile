# The workbook's only entry point.  `make help` lists the targets.
#
# Variables you may set on the command line:
#   TREE=skeleton|solution|PATH   the tree to build and test (default: skeleton,
#                                 the student's)
#   L=N                           only lesson N's tests
#   T=NAME                        only the test NAME (e.g. T=reshape_random)
#   SAN=1|0                       with AddressSanitizer and UBSan (the default:
#                                 a test passes only without a memory error),
#                                 or a plain build (SAN=0)
#   V=1                           show every compiler command
#   F=GROUP                       make bench: only compact, ewise, reduce or matmul
#   SMOKE=1                       make bench-cpu: a smoke pass (small shapes, seconds)
#   CUDA=emu|gpu                  where the CUDA device runs (default: a GPU when
#                                 nvidia-smi sees one and nvcc is installed,
#                                 otherwise the emulator in grader/emu/)

TREE ?= skeleton
SAN ?= 1
L ?=
T ?=

SHELL := /bin/bash
Q := $(if $(filter 1,$(V)),,@)
.DEFAULT_GOAL := intro
MAKEFLAGS += --no-print-directory

# The CUDA device: lesson .cu files built by nvcc for the GPU here, or by
# g++ for the emulator (grader/emu/), which runs kernels on the CPU.  One
# recipe, cuda.mk, decides the mode, the flags and the folders for the
# tests, the grader, the benchmarks and the coverage run.
include cuda.mk

# Build outputs go to build/<tree>/<variant>/, e.g. build/solution/normal
# (build/solution/normal-gpu for a GPU build: cuda.mk's CUDA_SUFFIX).
TREE_ABS := $(abspath $(TREE))
TREE_ID := $(subst /,_,$(patsubst $(CURDIR)/%,%,$(TREE_ABS)))
# BENCH=1 is the benchmark build (make bench sets it): tuned for this CPU.
VARIANT := $(if $(filter 1,$(BENCH)),bench,$(if $(filter 1,$(SAN)),asan,normal))$(CUDA_SUFFIX)
B := build/$(TREE_ID)/$(VARIANT)

CC ?= cc
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)

# Both trees, and the tests, build warning-free or not at all.
CFLAGS_COMMON := -std=c11 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L
# The library is held to a little more.
CFLAGS_LIB := -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wformat=2
ifeq ($(BENCH),1)
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
else ifeq ($(SAN),1)
OPT := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
OPT := -O2
endif

LIB_SRCS := $(sort $(wildcard $(TREE)/src/*.c))
LIB_CU_SRCS := $(sort $(wildcard $(TREE)/src/*.cu))
LIB_OBJS := $(patsubst $(TREE)/src/%.c,$(B)/lib/%.o,$(LIB_SRCS)) \
	$(patsubst $(TREE)/src/%.cu,$(B)/lib/%.cu.o,$(LIB_CU_SRCS))

# The emulator's runtime is part of the library when it is the device.
CUDA_OBJS := $(if $(filter emu,$(CUDA_MODE)),$(B)/lib/emu.o)
TEST_SRCS := $(sort $(wildcard tests/*.c tests/kit/*.c))
TEST_OBJS := $(patsubst tests/%.c,$(B)/tests/%.o,$(TEST_SRCS))
RUNNER := $(B)/run_tests

# Sanitizer runs: slower, so Check's timeouts stretch; any report is fatal.
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1$(if $(CUDA_ASAN_OPTIONS),:$(CUDA_ASAN_OPTIONS)) \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
RUN_ENV := $(if $(filter asan%,$(VARIANT)),$(SAN_ENV))

.PHONY: intro help deps build test bench bench-cpu bench-record grade skeleton skeleton-check check check-quick clean cuda-check

intro: deps ## (no target) what this is, and where to start
	@echo "A workbook: you build a strided n-dimensional array in C, then its kernels in"
	@echo "CUDA (on a GPU, or on the CPU emulator when there is none), one lesson at a"
	@echo "time, in skeleton/src/ (one file per lesson), until the public tests pass."
	@echo
	@echo "  1. Read lessons/01-views.md."
	@echo "  2. make status      where you are: a bar per lesson, the next failing test, its hint"
	@echo "  3. make watch       rebuilds and reruns the current lesson's tests each time you save"
	@echo
	@echo "  make test L=1       lesson 1's tests once (T=name: one test; SAN=0: without the sanitizers)"
	@echo "  make hint           a hint for the test you are stuck on: a nudge, then the key idea"
	@echo "  make show E='arange(24).reshape(2,3,4)[:, ::-1, 1]'"
	@echo "                      the view your lesson 1 code makes of it, drawn"
	@echo "  make help           every target"
	@echo
	@echo "Everything works on skeleton/, your tree; TREE=path points it at a copy."

help: ## list every target
	@grep -hE '^[a-zA-Z_.-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-22s %s\n", $$1, $$2}'
	@echo
	@echo "  Variables: TREE=skeleton (default)|solution|PATH  L=lesson  T=test  SAN=0 (no sanitizers)"

deps: ## install missing Debian packages (needs root; otherwise says what to run)
	@bash grader/install-deps.sh

build: $(RUNNER) ## build TREE's library and the public tests

# (internal) where `make build` puts the runner, for TREE, SAN and the
# CUDA mode (build/solution/normal-gpu/run_tests with a GPU)
runner-path:
	@echo $(RUNNER)
.PHONY: runner-path

test: deps ## run the public tests on TREE (L=N one lesson, T=name one test)
	@echo "Testing $(TREE) ($(VARIANT) build; CUDA device: $(if $(filter gpu,$(CUDA_MODE)),the GPU,the emulator))"
	@$(WORKFLOW) test -- $(if $(L),-l $(L)) $(if $(T),-t $(T)) $(if $(filter 1,$(V)),-v)

# NumPy's side of the CPU benchmark runs on Debian's python3-numpy, so on
# Debian's python3 (a python3 that comes first on PATH, pyenv's say, may
# not have it).
BENCH_PYTHON := $(or $(wildcard /usr/bin/python3),python3)

bench: bench-cpu ## benchmarks of TREE: CPU beside memcpy, OpenBLAS and NumPy (build/bench/cpu.tsv, installs them), and GPU ones when there is a GPU
ifeq ($(CUDA_MODE),gpu)
	@# the plain GPU build (the one make cuda-check builds in make check):
	@# a sanitizer build's library does not link into nvcc's programs
	@$(MAKE) TREE=$(TREE) CUDA=gpu SAN=0 BENCH=0 gpu-benches
	@for b in $(GPU_BENCHES_PLAIN); do \
	  n=$$(basename $$b); $$b -o build/bench/$${n#bench_}.tsv $(if $(F),-f $(F)) || exit 1; \
	  echo "wrote build/bench/$${n#bench_}.tsv"; done
	@python3 tests/bench/permute_torch.py -o build/bench/gpu_permute_torch.tsv $(if $(F),-f $(F))
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
	@# Both users of OpenBLAS (bench_cpu and NumPy) on one thread.  The
	@# kernels: bench_cpu checks that those OpenBLAS picks fit this CPU,
	@# and when they are a fallback (Debian 12's 0.3.21 runs its SSE3 ones
	@# on CPUs newer than it knows) it times the ones that fit, keeps the
	@# fastest and sets OPENBLAS_CORETYPE for itself and NumPy; the TSV
	@# header says which and why.  So a setting of this machine's
	@# (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE) is cleared for this command.
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
		build/$(TREE_ID)/bench/bench_cpu -o $(BENCH_CPU_TSV) $(if $(F),-f $(F)) \
		$(if $(filter 1,$(SMOKE)),-s) -n '$(BENCH_PYTHON) tests/bench/bench_numpy.py'
	@echo "wrote $(BENCH_CPU_TSV)"

# Targets for the course's authors: they need solution/, which the
# student handout does not have.
AUTHORS_ONLY = @test -d solution || { echo "make $@: this needs solution/, which the \
student handout does not have" >&2; exit 2; }

bench-record: ## make bench TREE=solution, then record it: lessons/data/bench-cpu.tsv, its tables in README.md and lessons 2 and 5, every speed the lessons state, the plots
	$(AUTHORS_ONLY)
	@if [ -n "$(F)" ]; then echo "make bench-record records a whole run: leave out F=" >&2; exit 2; fi
	@$(MAKE) bench TREE=solution
	@cp build/bench/cpu.tsv lessons/data/bench-cpu.tsv
	@python3 tests/bench/bench_tables.py --write lessons/data/bench-cpu.tsv
	@$(MAKE) docs-plots
	@echo "recorded lessons/data/bench-cpu.tsv, the tables of README.md and lessons 2 and 5, and the lessons' speed figures;"
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

check: ## the project's own checks (CI runs this; SECTIONS="grader book": those alone)
	$(AUTHORS_ONLY)
	@bash grader/install-deps.sh --check
	@bash tests/check.sh $(SECTIONS)

check-quick: ## the contributor's quick tier of make check: builds, public tests (plain, sanitizers), skeleton, sandbox, one grade
	$(AUTHORS_ONLY)
	@bash grader/install-deps.sh --check
	@bash tests/check.sh --quick

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
# ptxas's report of each kernel's registers, spills and shared memory is
# kept beside the object ($@.ptxas; make cuda-check prints them); any other
# message of the compiler is shown.
$(B)/lib/%.cu.o: $(TREE)/src/%.cu
	@mkdir -p $(@D)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_FLAGS) $(if $(filter 1,$(SAN)),$(NVCC_SAN),$(NVCC_OPT)) -Xptxas -v -MMD -MP \
		-I$(TREE)/include -c $< -o $@ 2>$@.ptxas; s=$$?; \
		grep -v -e '^ptxas info' -e '^    [0-9]* bytes stack frame' $@.ptxas >&2; exit $$s
else
$(B)/lib/%.cu.o: $(B)/lib/%.cpp
	@$(if $(Q),echo "  CXX     $(TREE)/src/$*.cu (emulator)")
	$(Q)$(CXX) $(CXXFLAGS_CU) $(OPT) -MMD -MP -I$(EMU)/include -I$(TREE)/include -iquote $(TREE)/src -c $< -o $@
endif

$(B)/lib/emu.o: $(EMU)/emu.cpp $(wildcard $(EMU)/include/*.h)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(CXXFLAGS_CU) $(OPT) -I$(EMU)/include -c $< -o $@

# The archive and the runner are written under a temporary name and then
# renamed: a run that starts while they are rebuilt (make watch beside make
# test) sees the old file or the new one, never half of one.
$(B)/libnd.a: $(LIB_OBJS) $(CUDA_OBJS)
	$(Q)rm -f $@.tmp$$$$ && ar rcs $@.tmp$$$$ $^ && mv -f $@.tmp$$$$ $@

# With nvcc installed, every .cu file of both trees, and the GPU
# benchmarks, must build for a real GPU, warning-free, GPU or not: the
# objects of CUDA=gpu builds (build/TREE/normal-gpu/), which the GPU
# path then reuses.  Then ptxas's figures for every kernel.
CUDA_CHECK_TREES := $(wildcard solution skeleton)
GPU_BENCHES := $(patsubst tests/bench/%.cu,$(B)/%,$(wildcard tests/bench/bench_gpu*.cu))
GPU_BENCHES_PLAIN := $(patsubst tests/bench/%.cu,build/$(TREE_ID)/normal-gpu/%,$(wildcard tests/bench/bench_gpu*.cu))
cuda-check: ## build every .cu file of both trees and the GPU benchmarks with nvcc (sm_75, sm_90), warnings as errors; print each kernel's registers, spills and shared memory
	@if [ -z "$(NVCC)" ]; then echo "cuda-check: nvcc not found; skipped"; exit 0; fi; \
	for t in $(CUDA_CHECK_TREES); do \
	  $(MAKE) -s CUDA=gpu SAN=0 BENCH=0 TREE=$$t cuda-objs || exit 1; done; \
	$(MAKE) -s CUDA=gpu SAN=0 BENCH=0 TREE=$(firstword $(CUDA_CHECK_TREES)) gpu-benches || exit 1; \
	t=$(firstword $(CUDA_CHECK_TREES)); echo "nvcc ok: $(CUDA_CHECK_TREES), $(notdir $(GPU_BENCHES)); ptxas, $$t/src:"; \
	python3 tests/ptxas_table.py build/$$t/normal-gpu/lib/*.cu.o.ptxas

# (internal) the .cu objects of TREE, and the GPU benchmarks
cuda-objs: $(patsubst $(TREE)/src/%.cu,$(B)/lib/%.cu.o,$(LIB_CU_SRCS))
gpu-benches: $(GPU_BENCHES)
.PHONY: cuda-objs gpu-benches

# The day a GPU is there (tests/gpu_report.sh says what runs).  It needs
# no network: `make gpu-debs`, on a machine with Debian's package network,
# downloads the Debian packages it needs into .gpu-debs/ (git ignores it);
# carried to the GPU machine, they are unpacked under build/gpu-report/deps
# and found through GPU_ENV.  make check runs `make -n gpu-report` with a
# stand-in nvidia-smi, which checks every target and program it names.
GPU_REPORT := build/gpu-report
GPU_DEBS := .gpu-debs
GPU_DEPS := $(CURDIR)/$(GPU_REPORT)/deps
GPU_LIBDIR := $(GPU_DEPS)/usr/lib/x86_64-linux-gnu
GPU_ENV := $(if $(wildcard $(GPU_DEBS)/*.deb),PATH="$(GPU_DEPS)/usr/bin:$$PATH" \
	CPATH="$(GPU_DEPS)/usr/include" LIBRARY_PATH="$(GPU_LIBDIR)" \
	LD_LIBRARY_PATH="$(GPU_LIBDIR)$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}" \
	PKG_CONFIG_PATH="$(GPU_LIBDIR)/pkgconfig")
GPU_SOLUTION := build/solution/normal$(CUDA_SUFFIX)
CSAN ?= $(or $(wildcard $(CUDA_HOME)/bin/compute-sanitizer),compute-sanitizer)
make_dry_run = $(findstring n,$(firstword -$(MAKEFLAGS)))

gpu-debs: ## download the Debian packages make gpu-report needs into .gpu-debs/, to carry to a GPU machine without network
	@bash tests/gpu_report.sh debs $(GPU_DEBS)

gpu-report: ## on a machine with a GPU: tests, grade, compute-sanitizer, benchmarks: build/gpu-report/summary.txt, lessons/data/bench-gpu*.tsv
	$(AUTHORS_ONLY)
	@if [ "$(CUDA_MODE)" != gpu ]; then echo "make gpu-report: no GPU here (nvidia-smi -L lists \
	none$(if $(NVCC),, and nvcc is not installed)); make check builds the GPU path without one" >&2; \
	exit 1; fi
	rm -rf $(GPU_REPORT) && mkdir -p $(GPU_REPORT)
	$(if $(GPU_ENV),bash tests/gpu_report.sh unpack $(GPU_DEBS) $(GPU_DEPS))
	+$(GPU_ENV) $(MAKE) -j$(shell nproc) CUDA=gpu TREE=solution SAN=0 BENCH=0 build gpu-benches grader-objs
	+$(GPU_ENV) $(MAKE) -j$(shell nproc) CUDA=gpu TREE=solution SAN=1 BENCH=0 build
	+$(GPU_ENV) OUT=$(GPU_REPORT) RUNNER=$(GPU_SOLUTION)/run_tests \
		RUNNER_ASAN=build/solution/asan$(CUDA_SUFFIX)/run_tests SAN_ENV='$(SAN_ENV)' \
		BENCHES='$(patsubst tests/bench/%.cu,$(GPU_SOLUTION)/%,$(wildcard tests/bench/bench_gpu*.cu))' \
		CSAN=$(CSAN) DATA=lessons/data bash tests/gpu_report.sh $(if $(make_dry_run),--dry-run) run

.PHONY: gpu-report gpu-debs

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) $(OPT) -MMD -MP -I$(TREE)/include -Itests/kit $(CHECK_CFLAGS) -c $< -o $@

$(RUNNER): $(TEST_OBJS) $(B)/libnd.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(OPT) $^ $(CHECK_LIBS) $(CUDA_LIBS) -lm -o $@.tmp$$$$ && mv -f $@.tmp$$$$ $@

# The student handout has neither (no hidden tests, a prebuilt web book).
-include grader/grader.mk
-include docs/docs.mk
-include tests/workflow.mk
-include grader/emu/profile.mk
-include tests/fuzz/fuzz.mk

# The GPU benchmarks: nvcc, cuBLAS, linked with the library the tests ran
# (build/TREE/normal-gpu/); they run only on a GPU (make bench, make
# gpu-report) and are built by make cuda-check everywhere.
$(B)/bench_%: tests/bench/bench_%.cu tests/bench/bench_gpu.h $(B)/libnd.a
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_FLAGS) $(NVCC_OPT) -I$(TREE)/include -I$(TREE)/src $< $(B)/libnd.a -lcublas -o $@

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

# The solution's CPU seconds per public test, under the sanitizers (the
# students' default build): their tests may use 10 times as much.
times: ## (authors) measure the solution's public tests: tests/times.tsv, their CPU-time limits
	$(AUTHORS_ONLY)
	@$(MAKE) -s build TREE=solution SAN=1
	@build/solution/asan/run_tests -q -j 1 -C tests/times.tsv >/dev/null || \
		{ echo "make times: the solution fails a public test" >&2; exit 1; }
	@echo "wrote tests/times.tsv: $$(wc -l <tests/times.tsv) tests"
