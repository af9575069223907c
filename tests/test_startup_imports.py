"""What a cold `render PATH` / `cmp generate` imports: start-up is paid on every Argo CD refresh, so heavy
libraries stay off the path when the render does not need them. Modules, not time; the lists are the
budget's (renderer.startup_budget, docs/startup-budget.md)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import renderer
from renderer.startup_budget import HEAVY as HEAVY_LIBRARIES
from renderer.startup_budget import HEAVY_PARTS, HIT_ABSENT, HIT_MODULES

# Where the package under test lives: the checkout (editable install), or site-packages when .ci/run
# tests the installed wheel (the probe must import that, not the sdist's copy beside the tests).
PACKAGE_ROOT = Path(renderer.__file__).resolve().parent.parent

# Imported by other commands only (or never by a render of these samples): each costs milliseconds.
HEAVY = tuple(name for name, _why in HEAVY_LIBRARIES)

PROBE = ("import sys, atexit; before = set(sys.modules); atexit.register(lambda: sys.stderr.write("
         "'|LOADED=' + ' '.join(sorted(m for m in sys.modules if m not in before))));"
         "from renderer.entry import main; sys.argv[0] = 'cozy-render'; main()")


def loaded(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str],
                                                                                 set[str]]:
    """Run cozy-render in a child without `site` (a development install's editable finder imports modules
    of its own at start-up); the libraries' folders are on PYTHONPATH instead."""
    proc = run_probe(PROBE, argv, cwd, env)
    _, _, modules = proc.stderr.rpartition("|LOADED=")
    return proc, set(modules.split())


def run_probe(probe: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``probe`` (Python that ends by calling cozy-render's main) with ``argv``, in a child without `site`."""
    paths = sysconfig.get_paths()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER"))}
    base["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_ROOT), paths["purelib"], paths["platlib"]])
    return subprocess.run([sys.executable, "-S", "-c", probe, *argv], cwd=cwd, capture_output=True, text=True,
                          env={**base, **(env or {})})


@pytest.mark.parametrize("argv", [["render", "clusters/gpu-apt-01"], ["cmp", "generate"]])
def test_a_cold_render_leaves_heavy_libraries_alone(argv: list[str], samples: Path) -> None:
    cwd, env = samples, {}
    if argv[0] == "cmp":
        cwd, env = samples / "clusters" / "gpu-apt-01", {"ARGOCD_APP_SOURCE_PATH": "clusters/gpu-apt-01"}
    proc, modules = loaded(argv, cwd, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("apiVersion:")
    assert "ruamel.yaml" in modules and "renderer.pipeline" in modules  # the probe sees the render's imports
    assert "fastjsonschema.exceptions" in modules  # the generated validators ran
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY) == []
    assert sorted(m for m in modules if m.startswith(tuple(name for name, _why in HEAVY_PARTS))) == []


def test_the_render_cache_hit_imports_no_library(samples: Path, tmp_path: Path) -> None:
    env = {"COZY_RENDER_CACHE_DIR": str(tmp_path / "cache")}
    loaded(["render", "clusters/gpu-apt-01"], samples, env)
    proc, modules = loaded(["render", "clusters/gpu-apt-01"], samples, env)
    assert proc.returncode == 0 and proc.stdout.startswith("apiVersion:")
    assert not modules & set(HIT_ABSENT)
    assert not any(m.startswith("renderer.") and m not in HIT_MODULES
                   for m in modules), sorted(m for m in modules if m.startswith("renderer"))


def _defines_named_tuple(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.ClassDef) and any(getattr(b, "id", None) == "NamedTuple" for b in node.bases)
               for node in ast.walk(tree))


def _future_annotations(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(a.name == "annotations" for a in node.names) for node in tree.body)


def test_named_tuples_on_the_start_up_path_have_evaluated_annotations(samples: Path) -> None:
    """typing.NamedTuple compiles each string annotation (a ForwardRef) when the class is made: with
    `from __future__ import annotations` a module of requests cost ~8 % of a cold render."""
    _, modules = loaded(["render", "clusters/gpu-apt-01"], samples)
    _, cmp_modules = loaded(["cmp", "generate"], samples / "clusters" / "gpu-apt-01",
                            {"ARGOCD_APP_SOURCE_PATH": "clusters/gpu-apt-01"})
    modules |= cmp_modules
    offenders = []
    for name in sorted(m for m in modules if m.startswith("renderer")):
        parts = name.split(".")
        path = PACKAGE_ROOT.joinpath(*parts).with_suffix(".py")
        if not path.exists():
            path = PACKAGE_ROOT.joinpath(*parts, "__init__.py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if _defines_named_tuple(tree) and _future_annotations(tree):
            offenders.append(name)
    assert offenders == []


def test_a_cold_render_spends_no_time_collecting_what_start_up_keeps(samples: Path) -> None:
    """renderer.entry raises the collector's young-generation threshold: with CPython's default a cold
    render ran ~18 collections over the modules it had just loaded (issue 24)."""
    probe = ("import gc, sys; runs = [];"  # collections once main() has set the threshold
             "gc.callbacks.append(lambda phase, info: phase == 'stop' and gc.get_threshold()[0] > 700 and runs.append(1));"
             "import atexit; atexit.register(lambda: sys.stderr.write(f'|COLLECTIONS={len(runs)}'));"
             "from renderer.entry import main; sys.argv[0] = 'cozy-render'; main()")
    proc = run_probe(probe, ["render", "clusters/gpu-talos-01"], samples)
    assert proc.returncode == 0, proc.stderr
    collections = int(proc.stderr.rpartition("|COLLECTIONS=")[2])
    assert collections <= 1, f"{collections} collections during one cold render"
