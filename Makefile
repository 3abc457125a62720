# zonebake: `make run` builds the example zones in zones/ and serves them on 127.0.0.1:5300;
# `make test` runs the test suite. Both set up a virtualenv in .venv first.

PYTHON ?= python3
VENV := .venv
ZONEBAKE := $(VENV)/bin/zonebake
SOURCES := $(wildcard compiler/*.py compiler/templates/* compiler/bake/* runtime/*.c runtime/*.h)

# The end-to-end tests run a second time against a server built with ASan and UBSan, and
# the native baker's tests against a baker built so.
SANITIZED_TESTS := tests/test_udp_answers.py tests/test_udp_protocol.py \
	tests/test_udp_resolution.py tests/test_edns.py tests/test_tcp.py tests/test_example_zones.py \
	tests/test_workers.py tests/test_signals.py tests/test_stats.py tests/test_chaos.py \
	tests/test_swap.py tests/test_activation.py tests/test_privileges.py \
	tests/test_native.py tests/test_native_random.py tests/test_native_fuzz.py \
	tests/test_native_reading.py \
	tests/test_elfsplice.py
FUZZ_SECONDS ?= 60

.PHONY: all run test fuzz bench clean

all: build/zonebake-server

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $@

build/zonebake-server: $(VENV)/.installed zonebake.toml $(wildcard zones/*) $(SOURCES)
	$(ZONEBAKE) build -c zonebake.toml -o build

# As root, the server needs --allow-root to go on as root (see README, Privileges).
run: build/zonebake-server
	exec build/zonebake-server $(if $(filter 0,$(shell id -u)),--allow-root)

test: $(VENV)/.installed
	$(VENV)/bin/python -m pytest -q
	ZONEBAKE_SANITIZE=1 $(VENV)/bin/python -m pytest -q $(SANITIZED_TESTS)

# Fuzz the request handler (clang with libFuzzer): make fuzz FUZZ_SECONDS=600
fuzz: $(VENV)/.installed
	PYTHON=$(VENV)/bin/python tests/fuzz/run.sh $(FUZZ_SECONDS)

# The benchmark against Knot, NSD, gdnsd and an echo reflector (tests/bench/run.py).
bench: $(VENV)/.installed
	tests/bench/install.sh
	$(VENV)/bin/python tests/bench/run.py

clean:
	rm -rf build $(VENV)
