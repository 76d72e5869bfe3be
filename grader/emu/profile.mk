# grader/emu/profile.mk -- the CUDA emulator as a profiler and a sanitizer
# (grader/emu/README.md, "Profiling").  Included by the top-level Makefile.
#
#   make profile [L=6|7] [T=name]   an Nsight-Compute-like table per kernel
#                                   launch, and the model's estimate per GPU
#                                   ("modelled"): T names a profiling case
#                                   (grader/emu/profile_cases.c) or a public
#                                   test; L a lesson's cases (default: 6 and 7)
#   make cuda-sanitize [L=N] [T=name]  the public tests on the instrumented
#                                   build: racecheck, host pointers in
#                                   kernels, initcheck (reports fail the test)
#   make model-validation           the model against published measurements,
#                                   in and out of sample: lessons/data/model-validation.*
#   make profile-data               lessons/data/profile.tsv and
#                                   lessons/data/profile-l{6,7}.txt, which the
#                                   lessons' figures draw
#
# The instrumented build is TREE's library with its .cu files compiled by
# g++ with gcc's -fsanitize=thread instrumentation, whose callbacks the
# emulator supplies (ThreadSanitizer itself is never linked), in
# build/<tree>/profile/.  With nvcc installed, ptxas's register counts
# (grader/emu/regs.py) are used too: in the profiles, and to refuse a
# launch whose registers x threads exceed an SM's, as a GPU does.

PROF := build/$(TREE_ID)/profile
PROF_INST := -gdwarf-4 -O2 -fsanitize=thread --param=tsan-instrument-func-entry-exit=0 \
	-fno-tree-sra -DNDEMU_INSTRUMENTED
PROF_EMU_SRCS := $(EMU)/emu.cpp $(EMU)/profile.cpp $(EMU)/model.cpp $(wildcard $(EMU)/include/*.h)
PROF_LIB_OBJS := $(patsubst $(TREE)/src/%.c,$(PROF)/lib/%.o,$(LIB_SRCS)) \
	$(patsubst $(TREE)/src/%.cu,$(PROF)/lib/%.cu.o,$(LIB_CU_SRCS)) $(PROF)/lib/emu.o
PROF_TEST_OBJS := $(patsubst tests/%.c,$(PROF)/tests/%.o,$(TEST_SRCS))
# The registers table, from ptxas, when nvcc is installed (GPU or not):
# one per tree, beside its build folders, where every emulator runner of
# the tree finds it (ndemu-registers.tsv one folder up), so that make test
# refuses a launch whose registers x threads exceed an SM's, as a GPU does.
PROF_REGS := build/$(TREE_ID)/ndemu-registers.tsv
PROF_ENV = NDEMU_REGISTERS=$(PROF_REGS)

# The emulator's runtime includes profile.cpp and model.cpp: every build
# of it depends on them.
$(B)/lib/emu.o build/grader/emu-normal/emu.o build/grader/emu-asan/emu.o: $(EMU)/profile.cpp $(EMU)/model.cpp

.PHONY: profile cuda-sanitize model-validation profile-data

profile: deps $(PROF)/profile_cases $(PROF)/run_tests $(PROF_REGS) ## per kernel launch of the profiling cases (L=6|7) or a test (T=name): Nsight-like counters and modelled times per GPU
	@if [ -n "$(T)" ] && ! $(PROF)/profile_cases --list | cut -f1 | grep -qx '$(T)'; then \
	  echo "Profile of every kernel launch of test $(T) ($(TREE), CUDA emulator, instrumented build)"; \
	  $(PROF_ENV) NDEMU_PROFILE=1 $(PROF)/run_tests -t '$(T)' -v; \
	else \
	  echo "Profiles of $(TREE)'s kernels (CUDA emulator, instrumented build; every time and bandwidth is modelled)"; \
	  $(PROF_ENV) $(PROF)/profile_cases $(if $(T),-c '$(T)') $(if $(L),-l $(L)); \
	fi

cuda-sanitize: deps $(PROF)/run_tests $(PROF_REGS) ## the public tests on the instrumented emulator: racecheck, host pointers in kernels, initcheck
	@echo "Testing $(TREE) on the instrumented CUDA emulator (racecheck, host pointers, initcheck)"
	@$(PROF_ENV) $(PROF)/run_tests $(if $(L),-l $(L)) $(if $(T),-t '$(T)') $(if $(filter 1,$(V)),-v)

model-validation: $(PROF)/model_validation ## the performance model against published measurements, in and out of sample: lessons/data/model-validation.{tsv,md}
	@mkdir -p $(or $(OUT),lessons/data)
	$(PROF)/model_validation -o $(or $(OUT),lessons/data)

profile-data: $(PROF)/profile_cases ## lessons/data/profile.tsv and profile-l6.txt, profile-l7.txt (the lessons' profiles)
	@mkdir -p $(or $(OUT),lessons/data)
	@# without ptxas's registers (NDEMU_REGISTERS empty: not the table make
	@# build writes beside the runners), so the data are the same with or
	@# without nvcc
	@for l in 6 7; do NDEMU_REGISTERS= $(PROF)/profile_cases -l $$l -t $(PROF)/profile-l$$l.tsv \
	  >$(or $(OUT),lessons/data)/profile-l$$l.txt || exit 1; done
	@cat $(PROF)/profile-l6.tsv >$(or $(OUT),lessons/data)/profile.tsv
	@grep -v '^#\|^case' $(PROF)/profile-l7.tsv >>$(or $(OUT),lessons/data)/profile.tsv
	@echo "wrote $(or $(OUT),lessons/data)/profile.tsv, profile-l6.txt, profile-l7.txt"

$(PROF)/lib/%.o: $(TREE)/src/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) $(CFLAGS_LIB) -O2 -MMD -MP -I$(TREE)/include -c $< -o $@

$(PROF)/lib/%.cpp: $(TREE)/src/%.cu $(EMU)/cu2cpp.py
	@mkdir -p $(@D)
	$(Q)python3 $(EMU)/cu2cpp.py $< $@

$(PROF)/lib/%.cu.o: $(PROF)/lib/%.cpp
	@$(if $(Q),echo "  CXX     $(TREE)/src/$*.cu (emulator, instrumented)")
	$(Q)$(CXX) $(CXXFLAGS_CU) $(PROF_INST) -MMD -MP -I$(EMU)/include -I$(TREE)/include -iquote $(TREE)/src -c $< -o $@

$(PROF)/lib/emu.o: $(PROF_EMU_SRCS)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) $(CXXFLAGS_CU) -O2 -I$(EMU)/include -c $< -o $@

$(PROF)/libnd.a: $(PROF_LIB_OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(PROF)/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) -O2 -MMD -MP -I$(TREE)/include -Itests/kit $(CHECK_CFLAGS) -c $< -o $@

# Linked without -fsanitize=thread: the emulator supplies the callbacks.
$(PROF)/run_tests: $(PROF_TEST_OBJS) $(PROF)/libnd.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $^ $(CHECK_LIBS) -lm -o $@

$(PROF)/profile_cases: $(EMU)/profile_cases.c $(PROF)/libnd.a
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CXX) -x c $(CFLAGS_COMMON) $(CFLAGS_LIB) -O2 -I$(TREE)/include -I$(EMU)/include $< -x none \
		$(PROF)/libnd.a -lstdc++ -lm -o $@

$(PROF)/model_validation: $(EMU)/tests/model_validation.cu $(EMU)/cu2cpp.py $(PROF)/lib/emu.o
	@mkdir -p $(@D)
	$(Q)python3 $(EMU)/cu2cpp.py $< $(PROF)/model_validation.cpp
	$(Q)$(CXX) $(CXXFLAGS_CU) $(PROF_INST) -I$(EMU)/include -c $(PROF)/model_validation.cpp -o $@.o
	$(Q)$(CXX) $@.o $(PROF)/lib/emu.o -o $@

# ptxas's registers per kernel (sm_90), or an empty table without nvcc.
ifneq ($(CUDA_MODE),gpu)
$(RUNNER): | $(PROF_REGS)
endif
$(PROF_REGS): $(LIB_CU_SRCS) $(EMU)/regs.py
	@mkdir -p $(@D)/ptxas
	@if [ -n "$(NVCC)" ]; then \
	  for f in $(LIB_CU_SRCS); do \
	    $(NVCC) $(NVCC_REGS_FLAGS) -I$(TREE)/include $$f -o $(@D)/ptxas/$$(basename $$f .cu).cubin \
	      >$(@D)/ptxas/$$(basename $$f .cu).ptxas.log 2>&1 || { : >$@; echo "  REGS    nvcc failed on $$f: no register counts"; exit 0; }; \
	  done; \
	  python3 $(EMU)/regs.py $(patsubst $(TREE)/src/%.cu,$(@D)/ptxas/%.ptxas.log,$(LIB_CU_SRCS)) >$@; \
	  echo "  REGS    $@ ($$(wc -l <$@) kernels, from ptxas)"; \
	else : >$@; echo "  REGS    no nvcc: profiles show no register counts"; fi

-include $(PROF_LIB_OBJS:.o=.d) $(PROF_TEST_OBJS:.o=.d)
