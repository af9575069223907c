"""Data-driven golden cases: every folder under tests/cases/ holding a case.yaml is one CLI run.

A case folder holds ``case.yaml`` (``args``, expected ``exit``, ``stderr`` substrings that document
what the case is about, ``not_stderr`` substrings that must not appear, optional ``cwd``), and the
goldens ``expected.out`` (stdout) and ``expected.err`` (stderr), compared byte for byte. The overlay
tree a case renders sits in the case folder (usually ``repo/``), or the case points at the bundled
samples with ``{overlays}``.

Each case runs from a copy in a temporary folder (the copy's ``repo/`` gets its ``.git`` marker
there; nothing is written into the checkout), twice: through Click, and through the console entry
point ``renderer.entry.main`` (which takes the start-up fast path for ``render PATH``). Both runs
must give the same exit code and bytes. Rewrite the goldens with
``pytest tests/test_cases.py --update-goldens`` and review the diff.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import OVERLAYS

CASES = Path(__file__).parent / "cases"


def _cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if (p / "case.yaml").is_file())


def _copy(case: Path, tmp_path: Path) -> Path:
    work = tmp_path / "case"
    shutil.copytree(case, work, ignore=shutil.ignore_patterns("expected.out", "expected.err"))
    if (work / "repo").is_dir():
        (work / "repo" / ".git").mkdir(exist_ok=True)
    shutil.copytree(OVERLAYS, work / "_samples" / "overlays")  # {overlays}: inside the copy, so paths stay relative
    return work


def _through_entry(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) \
        -> tuple[int, str, str]:
    from renderer import entry

    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["cozy-render", *args])
    with pytest.raises(SystemExit) as stopped:
        entry.main()
    out, err = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 1 if code else 0), out, err


@pytest.mark.parametrize("case", _cases(), ids=lambda p: p.name)
def test_case(case: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
              update_goldens: bool) -> None:
    spec = YAML(typ="safe").load((case / "case.yaml").read_text())
    work = _copy(case, tmp_path)
    monkeypatch.chdir(work / spec.get("cwd", "."))
    args = [a.replace("{overlays}", os.path.relpath(work / "_samples" / "overlays")) for a in spec["args"]]
    code, out, err = cli(*args)
    assert _through_entry(args, monkeypatch, capsys) == (code, out, err), "the console entry and Click differ"

    expected_exit = spec.get("exit", 0)
    assert code == expected_exit, f"exit {code}, expected {expected_exit}\nstderr:\n{err}"
    for needle in spec.get("stderr", []):
        assert needle in err, f"{needle!r} not in stderr:\n{err}"
    for needle in spec.get("not_stderr", []):
        assert needle not in err, f"{needle!r} in stderr:\n{err}"
    if code != 0 and expected_exit != 1:
        assert out == "", "a failed run printed to stdout"
    for name, text in (("expected.out", out), ("expected.err", err)):
        golden = case / name
        if update_goldens:
            if text:
                golden.write_text(text, encoding="utf-8")
            elif golden.exists():
                golden.unlink()
            continue
        expected = golden.read_text(encoding="utf-8") if golden.exists() else ""
        assert text == expected, f"{name} differs from {golden} (review, then --update-goldens)"


def test_no_case_writes_into_the_checkout() -> None:
    stray = sorted(str(p.relative_to(CASES)) for p in CASES.rglob(".git"))
    assert stray == [], "remove these markers: the runner creates them in its temporary copy"
