"""Issue 17: the same question gets the same answer however it is asked.

Every fleet command runs over one broken fleet (an input error in one cluster, a rule error in
another, warnings elsewhere) with stderr on a pipe and on a pseudo-terminal; the findings and the
exit code must be identical. Only the presentation may differ (progress bar, summary, grouping).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.commands.test_fleet import _run_with_stderr
from tests.conftest import OVERLAYS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no pseudo-terminals on Windows")

_FINDING = re.compile(r"^(?P<line>\S+: (?:error|warning)\[[A-Z0-9-]+\]: .*?)(?:  \[\d+ clusters: .*\])?$")


@pytest.fixture
def broken_fleet(tmp_path: Path) -> Path:
    """The overlay tree at overlays/ of a repository (as the bundled samples sit); runs start in it."""
    tree = tmp_path / "repo" / "overlays"
    shutil.copytree(OVERLAYS, tree)
    (tmp_path / "repo" / ".git").mkdir()
    typo = tree / "clusters" / "vlan-apt-01" / "cluster.yaml"
    typo.write_text(typo.read_text() + "hubbel:\n  enabled: true\n")  # an input error (unknown key)
    rule = tree / "clusters" / "vgpu-apt-01" / "cluster.yaml"
    rule.write_text(rule.read_text().replace("os: apt", "os: talos"))  # a rule error (GPU-05)
    return tree


def _findings(stderr: bytes) -> set[str]:
    lines = stderr.decode().replace("\r", "\n").splitlines()
    return {m["line"] for line in lines if (m := _FINDING.match(line.strip()))}


def _both(args: list[str], cwd: Path) -> tuple[tuple[int, bytes, bytes], tuple[int, bytes, bytes]]:
    return _run_with_stderr(args, terminal=False, cwd=cwd), _run_with_stderr(args, terminal=True, cwd=cwd)


def test_check_all_text(broken_fleet: Path) -> None:
    piped, watched = _both(["check", ".", "--all", "-v"], broken_fleet)
    assert piped[0] == watched[0] == 3  # an input error is the input class, whoever watches
    assert _findings(piped[2]) == _findings(watched[2])
    found = _findings(piped[2])
    assert any("error[OVL-SCHEMA]" in f or "hubbel" in f for f in found), found
    assert any("vgpu-apt-01" in f and "error[GPU-05]" in f for f in found), found
    assert any("warning[" in f for f in found), found


@pytest.mark.parametrize("fmt", ["json", "github"])
def test_check_all_machine_formats(broken_fleet: Path, fmt: str) -> None:
    piped, watched = _both(["check", ".", "--all", "-o", fmt], broken_fleet)
    assert piped[0] == watched[0] == 3
    assert piped[1] == watched[1]
    if fmt == "json":
        document = json.loads(piped[1])
        clusters = {f["cluster"] for f in document["findings"]}
        assert {"vlan-apt-01", "vgpu-apt-01", "gpu-apt-01"} <= clusters
        assert document["summary"]["clusters"] == 7 and document["summary"]["exitCode"] == 3
    else:
        annotations = piped[1].decode().splitlines()
        assert any("vlan-apt-01" in a for a in annotations) and any("vgpu-apt-01" in a for a in annotations)
        assert all(a.startswith(("::error file=overlays/clusters/", "::warning file=overlays/"))
                   for a in annotations), annotations  # repository-relative paths (issue 20 item 7)


def test_check_chart_model_never_runs_helm(broken_fleet: Path, tmp_path: Path) -> None:
    log = tmp_path / "helm.log"
    fake = tmp_path / "bin" / "helm"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\necho v3.17.2+gfake\n")
    fake.chmod(0o755)
    for terminal in (False, True):
        code, _, err = _run_with_stderr(["check", ".", "--all", "--chart", "model", "--helm", str(fake)],
                                        terminal=terminal, cwd=broken_fleet)
        assert code == 3 and b"platform chart: built-in model" in err
    assert not log.exists()


def test_render_all_out(broken_fleet: Path, tmp_path: Path) -> None:
    piped, watched = _both(["render", ".", "--all", "--out", str(tmp_path / "out"), "-v"], broken_fleet)
    assert piped[0] == watched[0] == 3
    assert piped[1] == watched[1] == b""
    assert _findings(piped[2]) == _findings(watched[2])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_ls(broken_fleet: Path, fmt: str) -> None:
    piped, watched = _both(["ls", ".", "-o", fmt], broken_fleet)
    assert piped[0] == watched[0] == 0
    assert piped[1] == watched[1]
    if fmt == "json":
        rows = {r["name"]: r for r in json.loads(piped[1])["clusters"]}
        assert rows["vlan-apt-01"]["errors"] == 1 and rows["vgpu-apt-01"]["errors"] >= 1


def test_check_chart_helm_runs_it_the_same_whoever_watches(broken_fleet: Path, tmp_path: Path) -> None:
    real = shutil.which("helm") or shutil.which("helm", path=str(Path(__file__).parents[2] / ".ci" / "bin"))
    if real is None:
        pytest.skip("no helm 3 on PATH or in .ci/bin (bash .ci/run fetches it before the tests)")
    log = tmp_path / "helm.log"
    logging_helm = tmp_path / "bin" / "helm"
    logging_helm.parent.mkdir()
    logging_helm.write_text(f"#!/bin/sh\necho \"$1\" >> {log}\nexec {real} \"$@\"\n")
    logging_helm.chmod(0o755)
    answers = []
    for terminal in (False, True):
        log.unlink(missing_ok=True)
        code, _, err = _run_with_stderr(["check", ".", "--all", "--chart", "helm", "--helm", str(logging_helm), "-v"],
                                        terminal=terminal, cwd=broken_fleet)
        runs = log.read_text().split()
        # one `helm version` for the run; the 6 clusters that rendered share one `helm template` (the
        # fleet is batched, issue 24: tests/effective/test_batch_helm.py proves it equal to one run each)
        assert runs.count("version") == 1 and runs.count("template") == 1, runs
        assert b"platform chart: helm v3." in err
        answers.append((code, _findings(err)))
    assert answers[0] == answers[1]


def test_check_chart_helm_without_a_usable_helm_is_plt_helm(broken_fleet: Path, tmp_path: Path) -> None:
    not_helm = tmp_path / "not-helm"
    not_helm.write_text("#!/bin/sh\necho hello\n")
    not_helm.chmod(0o755)
    code, out, err = _run_with_stderr(["check", ".", "--all", "--chart", "helm", "--helm", str(not_helm)],
                                      terminal=False, cwd=broken_fleet)
    assert (code, out) == (3, b"")
    assert err.decode().count("\n") == 1 and "error[PLT-HELM]" in err.decode() and "is not helm" in err.decode()


def test_an_unknown_platform_version_is_plt_version_from_every_command(tmp_path: Path) -> None:
    """Issue 17 item 5: render, check, cmp generate, ls and effective all refuse v9.9.9 alike."""
    import subprocess

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    cluster = repo / "clusters" / "c1"
    cluster.mkdir(parents=True)
    (cluster / "cluster.yaml").write_text("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
                                          "metadata: {name: c1}\nhost: {os: apt}\n"
                                          "platform: {variant: isp-full, version: v9.9.9}\n")
    line = "clusters/c1/cluster.yaml:5:40: error[PLT-VERSION]: platform.version v9.9.9 names no vendored"
    for args, cwd, code in ((["render", "clusters/c1"], repo, 3), (["check", "clusters/c1"], repo, 1),
                            (["cmp", "generate"], cluster, 3), (["effective", "clusters/c1"], repo, 3)):
        done = _run_with_stderr(args, terminal=False, cwd=cwd)
        assert done[0] == code and done[1] == b"", (args, done)
        assert line in done[2].decode(), (args, done[2])
    listed = subprocess.run([sys.executable, "-m", "renderer", "ls", ".", "-o", "json"], cwd=repo,
                            capture_output=True, text=True, check=False,
                            env={"PYTHONPATH": str(Path(__file__).parents[2]), "PATH": "/usr/bin:/bin"})
    (row,) = json.loads(listed.stdout)["clusters"]
    assert (row["version"], row["errors"]) == ("v9.9.9", 1)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_diff_all_snapshot(broken_fleet: Path, tmp_path: Path, fmt: str) -> None:
    snapshot = tmp_path / "live"  # --all: one snapshot per cluster, each an empty cluster
    snapshot.mkdir()
    for cluster in (OVERLAYS / "clusters").iterdir():
        (snapshot / f"{cluster.name}.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    args = ["diff", ".", "--all", "--snapshot", str(snapshot), *(["-o", fmt] if fmt != "text" else [])]
    piped, watched = _both(args, broken_fleet)
    assert piped[0] == watched[0] == 3  # the fleet's input error refuses the diff, whoever watches
    assert piped[1] == watched[1] == b""
    assert _findings(piped[2]) == _findings(watched[2]) and _findings(piped[2])
    clean = broken_fleet.parent.parent / "clean"
    shutil.copytree(OVERLAYS, clean / "overlays")
    (clean / ".git").mkdir()
    piped, watched = _both(args, clean / "overlays")
    # every object is to create; a missing co-managed cozystack.networking is a PLT-11 error (3)
    assert piped[0] == watched[0] == 3
    assert piped[1] == watched[1] and piped[1]
