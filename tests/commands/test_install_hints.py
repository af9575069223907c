"""Install hints name what works in this install (issue 31 item 5): the doctor's missing-client line
gives the command diff gives (``renderer.diff.install_hint``: the checkout's extra from a source tree,
else the requirement into this interpreter; ``cozy-render`` is not on PyPI), and no hint or rule text
names a file of this repository, which an installed wheel does not have."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from renderer.diff import install_hint
from renderer.effective.helm import HELM_HINT
from renderer.registry import entries, explanation_text
from tests.conftest import REPO

# Repository folders that an install does not ship (the package is renderer/).
REPOSITORY_FILE = re.compile(r"(?<![\w/])(?:\.ci|tests|bench|docs|\.github)/[\w./-]*")
NO_CLIENT = "import sys; sys.modules['kubernetes'] = None; from renderer.cli import main; main(prog_name='cozy-render')"


@pytest.mark.parametrize("command", ["doctor", "diff"])
def test_a_missing_client_names_the_install_command_that_works_here(command: str) -> None:
    done = subprocess.run([sys.executable, "-c", NO_CLIENT, command, "overlays/clusters/gpu-apt-01"], cwd=REPO,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 3 and done.stdout == "", done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "error[" in x]
    assert "error[DIFF-CLIENT]" in line and install_hint() in line
    assert "'cozy-render[live]'" not in line  # not on PyPI: that command installs nothing


def test_the_helm_hint_names_no_repository_file() -> None:
    assert not REPOSITORY_FILE.search(HELM_HINT), HELM_HINT
    assert "--helm PATH" in HELM_HINT


def test_no_rule_text_names_a_repository_file() -> None:
    """`cozy-render rules CODE` is read in installs: its summary and explanation point at nothing
    only a checkout has (sources cite upstream projects, not this repository's files)."""
    named = {(e.id, m) for e in entries().values()
             for m in REPOSITORY_FILE.findall(f"{e.summary} {explanation_text(e)}")}
    assert named == set()
