"""Every documented example is a test (issue 31 item 3): each fenced shell block (```sh, ```bash,
```console, ```shell) of README.md and docs/**/*.md, and each "Examples" line of every command's
``--help``, runs with the installed ``cozy-render`` (the one beside this interpreter) from the folder
its page names, in a temporary copy of the repository, and exits as documented.

What a page says about its examples, in HTML comments the reader does not see rendered:

- ``<!-- examples run from: DIR -->`` once per page: the folder (of the repository) its blocks run
  from; every page with a shell block says it (the prose says so too);
- ``<!-- example: ... -->`` on the line(s) just above a block, ``;``-separated:
  ``exit N`` (the block's documented exit code, default 0), ``from DIR`` (this block's folder),
  ``needs a cluster`` / ``needs docker`` / ``needs the network`` (not run here: skipped, the reason
  shown), ``shell zsh`` (run by that shell; skipped with the reason where it is not installed).

A ``--help`` example says the same in a trailing comment: ``# needs a cluster``, ``# exits 1``; the
help examples run from the repository root (``renderer.cli.EXAMPLES``).

A block runs as one script (``set -e``: its exit code is the first failing command's, or the last
one's); a ``console`` block runs its ``$ `` lines and its other lines are what they print (stdout,
compared byte for byte). The copy holds the repository's files but the
package and test sources (the installed package is what runs), as a Git repository with two
commits, ``main`` tracking ``origin/main``, so revision examples (``--base origin/main``,
``HEAD~1``, ``@{upstream}``) name revisions that exist. ``HOME`` is a scratch folder, so nothing is
written outside the copy. Examples that run ``effective`` or ``--chart helm`` need helm (on PATH or
in .ci/bin); without one they skip, saying so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import click
import pytest

from renderer.cli import main
from tests.conftest import REPO

PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])
FENCE = re.compile(r"^```(sh|bash|console|shell)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
BLOCK_MARKER = re.compile(r"^<!--\s*example:\s*(.*?)\s*-->\s*$")
PAGE_FOLDER = re.compile(r"<!--\s*examples run from:\s*(\S+)\s*-->")
NEEDS = {"a cluster", "docker", "the network"}
HELP_NEEDS = re.compile(r"#.*\bneeds (a cluster|docker|the network)\b")
HELP_EXIT = re.compile(r"#.*\bexits? (\d+)\b")
COPIED_OUT = {"renderer", "tests", "bench", ".git", ".venv", "cozy_render.egg-info", "build", "dist"}
TIMEOUT = 300


class Example(NamedTuple):
    where: str  # page:line, or "help: COMMAND"
    script: str
    folder: str  # relative to the repository root
    exit_code: int
    needs: str  # "" or a reason it is not run here
    shell: str
    expected: str | None = None  # a console transcript's output: what stdout must be, byte for byte


PROBLEMS: list[str] = []  # markers the test cannot read, reported by test_every_marker_is_understood


def _block_examples(page: Path) -> list[Example]:
    text = page.read_text(encoding="utf-8")
    rel = page.relative_to(REPO).as_posix()
    page_folder = PAGE_FOLDER.search(text)
    out = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        where = f"{rel}:{line}"
        if not page_folder:
            PROBLEMS.append(f"{rel}: has shell examples but no <!-- examples run from: DIR --> marker")
        options = {"folder": page_folder.group(1) if page_folder else ".", "exit": "0", "needs": "", "shell": "bash"}
        above = text[:match.start()].rstrip("\n").splitlines()
        while above and BLOCK_MARKER.match(above[-1]):
            for part in BLOCK_MARKER.match(above.pop()).group(1).split(";"):  # type: ignore[union-attr]
                word, _, value = part.strip().partition(" ")
                if word == "exit":
                    options["exit"] = value
                elif word == "from":
                    options["folder"] = value
                elif word == "needs":
                    if value.split(" (")[0] not in NEEDS:
                        PROBLEMS.append(f"{where}: needs {value!r}: one of {sorted(NEEDS)}")
                    options["needs"] = value
                elif word == "shell":
                    options["shell"] = value
                else:
                    PROBLEMS.append(f"{where}: unknown example marker {part!r}")
        body, expected = match.group(2), None
        if match.group(1) == "console":
            body, expected = _console_commands(body), _console_output(body)
        out.append(Example(where, body, options["folder"], int(options["exit"]), options["needs"], options["shell"],
                           expected))
    return out


def _console_commands(block: str) -> str:
    """The ``$ `` lines of a console transcript, each with the lines its trailing ``\\`` continues."""
    out, continued = [], False
    for line in block.splitlines():
        if line.startswith("$ ") or continued:
            out.append((line[2:] if not continued else line) + "\n")
            continued = line.endswith("\\")
    return "".join(out)


def _console_output(block: str) -> str:
    """The lines of a console transcript that are not commands: what the commands print."""
    out, continued = [], False
    for line in block.splitlines():
        if not (line.startswith("$ ") or continued):
            out.append(line + "\n")
        continued = (line.startswith("$ ") or continued) and line.endswith("\\")
    return "".join(out)


def _help_lines(group: click.Group, prefix: str = "") -> list[tuple[str, str]]:
    out = []
    for name, command in sorted(group.commands.items()):
        epilog = command.epilog or ""
        lines = epilog.split("Examples:\n", 1)[1].splitlines() if "Examples:\n" in epilog else []
        out += [(prefix + name, line.strip()) for line in lines if line.strip()]
        if isinstance(command, click.Group):
            out += _help_lines(command, f"{prefix}{name} ")
    return out


def _help_examples() -> list[Example]:
    out = []
    for name, line in _help_lines(main):
        needs = HELP_NEEDS.search(line)
        code = HELP_EXIT.search(line)
        out.append(Example(f"help: {name}: {line}", line + "\n", ".", int(code.group(1)) if code else 0,
                           needs.group(1) if needs else "", "bash"))
    return out


EXAMPLES = [e for page in PAGES for e in _block_examples(page)] + _help_examples()


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env=_env(root.parent / "home", root.parent)).stdout


def _env(home: Path, scratch: Path) -> dict[str, str]:
    path = [str(Path(sys.executable).parent)]
    helm = _helm()  # on PATH (.ci/run puts the checkout's .ci/bin there) or in this tree's .ci/bin
    if helm is not None:
        path.append(str(Path(helm).parent))
    path += ["/usr/local/bin", "/usr/bin", "/bin"]
    return {"PATH": os.pathsep.join(path), "HOME": str(home), "XDG_CACHE_HOME": str(scratch / "cache"),
            "XDG_CONFIG_HOME": str(home / ".config"), "LANG": "C.UTF-8", "NO_COLOR": "1", "TERM": "dumb",
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "docs",
            "GIT_AUTHOR_EMAIL": "docs@example.invalid", "GIT_COMMITTER_NAME": "docs",
            "GIT_COMMITTER_EMAIL": "docs@example.invalid"}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's files (what `git ls-files` lists, uncommitted ones too) but the package and
    test sources, as a Git repository with two commits: `main` tracking `origin/main`."""
    root = tmp_path_factory.mktemp("docs-examples") / "repo"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout.split("\0")
    for rel in filter(None, listed):
        source = REPO / rel
        if rel.split("/", 1)[0] in COPIED_OUT or not source.is_file():
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, root / rel, follow_symlinks=False)
    (root.parent / "home").mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    readme = root / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    _git(root, "commit", "-q", "-am", "a second commit (HEAD~1 exists)")
    _git(root, "remote", "add", "origin", str(root))  # a remote that is never fetched: no network
    _git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    _git(root, "branch", "-q", "--set-upstream-to", "origin/main")
    return root


def _helm() -> str | None:
    return shutil.which("helm") or shutil.which("helm", path=str(REPO / ".ci" / "bin"))


def test_the_installed_cli_is_beside_this_interpreter() -> None:
    assert (Path(sys.executable).parent / "cozy-render").is_file(), "install the package into this environment"


def test_every_marker_is_understood() -> None:
    assert PROBLEMS == []


def test_every_page_with_examples_is_covered() -> None:
    """A page's blocks are found (a fence spelled ```sh with no language tag elsewhere would hide one)."""
    assert {e.where.split(":")[0] for e in EXAMPLES if not e.where.startswith("help:")} >= {
        "README.md", "docs/getting-started.md", "docs/how-to/gpu.md", "docs/how-to/hubble.md", "docs/how-to/vlans.md"}
    assert len([e for e in EXAMPLES if e.where.startswith("help:")]) >= 30


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.where for e in EXAMPLES])
def test_documented_example_runs_as_written(example: Example, pristine: Path, tmp_path: Path) -> None:
    if example.needs:  # not run here; the commands it names exist all the same
        named = re.findall(r"\bcozy-render ([a-z][a-z-]*)", example.script)
        assert set(named) <= set(main.commands), f"{example.where}: {sorted(set(named) - set(main.commands))}"
        pytest.skip(f"{example.where}: needs {example.needs} (marked in the page)")
    shell = shutil.which(example.shell)
    if shell is None:
        pytest.skip(f"{example.where}: runs in {example.shell}, which is not installed here")
    if ("cozy-render effective" in example.script or "--chart helm" in example.script) and _helm() is None:
        pytest.skip(f"{example.where}: needs helm 3 (none on PATH or in .ci/bin; bash .ci/run fetches it)")
    root = tmp_path / "repo"
    shutil.copytree(pristine, root, symlinks=True)
    home = tmp_path / "home"
    (home / ".config" / "fish" / "completions").mkdir(parents=True)  # what fish creates on its first start
    env = _env(home, tmp_path)
    folder = root / example.folder
    assert folder.is_dir(), f"{example.where}: runs from {example.folder}, which the repository does not have"
    done = subprocess.run([shell, "-e", "-c", example.script], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    assert "Traceback" not in done.stderr, f"{example.where}:\n{done.stderr}"
    assert done.returncode == example.exit_code, (
        f"{example.where}: exit {done.returncode}, documented {example.exit_code}\n--- script\n{example.script}"
        f"--- stderr\n{done.stderr[-3000:]}")
    if example.expected is not None:  # a transcript shows what the command prints
        assert done.stdout == example.expected, f"{example.where}: the transcript is not what the command prints"
