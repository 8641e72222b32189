# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup gpu demo test lint typecheck unit clean

$(STAMP): pyproject.toml scripts/setup.sh
	./scripts/setup.sh
	touch $(STAMP)

setup: $(STAMP)

gpu:  ## .venv-gpu on a CUDA machine: the current vLLM on its CUDA build of torch
	./scripts/setup.sh --gpu

demo: $(STAMP)  ## run the nightly pipeline on the embedded demo data
	$(BIN)/planbake nightly

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/python -m pytest -q --hypothesis-profile=ci

test: lint typecheck unit  ## ruff, mypy and the test suite

clean:
	rm -rf data/out .pytest_cache .mypy_cache .ruff_cache
