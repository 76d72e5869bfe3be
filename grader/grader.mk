# grader.mk -- the grading targets; included by the top-level Makefile.

# Where `make grade` writes the reports of TREE.
GRADE_OUT ?= build/grade/$(TREE_ID)

# The grader's own code does not depend on the submission: it is built
# once, against the API header of skeleton/, and grade.sh links each
# submission to the executor's part of it.
#   build/grader/verdict      the hidden tests, the kit's references and
#                             comparison: takes every verdict, and links no
#                             part of the library (the link proves it)
#   build/grader/VARIANT/exec the kit's executor (calls in, raw results out),
#                             linked with a submission into each executor
KIT_VERDICT_SRCS := $(addprefix tests/kit/,gen.c ref.c check.c wire.c runner.c stack.c)
# The hidden suites run public tests again (K_AGAIN): lessons 1-7's, whose
# tests call the library only through the kit.
VERDICT_SRCS := grader/verdict.c grader/sandbox.c $(KIT_VERDICT_SRCS) \
	$(sort $(wildcard grader/hidden/*.c)) $(sort $(wildcard tests/test_0[1-7]_*.c))
EXEC_SRCS := grader/executor.c grader/sandbox.c tests/kit/wire.c tests/kit/exec.c tests/kit/stack.c
GRADER_FLAGS := $(CFLAGS_COMMON) -D_GNU_SOURCE -Iskeleton/include -Itests/kit -Igrader $(CHECK_CFLAGS)
GRADER_SAN := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
VERDICT_OBJS := $(patsubst %.c,build/grader/verdict-objs/%.o,$(VERDICT_SRCS))
EXEC_OBJS := $(patsubst %.c,build/grader/normal/exec/%.o,$(EXEC_SRCS)) \
	$(patsubst %.c,build/grader/asan/exec/%.o,$(EXEC_SRCS))
GRADER_OBJS := $(VERDICT_OBJS) $(EXEC_OBJS)

build/grader/verdict-objs/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (grader)")
	$(Q)$(CC) $(GRADER_FLAGS) -O2 -MMD -MP -c $< -o $@

build/grader/verdict: $(VERDICT_OBJS)
	@$(if $(Q),echo "  LINK    $@ (no library: it never loads submitted code)")
	$(Q)$(CC) $^ $(CHECK_LIBS) -lm -o $@

build/grader/normal/exec/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (executor)")
	$(Q)$(CC) $(GRADER_FLAGS) -O2 -MMD -MP -c $< -o $@

build/grader/asan/exec/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $< (executor, sanitizers)")
	$(Q)$(CC) $(GRADER_FLAGS) $(GRADER_SAN) -MMD -MP -c $< -o $@

# The CUDA emulator's runtime, per variant, for trees graded on it (not
# linked when a GPU grades: grade.sh picks).
EMU_OBJS := build/grader/emu-normal/emu.o build/grader/emu-asan/emu.o
EMU_DEPS := $(EMU)/emu.cpp $(wildcard $(EMU)/include/*.h)

build/grader/emu-normal/emu.o: $(EMU_DEPS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $< (grader)")
	$(Q)$(CXX) $(CXXFLAGS_CU) -O2 -I$(EMU)/include -c $< -o $@

build/grader/emu-asan/emu.o: $(EMU_DEPS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $< (grader, sanitizers)")
	$(Q)$(CXX) $(CXXFLAGS_CU) $(GRADER_SAN) -I$(EMU)/include -c $< -o $@

build/grader/report: grader/report.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) $(CFLAGS_LIB) -O2 $< $$(pkg-config --cflags --libs libcjson) -o $@

# The sandbox from the shell (grade.sh runs every step that touches the
# submission through it), and its self-test with the probes it runs.
SANDBOX_FLAGS := $(CFLAGS_COMMON) $(CFLAGS_LIB) -O2 -Igrader
build/grader/sandbox: grader/sandbox_cli.c grader/sandbox.c grader/sandbox.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(SANDBOX_FLAGS) grader/sandbox_cli.c grader/sandbox.c -o $@

build/grader/sandbox-test/%: grader/selftest/sandbox/%.c grader/sandbox.c grader/sandbox.h
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(SANDBOX_FLAGS) $< grader/sandbox.c -o $@

SANDBOX_TEST := build/grader/sandbox-test
sandbox-test: $(SANDBOX_TEST)/test_sandbox $(SANDBOX_TEST)/probe $(SANDBOX_TEST)/cuda_start ## the sandbox's self-tests: probes that must fail to leave it, CUDA's start-up that must run
	@$(SANDBOX_TEST)/test_sandbox $(SANDBOX_TEST)/probe $(CURDIR) $(SANDBOX_TEST)/cuda_start

.PHONY: sandbox-test

grader-objs: build/grader/report build/grader/sandbox build/grader/verdict $(EXEC_OBJS) $(EMU_OBJS)

grade: deps grader-objs ## grade TREE with the hidden tests: table, results.json, junit.xml
	@bash grader/grade-all.sh --one $(TREE) $(GRADE_OUT)

.PHONY: grade grader-objs
-include $(GRADER_OBJS:.o=.d)

# Batch grading: every submission in SUBMISSIONS, JOBS at a time.
GRADE_ALL_OUT ?= build/grade-all
JOBS ?= $(shell nproc)

# RUNNER=slurm submits the batch to Slurm (RUNNER otherwise names the test
# runner's binary, which grade-all does not use); WAIT=1 waits for it.
GRADE_RUNNER = $(if $(filter command line,$(origin RUNNER)),$(RUNNER),local)

grade-all: deps grader-objs ## grade every submission in SUBMISSIONS=dir, JOBS at a time (RUNNER=slurm: on Slurm): reports and gradebook.csv
	@if [ -z "$(SUBMISSIONS)" ]; then echo "usage: make grade-all SUBMISSIONS=dir [JOBS=n] [RUNNER=slurm [WAIT=1]]" >&2; exit 2; fi
	@bash grader/grade-all.sh --runner '$(GRADE_RUNNER)' $(if $(filter 1,$(WAIT)),--wait) "$(SUBMISSIONS)" $(GRADE_ALL_OUT) $(JOBS)

.PHONY: grade-all

# The student handout and the Gradescope autograder, each checked.
handout: ## the student tarball build/handout/ndarray-workbook.tar.gz, checked to hold no solution
	@python3 grader/package.py handout build/handout/ndarray-workbook.tar.gz
	@python3 grader/package.py check-handout build/handout/ndarray-workbook.tar.gz

gradescope: grader-objs ## the Gradescope autograder build/gradescope/autograder.zip, tested on a fake /autograder
	@python3 grader/package.py gradescope build/gradescope/autograder.zip
	@python3 grader/package.py check-gradescope build/gradescope/autograder.zip

# PL_IMAGE=you/ndarray-grader names the grader image in info.json.
prairielearn: grader-objs ## a PrairieLearn question graded externally, in build/prairielearn/, tested on fake /grade layouts
	@GRADE_CUDA=emu bash grader/grade.sh --calibrate
	@python3 grader/package.py prairielearn build/prairielearn
	@python3 grader/package.py check-prairielearn build/prairielearn

.PHONY: handout gradescope prairielearn

coverage: grader-objs ## run the hidden tests on the solution under gcov: build/coverage/index.html (fails under 95% of lines)
	@bash grader/coverage.sh

.PHONY: coverage

mutants: grader-objs ## grade every planted bug in grader/mutants/ (M=pattern): each must lose points
	@bash grader/mutants.sh $(M)

.PHONY: mutants

bench-grade: deps grader-objs ## what a grade costs: CPU s (every process), wall s, peak memory per phase, and under Gradescope's and PrairieLearn's limits (build/bench/grade.tsv; root)
	@bash grader/bench_grade.sh $(if $(filter 1,$(QUICK)),--quick)

.PHONY: bench-grade

# Gradescope's base image is Ubuntu 22.04, whose compilers are gcc and g++
# 11 (Debian 12's are 12): each tree's library and the emulator, and every
# file of the grader, must build with them too, warning-free.  The trees
# go to build/compat/TREE (make's own rules, with CC and CXX given); the
# grader's files are compiled with its flags and thrown away.
COMPAT_CC := gcc-11
COMPAT_CXX := g++-11
compat-check: ## both trees, the emulator and the grader build with gcc/g++ 11 (Ubuntu 22.04: Gradescope's base image)
	@bash grader/install-deps.sh --compat
	@for t in $(CUDA_CHECK_TREES); do \
		$(MAKE) -s --no-print-directory TREE=$$t SAN=0 CUDA=emu CC=$(COMPAT_CC) \
			CXX=$(COMPAT_CXX) B=build/compat/$$t build/compat/$$t/libnd.a || exit 1; done
	@for f in $(sort $(VERDICT_SRCS) $(EXEC_SRCS)); do \
		$(COMPAT_CC) $(GRADER_FLAGS) -O2 -c $$f -o /dev/null || exit 1; done
	@$(COMPAT_CC) $(CFLAGS_COMMON) $(CFLAGS_LIB) -O2 -c grader/report.c \
		$$(pkg-config --cflags libcjson) -o /dev/null
	@$(COMPAT_CC) $(SANDBOX_FLAGS) -c grader/sandbox_cli.c -o /dev/null
	@echo "compat-check: $(CUDA_CHECK_TREES), the emulator and the grader build with $$($(COMPAT_CC) --version | head -n 1)"

.PHONY: compat-check
