# tests/fuzz/fuzz.mk -- the fuzzer (tests/fuzz/README.md); included by the
# top-level Makefile.
#
#   make fuzz [SECONDS=n] [DEVICE=cpu|cuda] [TREE=path]
#       replay the corpus, then fuzz for n seconds (default 60)
#   make fuzz-check
#       what `make check` runs: the corpus on both devices, then 60 s on
#       the CPU and 20 s on the CUDA device
#
# It fuzzes solution/ (skeleton/ in the student handout, which has no
# solution) unless TREE is given on the command line.  The build is clang's
# libFuzzer with AddressSanitizer and UBSan, in build/fuzz/<tree>/, apart
# from the gcc builds.

FUZZ_TREE := $(if $(filter command line,$(origin TREE)),$(TREE),$(if $(wildcard solution),solution,skeleton))
FZ := build/fuzz/$(subst /,_,$(patsubst $(CURDIR)/%,%,$(abspath $(FUZZ_TREE))))
FUZZ_BIN := $(FZ)/fuzz_nd
SECONDS ?= 60
DEVICE ?= cpu

FUZZ_CC ?= clang
FUZZ_CXX ?= clang++
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# No -Werror for the tree: gcc's -Werror builds hold it to that already,
# and clang warns about other things (an unused static inline function in
# a skeleton).  The harness is held to it.
FUZZ_CFLAGS := -std=c11 -g -O1 -Wall -Wextra -D_POSIX_C_SOURCE=200809L $(FUZZ_SAN)
FUZZ_CXXFLAGS := -std=c++17 -g -O1 -Wall -Wextra $(FUZZ_SAN)
# The library and the lessons' .cu files carry libFuzzer's coverage
# instrumentation; the emulator's scheduler does not (its paths are noise).
FUZZ_COV := -fsanitize=fuzzer-no-link

FUZZ_OBJS := $(patsubst $(FUZZ_TREE)/src/%.c,$(FZ)/%.o,$(sort $(wildcard $(FUZZ_TREE)/src/*.c))) \
	$(patsubst $(FUZZ_TREE)/src/%.cu,$(FZ)/%.cu.o,$(sort $(wildcard $(FUZZ_TREE)/src/*.cu))) \
	$(FZ)/emu.o

.PHONY: fuzz fuzz-check fuzz-build

fuzz: ## fuzz the library (libFuzzer, ASan, UBSan): SECONDS=60, DEVICE=cpu|cuda; tests/fuzz/README.md
	@bash grader/install-deps.sh --fuzz
	@$(MAKE) fuzz-build
	@bash tests/fuzz/fuzz.sh $(FUZZ_BIN) $(DEVICE) $(SECONDS)

fuzz-check: ## what make check runs: the fuzz corpus on both devices, then 60 s (cpu) and 20 s (cuda)
	@bash grader/install-deps.sh --fuzz
	@$(MAKE) fuzz-build
	@bash tests/fuzz/fuzz.sh $(FUZZ_BIN) cpu 60
	@bash tests/fuzz/fuzz.sh $(FUZZ_BIN) cuda 20

fuzz-build: $(FUZZ_BIN)

$(FZ)/%.o: $(FUZZ_TREE)/src/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CLANG   $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_COV) -MMD -MP -I$(FUZZ_TREE)/include -c $< -o $@

$(FZ)/%.cpp: $(FUZZ_TREE)/src/%.cu $(EMU)/cu2cpp.py
	@mkdir -p $(@D)
	$(Q)python3 $(EMU)/cu2cpp.py $< $@

$(FZ)/%.cu.o: $(FZ)/%.cpp
	@$(if $(Q),echo "  CLANG++ $(FUZZ_TREE)/src/$*.cu (emulator)")
	$(Q)$(FUZZ_CXX) $(FUZZ_CXXFLAGS) $(FUZZ_COV) -MMD -MP -I$(EMU)/include \
		-I$(FUZZ_TREE)/include -iquote $(FUZZ_TREE)/src -c $< -o $@

$(FZ)/emu.o: $(EMU)/emu.cpp $(wildcard $(EMU)/include/*.h)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CLANG++ $<")
	$(Q)$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -I$(EMU)/include -c $< -o $@

# The test kit's reference, comparison and executor (tests/kit/): what the
# fuzzer compares every result with.  Not instrumented for coverage.
FUZZ_KIT_OBJS := $(patsubst %,$(FZ)/kit/%.o,gen ref check exec wire)
FUZZ_KIT_FLAGS := -D_GNU_SOURCE -I$(FUZZ_TREE)/include -Itests/kit $(CHECK_CFLAGS)

$(FZ)/kit/%.o: tests/kit/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CLANG   $< (kit)")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -Werror -MMD -MP $(FUZZ_KIT_FLAGS) -c $< -o $@

$(FUZZ_BIN): tests/fuzz/fuzz_nd.c $(FUZZ_OBJS) $(FUZZ_KIT_OBJS)
	@$(if $(Q),echo "  CLANG   $< (libFuzzer)")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -Werror -fsanitize=fuzzer -MMD -MP $(FUZZ_KIT_FLAGS) \
		-c $< -o $(FZ)/fuzz_nd.o
	$(Q)$(FUZZ_CXX) $(FUZZ_SAN) -fsanitize=fuzzer $(FZ)/fuzz_nd.o $(FUZZ_KIT_OBJS) $(FUZZ_OBJS) \
		$(CHECK_LIBS) -lm -o $@

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_KIT_OBJS:.o=.d) $(FZ)/fuzz_nd.d
