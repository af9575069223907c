"""Completion on hostile folder names (issue 34 items 5 and 20), in a real bash.

The generated bash script runs in bash with COMP_WORDS/COMP_CWORD set, as bash's programmable
completion sets them, calling cozy-render itself; ``compopt`` (which only readline's completion can
run) is a function that records its options. A cluster folder named ``*`` must come back as the one
value ``*`` (Click's script expanded it into every file of the folder), a name holding a newline
must never make a completion line of its own, and bash must quote what it inserts (a folder named
``$(cmd)`` would otherwise run cmd when the completed line is run). zsh and fish are not installed
here: their scripts are checked for the same forms.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from renderer.commands.completion import HARDENED, SHELLS, script
from tests.conftest import REPO

NAMES = ["*", "c?", "a b", "a,b", "$(touch pwned)", "-rf", "ok", "back\\slash", "a\nplain,FORGED", "tab\there"]

DRIVER = """
compopt() { local IFS=' '; printf 'compopt %s\\n' "$*" >&2; }
source "$SCRIPT"
COMP_WORDS=(cozy-render render "$WORD"); COMP_CWORD=2
_cozy_render_completion cozy-render
(( ${#COMPREPLY[@]} )) && printf '%s\\0' "${COMPREPLY[@]}"
exit 0
"""


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    clusters = tmp_path / "tree" / "clusters"
    for name in NAMES:
        (clusters / name).mkdir(parents=True)
        (clusters / name / "cluster.yaml").write_text("kind: ClusterOverlay\n")
    (clusters / "zz-not-a-cluster.txt").write_text("")
    return tmp_path / "tree"


def _bash_complete(tmp_path: Path, cwd: Path, word: str) -> tuple[list[str], str]:
    from renderer.cli import main

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "cozy-render"
    # what the console script runs (its name is the program name Click completes for), from this checkout
    wrapper.write_text(f"#!{sys.executable}\nfrom renderer.entry import main\nmain()\n")
    wrapper.chmod(0o755)
    source = tmp_path / "completion.bash"
    source.write_text(script("bash", main))
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO),
           "SCRIPT": str(source), "WORD": word}
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", DRIVER], cwd=cwd, env=env, capture_output=True,
                          check=True)
    values = proc.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]
    return values, proc.stderr.decode("utf-8", "replace")


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_offers_each_hostile_name_as_one_literal_value(tmp_path: Path, fleet: Path) -> None:
    values, err = _bash_complete(tmp_path, fleet, "clusters/")
    offered = sorted(f"clusters/{n}" for n in NAMES if "\n" not in n and "\t" not in n)
    assert values == offered  # `*` and `c?` are not globbed; no file, no forged line
    assert not (fleet / "pwned").exists()
    assert "compopt -o filenames" in err  # bash quotes `$(touch pwned)`, `a b`, `*` when it inserts them


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_never_expands_a_value_against_the_working_folder(tmp_path: Path, fleet: Path) -> None:
    values, _ = _bash_complete(tmp_path, fleet / "clusters", "*")
    assert values == ["*"]  # the folder `*` itself (a cluster), not every entry of the working folder


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_a_typed_word_holding_a_newline_forges_no_value(tmp_path: Path, fleet: Path) -> None:
    # bash hands the words over joined by newlines, so Click sees two words: what comes back are real
    # folders of the first, never the typed text as a line of its own
    values, _ = _bash_complete(tmp_path, fleet, "clusters/a\nplain,FORGED")
    assert values == ["clusters/a b", "clusters/a,b"]


def test_a_typed_word_holding_a_control_character_completes_to_nothing(fleet: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from renderer.commands.completion import cluster_folders

    monkeypatch.chdir(fleet)
    assert [item.value for item in cluster_folders("clusters/a")] == ["clusters/a b", "clusters/a,b"]
    assert cluster_folders("clusters/a\x1b[2J") == [] and cluster_folders("clusters/a\nplain,x") == []


@pytest.mark.parametrize("shell", SHELLS)
def test_every_script_has_its_hardened_forms(shell: str) -> None:
    from renderer.cli import main

    text = script(shell, main)
    for unsafe, safe in HARDENED.get(shell, ()):
        assert safe in text and (unsafe not in text or unsafe in safe), (shell, unsafe)
    if shell == "bash":
        assert "COMPREPLY+=($value)" not in text and 'COMPREPLY+=("$value")' in text
    if shell == "zsh":
        assert "compadd -U -V unsorted -a completions" in text and "-Q" not in text  # zsh quotes what it inserts
        assert 'completions+=("$key")' in text
    if shell == "fish":
        assert 'string split -m 1 "," -- $completion' in text
