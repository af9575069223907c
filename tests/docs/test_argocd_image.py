"""The sidecar image (docs/argocd/Dockerfile) builds reproducibly: a pinned base image, hashed pins for
every Python dependency in a lock kept fresh against pyproject.toml, pinned helm, a .dockerignore that
lets in only the local build inputs. It installs exactly the release's wheel, carries OCI labels, and
checks what it ships (issue 31): its build runs commands that load every registry and render a sample,
and this suite runs the same commands against the installed wheel. Docker is not needed: the file is
read statically."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO

DOCKERFILE = REPO / "docs" / "argocd" / "Dockerfile"
LOCK = REPO / "docs" / "argocd" / "requirements.lock"
# The sidecar's interpreter, for evaluating environment markers.
SIDECAR = {"python_version": "3.11", "python_full_version": "3.11.11", "platform_python_implementation": "CPython",
           "implementation_name": "cpython", "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
           "platform_machine": "x86_64", "extra": ""}
LOCK_COMMAND = ("pip-compile --generate-hashes --no-emit-find-links --no-emit-index-url "
                "--output-file=docs/argocd/requirements.lock --strip-extras pyproject.toml")


def instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def lock_pins() -> dict[str, tuple[str, str | None, int]]:
    """name -> (version, marker, number of hashes)."""
    pins: dict[str, tuple[str, str | None, int]] = {}
    current = None
    for line in LOCK.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$", line)
        if match:
            current = canonicalize_name(match.group(1))
            pins[current] = (match.group(2), match.group(3), 0)
        elif line.strip().startswith("--hash=sha256:") and current:
            version, marker, hashes = pins[current]
            pins[current] = (version, marker, hashes + 1)
    return pins


def runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"]]


def applies(req: Requirement) -> bool:
    return req.marker is None or req.marker.evaluate(SIDECAR)


def test_base_image_is_pinned_by_version_and_digest() -> None:
    (base,) = [rest for word, rest in instructions() if word == "FROM"]
    assert re.fullmatch(r"python:3\.11\.\d+-slim-[a-z]+@sha256:[0-9a-f]{64}", base), base
    assert "Python 3.11" in LOCK.read_text().splitlines()[1]  # the lock was resolved for the image's Python


def test_install_uses_only_the_hashed_local_wheels() -> None:
    runs = " && ".join(rest for word, rest in instructions() if word == "RUN")
    installs = [part for part in runs.split("&&") if "pip install" in part]
    assert len(installs) == 2
    for part in installs:
        args = shlex.split(part)
        assert "--no-index" in args, part
    assert "--require-hashes" in shlex.split(installs[0]) and "/tmp/build/requirements.lock" in installs[0]
    assert "--no-deps" in shlex.split(installs[1]) and "cozy_render-" in installs[1]
    assert not re.search(r"\b(curl|wget|apt-get|apk|git)\b", runs)


def test_helm_is_pinned_to_the_ci_version_and_checked() -> None:
    args = dict(rest.split("=", 1) for word, rest in instructions() if word == "ARG" and "=" in rest)
    assert args["HELM_VERSION"] == "v3.17.2"
    runs = " ".join(rest for word, rest in instructions() if word == "RUN")
    assert 'helm version --short | grep -q "^${HELM_VERSION}+"' in runs


def test_runs_as_argo_cd_user_with_writable_home() -> None:
    words = instructions()
    assert ("USER", "999:999") in words
    assert any(word == "ENV" and "HOME=/tmp" in rest for word, rest in words)


def test_dockerignore_lets_in_exactly_the_copied_inputs() -> None:
    patterns = [p for p in (REPO / ".dockerignore").read_text().splitlines() if p and not p.startswith("#")]
    assert patterns[0] == "*"
    allowed = [p[1:].rstrip("/") for p in patterns[1:]]
    assert all(p.startswith("!") for p in patterns[1:])
    # per-platform folders: buildx sets TARGETARCH, and each of them lies under an allowed folder
    sources = [rest.split()[0].replace("${TARGETARCH}/", "") for word, rest in instructions() if word == "COPY"]
    for source in sources:
        stem = source.rstrip("/")
        assert any(stem == a or Path(stem).match(a) for a in allowed), source
    assert len(allowed) == len(sources)


def test_lock_is_fresh_against_pyproject() -> None:
    """Regenerate with the command in the lock's header (README "Argo CD") when this fails."""
    assert LOCK_COMMAND in LOCK.read_text() and LOCK_COMMAND in (REPO / "README.md").read_text()
    pins = lock_pins()
    assert pins and all(hashes >= 1 for _, _, hashes in pins.values())
    for req in runtime_requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is in pyproject.toml but not pinned in {LOCK.name}"
        version, marker, _ = pins[name]
        assert req.specifier.contains(version, prereleases=True), f"{name}=={version} breaks {req.specifier}"
        assert (marker is None) == (req.marker is None), name
        if marker is not None:
            assert Marker(marker).evaluate(SIDECAR) == applies(req)
    # every dependency of a dependency (for the sidecar's platform) is pinned too, and nothing else
    closure: set[str] = set()
    todo = [r for r in runtime_requirements() if applies(r)]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in closure:
            continue
        closure.add(name)
        todo += [r for r in (Requirement(s) for s in metadata.requires(req.name) or []) if applies(r)]
    assert closure == set(pins), (sorted(closure), sorted(pins))


def test_builds_for_amd64_and_arm64_from_per_platform_inputs() -> None:
    """Issue 20 item 2: one image index for both platforms; each takes only its own wheels and helm."""
    words = instructions()
    assert ("ARG", "TARGETARCH") in words
    copies = [rest for word, rest in words if word == "COPY"]
    assert "dist/wheels/${TARGETARCH}/ /tmp/build/wheels/" in copies
    assert "dist/bin/${TARGETARCH}/ /usr/local/bin/" in copies
    header = DOCKERFILE.read_text()
    assert "--platform linux/amd64,linux/arm64" in header
    for wheel_platform in ("manylinux2014_${arch#*:}",):
        assert wheel_platform in header
    assert "amd64:x86_64 arm64:aarch64" in header
    # the lock holds wheels for both: ruamel.yaml.clib and markupsafe are compiled, so they need hashes
    # of more than one wheel (pip-compile --generate-hashes records every file of the release)
    pins = lock_pins()
    assert pins["ruamel-yaml-clib"][2] > 2 and pins["markupsafe"][2] > 2


def project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def build_args() -> dict[str, str]:
    return dict(rest.split("=", 1) for word, rest in instructions() if word == "ARG" and "=" in rest)


def test_installs_exactly_the_release_wheel() -> None:
    """No glob: `cozy_render-*.whl` took whatever wheels dist/ held, an older release's too."""
    assert build_args()["COZY_RENDER_VERSION"] == project()["version"]
    wheel = "cozy_render-${COZY_RENDER_VERSION}-py3-none-any.whl"
    copies = [rest for word, rest in instructions() if word == "COPY" and "cozy_render" in rest]
    assert copies == [f"dist/{wheel} /tmp/build/"]
    runs = " && ".join(rest for word, rest in instructions() if word == "RUN")
    assert f'"/tmp/build/{wheel}"' in runs
    assert not [w for w in re.findall(r"\S*cozy_render\S*", DOCKERFILE.read_text()) if "*" in w]


def labels() -> dict[str, str]:
    found: dict[str, str] = {}
    for word, rest in instructions():
        if word == "LABEL":
            found.update(dict(item.split("=", 1) for item in shlex.split(rest)))
    return found


def test_carries_the_oci_labels() -> None:
    found = labels()
    assert found["org.opencontainers.image.version"] == "${COZY_RENDER_VERSION}"
    assert found["org.opencontainers.image.revision"] == "${COZY_RENDER_REVISION}"
    assert found["org.opencontainers.image.licenses"] == project()["license"]
    assert found["org.opencontainers.image.title"] == "cozy-render"
    assert found["org.opencontainers.image.description"]
    (base,) = [rest for word, rest in instructions() if word == "FROM"]
    tag, digest = base.split("@")
    assert found["org.opencontainers.image.base.digest"] == digest
    assert found["org.opencontainers.image.base.name"] == f"docker.io/library/{tag}"
    assert all(name.startswith("org.opencontainers.image.") for name in found)


def readme_recipe() -> list[str]:
    text = (REPO / "README.md").read_text()
    start = text.index("1. **Build the sidecar image**")
    block = text[text.index("```sh\n", start) + 6:text.index("   ```\n", start)]
    return [line.removeprefix("   ") for line in block.splitlines()]


def test_the_header_recipe_is_the_readmes() -> None:
    header = DOCKERFILE.read_text().split("\n#\n")[1]
    assert [line.removeprefix("#   ") for line in header.splitlines()] == readme_recipe()
    assert '--build-arg COZY_RENDER_REVISION="$(git rev-parse HEAD)"' in " ".join(readme_recipe())
    assert f"cozy-render:{project()['version']} " in " ".join(readme_recipe())


def image_check() -> str:
    """The build step that checks the installed package: the last RUN."""
    return [rest for word, rest in instructions() if word == "RUN"][-1]


def test_the_build_loads_every_registry_and_renders_a_sample() -> None:
    steps = [step.strip() for step in image_check().split("&&")]
    assert "cozy-render rules >/dev/null" in steps and "cozy-render rules-doc >/dev/null" in steps
    assert any(step.startswith("cozy-render init sample ") for step in steps)
    assert any(step.startswith("cozy-render render ") for step in steps)
    assert any(step.startswith("cozy-render check ") for step in steps)


def test_the_image_check_passes_against_the_installed_package(tmp_path: Path) -> None:
    """The same shell lines the image build runs, with the cozy-render of this interpreter's install (the
    built wheel under .ci/run): a module missing from the wheel fails them."""
    script = Path(sys.executable).parent / "cozy-render"
    assert script.is_file(), f"{script}: no console script next to the interpreter"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COZY_RENDER", "PYTHONPATH"))}
    env["PATH"] = os.pathsep.join([str(script.parent), env.get("PATH", "")])
    env["TMPDIR"] = str(tmp_path)
    proc = subprocess.run(["/bin/sh", "-c", image_check()], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert list(tmp_path.iterdir()) == []  # the sample and its cache are gone
