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
from pathlib import Path

import dns.rcode

from conftest import ROOT, Server, require

# What the wheel is built from: the checkout without what is not the package's.
NOT_PACKAGED = shutil.ignore_patterns(".git", ".venv", "build", "tests", "__pycache__",
                                      "*.egg-info", ".pytest_cache")


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                            timeout=300, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, args))}:\n{result.stdout}{result.stderr}"
    return result


def test_a_wheel_of_the_checkout_installs_the_command_and_man_pages_and_serves(tmp_path):
    (man,) = require("man-db", "man")
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
