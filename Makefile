# The two commands a newcomer needs: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
PO_FILES := $(wildcard locales/*/LC_MESSAGES/*.po)
MO_FILES := $(PO_FILES:.po=.mo)

.PHONY: run test bench lint migrate install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip 2>&1 | grep -v "Location" || true

# Installs only when pyproject.toml changed: a second `make run` takes seconds.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e . 2>&1 | grep -v "Location" || true
	$(BIN)/python -c "import bot, providers, stream"
	touch $@

$(TEST_STAMP): pyproject.toml $(STAMP)
	$(BIN)/pip install -q -e '.[test]' 2>&1 | grep -v "Location" || true
	$(BIN)/python -c "import pytest, hypothesis"
	touch $@

# Compiled catalogs are build output, made at install time from the committed .po files.
locales/%.mo: locales/%.po $(STAMP)
	$(BIN)/pybabel -q compile -i $< -o $@

install: $(STAMP) $(MO_FILES)

migrate: install
	$(BIN)/python -m bot.migrate

run: migrate
	$(BIN)/python -m bot

test: $(TEST_STAMP) $(MO_FILES)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

lint: $(TEST_STAMP)
	$(BIN)/ruff check .

# bench/harness.py is the benches' shared timing and results code, not a bench.
bench: $(TEST_STAMP) $(MO_FILES)
	@for f in $(filter-out bench/harness.py,$(wildcard bench/*.py)); do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
