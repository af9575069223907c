"""Output: colour, KUBECTL_EXTERNAL_DIFF, the progress line, the plain run() entry, start-up cost."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from renderer.diff import DiffRequest, run
from renderer.diff.report import RED, external_command, use_colour
from tests.conftest import INSTALLED
from tests.diff.helpers import PROJECT, live_copy, overlays_repo, render_objects, write_list

ENV = {**{k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "KUBECTL_EXTERNAL_DIFF")},
       "PYTHONPATH": str(PROJECT)}


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def drifted(tmp_path: Path) -> tuple[Path, Path]:
    vlan = overlays_repo(tmp_path) / "clusters" / "vlan-apt-01"
    live = live_copy(render_objects(vlan))
    live[1]["spec"]["config"] = live[1]["spec"]["config"].replace("br100", "br999")
    return vlan, write_list(tmp_path / "live.yaml", live)


def test_colour_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_colour("auto", Terminal()) is True
    assert use_colour("auto", io.StringIO()) is False
    assert use_colour("never", Terminal()) is False
    assert use_colour("always", io.StringIO()) is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_colour("auto", Terminal()) is False
    assert use_colour("always", Terminal()) is True  # an explicit flag wins over the environment


def test_colour_on_a_terminal_and_not_in_a_pipe(drifted: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    vlan, snap = drifted
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal, pipe = Terminal(), io.StringIO()
    assert run(DiffRequest(vlan, snapshot=snap), stdout=terminal, stderr=io.StringIO()) == 1
    assert run(DiffRequest(vlan, snapshot=snap), stdout=pipe, stderr=io.StringIO()) == 1
    assert f"{RED}-" in terminal.getvalue()
    assert "\x1b[" not in pipe.getvalue()
    monkeypatch.setenv("NO_COLOR", "")  # set but empty: no-color.org says it does not count
    again = Terminal()
    run(DiffRequest(vlan, snapshot=snap), stdout=again, stderr=io.StringIO())
    assert "\x1b[" in again.getvalue()


def test_run_takes_a_request_with_defaults(drifted: tuple[Path, Path]) -> None:
    vlan, snap = drifted
    out, err = io.StringIO(), io.StringIO()
    assert run(DiffRequest(vlan, snapshot=snap, exit_zero=True), stdout=out, stderr=err) == 0
    assert DiffRequest(vlan).field_manager == "cozy-render" and DiffRequest(vlan).timeout == 60.0
    assert "1 to change" in out.getvalue() and err.getvalue() == ""


def test_external_command_is_read_as_kubectl_reads_it() -> None:
    assert external_command("diff", "L", "M") == ["diff", "L", "M"]
    assert external_command("colordiff -N -u --label=x", "L", "M") == ["colordiff", "L", "M", "-N", "-u", "--label=x"]
    assert external_command("dyff between --omit-header;rm$(x) -u", "L", "M") == ["dyff", "L", "M", "between", "-u"]


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "renderer", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_kubectl_external_diff_gets_live_and_merged_folders(drifted: tuple[Path, Path], tmp_path: Path) -> None:
    vlan, snap = drifted
    record = tmp_path / "record.json"
    program = tmp_path / "mydiff"
    program.write_text(f"""#!{sys.executable}
import json, os, sys
live, merged = sys.argv[1:3]
json.dump({{"args": sys.argv[3:], "live": sorted(os.listdir(live)), "merged": sorted(os.listdir(merged))}},
          open({str(record)!r}, "w"))
sys.exit(1)
""")
    program.chmod(0o755)
    done = _cli("diff", str(vlan), "--snapshot", str(snap),
                env={**ENV, "KUBECTL_EXTERNAL_DIFF": f"{program} -u --x;y -N"})
    assert done.returncode == 1, done.stderr
    seen = json.loads(record.read_text())
    assert seen["args"] == ["-u", "-N"]
    assert "k8s.cni.cncf.io.v1.NetworkAttachmentDefinition.tenant-example.vlan100" in seen["live"]
    assert "cozystack.io.v1alpha1.Package..cozystack.cozystack-platform" in seen["merged"]
    assert "to change             NetworkAttachmentDefinition tenant-example/vlan100" in done.stdout
    assert "@@" not in done.stdout  # the program shows the diff, not us


def test_kubectl_external_diff_with_real_diff(drifted: tuple[Path, Path]) -> None:
    vlan, snap = drifted
    done = _cli("diff", str(vlan), "--snapshot", str(snap), env={**ENV, "KUBECTL_EXTERNAL_DIFF": "diff -u -N"})
    assert done.returncode == 1
    assert '-      "bridge": "br999",' in done.stdout and '+      "bridge": "br100",' in done.stdout


def test_kubectl_external_diff_failure_is_an_error(drifted: tuple[Path, Path], tmp_path: Path) -> None:
    vlan, snap = drifted
    done = _cli("diff", str(vlan), "--snapshot", str(snap), env={**ENV, "KUBECTL_EXTERNAL_DIFF": "false"})
    assert done.returncode == 1  # `false` exits 1: "differences", as kubectl reads it
    done = _cli("diff", str(vlan), "--snapshot", str(snap),
                env={**ENV, "KUBECTL_EXTERNAL_DIFF": str(tmp_path / "missing")})
    assert done.returncode == 3
    assert done.stderr.startswith("error[DIFF-EXTERNAL]: KUBECTL_EXTERNAL_DIFF=")
    exits2 = tmp_path / "exits2"
    exits2.write_text("#!/bin/sh\nexit 2\n")
    exits2.chmod(0o755)
    done = _cli("diff", str(vlan), "--snapshot", str(snap), env={**ENV, "KUBECTL_EXTERNAL_DIFF": str(exits2)})
    assert done.returncode == 3 and "exited 2" in done.stderr


def test_progress_line_only_on_a_terminal() -> None:
    from renderer.diff import _Progress

    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        progress = _Progress(stream, 2)
        progress.step("a")
        progress.step("b")
        progress.clear()
    assert "diff: 2/2 clusters read (b)" in terminal.getvalue()
    assert terminal.getvalue().endswith("\r\x1b[K")
    assert pipe.getvalue() == ""


@pytest.mark.parametrize("args", [["render", "overlays/clusters/vlan-apt-01"],
                                  ["render", "overlays/clusters/vlan-apt-01", "-o", "json"]])
def test_render_does_not_import_diff(args: list[str]) -> None:
    probe = ("import sys, atexit; atexit.register(lambda: sys.stderr.write('LOADED=' + ','.join(sorted(m for m in "
             "('renderer.diff', 'kubernetes', 'deepdiff', 'yaml') if m in sys.modules))));"
             "from renderer.entry import main; sys.argv[0] = 'cozy-render'; main()")
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=ENV,
                          cwd=PROJECT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("LOADED=")


def test_cmp_generate_does_not_import_diff() -> None:
    probe = ("import sys, atexit; atexit.register(lambda: sys.stderr.write('LOADED=' + ','.join(sorted(m for m in "
             "('renderer.diff', 'kubernetes', 'deepdiff', 'yaml') if m in sys.modules))));"
             "from renderer.entry import main; sys.argv[0] = 'cozy-render'; main()")
    env = {k: v for k, v in ENV.items() if not k.startswith("ARGOCD_")}
    done = subprocess.run([sys.executable, "-c", probe, "cmp", "generate"], capture_output=True, text=True, env=env,
                          cwd=PROJECT / "overlays" / "clusters" / "gpu-apt-01", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("LOADED=")


def test_a_live_diff_without_the_client_names_a_true_install_command(
        drifted: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    vlan, _snap = drifted
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "kubernetes" else real(name, *a))
    from renderer.errors import RenderError

    with pytest.raises(RenderError) as caught:
        run(DiffRequest(vlan), stdout=io.StringIO(), stderr=io.StringIO())
    message = str(caught.value)
    assert message.startswith("error[DIFF-CLIENT]: diff against a cluster needs the Kubernetes client: ")
    from renderer.diff import install_hint

    # this checkout's extra from a source tree, the requirement itself from an install: never the
    # unpublished name
    assert install_hint() in message
    assert "cozy-render[live]" not in message
    if not INSTALLED:
        assert f"-m pip install '{PROJECT}[live]'" in message
    else:
        assert "-m pip install 'kubernetes>=37'" in message


# Imports fail for the live extra's packages, as in a base install (`pip install .` without [live]).
_BLOCKER = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('kubernetes', 'deepdiff', 'yaml', 'urllib3'):\n"
            "            raise ImportError('blocked: base install')\n"
            "sys.meta_path.insert(0, Block())\n"
            "import atexit; atexit.register(lambda: sys.stderr.write('LOADED=' + ','.join(sorted(m for m in "
            "('kubernetes', 'deepdiff', 'yaml') if m in sys.modules))))\n"
            "from renderer.entry import main; sys.argv[0] = 'cozy-render'; main()\n")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_snapshot_and_against_run_on_the_base_install(drifted: tuple[Path, Path], tmp_path: Path, fmt: str) -> None:
    """Issue 18 item 6: offline diff needs neither the kubernetes client nor deepdiff nor PyYAML; the
    answer is the one the full install gives."""
    vlan, snap = drifted
    out = tmp_path / "rendered"
    assert subprocess.run([sys.executable, "-m", "renderer", "render", str(vlan), "--out", str(out)], env=ENV,
                          cwd=PROJECT, capture_output=True, timeout=120).returncode == 0
    for source, expected in ((["--snapshot", str(snap)], 1), (["--against", str(out)], 0)):
        args = ["diff", str(vlan), *source, "-o", fmt, "--color", "never"]
        base = subprocess.run([sys.executable, "-c", _BLOCKER, *args], capture_output=True, text=True, env=ENV,
                              cwd=PROJECT, timeout=120)
        assert base.returncode == expected, base.stderr
        assert base.stderr.endswith("LOADED="), base.stderr
        full = subprocess.run([sys.executable, "-m", "renderer", *args], capture_output=True, text=True, env=ENV,
                              cwd=PROJECT, timeout=120)
        assert base.stdout == full.stdout


def test_help_states_the_request_defaults() -> None:
    from tests.diff.helpers import cozy

    text = " ".join(cozy("diff", "--help").stdout.split())
    defaults = DiffRequest(Path("."))
    assert f"(default: {defaults.timeout:g})" in text
    assert f"(default: {defaults.concurrency})" in text
    assert f"(default: {defaults.field_manager})" in text
    assert f"(default: {defaults.output})" in text
    assert f"(default {defaults.color}:" in text


def test_a_404_on_an_object_is_to_create() -> None:
    """Covered with the fake in test_cluster.py; here the plain outcome: absent live copy, full object."""
    from renderer.diff.compare import CREATE, Desired, compare_cluster

    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}, "data": {"k": "v"}}
    outcome = compare_cluster("c", [Desired(obj, obj)], {("", "ConfigMap", "n", "a"): None}, [], [])
    assert [i.status for i in outcome.items] == [CREATE]
