"""``--shard K/N`` and ``cozy-render merge``: N shards merged print exactly what one run prints.

The fleet is generated here (40 clusters cut from the bundled samples, as bench/gen_fleet.py makes
them), with errors in some clusters (a refused overlay, a schema error) and the samples' warnings in
others; each command runs once over the whole fleet and once per shard of 4, and the merge of the
shards' ``-o json`` reports must give the same stdout, stderr and exit code in every format.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from renderer import shard
from tests.conftest import OVERLAYS

SCHEMA = {"check": "check", "render": "check", "ls": "ls", "doctor": "doctor", "diff": "preview"}


def valid(report: str) -> None:
    """A shard's report is its command's -o json document (``cozy-render schema output``), shard included."""
    import jsonschema

    from renderer.commands.schemas import output_schema_file

    document = json.loads(report)
    schema = json.loads(output_schema_file(SCHEMA[document["shard"]["command"]]).read_text(encoding="utf-8"))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(document)]
    assert errors == [], errors[:5]

Cli = Callable[..., tuple[int, str, str]]
SHARDS = 4


def generate(out: Path, count: int = 40) -> list[str]:
    """``count`` clusters shaped like the samples, in turn; every 9th refused, every 11th a schema error."""
    for shared in ("base", "extra"):
        shutil.copytree(OVERLAYS / shared, out / shared)
    samples = sorted((OVERLAYS / "clusters").glob("*/cluster.yaml"))
    names = []
    for i in range(count):
        sample = samples[i % len(samples)]
        shape = sample.parent.name
        name = f"{shape}-{i:04d}"
        text = sample.read_text(encoding="utf-8").replace(shape, name)
        for pattern in (r"(\bid: )(\d+)", r"(\bname: vlan)(\d+)", r"(\bbridge: br)(\d+)"):
            text = re.sub(pattern, lambda m, i=i: f"{m.group(1)}{int(m.group(2)) + i}", text)
        if i % 9 == 4:
            text += "host: [unclosed\n"  # OVL-YAML: refused before it renders
        elif i % 11 == 6:
            text += "colour: blue\n"  # OVL-SCHEMA: an unknown key
        folder = out / "clusters" / name
        folder.mkdir(parents=True)
        (folder / "cluster.yaml").write_text(text, encoding="utf-8")
        names.append(name)
    return names


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("fleet") / "overlays"
    generate(tree)
    (tree / ".git").mkdir()
    return tree


def sharded(cli: Cli, tmp_path: Path, args: list[str], fmt: str) -> tuple[int, str, str]:
    """Every shard's ``-o json`` report, then ``merge -o fmt`` of them."""
    reports = []
    for k in range(1, SHARDS + 1):
        code, out, _ = cli(*args, "--shard", f"{k}/{SHARDS}", "-o", "json")
        assert code in (0, 1, 3), out
        valid(out)
        report = tmp_path / f"shard-{k}.json"
        report.write_text(out, encoding="utf-8")
        reports.append(str(report))
    return cli("merge", *reversed(reports), "-o", fmt)  # the order the artifacts come in does not matter


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_check(cli: Cli, fleet: Path, tmp_path: Path, fmt: str) -> None:
    args = ["check", str(fleet), "--all", "-j", "1"]
    whole = cli(*args, "-o", fmt)
    assert whole[0] == 3 and "OVL-YAML" in whole[1] + whole[2] and "OVL-SCHEMA" in whole[1] + whole[2]
    assert "warning" in whole[1] + whole[2]
    assert sharded(cli, tmp_path, args, fmt) == whole


@pytest.mark.parametrize("fmt", ["table", "json"])
@pytest.mark.parametrize("sort", ["name", "errors", "warnings"])
def test_ls(cli: Cli, fleet: Path, tmp_path: Path, fmt: str, sort: str) -> None:
    args = ["ls", str(fleet), "--sort", sort, "-j", "1"]
    whole = cli(*args, "-o", fmt)
    assert sharded(cli, tmp_path, args, fmt) == whole


def test_ls_errors_only(cli: Cli, fleet: Path, tmp_path: Path) -> None:
    args = ["ls", str(fleet), "--errors", "-j", "1"]
    whole = cli(*args, "-o", "table")
    assert whole[0] == 1
    assert sharded(cli, tmp_path, args, "table") == whole


def test_render_refused(cli: Cli, fleet: Path, tmp_path: Path) -> None:
    """A refused cluster refuses the run (exit 3, its findings on stderr), sharded or not."""
    args = ["render", str(fleet), "--all", "--out", str(tmp_path / "out"), "-j", "1"]
    whole = cli(*args)
    assert whole[0] == 3 and "error[OVL-YAML]" in whole[2]
    assert sharded(cli, tmp_path, args, "text") == whole


def test_render_refused_strict(cli: Cli, fleet: Path, tmp_path: Path) -> None:
    args = ["render", str(fleet), "--all", "--out", str(tmp_path / "out"), "-j", "1", "--strict"]
    whole = cli(*args)
    assert whole[0] == 3
    assert sharded(cli, tmp_path, args, "text") == whole


def test_render_out(cli: Cli, tmp_path: Path) -> None:
    """A fleet that renders: the shards' folders together are the one run's, and the warnings the same."""
    tree = tmp_path / "overlays"
    generate(tree, 16)
    (tree / ".git").mkdir()
    for folder in (tree / "clusters").iterdir():
        if "colour: blue" in (folder / "cluster.yaml").read_text() or "unclosed" in (folder / "cluster.yaml").read_text():
            shutil.rmtree(folder)
    whole = cli("render", str(tree), "--all", "--out", str(tmp_path / "one"), "-j", "1")
    assert whole[0] == 0 and "warning[" in whole[2]
    merged = sharded(cli, tmp_path, ["render", str(tree), "--all", "--out", str(tmp_path / "many"), "-j", "1"],
                     "text")
    assert merged == whole
    files = {p.relative_to(tmp_path / "one").as_posix(): p.read_bytes() for p in (tmp_path / "one").rglob("*")
             if p.is_file()}
    assert files and files == {p.relative_to(tmp_path / "many").as_posix(): p.read_bytes()
                               for p in (tmp_path / "many").rglob("*") if p.is_file()}


def test_a_shard_leaves_the_other_shards_folders(cli: Cli, tmp_path: Path) -> None:
    tree = tmp_path / "overlays"
    shutil.copytree(OVERLAYS, tree)
    (tree / ".git").mkdir()
    out = tmp_path / "out"
    assert cli("render", str(tree), "--all", "--out", str(out))[0] == 0
    before = sorted(p.name for p in out.iterdir())
    assert cli("render", str(tree), "--all", "--out", str(out), "--shard", "1/2")[0] == 0
    assert sorted(p.name for p in out.iterdir()) == before
    gone = next(p for p in (tree / "clusters").iterdir() if shard.shard_of(shard.key(p), 2) == 2)
    shutil.rmtree(gone)
    assert cli("render", str(tree), "--all", "--out", str(out), "--shard", "1/2")[0] == 0
    assert gone.name in {p.name for p in out.iterdir()}  # shard 2's to remove
    assert cli("render", str(tree), "--all", "--out", str(out), "--shard", "2/2")[0] == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(set(before) - {gone.name})


def test_an_empty_shard_is_a_report_of_no_clusters(cli: Cli, tmp_path: Path) -> None:
    clusters = list((OVERLAYS / "clusters").iterdir())
    count = 64
    empty = next(k for k in range(1, count + 1) if not shard.select(clusters, shard.Shard(k, count)))
    code, out, err = cli("check", str(OVERLAYS), "--all", "--shard", f"{empty}/{count}", "-o", "json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["summary"]["clusters"] == 0 and document["shard"]["clusters"] == []


@pytest.mark.parametrize("args", [["check", str(OVERLAYS / "clusters" / "gpu-apt-01"), "--shard", "1/2"],
                                  ["check", str(OVERLAYS), "--all", "--shard", "0/2"],
                                  ["ls", str(OVERLAYS), "--shard", "2"],
                                  ["diff", str(OVERLAYS), "--all", "--shard", "1/2", "--snapshot", str(OVERLAYS)],
                                  ["render", str(OVERLAYS), "--all", "--out", "x", "--check", "--shard", "1/2"]])
def test_shard_usage_errors(cli: Cli, args: list[str]) -> None:
    code, out, err = cli(*args)
    assert (code, out) == (2, "")
    assert re.fullmatch(r"error\[CLI-SHARD\]: [^\n]+\n", err), err


def _reports(cli: Cli, tmp_path: Path, command: list[str], count: int = 2) -> list[str]:
    paths = []
    for k in range(1, count + 1):
        path = tmp_path / f"{command[0]}-{k}.json"
        path.write_text(cli(*command, "--shard", f"{k}/{count}", "-o", "json")[1], encoding="utf-8")
        paths.append(str(path))
    return paths


def test_merge_refuses_what_is_not_one_runs_shards(cli: Cli, tmp_path: Path) -> None:
    checks = _reports(cli, tmp_path, ["check", str(OVERLAYS), "--all"])
    strict = _reports(cli, tmp_path / "..", ["check", str(OVERLAYS), "--all", "--strict"])
    lists = _reports(cli, tmp_path, ["ls", str(OVERLAYS)])
    (tmp_path / "plain.json").write_text(cli("check", str(OVERLAYS), "--all", "-o", "json")[1], encoding="utf-8")
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    cases = {
        "missing": ([checks[0]], "shard 2 of 2 missing"),
        "twice": ([checks[0], checks[0]], "shard 1/2 again"),
        "command": ([checks[0], lists[1]], "another command"),
        "options": ([checks[0], strict[1]], "another options"),
        "plain": ([str(tmp_path / "plain.json")], "not the report of a shard"),
        "broken": ([str(tmp_path / "broken.json")], "not a JSON report"),
        "format": ([*lists, "-o", "github"], "-o github: the reports are ls's"),
        "absent": ([str(tmp_path / "absent.json")], "cannot read the report"),
    }
    for name, (args, message) in cases.items():
        code, out, err = cli("merge", *args)
        assert (code, out) == (2, ""), name
        assert re.fullmatch(r"(\S+: )?error\[CLI-MERGE\]: [^\n]+\n", err) and message in err, (name, err)


def test_merge_refuses_a_cluster_in_the_wrong_shard_or_twice(cli: Cli, tmp_path: Path) -> None:
    one, two = _reports(cli, tmp_path, ["check", str(OVERLAYS), "--all"])
    first, second = (json.loads(Path(p).read_text()) for p in (one, two))
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps({**first, "shard": {**first["shard"],
                                 "clusters": first["shard"]["clusters"] + second["shard"]["clusters"][:1]}}))
    code, out, err = cli("merge", str(moved), two)
    assert (code, out) == (2, "") and "belongs to shard 2/2, not 1/2" in err
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps({**second, "shard": {**second["shard"],
                                 "clusters": second["shard"]["clusters"] + first["shard"]["clusters"][:1]}}))
    code, out, err = cli("merge", one, str(twice))
    assert (code, out) == (2, "") and "is in two reports" in err
