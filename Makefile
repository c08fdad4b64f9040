# Private k-Means, Reproduced: the two commands are `make book` and `make test`.
# Each creates .venv on first use and installs the pinned dependencies into it.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(abspath $(VENV))/bin
STAMP  := $(VENV)/.installed
LOCK   := requirements/lock.txt
export PATH := $(BIN):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# The verified UCI files sit beside the repository in ../shared/data (when present).
export DPKMEANS_DATA ?= $(if $(wildcard ../shared/data),$(abspath ../shared/data),)

JB_FLAGS := -n -W --keep-going
PYTEST   := $(BIN)/python -m pytest
# The unit tests and the notebooks run on every core (pytest-xdist): the tests one by one,
# each worker taking the next waiting test; a notebook's cells all in one worker, in order.
TEST_WORKERS ?= auto
XDIST_UNIT := -n $(TEST_WORKERS) --dist worksteal
XDIST_NB   := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

.PHONY: help install compare-env dist test-wheel book book-force student student-edition notebooks test test-unit test-notebooks test-book test-browser browser-checks rehearse-publish book-checks pdf sandbox-tools benchmarks reproduce lock sync clean

help:
	@echo "make book       build the HTML book in _build/html (executes the notebooks that changed)"
	@echo "make book-force the same, executing every notebook"
	@echo "make student    the book without solutions, in _build/student/_build/html"
	@echo "make test       unit, property, statistical, notebook (nbval) and book tests"
	@echo "make test-browser  every page in headless Chromium, offline; screenshots in _build/screenshots"
	@echo "make pdf        the whole book as one printable PDF: _build/pdf/private-kmeans-reproduced.pdf"
	@echo "make rehearse-publish  the Pages workflow's build, offline, with no data (make test runs it)"
	@echo "make notebooks  re-execute every notebook and store its outputs (authors)"
	@echo "make sync       jupytext --sync every notebooks/*.py with its .ipynb"
	@echo "make reproduce  every paper-scale sweep, results and claims ledgers (resumable;"
	@echo "                SCHEDULER=tcp://HOST:8786 runs it on a Dask cluster)"
	@echo "make lock       refresh $(LOCK) and $(COMPARE_LOCK) from the installed environments"
	@echo "make compare-env  diffprivlib's own environment, $(COMPARE_VENV) (chapter 5's comparison)"
	@echo "make benchmarks the speed and memory benchmarks (benchmarks/README.md)"
	@echo "make dist       the wheel and source distribution of the library, in dist/"
	@echo "make test-wheel the wheel installed alone in a fresh environment, then with the dask extra"

# The library with the book's and the tests' extras, and the classroom package
# (src/dpkmeans_classroom, a project of its own: classroom/pyproject.toml), both editable.
$(STAMP): pyproject.toml classroom/pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e ".[book,test]" -e ./classroom
	touch $(STAMP)

install: $(STAMP)

# diffprivlib's environment (chapter 5's sweep and benchmark 2 only): diffprivlib 0.6.6 needs
# scikit-learn < 1.9, the book's environment has the newest scikit-learn
# (src/dpkmeans/papers/su/diffprivlib_env.py runs diffprivlib there).
COMPARE_VENV  := .venv-compare
COMPARE_LOCK  := requirements/compare-lock.txt
COMPARE_STAMP := $(COMPARE_VENV)/.installed

$(COMPARE_STAMP): pyproject.toml $(COMPARE_LOCK)
	test -x $(COMPARE_VENV)/bin/python || $(PYTHON) -m venv $(COMPARE_VENV)
	$(COMPARE_VENV)/bin/python -m pip install --quiet --upgrade "pip>=24"
	$(COMPARE_VENV)/bin/python -m pip install --quiet -c $(COMPARE_LOCK) -e ".[fast,compare]"
	touch $(COMPARE_STAMP)

compare-env: $(COMPARE_STAMP)

# What the book shows: BOOK_OUTPUTS=executed (the default) executes the notebooks (through the
# execution cache below); BOOK_OUTPUTS=stored shows the outputs stored in each .ipynb, executing
# nothing. make test uses the stored outputs, once test-notebooks has executed every notebook
# again and checked (nbval) that it prints exactly them: a second execution would repeat that.
BOOK_OUTPUTS  ?= executed
STORED_CONFIG := _build/stored_outputs_config.yml
# The jupyter-book flags of a build that must show what the HTML book shows (the PDF).
JB_OUTPUTS    := $(if $(filter stored,$(BOOK_OUTPUTS)),--config $(STORED_CONFIG),)

# An executed build first checks the data files the chapters read (chapters 10 and 11: the
# papers' datasets, `python -m dpkmeans datasets check --for-book`), fetching what it may: a
# missing file stops it there, in one line saying how to get it, not inside chapter 11.
# The execution cache (_build/.jupyter_cache, keyed by each notebook's cells) is cleared when
# anything a notebook reads changes: the library, the committed results, the book's sources.
CACHE       := _build/.jupyter_cache
CACHE_KEY   := _build/.cache-key
CACHE_INPUT := src data/results data/datasets.toml book _config.yml _toc.yml pyproject.toml $(LOCK)

book: $(STAMP)
	@mkdir -p _build
ifeq ($(BOOK_OUTPUTS),stored)
	$(BIN)/python book/_ext/book_config.py $(STORED_CONFIG) --stored-outputs
	rm -rf _build/html _build/jupyter_execute
	$(BIN)/jupyter-book build . $(JB_FLAGS) --config $(STORED_CONFIG)
	@echo "Book built from the notebooks' stored outputs: _build/html/index.html"
else
	@$(BIN)/python -m dpkmeans datasets check --for-book  # one line, before any chapter runs
	@key=$$( (find $(CACHE_INPUT) -type f -not -path '*/__pycache__/*' -print0 | sort -z \
	  | xargs -0 sha256sum; echo "DPKMEANS_DATA=$(DPKMEANS_DATA)") | sha256sum | cut -d' ' -f1); \
	if [ "$$(cat $(CACHE_KEY) 2>/dev/null)" != "$$key" ]; then \
	  echo "library, results or book sources changed: clearing the execution cache"; \
	  rm -rf $(CACHE); \
	fi; \
	rm -rf _build/html _build/jupyter_execute; \
	$(BIN)/jupyter-book build . $(JB_FLAGS) && echo "$$key" > $(CACHE_KEY)
	@echo "Book built: _build/html/index.html (its chapters link the PDF that make pdf adds)"
endif

# Every notebook executed again, whatever the cache holds.
book-force: $(STAMP)
	rm -rf _build
	$(MAKE) book

# The student edition: the same book without the solutions (sphinx-exercise's hide_solutions),
# from the same execution cache, in _build/student/_build/html. It carries neither the
# notebooks' sources nor the source archive: both hold the solutions.
STUDENT_CONFIG := _build/student_config.yml

student: book student-edition

student-edition: $(STAMP)
	$(BIN)/python book/_ext/book_config.py $(STUDENT_CONFIG) --student --cache $(CACHE) \
	  $(if $(filter stored,$(BOOK_OUTPUTS)),--stored-outputs,)
	rm -rf _build/student
	$(BIN)/jupyter-book build . $(JB_FLAGS) --config $(STUDENT_CONFIG) --path-output _build/student
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/book/test_student_edition.py
	@echo "Student edition built: _build/student/_build/html/index.html"

PAIRED := notebooks/*.py notebooks/sweeps/*.py notebooks/exercises/*.py

notebooks: $(STAMP)
	$(BIN)/jupytext --sync $(PAIRED)
	for nb in notebooks/*.ipynb notebooks/sweeps/*.ipynb notebooks/exercises/*.ipynb; do \
	  $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	    --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=600 "$$nb" || exit 1; \
	done

sync: $(STAMP)
	$(BIN)/jupytext --sync $(PAIRED)

test-unit: $(STAMP) $(COMPARE_STAMP) sandbox-tools
	$(PYTEST) $(XDIST_UNIT) tests --ignore=tests/book --ignore=tests/browser --ignore=tests/installed

# The assignment grader's sandbox (src/dpkmeans_classroom/sandbox.py): Debian's bubblewrap,
# installed when missing (root or sudo). Without it, grading falls back to resource limits and
# the attack tests that need bubblewrap are skipped, saying so.
SANDBOX_PACKAGES := bubblewrap

sandbox-tools:
	@if ! command -v bwrap >/dev/null 2>&1; then \
	  echo "installing Debian's $(SANDBOX_PACKAGES)"; \
	  $(SUDO) apt-get install -y -q $(SANDBOX_PACKAGES) >/dev/null \
	    || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q $(SANDBOX_PACKAGES) >/dev/null; } \
	    || echo "could not install bubblewrap: grading runs at the 'limits' level"; \
	fi

NBVAL := --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider \
  -p tests.nbval_order
DATA_NOTEBOOK := notebooks/90_datasets.ipynb
# The sweep cells that read a data file with their default parameters (the blood file for most,
# the heart file for DI's), as the papers' registry records say (src/dpkmeans/papers/<key>/):
# asked of the library when the recipe runs, once .venv exists.
SWEEP_DATA_NOTEBOOK = $(BIN)/python -m dpkmeans reproduce --data-notebooks

# The Datasets page's stored outputs were made with the verified files present; without them
# (no DPKMEANS_DATA) its availability cells differ, so it is then only checked to run cleanly.
# The sweep cells that read the data files are skipped without them. The notebooks run in one
# session, the longest first (tests/nbval_order.py), so that neither worker waits at the end.
test-notebooks: $(STAMP)
	@if [ -n "$(DPKMEANS_DATA)" ]; then \
	  echo "$(PYTEST) $(XDIST_NB) --nbval $(NBVAL) notebooks"; \
	  $(PYTEST) $(XDIST_NB) --nbval $(NBVAL) notebooks; \
	else \
	  sweep_data=$$($(SWEEP_DATA_NOTEBOOK)) || exit 1; \
	  ignore=$$(for nb in $$sweep_data; do printf ' --ignore=%s' "$$nb"; done); \
	  echo "$(PYTEST) $(XDIST_NB) --nbval $(NBVAL) --ignore=$(DATA_NOTEBOOK)$$ignore notebooks"; \
	  $(PYTEST) $(XDIST_NB) --nbval $(NBVAL) --ignore=$(DATA_NOTEBOOK) $$ignore notebooks || exit 1; \
	  echo "DPKMEANS_DATA is not set: checking $(DATA_NOTEBOOK) runs, not its outputs;"; \
	  echo "skipping" $$sweep_data "(they need the data files)"; \
	  $(PYTEST) --nbval-lax $(NBVAL) $(DATA_NOTEBOOK); \
	fi

# What a reader sees: every page in headless Chromium, offline (tests/browser), the built
# pages' TeX (tests/book/test_built_prose.py), and a link
# check. Debian's chromium, chromium-driver and an emoji font (the status page's check marks)
# are installed when missing (root or sudo).
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
BROWSER_PACKAGES := chromium chromium-driver fonts-noto-color-emoji
# LinkChecker started as root always switches to the user nobody (it has no option to keep
# root), and nobody cannot read a build inside a private folder such as a clone under /root:
# it checks a world-readable copy of _build/html in a fresh folder under /tmp, removed after.
LINKCHECKER := $(BIN)/linkchecker --no-status --no-warnings

test-browser: book pdf browser-checks

browser-checks: $(STAMP)
	@if ! dpkg -s $(BROWSER_PACKAGES) >/dev/null 2>&1; then \
	  echo "installing Debian's $(BROWSER_PACKAGES)"; \
	  $(SUDO) apt-get install -y -q $(BROWSER_PACKAGES) >/dev/null \
	    || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q $(BROWSER_PACKAGES) >/dev/null; }; \
	fi
	$(PYTEST) -q -p no:cacheprovider tests/browser tests/book/test_built_prose.py \
	  tests/book/test_built_launch.py
	@tmp=$$(mktemp -d /tmp/linkcheck.XXXXXX) && trap 'rm -rf "$$tmp"' EXIT \
	  && cp -RL _build/html "$$tmp/html" && chmod -R a+rX "$$tmp" \
	  && echo "LinkChecker: a readable copy of _build/html in $$tmp" \
	  && $(LINKCHECKER) "$$tmp/html/index.html"
	@echo "Screenshots: _build/screenshots/"

# The whole book as one printable PDF (book/_ext/print_pdf.py): Sphinx's single-page build (from
# the same execution cache as the HTML book) printed by headless Chromium, offline, with a title
# page, a table of contents and each chapter on a new page; then copied into the HTML book,
# whose chapter pages link it, and checked (tests/book/test_pdf.py, with poppler's tools).
# Debian's chromium, chromium-driver and poppler-utils are installed when missing.
PDF_PACKAGES := chromium chromium-driver poppler-utils
BOOK_PDF     := _build/pdf/private-kmeans-reproduced.pdf

pdf: book
	@if ! dpkg -s $(PDF_PACKAGES) >/dev/null 2>&1; then \
	  echo "installing Debian's $(PDF_PACKAGES)"; \
	  $(SUDO) apt-get install -y -q $(PDF_PACKAGES) >/dev/null \
	    || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q $(PDF_PACKAGES) >/dev/null; }; \
	fi
	rm -rf _build/singlehtml
	$(BIN)/jupyter-book build . $(JB_FLAGS) $(JB_OUTPUTS) --builder singlehtml
	$(BIN)/python book/_ext/print_pdf.py _build/singlehtml $(BOOK_PDF)
	mkdir -p _build/html/_downloads && cp $(BOOK_PDF) _build/html/_downloads/
	$(PYTEST) -q -p no:cacheprovider tests/book/test_pdf.py
	@echo "PDF: $(BOOK_PDF) (also _build/html/_downloads/)"

# Every paper-scale sweep of the book, then the papers' claims ledgers and audits, resumable
# (src/dpkmeans/reproduce.py; --restart to start over).
# SCHEDULER=tcp://HOST:8786 runs the cells on a Dask distributed cluster (docs/cluster.md).
reproduce: $(STAMP) $(COMPARE_STAMP)
	$(BIN)/python -m dpkmeans reproduce $(if $(SCHEDULER),--scheduler $(SCHEDULER),--jobs 2)

# The speed and memory benchmarks (benchmarks/README.md); benchmark 2 runs in $(COMPARE_VENV).
benchmarks: $(STAMP) $(COMPARE_STAMP)
	$(BIN)/python -m benchmarks.run

test-book: student test-browser

# The Pages workflow's build job (.github/workflows/book.yml), step by step as GitHub runs it,
# with no data folder, an empty download cache and the network off
# (book/_ext/rehearse_publish.py): it builds the HTML book and its PDF from the stored outputs.
rehearse-publish: $(STAMP)
	$(BIN)/python book/_ext/rehearse_publish.py .github/workflows/book.yml

# The book's checks on the build the rehearsal made: the student edition, every page in
# Chromium, the link check (test-book without building the book again).
book-checks: student-edition browser-checks

# The library as a package of its own: the wheel and source distribution in dist/, and the
# wheel installed alone in a fresh environment (tests/installed; its dependencies come from
# the package registry, at the lock's versions).
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	@ls -l dist

test-wheel: $(STAMP)
	$(PYTEST) -q -p no:cacheprovider tests/installed

# make test: the set-up (both environments installed at once), then the stages in two lanes side
# by side: the unit tests and then the notebooks, on every core (pytest-xdist); beside them the
# stages that mostly keep one process busy: the installed wheel, the rehearsal of the publishing
# build, the book's checks. Each stage prints its time ("make test: STAGE took N s", from its
# own start), the CPU time its processes used, and its output whole when it ends (make -O): the
# lanes' outputs do not mix. The book is built from the notebooks' stored outputs
# (BOOK_OUTPUTS=stored), which test-notebooks checks with nbval beside it: make test fails if
# that check does. A failing stage stops its lane, the stage running in the other lane ends,
# and make test fails.
TEST_CORE_LANE := test-unit test-notebooks
TEST_BOOK_LANE := test-wheel rehearse-publish book-checks
TEST_STAGE_ARGS_book-checks := BOOK_OUTPUTS=stored
TEST_TARGETS := $(addprefix test-stage/,$(TEST_CORE_LANE) $(TEST_BOOK_LANE))
.PHONY: $(TEST_TARGETS)

# Each stage after the one before it in its lane.
test-stage/test-notebooks: test-stage/test-unit
test-stage/rehearse-publish: test-stage/test-wheel
test-stage/book-checks: test-stage/rehearse-publish

$(TEST_TARGETS): test-stage/%:
	@t=$$(date +%s); $(MAKE) --no-print-directory $* $(TEST_STAGE_ARGS_$*); rc=$$?; \
	echo "make test: $* took $$(( $$(date +%s) - t )) s"; \
	cpu=$$(mktemp); times > "$$cpu"; awk -v stage=$* 'NR == 2 { \
	  split($$1, u, /[ms]/); split($$2, s, /[ms]/); \
	  printf "make test: %s used %.0f s of CPU\n", stage, u[1] * 60 + u[2] + s[1] * 60 + s[2] }' \
	  "$$cpu"; rm -f "$$cpu"; \
	if [ $$rc -ne 0 ]; then echo "make test: $* FAILED (exit $$rc)"; fi; exit $$rc

test:
	@t=$$(date +%s); \
	$(MAKE) --no-print-directory -j2 -Orecurse $(STAMP) $(COMPARE_STAMP) sandbox-tools || exit 1; \
	echo "make test: set-up took $$(( $$(date +%s) - t )) s"
	@$(MAKE) --no-print-directory -j2 -Orecurse $(lastword $(addprefix test-stage/,$(TEST_CORE_LANE))) \
	  $(lastword $(addprefix test-stage/,$(TEST_BOOK_LANE)))

# The locks keep their header (the comment lines at the top: which pins are held back and why).
lock: $(STAMP) $(COMPARE_STAMP)
	mkdir -p requirements
	{ grep '^#' $(LOCK); $(BIN)/python -m pip freeze --exclude-editable | grep -v '^-e '; } \
	  > $(LOCK).new && mv $(LOCK).new $(LOCK)
	{ grep '^#' $(COMPARE_LOCK); \
	  $(COMPARE_VENV)/bin/python -m pip freeze --exclude-editable | grep -v '^-e '; } \
	  > $(COMPARE_LOCK).new && mv $(COMPARE_LOCK).new $(COMPARE_LOCK)

clean:
	rm -rf _build .pytest_cache dist
