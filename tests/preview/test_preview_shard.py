"""``diff --base --all --shard K/N`` and ``merge``: the shards' reviews merged are one run's review,
byte for byte in every format (the fleet changes: clusters added, removed, renamed, changed, new and
resolved findings, a platform version bump)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.commands.test_shard import valid

Cli = Callable[..., tuple[int, str, str]]


def merged(cli: Cli, tmp_path: Path, args: list[str], count: int, fmt: str) -> tuple[int, str, str]:
    reports = []
    for k in range(1, count + 1):
        code, out, err = cli(*args, "--shard", f"{k}/{count}", "-o", "json")
        assert code in (0, 1), err
        valid(out)
        report = tmp_path / f"review-{k}.json"
        report.write_text(out, encoding="utf-8")
        reports.append(str(report))
    return cli("merge", *reports, "-o", fmt)


@pytest.mark.parametrize("count", [2, 4])
@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_the_review_of_a_fleet_in_shards(cli: Cli, fleet_repo: Path, tmp_path: Path, fmt: str, count: int,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(fleet_repo)
    args = ["diff", "--all", "overlays", "--base", "base", "--head", "change"]
    whole = cli(*args, "-o", fmt)
    assert whole[0] == 1 and whole[1]
    assert merged(cli, tmp_path, args, count, fmt) == whole


@pytest.mark.parametrize("extra", [["--fail-on-new-errors"], ["--exit-zero"]])
def test_the_exit_code_options_are_one_runs(cli: Cli, fleet_repo: Path, tmp_path: Path, extra: list[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(fleet_repo)
    args = ["diff", "--all", "overlays", "--base", "base", "--head", "change", *extra]
    whole = cli(*args, "-o", "text")
    assert merged(cli, tmp_path, args, 3, "text") == whole


def test_a_forged_review_is_refused(cli: Cli, fleet_repo: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    monkeypatch.chdir(fleet_repo)
    args = ["diff", "--all", "overlays", "--base", "base", "--head", "change", "-o", "json"]
    report = tmp_path / "one.json"
    document = json.loads(cli(*args, "--shard", "1/1")[1])
    document["shard"]["review"] = {"~": "Popen", "v": [["rm", "-rf", "/"]]}
    report.write_text(json.dumps(document), encoding="utf-8")
    code, out, err = cli("merge", str(report))
    assert (code, out) == (2, "") and "error[CLI-MERGE]: its review cannot be read: an object of an unknown kind" in err
