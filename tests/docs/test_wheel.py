"""What a user gets from `pip install`: a wheel built from the checkout, installed into a
fresh virtualenv, gives the `zonebake` command and its man pages, and builds and serves the
example zones from an empty directory.

Offline, as CI and the tests run: the wheel is built with --no-build-isolation (the test
extra brings setuptools), installed with --no-deps --no-index, and the new venv finds the
dependencies (dnspython, cryptography, Jinja2) through a .pth line naming this venv's
site-packages. A .pth line is appended after the new venv's own site-packages, so the
installed zonebake is the one imported, and it runs none of this venv's own .pth hooks (the
editable install's finder): unlike PYTHONPATH, it needs nothing set in the environment of
each command, as a user's shell would not have it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import dns.rcode
import pytest

from conftest import ROOT, Server, require
from zonebake.core import driverless

# What the wheel is built from: the checkout without what is not the package's.
NOT_PACKAGED = shutil.ignore_patterns(".git", ".venv", "build", "tests", "__pycache__",
                                      "*.egg-info", ".pytest_cache")


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                            timeout=300, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, args))}:\n{result.stdout}{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """A wheel of the checkout installed into a fresh venv, and an empty directory with the
    example set where a user's shell would build it: (venv, directory, environment)."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=NOT_PACKAGED)
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
        "--no-index", "--wheel-dir", tmp_path / "dist", source)
    (wheel,) = (tmp_path / "dist").glob("zonebake-*.whl")

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
        "--no-index", wheel)
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
                .stdout.strip())
    (site / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    # An empty directory, a user's shell: the venv's bin on PATH, no caches yet.
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(ROOT / "zones", work / "zones")
    shutil.copy(ROOT / "zonebake.toml", work)
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "MANPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               XDG_CACHE_HOME=str(tmp_path / "cache"), MANPAGER="cat", MANWIDTH="80")
    return venv, work, env


def test_a_wheel_of_the_checkout_installs_the_command_and_man_pages_and_serves(installed):
    (man,) = require("man-db", "man")
    venv, work, env = installed
    python = venv / "bin" / "python"
    imported = run(python, "-c", "import zonebake; print(zonebake.__file__)", env=env, cwd=work)
    assert Path(imported.stdout.strip()).is_relative_to(venv), imported.stdout
    shown = run("zonebake", "--help", env=env, cwd=work)
    assert "build" in shown.stdout and "deploy" in shown.stdout

    # The man pages, where man-db looks for a bin directory on PATH.
    for name, section in (("zonebake", 1), ("zonebake-server", 8), ("zonebake.toml", 5)):
        page = venv / "share" / "man" / f"man{section}" / f"{name}.{section}"
        assert run(man, "-w", name, env=env, cwd=work).stdout.strip() == str(page)
        rendered = run(man, "-l", page, env=env, cwd=work)
        assert not rendered.stderr and f"{name} - " in " ".join(rendered.stdout.split())

    run("zonebake", "build", "-q", "-c", "zonebake.toml", "-o", "build", env=env, cwd=work)
    server = Server(work / "build" / "zonebake-server")
    try:
        answer = server.query("www.example.com.", "A")
        assert answer.rcode() == dns.rcode.NOERROR
        assert [rr.address for rrset in answer.answer for rr in rrset] == ["192.0.2.80"]
    finally:
        server.stop()


# Modules a rebuild without the driver (compiler/core/driverless.py) must not import: they
# took 10-15 ms of the two processors its core works on, while it works (pathlib, shutil,
# threading, contextlib, collections and what they import), or are the driver's.
HEAVY = {"pathlib", "shutil", "threading", "contextlib", "collections", "functools", "enum",
         "re", "typing", "dataclasses", "subprocess", "tempfile", "hashlib", "argparse",
         "logging", "concurrent", "jinja2", "dns"}


def test_a_rebuild_without_the_driver_imports_the_lightest_modules_only(installed):
    """Installed as a user has it (a checkout's editable install imports most of those at
    the interpreter's start, for its import hook): what the command imports after its entry
    point, in a rebuild the driver has no part in (zonedata.c left as it was)."""
    venv, work, env = installed
    build = ("build", "-q", "-c", "zonebake.toml", "-o", "rebuilt")
    run("zonebake", *build, env=env, cwd=work)
    time.sleep(driverless.RACY + 0.1)  # the package, its cache and link: older than that
    run("zonebake", *build, env=env, cwd=work)  # ...now: this one records what it read
    assert (work / "rebuilt" / driverless.RECORD_FILE).is_file()
    before = os.stat(work / "rebuilt" / "zonedata.c").st_ino
    traced = run(venv / "bin" / "python", "-X", "importtime", venv / "bin" / "zonebake", *build,
                 env=env, cwd=work)
    assert os.stat(work / "rebuilt" / "zonedata.c").st_ino == before  # not the driver's
    names = [line.rsplit("|", 1)[1].strip() for line in traced.stderr.splitlines()
             if line.startswith("import time:") and "|" in line]
    after_entry = names[names.index("zonebake.entry") + 1:]
    assert "zonebake.core.driverless" in after_entry
    assert not {name.split(".")[0] for name in after_entry} & HEAVY, " ".join(after_entry)
