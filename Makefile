# Two entry points for a fresh machine (see README.md):
#   make book   set up .venv, install the pinned requirements, build the book
#   make test   set up .venv if missing: lint, unit tests, strict build, browser tests
#   make colab  every chapter alone, offline, in Colab's package versions
#   make portable  every chapter under other CPUs' arithmetic (tools/portable.py)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: book test unit browser lint colab clean portable

# Local npm packages: esbuild and ml-matrix (the widgets' bundles are rebuilt and
# compared in the unit tests) and MathJax (copied into the built site)
NODE_STAMP := node_modules/.installed
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts
	touch $(NODE_STAMP)

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# One torch thread per chapter unless OMP_NUM_THREADS says otherwise: the
# chapters' models are small, and on a busy 2-core machine chapter 3 took 449 s
# with two threads (OpenMP threads waiting for each other) and 26 s with one
book: $(STAMP) $(NODE_STAMP)
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(BIN)/jupyter-book build . -W --keep-going
	@echo "The book is at $(CURDIR)/_build/html/index.html"

unit: $(STAMP) $(NODE_STAMP)
	$(BIN)/python -m pytest

test: lint unit book browser

# Browser tests of the built site (tests/browser, run after `make book`): they
# need Debian's Chromium; every request that leaves the site is blocked
browser: $(STAMP) $(NODE_STAMP)
	test -x /usr/bin/chromium || (apt-get update -q && apt-get install -y -q chromium)
	RHN_BROWSER_TESTS=1 $(BIN)/python -m pytest tests/browser

# Every chapter again under other CPUs' arithmetic (tools/portable.py list
# --record): torch's AVX2 and plain kernels, MKL's compatible matrix products,
# both at once. `make book` is the machine's own; a claim must hold in all.
# PORTABLE_VARIANTS=ci runs only what CI has time for (tools/portable.py list --ci)
PORTABLE_CHAPTERS ?= $(sort $(wildcard book/[0-9][0-9]*.ipynb))
PORTABLE_JOBS ?= 2
PORTABLE_VARIANTS ?= record
portable: $(STAMP)
	$(if $(filter $(PORTABLE_VARIANTS),record ci),,$(error PORTABLE_VARIANTS must be record or ci, not '$(PORTABLE_VARIANTS)'))
	$(BIN)/python tools/portable.py notebooks $(PORTABLE_CHAPTERS) \
		--jobs $(PORTABLE_JOBS) --variants $$($(BIN)/python tools/portable.py list --$(PORTABLE_VARIANTS) --names --except native)
# Every chapter as a Colab reader runs it (tools/colab.py): alone in an empty
# folder, Colab's versions of torch, numpy, matplotlib, ipywidgets, IPython...
# (a venv built once under ~/.cache/rhn-colab, or $$RHN_COLAB_CACHE), its own
# set-up cell installing rhn from a snapshot of this tree, no network
colab: $(STAMP)
	$(BIN)/python tools/colab.py

lint: $(STAMP)
	$(BIN)/ruff check rhn tests benchmarks book tools conftest.py
	$(BIN)/ruff format --check rhn tests benchmarks tools conftest.py

clean:
	rm -rf _build .pytest_cache
