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

TREE ?= skeleton
SAN ?= 0
L ?=
T ?=

SHELL := /bin/bash
Q := $(if $(filter 1,$(V)),,@)
.DEFAULT_GOAL := intro
MAKEFLAGS += --no-print-directory

# Build outputs go to build/<tree>/<variant>/, e.g. build/solution/normal.
TREE_ABS := $(abspath $(TREE))
TREE_ID := $(subst /,_,$(patsubst $(CURDIR)/%,%,$(TREE_ABS)))
# BENCH=1 is the benchmark build (make bench sets it): tuned for this CPU.
VARIANT := $(if $(filter 1,$(SAN)),asan,$(if $(filter 1,$(BENCH)),bench,normal))
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
OPT := -O3 -march=native
else
OPT := -O2
endif

LIB_SRCS := $(sort $(wildcard $(TREE)/src/*.c))
LIB_OBJS := $(patsubst $(TREE)/src/%.c,$(B)/lib/%.o,$(LIB_SRCS))
TEST_SRCS := $(sort $(wildcard tests/*.c))
TEST_OBJS := $(patsubst tests/%.c,$(B)/tests/%.o,$(TEST_SRCS))
RUNNER := $(B)/run_tests

# Sanitizer runs: slower, so Check's timeouts stretch; any report is fatal.
SAN_ENV := CK_TIMEOUT_MULTIPLIER=4 \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
RUN_ENV := $(if $(filter 1,$(SAN)),$(SAN_ENV))

.PHONY: intro help deps build test bench grade skeleton skeleton-check check clean

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
	@echo "Testing $(TREE) ($(VARIANT) build)"
	@$(WORKFLOW) test -- $(if $(L),-l $(L)) $(if $(T),-t $(T)) $(if $(filter 1,$(V)),-v)

bench: ## CPU benchmarks of TREE: a table, and build/bench/cpu.tsv (installs OpenBLAS)
	@bash grader/install-deps.sh --bench
	@$(MAKE) BENCH=1 TREE=$(TREE) build/$(TREE_ID)/bench/bench_cpu
	@mkdir -p build/bench
	@# OpenBLAS picks its kernels for this CPU unless OPENBLAS_CORETYPE forces
	@# others (some machines set it); compare against its own best choice.
	env -u OPENBLAS_CORETYPE build/$(TREE_ID)/bench/bench_cpu -o build/bench/cpu.tsv $(if $(F),-f $(F))
	@echo "wrote build/bench/cpu.tsv"

# Targets for the course's authors: they need solution/, which the
# student handout does not have.
AUTHORS_ONLY = @test -d solution || { echo "make $@: this needs solution/, which the \
student handout does not have" >&2; exit 2; }

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

$(B)/libnd.a: $(LIB_OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) $(OPT) -MMD -MP -I$(TREE)/include -Itests $(CHECK_CFLAGS) -c $< -o $@

$(RUNNER): $(TEST_OBJS) $(B)/libnd.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(OPT) $^ $(CHECK_LIBS) -lm -o $@

# The student handout has neither (no hidden tests, a prebuilt web book).
-include grader/grader.mk
-include docs/docs.mk
-include tests/workflow.mk

# The benchmark links OpenBLAS, which only `make bench` needs.
$(B)/bench_cpu: tests/bench/bench_cpu.c $(B)/libnd.a
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) $(OPT) -I$(TREE)/include $< $(B)/libnd.a -lopenblas -lm -o $@

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d)
