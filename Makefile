# zonebake: `make run` builds the example zones in zones/ and serves them on 127.0.0.1:5300;
# `make test` runs the test suite. Both set up a virtualenv in .venv first.

PYTHON ?= python3
VENV := .venv
ZONEBAKE := $(VENV)/bin/zonebake
SOURCES := $(wildcard compiler/*.py compiler/templates/* runtime/*.c runtime/*.h)

.PHONY: all run test clean

all: build/zonebake-server

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $@

build/zonebake-server: $(VENV)/.installed zonebake.toml $(wildcard zones/*) $(SOURCES)
	$(ZONEBAKE) build -c zonebake.toml -o build

run: build/zonebake-server
	exec build/zonebake-server

test: $(VENV)/.installed
	$(VENV)/bin/python -m pytest -q

clean:
	rm -rf build $(VENV)
