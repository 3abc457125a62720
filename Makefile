# zonebake: `make run` builds the example zones in zones/ and serves them on 127.0.0.1:5300;
# `make test` runs the test suite. Both set up a virtualenv in .venv first.

PYTHON ?= python3
VENV := .venv
ZONEBAKE := $(VENV)/bin/zonebake
SOURCES := $(wildcard compiler/*.py compiler/*/*.py compiler/templates/* compiler/core/*.[ch] \
	compiler/core/*/*.[ch] runtime/*.[ch] runtime/*/*.[ch] runtime/*/*/*.[ch])

# The tests of the core, the toolchain, end to end and of operations run a second time, with
# the core and the server built with ASan and UBSan; so do the AF_XDP frame layer's, whose
# C harness reads hostile frames, and the server's over AF_XDP.
SANITIZED_TESTS := tests/core tests/toolchain tests/e2e tests/ops tests/unit/test_xdp_frame.py \
	tests/transport/test_xdp_server.py tests/transport/test_xdp_swap.py
# Not twice: two tests that build plain and sanitized servers themselves, whatever the
# environment says, one that waits out the control socket's 20-second limit, which a
# sanitizer does not change (41 s of the second pass), and the rebuild without the driver's,
# which runs the core the rest of the pass sanitizes, and would wait out its record's two
# seconds once per test, a sanitized link naming its directory (45 s).
SANITIZED_ONCE := \
	--deselect tests/core/test_driverless.py \
	--deselect tests/toolchain/test_cc.py::test_sanitized_builds_have_objects_of_their_own \
	--deselect tests/toolchain/test_cc.py::test_concurrent_cold_builds_share_one_entry \
	--deselect tests/ops/test_control_access.py::test_a_trickling_client_is_cut_off_and_the_next_one_served
FUZZ_SECONDS ?= 60

.PHONY: all run test fuzz bench man clean

all: build/zonebake-server

# setuptools says, as information, how an editable install of a package in a folder of another
# name (compiler/) is found: nothing to act on, so not shown. It finds it through an import
# hook whose own imports (pathlib, re, importlib.util) took 9 ms of every start of the
# interpreter, a fifth of a rebuild's: its .pth names a folder of links instead, zonebake to
# compiler/ and runtime/ beside it, as a checkout lays them out.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	PYTHONWARNINGS=ignore $(VENV)/bin/pip install --quiet -e '.[test]'
	mkdir -p $(VENV)/checkout
	ln -sfn "$(CURDIR)/compiler" $(VENV)/checkout/zonebake
	ln -sfn "$(CURDIR)/runtime" $(VENV)/checkout/runtime
	for pth in $(VENV)/lib/python*/site-packages/__editable__.zonebake-*.pth; do \
		echo "$(CURDIR)/$(VENV)/checkout" > "$$pth"; done
	touch $@

build/zonebake-server: $(VENV)/.installed zonebake.toml $(wildcard zones/*) $(SOURCES)
	$(ZONEBAKE) build -c zonebake.toml -o build

# As root, the server needs --allow-root to go on as root (docs/hardening.rst, Privileges).
run: build/zonebake-server
	exec build/zonebake-server $(if $(filter 0,$(shell id -u)),--allow-root)

# The package's bytecode first: an editable install leaves none, and where
# PYTHONDONTWRITEBYTECODE is set, each of the suite's thousands of `zonebake` runs would
# compile every module of it again (30 ms a run).
test: $(VENV)/.installed
	$(VENV)/bin/python -m compileall -q compiler >/dev/null
	$(VENV)/bin/python -m pytest -q
	ZONEBAKE_SANITIZE=1 $(VENV)/bin/python -m pytest -q $(SANITIZED_TESTS) $(SANITIZED_ONCE)

# Every libFuzzer target (clang), FUZZ_SECONDS each: the request handler, the AF_XDP frame
# layer, the compiler core's zone-file reader, the whole core on small zone sets.
# make fuzz FUZZ_SECONDS=1800
fuzz: $(VENV)/.installed
	for target in respond frame reader core; do \
		PYTHON=$(VENV)/bin/python tests/fuzz/run.sh $$target $(FUZZ_SECONDS) || exit 1; \
	done

# The benchmark against Knot, NSD, gdnsd and an echo reflector (tests/bench/run.py), then
# zonebake against the reflector at 100, 100,000 and 1,000,000 names (tests/bench/sizes.py).
bench: $(VENV)/.installed
	tests/bench/install.sh
	$(VENV)/bin/python tests/bench/run.py
	$(VENV)/bin/python tests/bench/sizes.py

# The man pages zonebake(1), zonebake-server(8) and zonebake.toml(5) in man/, made
# from the manual's sources in docs/ with docutils (the test extra). They are committed, so
# that installing needs no docutils; tests/docs checks they are what this makes.
man: $(VENV)/.installed
	$(VENV)/bin/python docs/manpages.py man

clean:
	rm -rf build $(VENV)
