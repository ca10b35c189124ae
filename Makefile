# Two entry points for a fresh machine (see README.md):
#   make book   set up .venv, install the pinned requirements, build the book
#   make test   set up .venv if missing, run the unit tests and the strict build
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: book test unit lint clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . -W --keep-going
	@echo "The book is at $(CURDIR)/_build/html/index.html"

unit: $(STAMP)
	$(BIN)/python -m pytest

test: unit book

lint: $(STAMP)
	$(BIN)/ruff check rhn tests
	$(BIN)/ruff format --check rhn tests

clean:
	rm -rf _build .pytest_cache
