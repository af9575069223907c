"""Every documented exit code, walked with an example (issue 23, item 3): the README's table, the
constants in renderer/errors.py and these examples name the same codes. Each example runs the real
console command in a child process, as a user or Argo CD would; the internal-bug example injects the
bug in-process (no input can cause one by design)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from renderer import errors
from tests.conftest import OVERLAYS, REPO

SAMPLE = "overlays/clusters/gpu-apt-01"
HEAD = "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\nhost: {os: apt}\n"


def _documented() -> set[int]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    table = text.split("## Errors and exit codes", 1)[1].split("\n\n", 3)[2]
    return {int(m) for m in re.findall(r"^\| (\d+) \|", table, re.M)}


def _constants() -> set[int]:
    return {v for k, v in vars(errors).items() if k.startswith("EXIT_") and isinstance(v, int)}


def _run(args: list[str], cwd: Path = REPO, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COZY_RENDER", "ARGOCD_"))}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "renderer", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, **kw)  # type: ignore[call-overload]


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A repository with one cluster an error-severity rule refuses (PLT-02) and one with an unknown key."""
    root = tmp_path / "repo"
    for name, tail in (("c1", "platform: {variant: isp-ful}\n"), ("c2", "platform: {variant: isp-full}\nhubbel: {}\n")):
        (root / "clusters" / name).mkdir(parents=True)
        (root / "clusters" / name / "cluster.yaml").write_text(HEAD.replace("c1", name) + tail, encoding="utf-8")
    (root / ".git").mkdir()
    return root


def test_the_table_and_the_constants_agree() -> None:
    assert _documented() == _constants() == {0, 1, 2, 3, 4, 130}


def test_0_success() -> None:
    proc = _run(["render", SAMPLE])
    assert proc.returncode == errors.EXIT_OK and proc.stdout, proc.stderr


def test_1_findings(broken: Path) -> None:
    proc = _run(["check", "clusters/c1"], cwd=broken)
    assert proc.returncode == errors.EXIT_FINDINGS and "error[PLT-02]" in proc.stderr


@pytest.mark.parametrize("args", [
    ["render", "--no-such-flag", SAMPLE],
    ["init", "Edge_02", "--os", "apt"],
    ["init", "../x", "--os", "apt"],
    ["init", "x1", "--os", "apt", "--vlan", "bad"],
    ["explain", SAMPLE, 'packages."cozystack.metallb'],
    ["schema", "output", "nope"],
], ids=["unknown-flag", "init-name", "init-path", "init-vlan", "explain-quote", "schema-output"])
def test_2_usage(args: list[str], tmp_path: Path) -> None:
    tree = tmp_path / "overlays"
    shutil.copytree(OVERLAYS, tree)
    proc = _run([a.replace(SAMPLE, str(REPO / SAMPLE)) for a in args] + (["--root", str(tree)] if args[0] == "init" else []),
                cwd=tmp_path)
    assert proc.returncode == errors.EXIT_USAGE, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert not (tree / "clusters" / "x1").exists()


def test_3_input(broken: Path) -> None:
    for args, code in ((["render", "clusters/c2"], "OVL-SCHEMA"), (["render", "clusters/c1"], "PLT-02")):
        proc = _run(args, cwd=broken)
        assert proc.returncode == errors.EXIT_INPUT and f"error[{code}]" in proc.stderr and proc.stdout == ""


def test_4_internal(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import renderer.pipeline

    def bug(*_a: object, **_k: object) -> None:
        raise ZeroDivisionError("bug")

    monkeypatch.chdir(REPO)
    monkeypatch.setattr(renderer.pipeline, "emit", bug)
    code, out, err = cli("render", SAMPLE)
    assert code == errors.EXIT_INTERNAL and out == "" and "internal error" in err and "Traceback" not in err


def test_130_interrupted(tmp_path: Path) -> None:
    """SIGINT while --out writes (the fault seam of renderer/output sends it at the first swap)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COZY_RENDER", "ARGOCD_"))}
    env.update(PYTHONPATH=str(REPO), COZY_RENDER_FAULT="before-swap:1:INT")
    proc = subprocess.run([sys.executable, "-m", "renderer", "render", SAMPLE, "--out", str(tmp_path / "out")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == errors.EXIT_INTERRUPTED == 128 + signal.SIGINT, proc.stderr
