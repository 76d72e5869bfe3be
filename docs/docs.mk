# docs/docs.mk -- the web site of the workbook.  The top-level Makefile
# includes this file (`-include docs/docs.mk`); on its own:
#     make -f Makefile -f docs/docs.mk docs
#
#   make docs                      the student site in build/site/
#   make docs EDITION=instructor   with the solutions, in build/site-instructor/
#   make docs-check                build, then open every page in headless
#                                  Chromium: broken links, missing images,
#                                  unrendered math, script errors; and check
#                                  that every example of tool output in the
#                                  pages is what its run prints now
#   make docs-examples             run those examples and write them into
#                                  README.md, lessons/ and docs/ (commit them)
#   make epub                      the student edition as one EPUB 3 for
#                                  reading offline, build/epub/ (make docs
#                                  copies it into the site, which links it)
#   make epub-check                make epub, then validate it with epubcheck
#
# Pipeline: grader/install-deps.sh --docs (Debian packages), then
# docs/check_snippets.py (every included tag exists, no pasted C, the
# included sources compile), the figure generators (lessons/figures/*.c,
# linked against the solution library) and plots (lessons/figures/*.gp,
# gnuplot, from the measured data in lessons/data/), the examples of tool
# output (docs/examples.py: real runs in scratch copies of the workbook,
# build/docs/examples/), then docs/site.py (pandoc).

EDITION ?= student
DOCS_SITE := build/site$(if $(filter instructor,$(EDITION)),-instructor)
DOCS_BUILD := build/docs
DOCS_LIB := build/solution/normal/libnd.a
# The skeleton the book shows and checks: the one shipped, generated from
# solution/ (make skeleton-check holds skeleton/ to it), never the working
# tree's skeleton/, which a student edits.  Read through $DOCS_SKELETON by
# docs/check_snippets.py, docs/filters/include.lua and docs/site.py.
DOCS_SKELETON := $(DOCS_BUILD)/skeleton
DOCS_FIG_SRCS := $(sort $(wildcard lessons/figures/*_svg.c))
DOCS_FIG_BINS := $(patsubst lessons/figures/%.c,$(DOCS_BUILD)/%,$(DOCS_FIG_SRCS))
DOCS_PLOTS := $(sort $(wildcard lessons/figures/*.gp))
DOCS_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L \
	-Isolution/include -Ilessons/figures

# The examples are run again only when something that could change what
# they print has changed.  Their skeleton is generated from solution/
# (docs/examples.py), never the working tree's skeleton/, which a student
# edits: so it is not among the inputs.
DOCS_EXAMPLES := $(DOCS_BUILD)/examples/.done
DOCS_EXAMPLE_INPUTS := Makefile docs/examples.py grader/skelgen.py $(wildcard tests/*.c tests/*.h tests/*.py \
	tests/*.mk tests/hints/* tests/show/* \
	solution/Makefile solution/src/* solution/include/* grader/emu/*.* grader/emu/include/* \
	grader/install-deps.sh lessons/*.md lessons/figures/svg.h)

.PHONY: docs docs-check docs-needs docs-deps docs-snippets docs-figures docs-plots docs-lib docs-examples epub epub-check

docs: docs-needs docs-deps docs-snippets docs-figures $(DOCS_EXAMPLES) epub ## the web book: lessons and guides as HTML in build/site/ (EDITION=instructor adds solutions)
	@DOCS_SKELETON=$(DOCS_SKELETON) python3 docs/site.py --edition $(EDITION) --out $(DOCS_SITE)
	@cp $(EPUB) $(DOCS_SITE)/
	@echo "docs: open $(DOCS_SITE)/index.html"

# The book for reading offline: every page of the student edition, with the
# figures and the math (MathML), as one EPUB 3 (docs/epub.py).  Debian's
# /usr/bin/epubcheck is the jar itself, run through binfmt_misc, which
# containers often lack: java runs it.
EPUB := build/epub/ndarray-workbook.epub
EPUBCHECK := java -jar /usr/share/java/epubcheck.jar

epub: docs-needs docs-deps docs-snippets docs-figures $(DOCS_EXAMPLES) ## the lessons and guides as one EPUB for reading offline: build/epub/ndarray-workbook.epub
	@DOCS_SKELETON=$(DOCS_SKELETON) python3 docs/epub.py --site $(DOCS_SITE) --out $(EPUB)

epub-check: epub ## make epub, then validate it with epubcheck (fails on any error or warning)
	@bash grader/install-deps.sh --check
	@$(EPUBCHECK) --failonwarnings $(EPUB)

docs-check: docs ## make docs, then open every page in headless Chromium (links, images, math, JS errors); examples of tool output up to date
	@bash grader/install-deps.sh --check
	@python3 docs/examples.py check
	@python3 docs/browser_check.py $(DOCS_SITE) build/site-check

$(DOCS_EXAMPLES): $(DOCS_EXAMPLE_INPUTS)
	@python3 docs/examples.py build
	@touch $@

docs-examples: ## run the examples of tool output that README.md, the lessons and the guides show, and write them there (then commit)
	@python3 docs/examples.py build
	@python3 docs/examples.py update
	@touch $(DOCS_EXAMPLES)

# Said at once, before any build: the figures link the solution's library
# and the examples run it.
docs-needs:
	@test -d solution || { echo "make docs: this needs solution/ (the course's repository); \
the student handout has the book built, in site/" >&2; exit 2; }

docs-deps:
	@bash grader/install-deps.sh --docs

docs-snippets: docs-needs
	@python3 grader/skelgen.py solution $(DOCS_SKELETON)
	@DOCS_SKELETON=$(DOCS_SKELETON) python3 docs/check_snippets.py

# The figures draw views made by the ndarray itself, so they link the
# solution's library (built by the top-level Makefile's own rule).  They
# run on the CPU, so the library's CUDA device is always the emulator
# (CUDA=emu keeps the build in build/solution/normal/ on a GPU machine too);
# its .cu files are C++, hence -lstdc++.
docs-lib:
	@$(MAKE) -s -f Makefile TREE=solution SAN=0 BENCH=0 CUDA=emu $(DOCS_LIB)

docs-figures: $(DOCS_FIG_BINS) docs-plots
	@mkdir -p $(DOCS_SITE)/figures
	@for f in $(DOCS_FIG_BINS); do $$f $(DOCS_SITE)/figures || exit 1; done

# The plots of measured data (lessons/data/), alone: make bench-record
# redraws them after recording a run.
docs-plots: docs-deps
	@mkdir -p $(DOCS_SITE)/figures
	@command -v gnuplot >/dev/null || { echo "docs: gnuplot is missing: run grader/install-deps.sh --docs (Debian package gnuplot-nox)" >&2; exit 1; }
	@for p in $(DOCS_PLOTS); do echo "  PLOT    $$p"; \
		gnuplot -e "outdir='$(DOCS_SITE)/figures'" $$p || exit 1; done

$(DOCS_BUILD)/%_svg: lessons/figures/%_svg.c $(wildcard lessons/figures/*.h) docs-lib
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(DOCS_CFLAGS) $< $(DOCS_LIB) -lstdc++ -lm -o $@
