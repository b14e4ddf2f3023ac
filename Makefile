# The two commands of the README: `make demo` and `make test`. Both set up a fresh machine.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test test-all system-deps gallery bench clean

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

# Long statistical runs too (marked slow).
test-all: $(STAMP) system-deps
	$(PY) -m pytest -q -m ''

gallery: $(STAMP) system-deps
	$(PY) viz/make_gallery.py

bench: $(STAMP)
	$(PY) benchmarks/bench_track.py

clean:
	rm -rf $(VENV) build *.egg-info viz/gallery
