"""Strict failures say they are strict failures, in ``render`` and ``cmp generate`` alike
(``renderer.errors.strict_labelled``): under strict every warning fails the run and its line ends
``(fails: --strict)`` (cmp: ``(fails: strict)``, the parameter or plugin env entry); the severity stays
``warning``. Without strict a warning is never labelled, even when real errors refuse the render."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import REPO

CASES = REPO / "tests" / "cases"
GPU_08 = (CASES / "gpu-08-fail" / "repo" / "clusters" / "c1" / "cluster.yaml").read_text(encoding="utf-8")
NAMESPACED = (CASES / "pkg-01-namespace-in-manifest" / "repo" / "clusters" / "c1" / "metallb.yaml").read_text(
    encoding="utf-8")
WARNING = "warning[GPU-08]: No driverInstallDir override is needed with an apt-installed driver."
ERROR = "error[PKG-01]: Package is cluster-scoped"


def _cluster(repo, errors: bool) -> Path:
    """A cluster with the GPU-08 warning; with ``errors`` also the PKG-01 error (and PLT-11's warning)."""
    files = {"clusters/c1/cluster.yaml": GPU_08 + ("manifests: [metallb.yaml]\n" if errors else "")}
    if errors:
        files["clusters/c1/metallb.yaml"] = NAMESPACED
    return repo(files) / "clusters" / "c1"


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if "warning[" in line]


def _messages(err: str) -> str:
    """The findings' text without their locations (the temporary folder's name holds the test's)."""
    return "\n".join(line.split(": ", 1)[-1] for line in err.splitlines())


@pytest.mark.parametrize("errors", [False, True], ids=["warnings", "warnings-and-errors"])
@pytest.mark.parametrize("all_clusters", [False, True], ids=["one", "all"])
def test_render_strict_labels_every_warning_it_fails_on(cli, repo, errors: bool, all_clusters: bool) -> None:
    cluster = _cluster(repo, errors)
    target = [str(cluster.parent.parent), "--all"] if all_clusters else [str(cluster)]
    code, out, err = cli("render", "--strict", *target)
    assert (code, out) == (3, "")
    assert _warnings(err) and all(line.endswith(" (fails: --strict)") for line in _warnings(err)), err
    assert any(line.endswith(WARNING + " (fails: --strict)") for line in _warnings(err))
    assert (ERROR in err) == errors
    assert "error[GPU-08]" not in err and "strict" not in _messages(err).replace("(fails: --strict)", "")


@pytest.mark.parametrize("all_clusters", [False, True], ids=["one", "all"])
def test_render_without_strict_never_labels_a_warning(cli, repo, all_clusters: bool) -> None:
    for errors in (False, True):
        cluster = _cluster(repo, errors)
        target = [str(cluster.parent.parent), "--all"] if all_clusters else [str(cluster)]
        code, out, err = cli("render", *target)
        assert code == (3 if errors else 0), err
        assert (ERROR in err) == errors and (out == "") == errors
        assert any(line.endswith(WARNING) for line in _warnings(err)), err
        assert "strict" not in _messages(err)


def _cmp(cli, monkeypatch: pytest.MonkeyPatch, cluster: Path, strict: str | None) -> tuple[int, str, str]:
    monkeypatch.chdir(cluster)
    for name in [k for k in os.environ if k.startswith("ARGOCD_")]:
        monkeypatch.delenv(name)
    if strict is not None:
        monkeypatch.setenv("ARGOCD_ENV_strict", strict)
    return cli("cmp", "generate")


@pytest.mark.parametrize("errors", [False, True], ids=["warnings", "warnings-and-errors"])
def test_cmp_generate_strict_labels_every_warning_it_fails_on(cli, repo, monkeypatch, errors: bool) -> None:
    code, out, err = _cmp(cli, monkeypatch, _cluster(repo, errors), "true")
    assert (code, out) == (3, "")
    assert _warnings(err) and all(line.endswith(" (fails: strict)") for line in _warnings(err)), err
    assert (ERROR in err) == errors and "error[GPU-08]" not in err


@pytest.mark.parametrize("strict", [None, "false"])
def test_cmp_generate_without_strict_never_labels_a_warning(cli, repo, monkeypatch, strict: str | None) -> None:
    code, out, err = _cmp(cli, monkeypatch, _cluster(repo, True), strict)
    assert (code, out) == (3, "")
    assert ERROR in err and any(line.endswith(WARNING) for line in _warnings(err)), err
    assert "strict" not in _messages(err)
    code, out, err = _cmp(cli, monkeypatch, _cluster(repo, False), strict)
    assert code == 0 and "kind: Package" in out
    assert "strict" not in _messages(err) and "strict" not in out


@pytest.mark.parametrize("strict", [True, False])
def test_a_watched_fleet_labels_as_a_pipe_does(cli, repo, monkeypatch: pytest.MonkeyPatch, strict: bool) -> None:
    """``render --all`` on a terminal groups the findings and counts them; the labels are the same."""
    from renderer.commands import fleet

    monkeypatch.setattr(fleet, "watching", lambda stream=None: True)
    root = _cluster(repo, True).parent.parent
    code, out, err = cli("render", "--all", str(root), *(["--strict"] if strict else []))
    assert (code, out) == (3, "")
    labelled = [line for line in _warnings(err) if line.endswith(" (fails: --strict)")]
    assert len(labelled) == (len(_warnings(err)) if strict else 0) and _warnings(err), err
