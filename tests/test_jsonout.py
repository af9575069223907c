"""renderer.jsonout writes what json.dumps(indent=2) writes (issue 24: effective --all -o json)."""

from __future__ import annotations

import json
import random
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

from renderer.jsonout import dumps_indented


def _random_value(rng: random.Random, depth: int) -> Any:
    pick = rng.randrange(10 if depth < 5 else 6)
    if pick == 0:
        return rng.choice(["", "plain", "quote\" back\\slash", "line\nbreak\ttab", "caf\u00e9 \u2603 \U0001f600",
                           "\x00\x1f\x7f", "\ud800"])
    if pick == 1:
        return rng.choice([0, -1, 2**63, -(2**70), True, False, None])
    if pick == 2:
        return rng.choice([0.0, -0.0, 1.5, 1e300, 1e-300, float("nan"), float("inf"), float("-inf")])
    if pick in (3, 4, 5):
        return rng.choice(["x", 7, None])
    if pick in (6, 7):
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["a", "", "b\u00e9", 1, 2.5, True, False, None]
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_generated_data_is_written_as_json_dumps_writes_it() -> None:
    rng = random.Random(24)
    for _ in range(2000):
        data = _random_value(rng, 0)
        assert dumps_indented(data) == json.dumps(data, indent=2)


def test_subclasses_and_tuples_are_written_as_the_standard_library_writes_them() -> None:
    class Name(str):
        pass

    class Count(int):
        pass

    data = OrderedDict([("t", (1, Name("n"), Count(3))), ("d", OrderedDict(k=[]))])
    assert dumps_indented(data) == json.dumps(data, indent=2)


@pytest.mark.parametrize("value", [object(), {1j: 1}, {(1, 2): 1}])
def test_what_json_refuses_is_refused(value: Any) -> None:
    with pytest.raises(TypeError):
        json.dumps(value, indent=2)
    with pytest.raises(TypeError):
        dumps_indented(value)


def test_effective_output_of_every_sample(samples: Path) -> None:
    """What `effective --all -o json` writes with the real chart reads back to data json.dumps writes
    the same (tests/effective run the chart itself; here only the writer is the question)."""
    import shutil
    import subprocess
    import sys

    from tests.conftest import REPO

    helm = shutil.which("helm") or shutil.which("helm", path=str(REPO / ".ci" / "bin"))
    if not helm:
        pytest.skip("no helm 3 on PATH or in .ci/bin (bash .ci/run fetches it before the tests)")
    done = subprocess.run([sys.executable, "-m", "renderer", "effective", "--all", str(samples), "-o", "json",
                           "--helm", helm], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)  # one EffectiveList (issue 31), composed from each cluster's text
    assert len(document["clusters"]) == len(list((samples / "clusters").iterdir()))
    assert json.dumps(document, indent=2) + "\n" == done.stdout
