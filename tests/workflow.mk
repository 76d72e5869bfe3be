# tests/workflow.mk -- the student's loop; included by the top-level Makefile.
#
#   make status                 progress of every lesson on TREE, the next failing
#                               test and its hint, and an overall line
#   make test L=3 | T=name      (in the Makefile) one lesson's tests, or one test
#   make watch [L=N] [T=name]   rebuild and rerun the current lesson's tests on
#                               every save (WATCH_RUNS=N: stop after N runs)
#   make compile_commands.json  for clangd: how TREE and the tests are compiled
#
# The work is done by tests/workflow.py: it builds through this Makefile
# (only what changed), turns a compile error into the compiler's own
# message and the lesson it is in, and summarises the runner's results.

WORKFLOW = python3 tests/workflow.py --tree '$(TREE)' --runner '$(RUNNER)' \
	--make '$(MAKE)' --var 'TREE=$(TREE)' --var 'SAN=$(SAN)' --var 'BENCH=$(BENCH)' \
	--run-env '$(RUN_ENV)'

.PHONY: status watch compile_commands.json

status: deps ## progress of each lesson on TREE: bars, the next failing test and its hint
	@$(WORKFLOW) status

watch: deps ## rerun the current lesson's tests on every save (L=N a lesson, T=name a test)
	@bash grader/install-deps.sh --dev 2>/dev/null || true
	@$(WORKFLOW) watch $(if $(L),--lesson $(L)) $(if $(T),--test $(T))

compile_commands.json: deps ## for clangd (editor completion and checks) on TREE; uses bear
	@bash grader/install-deps.sh --dev
	@# bear records the commands that run: rebuild all (-B) of TREE and the tests.
	@bear --output $@ -- $(MAKE) -B -k V=0 TREE=$(TREE) SAN=$(SAN) $(RUNNER) >/dev/null 2>&1 \
		|| echo "note: $(TREE) does not compile right now; clangd will show where"
	@echo "wrote $@: $$(grep -c '"file"' $@) files of $(TREE) and tests/ (clangd reads it from here)"
