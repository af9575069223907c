"""The format registry (renderer/formats.py): every reporter registered, every ``-o`` choice the
registry's, and the command line's table needs no reporter module loaded."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click
import pytest

from renderer import formats
from renderer.cli import main

# The modules whose import registers reporters (FORMATS' comments name them).
REPORTER_MODULES = ("renderer.report", "renderer.output.check", "renderer.commands.render",
                    "renderer.commands.explain", "renderer.commands.rules", "renderer.commands.inputs",
                    "renderer.commands.ls", "renderer.commands.effective", "renderer.commands.doctor",
                    "renderer.diff.report", "renderer.preview.report")

# Each command's -o and the subjects it prints.
COMMANDS = {("render",): ("objects", "fleet", "annotated", "stale"), ("check",): ("findings",),
            ("explain",): ("explain", "explain-rendered"), ("rules",): ("rules",), ("diff",): ("diff", "review"),
            ("inputs",): ("inputs",), ("ls",): ("clusters",), ("effective",): ("effective", "effective-run"),
            ("doctor",): ("doctor",)}


def test_every_declared_format_has_its_reporter_and_no_other_is_registered() -> None:
    for module in REPORTER_MODULES:
        importlib.import_module(module)
    declared = {(subject, fmt) for subject, fmts in formats.FORMATS.items() for fmt in fmts}
    assert set(formats._REPORTERS) == declared


def test_an_undeclared_format_is_refused_when_it_is_registered() -> None:
    with pytest.raises(AssertionError, match="declare the format in FORMATS"):
        formats.reporter("findings", "xml")
    with pytest.raises(AssertionError, match="declare the format in FORMATS"):
        formats.reporter("no-such-subject", "text")


def _output_choices(path: tuple[str, ...]) -> list[str]:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    (option,) = [p for p in command.params if "-o" in getattr(p, "opts", ())]
    assert isinstance(option.type, click.Choice)
    return list(option.type.choices)


@pytest.mark.parametrize("path", list(COMMANDS), ids=[" ".join(p) for p in COMMANDS])
def test_each_output_choice_is_the_registrys(path: tuple[str, ...]) -> None:
    subjects = COMMANDS[path]
    assert set(_output_choices(path)) == {fmt for subject in subjects for fmt in formats.formats(subject)}


def test_one_option_offers_what_every_form_of_its_command_prints() -> None:
    """render's -o picks the stream's, the fleet's, the annotated stream's and --check's format alike;
    explain's both forms'; effective's one cluster's and the run's. diff's markdown is the review's only
    (the command line refuses it without --base)."""
    for subjects in COMMANDS.values():
        if subjects != ("diff", "review"):
            assert len({tuple(formats.formats(s)) for s in subjects}) == 1, subjects
    assert set(formats.formats("review")) - set(formats.formats("diff")) == {"markdown"}


def _loaded(statement: str) -> set[str]:
    probe = f"import sys; {statement}; print(' '.join(m for m in sys.modules if m.startswith('renderer')))"
    return set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split())


def test_the_command_line_reads_the_table_and_nothing_else_of_the_project() -> None:
    """The choices cost one module of no project imports: not the reporters' modules, not renderer.output
    (its package loads the YAML loader and ruamel.yaml, which ``--help`` never needs)."""
    assert _loaded("import renderer.cli") == {"renderer", "renderer.cli", "renderer.formats"}
