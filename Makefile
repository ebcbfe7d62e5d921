# Two commands do all the set-up on a fresh Debian machine:
#   make run    build the bundled demo cluster into out/demo/
#   make test   run the test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SPEC ?= templates/clusters/demo.yaml

.PHONY: run test bench clean

$(BIN)/topogen: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(BIN)/topogen

run: $(BIN)/topogen
	$(BIN)/topogen build $(SPEC)

test: $(BIN)/topogen
	$(BIN)/python -m pytest

bench: $(BIN)/topogen
	$(BIN)/python bench/bench.py

clean:
	rm -rf $(VENV) out
