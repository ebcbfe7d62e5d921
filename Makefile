# Two commands do all the set-up on a fresh Debian machine:
#   make run    build the bundled demo cluster into out/demo/
#   make test   run the test suite (pytest-xdist: independent tests side by side)
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SPEC ?= templates/clusters/demo.yaml

.PHONY: run test bench clean

# pip -qq: errors only (setuptools prints an informational banner on editable installs)
$(BIN)/topogen: pyproject.toml setup.py
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -qq --upgrade pip
	$(BIN)/pip install -qq -e '.[test]'
	touch $(BIN)/topogen

run: $(BIN)/topogen
	$(BIN)/topogen build $(SPEC)

# every test, side by side on up to 4 workers (one per core; tests/conftest.py keeps each file's
# shared builds on one worker and the FRR emulations on one worker)
test: $(BIN)/topogen
	$(BIN)/python -m pytest -n auto --maxprocesses 4 --dist loadgroup

bench: $(BIN)/topogen
	$(BIN)/python bench/bench.py

clean:
	rm -rf $(VENV) out
