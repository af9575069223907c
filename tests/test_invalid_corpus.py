"""The hostile-input corpus (issue 12): every case under tests/cases/invalid/ is refused cleanly.

A case folder holds ``case.json`` and usually ``repo/`` (the overlay repository, copied to a temporary
folder with a ``.git`` marker). ``case.json``:

- ``args``: the cozy-render command line, run in ``repo/`` (or ``cwd``, relative to the case copy);
- ``exit`` (default 3) and ``code``: the exit code and the one code every error line carries;
- ``where``: where the first error points (``file:line:col``, or part of it such as ``file:line:``);
- ``located`` (default true): every line is ``file:line:col: error[CODE]: message``; false for refusals
  about no place in a file (``--out`` folders, parameters' meaning), which are ``[where: ]error[CODE]: message``;
- ``generate``: ``{path: python expression}`` for contents too large or too odd to keep in Git (the names
  ``HEAD``, ``BASE``, ``CM`` are the usual file heads below); ``symlinks`` ``{path: target}``, ``fifos``,
  ``mkdirs``, ``deep`` (``[{path, depth, file, text}]``: folders nested past Python's recursion limit);
  ``env``, ``env_hex`` (bytes, hex-encoded, for values no text can hold), ``generate_env``;
- the process's own streams and folder (issue 25 item 8): ``stdout`` ``"/dev/full"`` or ``"closed"`` (fd 1
  closed before cozy-render starts), ``cwd_deleted`` (started in a folder deleted before it runs);
  ``{repo}`` in ``args`` is the copy's repository folder.

Each case runs in a child process under ``RLIMIT_AS`` = 500 MiB and must spend at most 5 s of CPU: no input
may take more before being refused. Stdout stays empty, no traceback or internal error is printed, no
message line is longer than 5,000 characters (values are cut with a count), and nothing in the case's
folder (inputs, ``--out``) changes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO

CORPUS = Path(__file__).parent / "cases" / "invalid"
HEAD = ("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\n"
        "host: {os: apt}\nplatform: {variant: isp-full-generic}\n")
BASE = "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\n"
HEAD4 = HEAD.replace("platform: {variant: isp-full-generic}\n", "")
NAMESPACE = {"HEAD": HEAD, "HEAD4": HEAD4, "BASE": BASE, "CM": CM}

WALL_SECONDS = 5.0
MEMORY_BYTES = 500 * 1024 * 1024
LOCATED = re.compile(r"^(?P<where>.+?:\d+:\d+): error\[(?P<code>[A-Z]+(?:-[A-Z0-9]+)*)\]: \S.*$")
UNLOCATED = re.compile(r"^(?:(?P<where>.+?): )?error\[(?P<code>[A-Z]+(?:-[A-Z0-9]+)*)\]: \S.*$")


def cases() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if (p / "case.json").is_file())


def build(case: Path, dest: Path, spec: dict) -> Path:
    root = dest / "repo"
    if (case / "repo").is_dir():
        shutil.copytree(case / "repo", root, symlinks=True)
    root.mkdir(parents=True, exist_ok=True)  # git keeps no empty repo/ folder
    (root / ".git").mkdir(exist_ok=True)
    for rel in spec.get("mkdirs", []):
        (root / rel).mkdir(parents=True, exist_ok=True)
    for rel, expression in spec.get("generate", {}).items():
        content = eval(expression, dict(NAMESPACE))  # trusted test data: the corpus's own expressions
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content)
    for rel, target in spec.get("symlinks", {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / rel)
    for rel in spec.get("fifos", []):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(root / rel)
    for deep in spec.get("deep", []):  # deeper than Python's recursion limit: made and walked without recursing
        here = root / deep["path"]
        here.mkdir(parents=True, exist_ok=True)
        for _ in range(deep["depth"]):
            here = here / "d"
            os.mkdir(here)
        (here / deep["file"]).write_text(eval(deep["text"], dict(NAMESPACE)))  # trusted test data
    return root


def _entries(folder: Path) -> list[Path]:
    """Every entry under ``folder``, walked with a stack (a case may nest folders 1,500 deep)."""
    found: list[Path] = []
    pending = [folder]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                found.append(Path(entry.path))
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
    return sorted(found)


def remove_tree(folder: Path) -> None:
    """``shutil.rmtree`` without its recursion (pytest's own cleanup would fail on a 1,500-deep tree)."""
    entries = _entries(folder) if folder.is_dir() and not folder.is_symlink() else []
    for path in sorted(entries, key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()


def snapshot(folder: Path) -> dict[str, object]:
    """Every entry under ``folder``: file bytes, link targets, and what else sits there."""
    state: dict[str, object] = {}
    for path in _entries(folder):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            state[rel] = ("link", os.readlink(path))
        elif path.is_fifo():
            state[rel] = "fifo"
        elif path.is_file():
            state[rel] = path.read_bytes()
        else:
            state[rel] = "dir"
    return state


def _limit_child() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (int(WALL_SECONDS) * 2, int(WALL_SECONDS) * 2))


def _child_setup(spec: dict, gone: Path) -> Callable[[], None]:
    def setup() -> None:
        _limit_child()
        if spec.get("stdout") == "closed":
            os.close(1)
        if spec.get("cwd_deleted"):
            gone.mkdir()
            os.chdir(gone)
            os.rmdir(gone)

    return setup


def run_case(case: Path, tmp_path: Path) -> tuple[int, str, str, float, int, dict]:
    spec = json.loads((case / "case.json").read_text())
    root = build(case, tmp_path, spec)
    args = [a.replace("{repo}", str(root)) for a in spec["args"]]
    env: dict[str | bytes, str | bytes] = {k: v for k, v in os.environ.items()
                                           if not k.startswith(("ARGOCD_", "COZY_RENDER", "NO_COLOR"))}
    env["PYTHONPATH"] = str(REPO)
    env.update(spec.get("env", {}))
    for key, expression in spec.get("generate_env", {}).items():
        env[key] = eval(expression, dict(NAMESPACE))  # trusted test data
    if spec.get("env_hex"):
        env = {os.fsencode(k): os.fsencode(v) for k, v in env.items()}
        env.update({k.encode(): bytes.fromhex(v) for k, v in spec["env_hex"].items()})
    cwd = tmp_path / spec.get("cwd", "repo")
    before = snapshot(tmp_path)
    out_file, err_file = tmp_path.parent / f"{case.name}.out", tmp_path.parent / f"{case.name}.err"
    stdout_path = spec["stdout"] if spec.get("stdout", "").startswith("/dev/") else out_file
    with open(stdout_path, "wb") as out, open(err_file, "wb") as err:
        start = time.monotonic()
        out_file.write_bytes(b"")
        proc = subprocess.Popen([sys.executable, "-m", "renderer", *args], cwd=cwd, env=env,
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                preexec_fn=_child_setup(spec, tmp_path.parent / f"{case.name}.gone"))
        status = rusage = None
        while time.monotonic() - start < WALL_SECONDS * 3:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.01)
        else:
            proc.kill()
            proc.wait()
            pytest.fail(f"{case.name}: still running after {WALL_SECONDS * 3} s")
        # The budget is the child's own CPU time: wall time on a shared machine measures the neighbours
        # (the hard stop above still bounds the wall clock, at three times the budget).
        cpu = rusage.ru_utime + rusage.ru_stime
        proc.returncode = os.waitstatus_to_exitcode(status)
    after = snapshot(tmp_path)
    if spec.get("deep"):
        remove_tree(tmp_path)
    assert after == before, f"{case.name}: the run changed files in the case's folder"
    return (proc.returncode, out_file.read_bytes().decode("utf-8", "replace"),
            err_file.read_bytes().decode("utf-8", "replace"), cpu, rusage.ru_maxrss * 1024, spec)


@pytest.mark.parametrize("case", cases(), ids=lambda p: p.name)
def test_hostile_input_is_refused_cleanly(case: Path, tmp_path: Path) -> None:
    code, out, err, cpu, rss, spec = run_case(case, tmp_path / "case")
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    assert code == spec.get("exit", 3), f"exit {code}, expected {spec.get('exit', 3)}\n{err[-2000:]}"
    assert out == "", "a refused run printed to stdout"
    assert cpu <= WALL_SECONDS, f"took {cpu:.1f} s of CPU"
    assert rss <= MEMORY_BYTES, f"peak RSS {rss // 2**20} MiB"
    if spec.get("code") is None:  # a Click usage error (exit 2): Click's own format
        assert "Error:" in err
        return
    lines = err.rstrip("\n").split("\n")
    shape = LOCATED if spec.get("located", True) else UNLOCATED
    for line in lines:
        # a value from input is cut with a count (renderer/escape.py): no line echoes a 100 KB value
        assert len(line) <= 5_000, f"a {len(line)}-character message line"
        found = shape.match(line)
        assert found, f"not a one-line `file:line:col: error[CODE]: message` refusal: {line!r}"
        assert found["code"] == spec["code"], line
    if spec.get("where"):
        location = lines[0].split(": error[", 1)[0]
        assert spec["where"] in location + ":", f"{lines[0]!r} is not at {spec['where']!r}"


def test_the_corpus_covers_every_class() -> None:
    classes: dict[str, int] = {}
    for case in cases():
        kind = json.loads((case / "case.json").read_text())["class"]
        classes[kind] = classes.get(kind, 0) + 1
    assert set(classes) == {"yaml", "layering", "templating", "manifests", "values", "cli", "cmp"}
    assert sum(classes.values()) >= 120 and min(classes.values()) >= 10, classes
