# The two commands of the README: `make demo` and `make test`. Both set up a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test test-versions test-all system-deps gallery bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m dcgraph demo

# Graphviz (for SVG output) and Chromium (for the HTML explorer's browser test), when missing.
system-deps:
	@command -v dot >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq graphviz >/dev/null; }
	@{ command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } || \
	  { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium chromium-driver >/dev/null; } || \
	  echo "warning: chromium could not be installed; the browser test will be skipped"

test: $(STAMP) system-deps
	$(PY) -m pytest -q

# The suite on every supported interpreter pyenv keeps (3.11, 3.12, 3.13 by default: VERSIONS=...),
# each in its own venv under $(VENVS); the first found runs in full, the others with
# DCGRAPH_SUITE_SIZE=small (a quarter of the generated programs; every corpus still warm-runs 120
# times). CI runs `make test` on the default interpreter, then this for the other versions.
PYENV_ROOT  ?= $(HOME)/.pyenv
VERSIONS    ?= 3.11 3.12 3.13
VENVS       ?= .venvs
PYTEST_ARGS ?= -q
SIZE        ?= full

test-versions: system-deps
	@set -e; size=$(SIZE); found=0; \
	for v in $(VERSIONS); do \
	  root=$$(ls -d $(PYENV_ROOT)/versions/$$v.* 2>/dev/null | sort -V | tail -n 1); \
	  if [ -z "$$root" ]; then echo "== Python $$v: not under $(PYENV_ROOT)/versions, skipped"; continue; fi; \
	  venv=$(VENVS)/py$$v; \
	  if [ ! $$venv/.installed -nt pyproject.toml ]; then \
	    $$root/bin/python3 -m venv $$venv && $$venv/bin/python -m pip install -q --upgrade pip \
	    && $$venv/bin/python -m pip install -q -e '.[dev]' && touch $$venv/.installed; \
	  fi; \
	  echo "== Python $$($$venv/bin/python -c 'import platform; print(platform.python_version())') (suite size: $$size)"; \
	  DCGRAPH_SUITE_SIZE=$$size $$venv/bin/python -m pytest $(PYTEST_ARGS); \
	  size=small; found=1; \
	done; \
	if [ $$found = 0 ]; then echo "test-versions: no supported interpreter found"; exit 1; fi

# Long statistical runs too (marked slow).
test-all: $(STAMP) system-deps
	$(PY) -m pytest -q -m ''

gallery: $(STAMP) system-deps
	$(PY) viz/make_gallery.py

bench: $(STAMP)
	$(PY) benchmarks/bench_track.py

clean:
	rm -rf $(VENV) $(VENVS) build *.egg-info viz/gallery
