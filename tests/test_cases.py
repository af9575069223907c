"""Data-driven golden cases: every folder under tests/cases/ is one CLI run.

A case folder holds ``case.yaml`` (``args``, expected ``exit``, ``stderr`` substrings,
``not_stderr`` substrings that must not appear, optional ``cwd``) and, for runs that print, ``expected.out`` (stdout, byte for byte). The overlay tree a case
renders sits in the case folder (usually ``repo/``, with a ``.git`` marker created at run time), or
the case points at the bundled samples with ``{overlays}``. Rewrite goldens with
``pytest tests/test_cases.py --update-goldens`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import OVERLAYS

CASES = Path(__file__).parent / "cases"


def _cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if (p / "case.yaml").is_file())


@pytest.mark.parametrize("case", _cases(), ids=lambda p: p.name)
def test_case(case: Path, cli, monkeypatch: pytest.MonkeyPatch, update_goldens: bool) -> None:
    spec = YAML(typ="safe").load((case / "case.yaml").read_text())
    if (case / "repo").is_dir():
        (case / "repo" / ".git").mkdir(exist_ok=True)
    monkeypatch.chdir(case / spec.get("cwd", "."))
    args = [a.replace("{overlays}", os.path.relpath(OVERLAYS)) for a in spec["args"]]
    code, out, err = cli(*args)
    expected_exit = spec.get("exit", 0)
    assert code == expected_exit, f"exit {code}, expected {expected_exit}\nstderr:\n{err}"
    for needle in spec.get("stderr", []):
        assert needle in err, f"{needle!r} not in stderr:\n{err}"
    for needle in spec.get("not_stderr", []):
        assert needle not in err, f"{needle!r} in stderr:\n{err}"
    if code != 0 and expected_exit != 1:
        assert out == "", "a failed run printed to stdout"
    golden = case / "expected.out"
    if update_goldens:
        if out:
            golden.write_text(out)
        return
    if golden.exists():
        assert out == golden.read_text(), f"stdout differs from {golden} (review, then --update-goldens)"
    else:
        assert out == "" or spec.get("stdout") == "any", f"{case.name} printed output but has no expected.out"
