"""The render cache's start-up path (issue 24 item 1): a hit on `render PATH` or `cmp generate` finds
the entry a full run stored, without building request objects or importing more than `os`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from renderer import cache, entry
from renderer.load import roots
from renderer.requests import cache_fields
from tests.conftest import REPO


@pytest.mark.parametrize("path", ["clusters/c1", "clusters/c1/", "./clusters//c1", "clusters/c1/cluster.yaml",
                                  ".", "/", "//", "//tmp", "///tmp", "clusters/c1/../c1"])
def test_fast_fields_are_the_fields_of_the_request_the_fast_path_builds(path: str, monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    (tmp_path / "clusters" / "c1").mkdir(parents=True)
    (tmp_path / "clusters" / "c1" / "cluster.yaml").write_text("")
    (tmp_path / "x").mkdir()
    monkeypatch.chdir(tmp_path)
    seen: list[object] = []
    from renderer.commands import render

    monkeypatch.setattr(render, "run", seen.append)
    body = entry.fast_path(["render", path])
    assert body is not None
    body()
    assert cache.fast_fields(["render", path], os.environ) == cache_fields(seen[0])  # type: ignore[arg-type]


@pytest.mark.parametrize("env", [
    {},
    {"ARGOCD_APP_PARAMETERS": '[{"name": "strict", "string": "true"}]', "ARGOCD_APP_SOURCE_PATH": "clusters/c1",
     "ARGOCD_ENV_strict": "true", "ARGOCD_ENV_chart": "model", "KUBE_VERSION": "v1.31.2", "OTHER": "ignored"},
    {"ARGOCD_ENV_b": "2", "ARGOCD_ENV_a": "it's \"quoted\"\n"},
])
def test_fast_fields_of_cmp_generate_are_the_fields_of_its_request(env: dict[str, str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("ARGOCD_") or name == "KUBE_VERSION":
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    seen: list[object] = []
    from renderer.commands import cmp

    monkeypatch.setattr(cmp, "generate", seen.append)
    body = entry.fast_path(["cmp", "generate"])
    assert body is not None
    body()
    assert cache.fast_fields(["cmp", "generate"], os.environ) == cache_fields(seen[0])  # type: ignore[arg-type]


@pytest.mark.parametrize("argv", [["render"], ["render", "--help"], ["render", "x", "--strict"], ["cmp"],
                                  ["check", "."], ["render", "does/not/exist"]])
def test_other_commands_have_no_fast_fields(argv: list[str]) -> None:
    assert cache.fast_fields(argv, {}) is None


@pytest.mark.parametrize(("cwd", "source", "expected"), [
    ("/tmp/_cmp_server/ab12/overlays/clusters/c1", "overlays/clusters/c1", (("/", "tmp", "_cmp_server", "ab12"), "")),
    ("/tmp/_cmp_server/ab12/clusters/c1", "overlays/clusters/c1", (("/", "tmp", "_cmp_server", "ab12"), "overlays")),
    ("/repo/clusters/c1", "./clusters//c1/", (("/", "repo"), "")),
    ("/repo/clusters/c1", "", None),
    ("/repo/clusters/c1", "other/c1", None),
])
def test_checkout_parts_is_what_cmp_checkout_finds(cwd: str, source: str, expected: object) -> None:
    from renderer.cmp import checkout

    assert roots.checkout_parts(Path(cwd).parts, source) == expected
    found = checkout(Path(cwd), source)
    assert (None if found is None else (found.root.parts, found.prefix)) == expected


def test_a_parent_folder_in_the_source_path_is_refused_not_replayed() -> None:
    """CMP-SOURCE-PATH: the fast path finds no checkout (nothing to replay) and cmp refuses it."""
    from renderer.cmp import checkout
    from renderer.errors import RenderError

    assert roots.checkout_parts(Path("/repo/clusters/c1").parts, "../clusters/c1") is None
    with pytest.raises(RenderError) as caught:
        checkout(Path("/repo/clusters/c1"), "../clusters/c1")
    assert caught.value.findings[0].code == "CMP-SOURCE-PATH"


def test_root_path_is_the_root_of_find_root(samples: Path) -> None:
    for rel in ["clusters/gpu-apt-01/cluster.yaml", "clusters/gpu-apt-01", "base/cluster.yaml"]:
        target = samples / rel
        assert roots.root_path(roots.cluster_file_path(str(target))) == str(roots.find_root(
            roots.find_cluster_file(target)))


def test_the_remembered_listing_gives_the_walked_fingerprint(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    walked = cache.fingerprint()
    assert cache.fingerprint(folder) == walked  # walks and (once the package is settled) remembers
    assert cache.fingerprint(folder) == walked  # from the remembered listing
    memo = list(folder.glob("code-*.listing"))
    assert len(memo) <= 1


def test_stat_lines_relative_to_each_folder_are_the_stat_lines(tmp_path: Path) -> None:
    files = [str(p) for p in sorted(Path(cache.__file__).parent.rglob("*.py"))][:50]
    (tmp_path / "link").symlink_to(files[0])
    files.append(str(tmp_path / "link"))  # followed, as os.stat does
    assert cache._stat_lines(files) == [cache._stat_line(p) for p in files]
    with pytest.raises(FileNotFoundError):
        cache._stat_lines([str(tmp_path / "gone.py")])


def test_a_listing_is_forgotten_when_a_folder_of_it_changes(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "a.py").write_text("a = 1\n")
    listing = cache._Listing([str(code / "a.py")], [("lib", "")], [str(code)])
    text = listing.dump()
    again = cache._Listing.load(text)
    assert again is not None and again.files == listing.files and again.libraries == listing.libraries
    assert cache._Listing.load(text.rpartition("\0")[0]) is None  # cut short
    time.sleep(0.01)
    (code / "b.py").write_text("b = 1\n")  # a file added: the folder's mtime moves
    assert cache._Listing.load(text) is None
    assert cache._Listing.load("something else\0Fx") is None


def test_a_listing_is_not_remembered_while_its_folders_are_fresh(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    monkeypatch.setattr(cache._Listing, "walk", classmethod(lambda cls: cls([], [], [str(fresh)])))
    cache.fingerprint(folder)
    assert not list(folder.glob("code-*"))  # changed just now: it could change again unseen


def test_an_edited_package_file_changes_the_fingerprint_even_with_a_remembered_listing(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    code = tmp_path / "code"
    code.mkdir()
    module = code / "a.py"
    module.write_text("a = 1\n")
    old = time.time() - 60
    os.utime(code, (old, old))
    monkeypatch.setattr(cache._Listing, "walk", classmethod(lambda cls: cls([str(module)], [], [str(code)])))
    first = cache.fingerprint(folder)
    assert list(folder.glob("code-*"))
    monkeypatch.setattr(cache._Listing, "walk", classmethod(lambda cls: pytest.fail("walked again")))
    with module.open("a") as handle:  # edited in place: the folder's mtime does not move
        handle.write("b = 2\n")
    assert cache.fingerprint(folder) != first


# Modules imported by cozy-render itself. The child runs without `site` (-S: a development install's
# editable finder imports pathlib and re at start-up), with the libraries' folder on PYTHONPATH.
HIT_PROBE = ("import sys, atexit; before = set(sys.modules); atexit.register(lambda: sys.stderr.write("
             "'|LOADED=%s' % ','.join(sorted(m for m in ('pathlib', 'typing', 'json', 're', 'enum', 'ruamel', "
             "'renderer.requests', 'renderer.errors') if m in sys.modules and m not in before))));"
             "from renderer.entry import main; sys.argv[0] = 'cozy-render'; main()")


@pytest.mark.parametrize("argv", [["render", "clusters/gpu-apt-01"], ["cmp", "generate"]])
def test_a_hit_imports_only_what_replaying_needs(argv: list[str], samples: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER"))}
    import sysconfig

    env.update(PYTHONPATH=os.pathsep.join([str(REPO), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]),
               COZY_RENDER_CACHE_DIR=str(tmp_path / "cache"))
    cwd = samples
    if argv[0] == "cmp":
        cwd = samples / "clusters" / "gpu-apt-01"
        env["ARGOCD_APP_SOURCE_PATH"] = "clusters/gpu-apt-01"
    runs = [subprocess.run([sys.executable, "-S", "-c", HIT_PROBE, *argv], cwd=cwd, env=env, capture_output=True, text=True)
            for _ in range(2)]
    miss, hit = runs
    assert miss.returncode == hit.returncode == 0
    assert miss.stdout == hit.stdout and miss.stdout.startswith("apiVersion:")
    assert miss.stderr.partition("|LOADED=")[0] == hit.stderr.partition("|LOADED=")[0]
    assert "renderer.requests" in miss.stderr.partition("|LOADED=")[2]
    # ruamel (the namespace package, found for the fingerprint) is all; not even pathlib, re or typing
    assert hit.stderr.partition("|LOADED=")[2] == "ruamel"


def test_a_deleted_working_directory_is_not_a_hit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The full path then refuses with CLI-CWD (renderer.streams), as without the cache."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    env = {"COZY_RENDER_CACHE_DIR": str(tmp_path / "cache"), "ARGOCD_APP_SOURCE_PATH": "clusters/c1"}
    assert cache.replay(["render", "."], env) is None
    assert cache.replay(["cmp", "generate"], env) is None
