# The two commands a newcomer needs: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
READY := $(VENV)/.ready
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
PO_FILES := $(wildcard locales/*/LC_MESSAGES/*.po)
MO_FILES := $(PO_FILES:.po=.mo)
# A step that fails stops make with its status, and a stamp is touched only after its
# step succeeded, so the next `make run` or `make test` picks up where the last one
# failed (no `make clean` needed); a half-written catalog is deleted.
SHELL := bash
.SHELLFLAGS := -o pipefail -c
.DELETE_ON_ERROR:
NEEDED_PYTHON := 3.11
PYTHON_OK := import sys; sys.exit(sys.version_info < (3, 11))

.PHONY: run test bench lint migrate install clean check settings-doc

# The virtualenv, made again when it is missing, broken (no pip) or from an older Python;
# an unsupported $(PYTHON) stops here with one line instead of a failed install later.
$(READY):
	@if ! { $(BIN)/python -c '$(PYTHON_OK)' && $(BIN)/python -m pip --version; } >/dev/null 2>&1; then \
	  if ! $(PYTHON) -c '$(PYTHON_OK)' >/dev/null 2>&1; then \
	    echo "Python $(NEEDED_PYTHON) or newer is needed, and $(PYTHON) is $$($(PYTHON) -V 2>&1 | head -n 1 || echo missing): run make PYTHON=python$(NEEDED_PYTHON) $(or $(MAKECMDGOALS),run)" >&2; \
	    exit 2; \
	  fi; \
	  echo "creating $(VENV) with $$($(PYTHON) -V 2>&1)"; \
	  rm -rf $(VENV) && $(PYTHON) -m venv $(VENV); \
	fi
	$(BIN)/python -m pip install -q --upgrade pip 2>&1 | { grep -v "Location" || true; }
	touch $@

# Installs only when pyproject.toml changed: a second `make run` takes seconds.
$(STAMP): pyproject.toml $(READY)
	$(BIN)/pip install -q -e . 2>&1 | { grep -v "Location" || true; }
	$(BIN)/python -I -c "import bot, providers, stream"
	touch $@

$(TEST_STAMP): pyproject.toml $(STAMP)
	$(BIN)/pip install -q -e '.[test]' 2>&1 | { grep -v "Location" || true; }
	$(BIN)/python -I -c "import pytest, hypothesis"
	touch $@

# Compiled catalogs are build output, made at install time from the committed .po files.
locales/%.mo: locales/%.po $(STAMP)
	$(BIN)/pybabel -q compile -i $< -o $@

install: $(STAMP) $(MO_FILES)

migrate: install
	$(BIN)/python -m bot.migrate

run: migrate
	$(BIN)/python -m bot

# The first check after setting a key: one question to the default route (DEFAULT_TEXT_* in
# .env), streamed to this terminal; no Discord token, no database. make ask Q="hello"
ask: install
	@$(BIN)/python -m bot ask "$(Q)"

# Every capability of the default route (text, tools, reasoning, web search, images, PDFs),
# one small live request each, as a table; exit status 1 when one failed. make check
check: install
	@$(BIN)/python -m bot check

test: $(TEST_STAMP) $(MO_FILES)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

lint: $(TEST_STAMP)
	$(BIN)/ruff check .

# bench/harness.py is the benches' shared timing and results code, not a bench.
bench: $(TEST_STAMP) $(MO_FILES)
	@for f in $(filter-out bench/harness.py,$(wildcard bench/*.py)); do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# docs/settings.md, written from bot/settings.py's Settings class (a test fails when it is stale).
settings-doc: install
	$(BIN)/python -m bot.settings_reference > docs/settings.md.new && mv docs/settings.md.new docs/settings.md

clean:
	rm -rf $(VENV) build *.egg-info
