"""Every key ``explain PATH`` prints is accepted back by ``explain PATH KEY``, in text and ``-o json``:
the dotted key and the JSON pointer of each row, for every sample cluster and every golden case's
clusters, and for mapping keys that need quoting (a dot, digits, a leading slash, control characters).
``renderer.commands.explain.dotted_key`` prints the key and ``parse_key`` reads it back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from renderer.commands.explain import dotted_key, parse_key, to_pointer
from renderer.load.overlay import load_overlay
from tests.conftest import OVERLAYS

CASES = Path(__file__).resolve().parents[1] / "cases"


def _clusters(root: Path) -> list[Path]:
    return sorted(p.parent for p in (root / "clusters").glob("*/cluster.yaml") if not p.parent.is_symlink())


def _explained(cli, cluster: Path, *key: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of ``explain -o json`` and the lines of the text form, after checking both succeed."""
    code, out, err = cli("explain", str(cluster), *key, "-o", "json")
    assert (code, err) == (0, ""), (key, err)
    rows = json.loads(out)["values"]
    code, text, err = cli("explain", str(cluster), *key)
    assert (code, err) == (0, ""), (key, err)
    lines = text.splitlines()[1:]  # after the "# layers" line
    assert len(lines) == len(rows)
    for row, line in zip(rows, lines, strict=True):
        assert line.startswith(f"{row['key']} = {json.dumps(row['value'])}  # {row['file']}:{row['line']}:"), line
    return rows, lines


def _asks_back_every_key(cli, cluster: Path) -> int:
    rows, lines = _explained(cli, cluster)
    for row, line in zip(rows, lines, strict=True):
        for key in (row["key"], row["pointer"]):
            got, got_lines = _explained(cli, cluster, key)
            assert row in got, (key, got)
            assert line in got_lines, (key, got_lines)
    return len(rows)


@pytest.mark.parametrize("name", [p.name for p in _clusters(OVERLAYS)])
def test_every_key_a_sample_prints_is_accepted_back(cli, samples: Path, name: str) -> None:
    assert _asks_back_every_key(cli, samples / "clusters" / name) > 0


def _case_roots() -> list[Path]:
    return [p / "repo" for p in sorted(CASES.iterdir()) if (p / "case.yaml").is_file() and _clusters(p / "repo")]


@pytest.mark.parametrize("root", _case_roots(), ids=lambda p: p.parent.name)
def test_every_key_a_golden_case_prints_is_accepted_back(cli, tmp_path: Path, root: Path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(root, copy, symlinks=True)
    (copy / ".git").mkdir(exist_ok=True)
    for cluster in _clusters(copy):
        code, _out, _ = cli("explain", str(cluster), "-o", "json")
        if code != 0:
            continue  # a case whose overlay the loader refuses: nothing printed, nothing to ask back
        _asks_back_every_key(cli, cluster)


ODD_KEYS = ["a.b", "0", "12", "", "/x", "~0/1", " lead", "trail ", "new\nline", "tab\there", "\u2028", "\x7f",
            "é", "²", 'q"uote', "back\\slash", "a = b", "# hash", "-", "x+"]


def test_odd_mapping_keys_are_printed_so_they_read_back(cli, repo) -> None:
    data = {"apiVersion": "render.cozystack.io/v1alpha1", "kind": "ClusterOverlay", "metadata": {"name": "c1"},
            "host": {"os": "apt"}, "platform": {"variant": "isp-full-generic"},
            "vars": {key: f"v{i}" for i, key in enumerate(ODD_KEYS)}}
    cluster = repo({"clusters/c1/cluster.yaml": json.dumps(data, indent=2)}) / "clusters" / "c1"
    rows, lines = _explained(cli, cluster, "vars")
    assert sorted(row["value"] for row in rows) == sorted(f"v{i}" for i in range(len(ODD_KEYS)))
    assert all("\n" not in line and "\u2028" not in line for line in lines)
    assert _asks_back_every_key(cli, cluster) == len(rows) + 5


@pytest.mark.parametrize("path", [("vars", key) for key in ODD_KEYS]
                         + [("vlans", 0, "id"), ("packages", "cozystack.metallb", "variant"), ("vars", "")])
def test_parse_key_reads_what_dotted_key_and_to_pointer_print(path: tuple[str | int, ...]) -> None:
    data = {"vars": dict.fromkeys(ODD_KEYS, ""), "vlans": [{"id": 1}]}
    assert parse_key(dotted_key(path)) == path
    assert parse_key(to_pointer(path), data) == path


def test_a_key_appended_to_in_a_new_subtree_is_explained_by_its_merged_name(cli, repo) -> None:
    """``key+`` in a layer that brings the whole mapping is the key itself: explain names the merged
    key, and a later layer's ``key+`` appends to it."""
    head = "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
    root = repo({
        "base/a.yaml": head + "host: {os: apt}\nplatform:\n  variant: isp-full-generic\n  values:\n"
                              "    bundles: {enabledPackages+: [cozystack.a]}\n",
        "clusters/c1/cluster.yaml": head + "metadata: {name: c1}\ninherits: [../../base/a.yaml]\nplatform:\n"
                                          "  values:\n    bundles:\n      enabledPackages+: [cozystack.b]\n"})
    overlay = load_overlay(root / "clusters" / "c1")
    assert overlay.get("platform", "values", "bundles") == {"enabledPackages": ["cozystack.a", "cozystack.b"]}
    rows, _ = _explained(cli, root / "clusters" / "c1", "platform.values.bundles.enabledPackages")
    assert [(r["key"], r["value"], Path(r["file"]).parts[-2:], r["line"]) for r in rows] == [
        ("platform.values.bundles.enabledPackages.0", "cozystack.a", ("base", "a.yaml"), 7),
        ("platform.values.bundles.enabledPackages.1", "cozystack.b", ("c1", "cluster.yaml"), 8)]
    _asks_back_every_key(cli, root / "clusters" / "c1")


@pytest.mark.parametrize("name", [p.name for p in _clusters(OVERLAYS)])
def test_every_rendered_value_explain_prints_is_accepted_back(cli, samples: Path, name: str) -> None:
    """``explain PATH --rendered``: each (object, pointer) it prints names that value again."""
    cluster = str(samples / "clusters" / name)
    code, out, err = cli("explain", cluster, "--rendered", "-o", "json")
    assert (code, err) == (0, "")
    entries = json.loads(out)["values"]
    assert entries
    for entry in entries:
        code, out, err = cli("explain", cluster, "--rendered", entry["object"], entry["pointer"], "-o", "json")
        assert (code, err) == (0, ""), (entry["object"], entry["pointer"], err)
        assert entry in json.loads(out)["values"]
