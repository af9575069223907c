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
from tests.conftest import REPO


@pytest.mark.parametrize("path", ["clusters/c1", "clusters/c1/", "./clusters//c1", "clusters/c1/cluster.yaml",
                                  ".", "/", "//", "//tmp", "///tmp", "clusters/c1/../c1"])
def test_the_render_request_is_built_from_the_arguments_alone(path: str, monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    """The key of `render PATH` is its raw arguments: the request must not depend on anything else."""
    (tmp_path / "clusters" / "c1").mkdir(parents=True)
    (tmp_path / "clusters" / "c1" / "cluster.yaml").write_text("")
    monkeypatch.chdir(tmp_path)
    from renderer.commands import render

    seen: list[tuple[object, object]] = []
    monkeypatch.setattr(render, "run", lambda req, key=None: seen.append((req, key)))
    monkeypatch.setenv("COZY_RENDER_CACHE_DIR", str(tmp_path / "cache"))
    for noise in ({}, {"KUBE_VERSION": "v1.30.0", "ARGOCD_ENV_strict": "true", "OTHER": "x"}):
        with monkeypatch.context() as scoped:
            for name, value in noise.items():
                scoped.setenv(name, value)
            body = entry.fast_path(["render", path])
            assert body is not None
            body()
    (first, key), (second, _) = seen
    assert first == second  # the environment changes the key (below), never the request
    assert key == cache.argv_fields(["render", path], {})


CMP_ENVIRONMENTS = [
    {},
    {"ARGOCD_APP_PARAMETERS": '[{"name": "strict", "string": "true"}]', "ARGOCD_APP_SOURCE_PATH": "clusters/c1",
     "ARGOCD_ENV_strict": "true", "ARGOCD_ENV_chart": "model", "KUBE_VERSION": "v1.31.2"},
    {"ARGOCD_ENV_b": "2", "ARGOCD_ENV_a": "it's \"quoted\"\n"},
]


@pytest.mark.parametrize("env", CMP_ENVIRONMENTS)
def test_the_cmp_key_holds_every_value_its_request_is_built_from(env: dict[str, str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The request built from the whole environment is the one built from the names the key holds, so
    two runs with one key build one request: a hit is never stale."""
    for name in list(os.environ):
        if name.startswith("ARGOCD_") or name == "KUBE_VERSION":
            monkeypatch.delenv(name)
    from renderer.commands import cmp

    seen: list[object] = []
    monkeypatch.setattr(cmp, "generate", lambda req, key=None: seen.append(req))
    fields = cache.argv_fields(["cmp", "generate"], {**env, "OTHER": "ignored", "HOME": "/elsewhere"})
    for full in (True, False):
        with monkeypatch.context() as scoped:
            for name, value in env.items():
                scoped.setenv(name, value)
            if full:
                scoped.setenv("OTHER", "ignored")
            else:
                kept = {k for k in os.environ if k in cache.READ_ENV or k.startswith(cache.READ_ENV_PREFIX)}
                assert {f"{k}={os.environ[k]}" for k in kept} == set(fields[4:])
            body = entry.fast_path(["cmp", "generate"])
            assert body is not None
            body()
    assert seen[0] == seen[1]
    assert fields == cache.argv_fields(["cmp", "generate"], env)  # other names leave the key alone


@pytest.mark.parametrize("env", CMP_ENVIRONMENTS[1:])
def test_every_read_value_and_argument_is_part_of_the_key(env: dict[str, str]) -> None:
    base = cache.argv_fields(["cmp", "generate"], env)
    for name in env:
        assert cache.argv_fields(["cmp", "generate"], {**env, name: env[name] + "x"}) != base, name
        assert cache.argv_fields(["cmp", "generate"], {k: v for k, v in env.items() if k != name}) != base, name
    assert cache.argv_fields(["render", "a"], {}) != cache.argv_fields(["render", "b"], {})
    assert cache.argv_fields(["render", "a", "b"], {}) != cache.argv_fields(["render", "a b"], {})
    assert cache.argv_fields(["render", "KUBE_VERSION=1"], {}) != cache.argv_fields(["render"], {"KUBE_VERSION": "1"})


@pytest.mark.parametrize("argv", [["render"], ["render", "--help"], ["render", "x", "--strict"], ["cmp"],
                                  ["check", "."], ["render", "does/not/exist"]])
def test_other_commands_are_never_replayed_before_parsing(argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setenv("COZY_RENDER_CACHE_DIR", str(tmp_path))
    assert not entry.hot(argv) and entry.cached(argv) is None and entry.fast_path(argv) is None


def test_an_option_is_never_served_the_entry_of_the_plain_command(samples: Path, tmp_path: Path) -> None:
    """The fast path keys on its raw arguments, the Click path on the request it parsed: `render PATH -o json`
    after `render PATH` renders JSON."""
    from tests.test_cache import run

    cache_dir = tmp_path / "cache"
    plain = run(["render", "clusters/gpu-apt-01"], samples, cache_dir)
    again = run(["render", "clusters/gpu-apt-01"], samples, cache_dir)
    as_json = run(["render", "clusters/gpu-apt-01", "-o", "json"], samples, cache_dir)
    strict = run(["render", "clusters/gpu-apt-01", "--strict"], samples, cache_dir)
    assert plain[0] == again[0] == as_json[0] == 0 and plain[1] == again[1] and plain[1].startswith("apiVersion:")
    assert as_json[1].lstrip().startswith(("{", "["))
    assert strict[0] != 0 and strict[1] == ""  # the warning fails it under --strict
    assert len(list(cache_dir.glob("*.json"))) == 2  # the plain render and -o json


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
