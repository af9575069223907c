"""What users install is what CI tests (issue 31): the wheel holds the package tree and nothing else, the
sdist holds the source tree its tests read, both carry the licences, and the maintainer tools refuse to
write into an installed package.

The artefacts are the ones `python -m build` wrote for .ci/run, named by COZY_RENDER_WHEEL and
COZY_RENDER_SDIST; COZY_RENDER_CHECKOUT names the checkout they were built from (the suite itself runs
from the unpacked sdist, which cannot be compared with itself). A run without them (a checkout's `pytest`) skips the artefact tests and says why;
under COZY_RENDER_TEST_INSTALLED=1 (.ci/run) a missing artefact fails instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import renderer
from renderer.codes import CODE_MODULES
from renderer.generated_files import in_source_tree, refusal
from tests.conftest import INSTALLED, REPO

# The suite against the installed wheel, from the unpacked sdist (VENV: the fresh virtual environment).
INSTALLED_COMMAND = 'COZY_RENDER_TEST_INSTALLED=1 "$VENV/bin/pytest" -q -p no:cacheprovider --import-mode=importlib'
LICENCES = ("LICENSE", "NOTICE", "renderer/platform_chart/charts/LICENSE")
# The folders MANIFEST.in grafts whole into the sdist.
SOURCE_FOLDERS = ("renderer", "variants", "tests", "overlays", "schemas", "docs", "bench")
# The source tree the artefacts were built from: the checkout under .ci/run, else this tree.
SOURCE = Path(os.environ.get("COZY_RENDER_CHECKOUT") or REPO).resolve()


def artefact(variable: str) -> Path:
    named = os.environ.get(variable)
    if not named:
        if INSTALLED:
            pytest.fail(f"COZY_RENDER_TEST_INSTALLED=1 but {variable} names no built artefact (.ci/run sets it)")
        pytest.skip(f"{variable} is not set: bash .ci/run builds the wheel and the sdist and names them")
    path = Path(named)
    assert path.is_file(), f"{variable}={named}: no such file"
    return path


def shipped(path: Path) -> bool:
    """A file of the source tree that a build takes (bytecode caches are not sources)."""
    return "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo")


def package_tree() -> set[str]:
    """Every file the wheel must hold, by its path in the wheel: renderer/ as it is, variants/ as
    renderer/variants/ (pyproject.toml [tool.setuptools.package-dir])."""
    names = {p.relative_to(SOURCE).as_posix() for p in (SOURCE / "renderer").rglob("*") if p.is_file() and shipped(p)}
    names |= {"renderer/variants/" + p.relative_to(SOURCE / "variants").as_posix()
              for p in (SOURCE / "variants").rglob("*") if p.is_file() and shipped(p)}
    return names


def wheel_names(wheel: Path) -> tuple[set[str], set[str]]:
    """(package files, .dist-info files) of the wheel."""
    with zipfile.ZipFile(wheel) as archive:
        names = {n for n in archive.namelist() if not n.endswith("/")}
    info = {n for n in names if n.split("/")[0].endswith(".dist-info")}
    return names - info, info


def sdist_names(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as archive:
        members = [m.name for m in archive.getmembers() if m.isfile()]
    top = {m.split("/")[0] for m in members}
    assert len(top) == 1, top
    return {m.split("/", 1)[1] for m in members}


def test_the_wheel_holds_the_package_tree_and_nothing_else() -> None:
    """The bug of issue 31: a hand-kept package list left renderer/doctor/ out, and `rules` exited 4."""
    files, _ = wheel_names(artefact("COZY_RENDER_WHEEL"))
    expected = package_tree()
    assert sorted(expected - files) == [], "in the package tree, missing from the wheel"
    assert sorted(files - expected) == [], "in the wheel, not in the package tree"
    assert {name.split("/")[0] for name in files} == {"renderer"}  # no tests, no top-level modules
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in files)


def test_every_module_a_registry_names_is_in_the_wheel() -> None:
    """renderer.codes.CODE_MODULES names modules in strings: no import scan sees them, the wheel must."""
    files, _ = wheel_names(artefact("COZY_RENDER_WHEEL"))
    for name in CODE_MODULES:
        path = name.replace(".", "/")
        assert f"{path}.py" in files or f"{path}/__init__.py" in files, name


def test_the_wheel_carries_the_licences_and_says_which() -> None:
    wheel = artefact("COZY_RENDER_WHEEL")
    files, info = wheel_names(wheel)
    (dist_info,) = {n.split("/")[0] for n in info}
    assert {f"{dist_info}/licenses/{name}" for name in LICENCES} <= info
    assert "renderer/platform_chart/charts/LICENSE" in files  # beside the vendored chart, too
    with zipfile.ZipFile(wheel) as archive:
        metadata = Parser().parsestr(archive.read(f"{dist_info}/METADATA").decode())
    assert metadata["License-Expression"] == "Apache-2.0"
    assert sorted(metadata.get_all("License-File") or []) == sorted(LICENCES)
    assert metadata["Version"] == renderer.__version__


def test_the_sdist_holds_the_source_tree_its_tests_read() -> None:
    names = sdist_names(artefact("COZY_RENDER_SDIST"))
    for name in (*LICENCES, "pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "CHANGELOG.md",
                 "tests/conftest.py", "tests/__init__.py", ".ci/run", ".pre-commit-hooks.yaml", ".dockerignore"):
        assert name in names, name
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)
    tracked = subprocess.run(["git", "ls-files"], cwd=SOURCE, capture_output=True, text=True).stdout
    if tracked:  # a checkout: every tracked file (one absent from the work tree is a deletion not committed yet)
        wanted = {line for line in tracked.splitlines() if (SOURCE / line).is_file()}
    else:  # an unpacked sdist (its `git init` tracks nothing): the grafted folders as they are
        wanted = {p.relative_to(SOURCE).as_posix() for folder in SOURCE_FOLDERS for p in (SOURCE / folder).rglob("*")
                  if p.is_file() and shipped(p)}
    assert sorted(wanted - names) == []


def test_the_maintainer_tools_refuse_outside_a_source_tree(tmp_path: Path) -> None:
    """Installed, `python -m renderer.generate` took site-packages for the checkout (issue 31)."""
    assert in_source_tree(REPO)
    assert refusal("python -m renderer.generate", REPO) is None
    installed = tmp_path / "site-packages"
    (installed / "renderer").mkdir(parents=True)
    line = refusal("python -m renderer.generate", installed)
    assert line is not None and "\n" not in line
    assert line.startswith("python -m renderer.generate: error: ") and str(installed / "renderer") in line


TOOLS = [["renderer.generate"], ["renderer.generate", "--check"], ["renderer.check.schemas.build", "--check"],
         ["renderer.platform_chart.vendor", "/nonexistent/cozystack", "v9.9.9", "--no-generate"]]


@pytest.mark.parametrize("argv", TOOLS, ids=lambda argv: " ".join(argv[:2]))
def test_installed_tools_refuse_in_one_line_and_write_nothing(argv: list[str], tmp_path: Path) -> None:
    if not INSTALLED:
        pytest.skip("needs the installed wheel (COZY_RENDER_TEST_INSTALLED=1, bash .ci/run)")
    site = Path(renderer.__file__).resolve().parent.parent
    before = sorted(p.name for p in site.iterdir())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # cwd: an empty folder, so `python -m` finds the installed package, not a source tree
    proc = subprocess.run([sys.executable, "-m", *argv], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert re.match(rf"python -m {re.escape(argv[0])}: error: .* is an installed package", proc.stderr)
    assert sorted(p.name for p in site.iterdir()) == before  # no site-packages/docs/ or anything else
    assert list(tmp_path.iterdir()) == []


def test_the_readme_names_the_test_command_ci_runs() -> None:
    """README's test commands and .ci/run stay in step (the checkout's and the installed wheel's)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert INSTALLED_COMMAND in run and INSTALLED_COMMAND in readme
    assert ".venv/bin/python -m pytest -q" in readme  # the checkout's (editable install)
    wheels = set(re.findall(r"cozy_render-[^\s\"'`\[]+\.whl", readme))
    assert wheels == {f"cozy_render-{renderer.__version__}-py3-none-any.whl"}, wheels
