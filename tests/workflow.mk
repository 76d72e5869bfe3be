# tests/workflow.mk -- the student's loop; included by the top-level Makefile.
#
#   make status                 progress of every lesson on TREE, the next failing
#                               test and its hint, and an overall line
#   make test L=3 | T=name      (in the Makefile) one lesson's tests, or one test
#   make watch [L=N] [T=name]   rebuild and rerun the current lesson's tests on
#                               every save (WATCH_RUNS=N: stop after N runs);
#                               keys: h a hint, r rerun, q stop
#   make debug T=name           one test under gdb, stopped at a crash, a
#                               sanitizer's report or a failed check
#   make hint [L=N] [T=name]    a hint for the current failing test, one level
#                               more each time (tests/hints/)
#   make show E='arange(24).reshape(2,3,4)[:, ::-1, 1]'
#                               draw the view TREE's lesson 1 code makes of a
#                               NumPy-like expression (tests/show/), in the
#                               terminal and as SVG (OUT=, default build/show.svg)
#   make compile_commands.json  for clangd: how TREE and the tests are compiled
#   make bench-loop             the loop's latency: a fresh clone to make
#                               status's first line, a saved edit to its first
#                               test result, idle and with 4 busy processes
#
# The work is done by tests/workflow.py: it builds through this Makefile
# (only what changed), turns a compile error into the compiler's own
# message and the lesson it is in, and summarises the runner's results.
# Any number of these may run on one tree at once: a lock per build folder
# lets one build at a time, and no build while a run reads the runner.

WORKFLOW = python3 tests/workflow.py --tree '$(TREE)' --runner '$(RUNNER)' \
	--make '$(MAKE)' --var 'TREE=$(TREE)' --var 'SAN=$(SAN)' --var 'BENCH=$(BENCH)' \
	--run-env '$(RUN_ENV)'

.PHONY: status watch hint debug show compile_commands.json bench-loop

status: deps ## progress of each lesson on TREE: bars, the next failing test and its hint
	@$(WORKFLOW) status

watch: deps ## rerun the current lesson's tests on every save (L=N a lesson, T=name a test)
	@bash grader/install-deps.sh --dev 2>/dev/null || true
	@$(WORKFLOW) watch $(if $(L),--lesson $(L)) $(if $(T),--test $(T))

debug: deps ## run one test under gdb (T=name, or T=name[cuda] on the emulator): it stops at a crash, a sanitizer's report or a failed check
	@$(if $(T),,echo "make debug needs T=name, one test (make test L=N lists a lesson's)" >&2; exit 2)
	@bash grader/install-deps.sh --dev
	@$(WORKFLOW) debug --test '$(T)'

bench-loop: deps ## how long a student waits: make status's first line, and an edit's first test result, idle and busy (build/bench/latency.tsv)
	@python3 tests/latency.py

hint: deps ## a hint for the current failing test: a nudge, then the key idea (L=N, T=name)
	@$(WORKFLOW) hint $(if $(L),--lesson $(L)) $(if $(T),--test $(T))

show: deps ## draw the view your lesson 1 code makes of E='arange(24).reshape(2,3,4)[:, ::-1, 1]' (and OUT=FILE.svg)
	@$(WORKFLOW) show --binary '$(SHOW)' --out '$(or $(OUT),build/show.svg)' -- "$$E"

# make show's program: tests/show/ linked with TREE's library, so that the
# views it draws are the ones TREE's lesson 1 functions make.  Linked under
# a temporary name, then renamed, like the runner.
SHOW := $(B)/show
SHOW_OBJS := $(patsubst tests/show/%.c,$(B)/show-objs/%.o,$(wildcard tests/show/*.c))

$(B)/show-objs/%.o: tests/show/%.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) $(OPT) -MMD -MP -I$(TREE)/include -Ilessons/figures -Itests/show \
		-Itests/kit $(CHECK_CFLAGS) -c $< -o $@

# the reference it compares with is the test kit's (no lesson code in it)
SHOW_KIT := $(addprefix $(B)/tests/kit/,ref.o gen.o check.o wire.o runner.o stack.o exec.o)
$(SHOW): $(SHOW_OBJS) $(SHOW_KIT) $(B)/libnd.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CXX) $(OPT) $^ $(CHECK_LIBS) $(CUDA_LIBS) -lm -o $@.tmp$$$$ && mv -f $@.tmp$$$$ $@

-include $(SHOW_OBJS:.o=.d)

compile_commands.json: deps ## for clangd (editor completion and checks) on TREE; uses bear
	@bash grader/install-deps.sh --dev
	@# bear records the commands that run: rebuild all (-B) of TREE and the tests.
	@$(WORKFLOW) locked -- bear --output $@ -- $(MAKE) -B -k V=0 TREE=$(TREE) SAN=$(SAN) $(RUNNER) >/dev/null 2>&1 \
		|| echo "note: $(TREE) does not compile right now; clangd will show where"
	@echo "wrote $@: $$(grep -c '"file"' $@) files of $(TREE) and tests/ (clangd reads it from here)"
