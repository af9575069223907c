"""Help and completion: every option has help, every command ends its help with examples, the
completion scripts and the completion of rule IDs and cluster folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from renderer.cli import main
from tests.conftest import OVERLAYS, REPO


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for name, command in sorted(group.commands.items()):
        out.append((prefix + name, command))
        if isinstance(command, click.Group):
            out += _commands(command, f"{prefix}{name} ")
    return out


COMMANDS = _commands(main)


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_option_has_help(name: str, command: click.Command) -> None:
    missing = [p.name for p in command.params if isinstance(p, click.Option) and not p.help]
    assert missing == [], name


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_command_help_ends_with_examples(cli, name: str, command: click.Command) -> None:
    code, out, _ = cli(*name.split(), "--help")
    assert code == 0
    tail = out.rstrip().split("Examples:\n", 1)
    assert len(tail) == 2, f"{name}: no Examples section"
    examples = [line.strip() for line in tail[1].splitlines()]
    assert 1 <= len(examples) <= 2 and all(e.startswith(("cozy-render ", "eval ", "ARGOCD_", "cd ")) for e in examples)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_script(cli, shell: str) -> None:
    code, out, _ = cli("completion", shell)
    assert code == 0
    assert "_COZY_RENDER_COMPLETE" in out


def _complete(words: str, cwd: Path) -> list[str]:
    env = {**os.environ, "_COZY_RENDER_COMPLETE": "bash_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)), "PYTHONPATH": str(REPO),
           "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", "from renderer.cli import main; main(prog_name='cozy-render')"],
                          cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return [line.split(",", 1)[1] for line in proc.stdout.splitlines()]


def test_rule_ids_complete() -> None:
    found = _complete("cozy-render rules GPU-0", REPO)
    assert "GPU-05" in found and all(f.startswith("GPU-0") for f in found)


def test_cluster_folders_complete() -> None:
    found = _complete("cozy-render render clusters/vg", OVERLAYS)
    assert found == ["clusters/vgpu-apt-01"]
    assert "overlays/" in _complete("cozy-render check ov", REPO)


def test_schemas_is_a_hidden_alias_of_schema(cli, tmp_path: Path) -> None:
    _, top, _ = cli("--help")
    assert not [line for line in top.splitlines() if line.strip().startswith("schemas ")]
    for spelling in ("schema", "schemas"):
        code, out, err = cli(spelling, "export", str(tmp_path / spelling))
        assert code == 0, err
        assert "wrote" in out


def test_render_of_a_tree_suggests_all(cli) -> None:
    code, out, err = cli("render", str(OVERLAYS))
    assert (code, out) == (3, "")
    assert "error[OVL-PATH]" in err and "--all" in err
    assert len(err.splitlines()) == 1


def test_rules_as_json(cli) -> None:
    import json

    code, out, _ = cli("rules", "GPU-05", "-o", "json")
    assert code == 0
    (rule,) = json.loads(out)["rules"]
    assert rule["id"] == "GPU-05" and rule["severity"] == "error" and rule["sources"]
    code, out, _ = cli("rules", "-o", "json")
    assert len(json.loads(out)["rules"]) > 50


@pytest.mark.parametrize("command", ["check", "explain", "node-config"])
def test_every_cluster_command_on_a_tree_suggests_all(cli, command: str) -> None:
    code, out, err = cli(command, str(OVERLAYS))
    assert (code, out) == (3, "")
    assert "--all" in err and "error[OVL-PATH]" in err
