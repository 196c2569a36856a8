# oraclegap: one venv-based workflow (conda users: see environment.yml).
#   make setup   create .venv and install the pinned environment from requirements.lock (exact
#                versions with hashes), then the project itself without dependencies, and compile
#                the audit's numba kernels into their on-disk cache
#   make lock    regenerate requirements.lock (CPU) and requirements-gpu.lock (vllm) with pip-tools
#   make test    create .venv if needed, install, find or install Quarto, run the test suite
#   make test-fast  the same without the tests marked slow (under 2 minutes on 2 cores)
#   make study   run the verdict study (audits of simulated pools of known truth) into data/study/
#   make book    execute the chapters whose inputs changed and render the book into _book/, with
#                the classroom kit: the student edition, the slides and a PDF (when Chromium is there)
#   make notebooks  execute the chapters whose inputs changed into chapters/ (no Quarto, no render)
#   make quarto  find Quarto (PATH, .quarto-kit/) or install it (the kit at $OG_QUARTO_KIT,
#                default ../shared/tools/quarto; else PyPI quarto-cli); says which, never fails
SHELL := /bin/bash
comma := ,
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
STAMP := $(VENV)/.oraclegap-installed
# The pinned CPU environment (make lock). pyproject.toml keeps the ranges for library users.
LOCK := requirements.lock
GPU_LOCK := requirements-gpu.lock
PIP_TOOLS := pip-tools==7.6.2
PIP_VERSION := pip==26.3
UV := uv==0.13.8
EXTRAS := book,dev,rollouts,lab,embed
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
# e.g. make book BOOK_ARGS='--small', BOOK_ARGS=--force (re-execute every chapter) or
# BOOK_ARGS='--only 02 -p POOL my_pool'
BOOK_ARGS ?=
# The offline Quarto kit (install.sh PREFIX); `make quarto` installs it into .quarto-kit/ once.
OG_QUARTO_KIT ?= $(abspath ../shared/tools/quarto)
export OG_QUARTO_KIT

.PHONY: setup lock quarto test test-fast book notebooks slides chromium check-book pdf lab study data bench lint audit clean distclean

setup: $(STAMP)

$(STAMP): pyproject.toml $(LOCK)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(PIP_VERSION)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
	$(PY) -m pip check
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (oraclegap)" >/dev/null
	@echo "setup: compiling the audit's numba kernels into their cache (once; about 40 s)"
	$(PY) -c "from oraclegap.audit.compute import warm_kernels; warm_kernels()"
	touch $@

# Exact versions with hashes. The CPU lock is resolved by pip (pip-tools), so pip's configuration
# decides where torch==2.13.0 comes from (here: a local CPU wheel). The GPU lock (vllm with its own
# CUDA torch) is resolved by uv against the package index alone, for Linux x86-64 and Python 3.11:
# pip's resolver needed over 25 minutes on vllm's dependency tree, uv about 10 seconds.
lock:
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(PIP_VERSION) $(PIP_TOOLS) $(UV)
	$(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
	  --no-emit-find-links $(foreach e,$(subst $(comma), ,$(EXTRAS)),--extra $(e)) -o $(LOCK) pyproject.toml
	grep -v '^-e ' requirements-gpu.txt > $(VENV)/requirements-gpu.in
	env -u PIP_FIND_LINKS $(BIN)/uv pip compile --quiet --generate-hashes --python-version 3.11 \
	  --python-platform x86_64-manylinux_2_28 -o $(GPU_LOCK) $(VENV)/requirements-gpu.in

# Quarto for the book and its tests: found or installed once (a no-op when the stamp exists).
quarto: setup
	@$(PY) -m oraclegap.book quarto

test: setup quarto
	mkdir -p $(MPLCONFIGDIR)
	$(PY) -m pytest $(PYTEST_ARGS)

# The fast lane: every test but those marked slow (each over ~4 s on 2 cores: chapter runs,
# renders, killed processes, calibration loops).
test-fast: setup quarto
	mkdir -p $(MPLCONFIGDIR)
	$(PY) -m pytest $(PYTEST_ARGS) -m "not slow"

book: setup quarto
	mkdir -p $(MPLCONFIGDIR)
	$(PY) -m oraclegap.book build $(BOOK_ARGS)

# The chapters executed (cached as for make book) into chapters/ and not rendered: no Quarto needed.
# e.g. make notebooks BOOK_ARGS='--small --only 02 -p K 64'
notebooks: setup
	mkdir -p $(MPLCONFIGDIR)
	$(PY) -m oraclegap.book build --no-render $(BOOK_ARGS)

# Every parameter change the book promises to survive (oraclegap.book.params), executed at --small
# into .cache/check-params/ and read by the prose checks; unchanged runs come from the cache. CI
# runs it after `make test` (it takes longer than the test budget). e.g. CHECK_PARAMS_ARGS='--only 03'
.PHONY: check-params
check-params: setup
	mkdir -p $(MPLCONFIGDIR)
	$(PY) -m oraclegap.book check-params $(CHECK_PARAMS_ARGS)

chromium:
	@command -v chromium >/dev/null 2>&1 || { echo "installing Debian's chromium for the page check"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The site make book last built, each page in headless Chromium: the book, its student edition
# (_book/student/) and slides (_book/slides/). Nothing is rebuilt: run make book first.
check-book: setup chromium
	$(PY) -m oraclegap.book check

# The class deck (revealjs), block by block as the instructors' 90-minute plan goes, into _slides/
# and, when the site is built, into it (_book/slides/; make book renders it there too).
slides: setup quarto
	$(PY) -m oraclegap.book slides

# A PDF of the rendered book (Chromium prints each page, pypdf joins them) into _book/oraclegap.pdf,
# linked from every page; make book makes it too when Chromium is there.
pdf: setup chromium
	$(PY) -m oraclegap.book pdf

# make lab: rebuild the policy lab into data/lab/ from scratch (tasks, bases, GRPO pools, soups,
# sampling, pools; time per stage printed), then its reduced reference data/lab/reference/ that
# the tests rebuild in one process (the reference uses two: outputs must not depend on it). LAB_ARGS= (empty) resumes an interrupted build instead; e.g. LAB_ARGS='--workers 4'.
LAB_ARGS ?= --fresh
lab: setup
	$(PY) -m oraclegap.lab build $(LAB_ARGS)
	$(PY) -m oraclegap.lab build --reduced --workers 2 $(LAB_ARGS)

# The verdict study (data/study/, committed; resumable: cells are kept in .cache/study/).
# e.g. make study STUDY_ARGS='--pools 10 --jobs 2'
STUDY_ARGS ?=
study: setup
	$(PY) -m oraclegap.audit.study $(STUDY_ARGS)

data: setup
	$(PY) -m oraclegap.datasets fetch

bench: setup
	@for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f $(BENCH_ARGS) || exit 1; done

# e.g. make audit POOL=my_pool OUT=audit-my_pool AUDIT_ARGS='--small'
POOL ?= chen2026-math500
OUT ?= audit-$(notdir $(POOL))
AUDIT_ARGS ?=
audit: setup
	mkdir -p $(MPLCONFIGDIR)
	$(BIN)/oraclegap audit $(POOL) --out $(OUT) $(AUDIT_ARGS)

lint: setup
	$(BIN)/ruff check lib tests notebooks bench
	$(BIN)/mypy  # the public modules: pool/, stats/, deploy/ ([tool.mypy] in pyproject.toml)

clean:
	rm -rf chapters _book _book-student _slides .quarto notebooks/*.ipynb .pytest_cache .hypothesis .mplconfig screenshots

# also the Quarto installed from the kit
distclean: clean
	rm -rf .quarto-kit
