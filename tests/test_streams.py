"""A stdout whose reader goes away never changes a command's exit code (issue 25 item 12).

``cozy-render diff ... | head -1`` must still exit 1 when there are differences (``kubectl diff``'s
convention), ``check | head`` must still fail on an error finding: the reader closing the pipe is the
reader's choice, not a result (renderer/streams.py, README "Errors and exit codes"). Each command runs
twice in a real child process: once with stdout on a file, once on a real pipe whose reading end is
already closed (every write gets EPIPE), and both runs must end with the same exit code, with no
traceback, internal error or OUT-STREAM on stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import OVERLAYS, REPO

GPU = "clusters/gpu-apt-01"
VLAN = "clusters/vlan-apt-01"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("streams") / "repo"
    shutil.copytree(OVERLAYS, root)
    (root / ".git").mkdir()
    rendered = _run(["render", GPU, "-o", "json"], root, subprocess.PIPE)
    live = json.loads(rendered.stdout)
    (root / "same.json").write_text(json.dumps(live))
    live["items"][0]["metadata"].setdefault("labels", {})["changed-on-the-cluster"] = "yes"
    (root / "changed.json").write_text(json.dumps(live))
    return root


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER", "KUBECTL_"))}
    env["PYTHONPATH"] = str(REPO)
    env["COZY_RENDER_CACHE"] = "off"
    return env


def _run(args: list[str], cwd: Path, stdout: int) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "renderer", *args], cwd=cwd, env=_env(), stdout=stdout,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120, check=False)


COMMANDS = {
    "render": (["render", GPU], 0),
    "render --annotate": (["render", GPU, "--annotate"], 0),
    "render --all": (["render", "--all", "clusters"], 0),
    "check": (["check", GPU], None),
    "check -o json": (["check", GPU, "-o", "json"], None),
    "diff, differences": (["diff", GPU, "--snapshot", "changed.json"], 1),
    "diff -o json, differences": (["diff", GPU, "--snapshot", "changed.json", "-o", "json"], 1),
    "diff, none": (["diff", GPU, "--snapshot", "same.json"], 0),
    "explain": (["explain", GPU], 0),
    "explain --rendered": (["explain", GPU, "--rendered"], 0),
    "inputs": (["inputs", GPU], 0),
    "ls": (["ls", "clusters"], None),
    "rules": (["rules"], 0),
    "rules-doc": (["rules-doc"], 0),
    "schema overlay": (["schema", "overlay"], 0),
    "completion": (["completion", "bash"], 0),
    "platforms": (["platforms"], 0),
    "node-config": (["node-config", VLAN], 0),
    "vm-snippet": (["vm-snippet", VLAN], 0),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_reader_leaving_early_keeps_the_exit_code(name: str, repo: Path) -> None:
    args, expected = COMMANDS[name]
    to_file = _run(args, repo, subprocess.DEVNULL)
    if expected is not None:
        assert to_file.returncode == expected, to_file.stderr.decode()[-2000:]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write is EPIPE
    try:
        to_pipe = _run(args, repo, write)
    finally:
        os.close(write)
    err = to_pipe.stderr.decode()
    assert "Traceback" not in err and "internal error" not in err and "OUT-STREAM" not in err, err[-2000:]
    assert to_pipe.returncode == to_file.returncode, err[-2000:]


def test_diff_piped_to_head_exits_1_on_differences(repo: Path) -> None:
    """The shell form: a real ``head`` reads one byte and leaves."""
    env = _env()
    command = (f"{sys.executable} -m renderer diff {GPU} --snapshot changed.json 2>/dev/null "
               "| head -c 1 >/dev/null; echo ${PIPESTATUS[0]}")
    done = subprocess.run(["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=120,
                          check=True)
    assert done.stdout.strip() == "1"
