"""Documentation that cannot drift: every option of `zonebake` and of each of its commands,
every option and command of `zonebake-server --help`, and every key zonebake.toml accepts
(compiler/config.py) is in its man page, and a man page documents nothing that is gone.

The man pages are made from the manual (docs/, `make man`); test_man_pages.py checks that the
committed ones are what it makes. A failure here names what to describe, or to take out, in
the manual's page that the man page includes."""

from __future__ import annotations

import argparse
import re
import subprocess

from manpage import entries

from zonebake import cli, config

HOW = "describe it in the manual's page (docs/) that the man page includes, then run make man"


def differences(what: str, page: str, actual: set[str], documented: set[str]) -> list[str]:
    missing = [f"{what}: {name} is not in man/{page}: {HOW}" for name in sorted(actual - documented)]
    gone = [f"{what}: man/{page} documents {name}, which no longer exists: take it out of the "
            f"manual (docs/) and run make man" for name in sorted(documented - actual)]
    return missing + gone


def _options(parser: argparse.ArgumentParser, with_help: bool) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings
            if with_help or not isinstance(action, argparse._HelpAction)}


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def test_every_option_of_zonebake_and_its_commands_is_in_zonebake_1():
    parser = cli._parser()
    page = entries("zonebake.1")
    problems = differences("zonebake", "zonebake.1", _options(parser, with_help=True),
                           {o for e in page if e.section == "OPTIONS" for o in e.options})
    commands = _commands(parser)
    documented = {e.subsection.removeprefix("zonebake ") for e in page
                  if e.section == "COMMANDS"}
    problems += differences("zonebake's commands", "zonebake.1", set(commands), documented)
    for name, sub in commands.items():
        terms = [e for e in page if e.section == "COMMANDS" and e.subsection == f"zonebake {name}"]
        # The options a command's --help shows, but --help itself (zonebake(1) says it once).
        problems += differences(f"zonebake {name}", "zonebake.1", _options(sub, with_help=False),
                                {o for e in terms for o in e.options})
        positionals = {a.metavar or a.dest for a in sub._actions if not a.option_strings}
        problems += differences(f"zonebake {name}'s arguments", "zonebake.1", positionals,
                                {e.term for e in terms if not e.options})
    assert not problems, "\n".join(problems)


def test_every_option_and_command_of_zonebake_server_is_in_zonebake_server_8(testset_binary):
    shown = subprocess.run([str(testset_binary), "--help"], capture_output=True, text=True,
                           timeout=10, check=True).stdout
    # An option's line starts with two spaces and a dash; its description's other lines are
    # indented further.
    options = {o for line in re.findall(r"^  (-\S.*?)(?:  |$)", shown, re.M)
               for o in re.findall(r"--?[a-z][\w-]*", line)}
    commands = {c for line in re.findall(r"^\s*(?:usage:)?\s*zonebake-server (\w.*?) ", shown,
                                          re.M) for c in line.split("|")}
    assert {"--listen", "--help"} <= options and "stats" in commands, shown
    page = entries("zonebake-server.8")
    problems = differences("zonebake-server", "zonebake-server.8", options,
                           {o for e in page if e.section == "OPTIONS" for o in e.options})
    problems += differences("zonebake-server's commands", "zonebake-server.8", commands,
                            {e.term.split()[0] for e in page if e.section == "COMMANDS"})
    assert not problems, "\n".join(problems)


def test_every_key_zonebake_toml_accepts_is_in_zonebake_toml_5():
    page = entries("zonebake.toml.5")

    def keys(section: str, subsection: str = "") -> set[str]:
        return {e.term.split()[0] for e in page
                if e.section == section and e.subsection == subsection}

    tables = {m.group(1) for e in page for m in [re.fullmatch(r"THE \[+(\w+)\]+ TABLES?",
                                                               e.section)] if m}
    problems = differences("zonebake.toml's tables", "zonebake.toml.5", set(config.TABLES),
                           tables)
    problems += differences("[server]", "zonebake.toml.5", set(config.SERVER_KEYS),
                            keys("THE [server] TABLE"))
    problems += differences("[[zone]]", "zonebake.toml.5", set(config.ZONE_KEYS),
                            keys("THE [[zone]] TABLES"))
    problems += differences("[[zone]] dnssec", "zonebake.toml.5", set(config.DNSSEC_KEYS),
                            keys("THE [[zone]] TABLES", "The dnssec table"))
    assert not problems, "\n".join(problems)
