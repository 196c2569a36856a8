# oraclegap: one venv-based workflow (conda users: see environment.yml).
#   make test    create .venv if needed, install, run the test suite
#   make book    execute every chapter and render the book into _book/
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.oraclegap-installed
LAB_STAMP := $(VENV)/.oraclegap-lab-installed
# Chapters run on embedded data; set OG_EXTERNAL_DIR to add the real-LLM sections.
ifeq ($(origin OG_EXTERNAL_DIR), undefined)
  ifneq ($(wildcard ../shared/external),)
    export OG_EXTERNAL_DIR := $(abspath ../shared/external)
  endif
endif
# Notebook runs: Agg would swallow inline figures; keep matplotlib's cache inside the project.
unexport MPLBACKEND
export MPLCONFIGDIR := $(abspath .mplconfig)
PYTEST_ARGS ?= -q -n 2 --dist loadfile
BENCH_ARGS ?=
# e.g. make book BOOK_ARGS='--small' or BOOK_ARGS='--only 02 -p POOL my_pool'
BOOK_ARGS ?=

.PHONY: setup test book check-book lab data bench lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[book,dev,rollouts]'
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (oraclegap)" >/dev/null
	touch $@

test: setup
	mkdir -p $(MPLCONFIGDIR)
	$(PY) -m pytest $(PYTEST_ARGS)

book: setup
	mkdir -p $(MPLCONFIGDIR)
	$(PY) -m oraclegap.book build $(BOOK_ARGS)

check-book: setup
	@command -v chromium >/dev/null 2>&1 || { echo "installing Debian's chromium for the page check"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	$(PY) -m oraclegap.book check

$(LAB_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[book,dev,lab]'
	touch $@

# make lab: rebuild the policy lab into data/lab/ from scratch (tasks, bases, GRPO pools, soups,
# sampling, pools; time per stage printed), then its reduced reference data/lab/reference/ that
# the tests rebuild in one process (the reference uses two: outputs must not depend on it). LAB_ARGS= (empty) resumes an interrupted build instead; e.g. LAB_ARGS='--workers 4'.
LAB_ARGS ?= --fresh
lab: $(LAB_STAMP)
	$(PY) -m oraclegap.lab build $(LAB_ARGS)
	$(PY) -m oraclegap.lab build --reduced --workers 2 $(LAB_ARGS)

data: setup
	$(PY) -m oraclegap.datasets fetch

bench: setup
	@for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f $(BENCH_ARGS) || exit 1; done

lint: setup
	$(BIN)/ruff check lib tests notebooks bench

clean:
	rm -rf chapters _book .quarto notebooks/*.ipynb .pytest_cache .hypothesis .mplconfig
