# Two entry points, both self-contained on a fresh machine (Python 3.11 and make):
#   make book  -- set up .venv, execute every chapter with papermill (profile quick),
#                 render the reproducibility report, build the HTML (_build/html) with -W
#   make test  -- set up .venv, then every test: nbval re-executes the chapters and
#                 compares their checked outputs; unit, regression, pixel and ledger tests
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export PYTHONHASHSEED := 0

.PHONY: book test setup chapters report html pdf clean regen-baselines mutation lint lab

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch alone first: the CPU wheel of this exact version is on the machines' disk
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	# the browser check of the built book (tests/test_browser.py) drives Debian's Chromium
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		apt-get install -y -q chromium chromium-driver >/dev/null || \
		(apt-get update -q >/dev/null && apt-get install -y -q chromium chromium-driver >/dev/null)
	touch $(STAMP)

chapters: $(STAMP)
	$(BIN)/python -m icdl.repro.execute

report: $(STAMP)
	$(BIN)/python -m icdl.repro.report book/generated/ledger_table.md book/generated/summary.md
	$(BIN)/python -m icdl.repro.errata book/generated/errata_entries.md book/generated/errata_summary.md

# the old pages go first: a rebuild leaves the images of figures no chapter shows any more in _build/html/_images
html: $(STAMP) report
	rm -rf _build/html
	$(BIN)/jupyter-book build . --all -W --keep-going

book: chapters
	$(MAKE) html
	$(MAKE) pdf

# the built book printed to one PDF (_build/html/_static/icdl-book.pdf, linked from the first page) by the headless
# Chromium the browser tests use; run after `html`
pdf: $(STAMP)
	$(BIN)/python -m icdl.repro.pdf

# ruff first (seconds); the book is built next (the browser check opens it in headless Chromium);
# then nbval re-executes each chapter once (writing its ledger records), and the rest of the suite
# checks those records, the figures' numbers, the pixels, the rendered pages, the import graph and
# that every mutant of tests/mutation.py still applies (tests/test_mutation_catalogue.py).
test: $(STAMP)
	$(BIN)/ruff check src tests notebooks
	$(MAKE) html
	$(MAKE) pdf
	$(BIN)/python -m pytest --nbval-lax --nbval-sanitize-with tests/nbval_sanitize.cfg \
		--nbval-kernel-name python3 --mpl --durations=10 notebooks tests

lint: $(STAMP)
	$(BIN)/ruff check src tests notebooks

# JupyterLab on this machine (127.0.0.1:8888) with the chapters' kernel, jupytext (open a chapter's .py or its
# paired .ipynb; saving writes both, by jupytext.toml) and jupyterlab-myst (the book's MyST renders in Lab);
# --allow-root only when run as root
lab: $(STAMP)
	$(BIN)/jupyter lab --ip 127.0.0.1 --no-browser --notebook-dir . $(if $(filter 0,$(shell id -u)),--allow-root)

# Mutation testing of the core modules (tests/mutation.py): about 20 minutes; writes
# results/mutation/mutation.json and fails below a 90 % score.
mutation: $(STAMP)
	$(BIN)/python tests/mutation.py

# Rewrite the numeric (pytest-regressions) and pixel (pytest-mpl) baselines after an
# intended change; review the diff of tests/ before committing it.
regen-baselines: $(STAMP)
	-$(BIN)/python -m pytest tests -q --force-regen -p no:cacheprovider
	$(BIN)/python -m pytest tests -q -m mpl_image_compare --mpl-generate-path=tests/baseline

clean:
	rm -rf _build runs book/generated
