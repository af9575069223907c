"""Argo CD CMP adapter: the request environment in, one YAML stream out. No printing, no exiting.

What ``cmp generate`` reads, and nothing else (README "Argo CD"; reference: argo-cd
reposerver/repository/repository.go ``getPluginEnvs``):

- ``ARGOCD_APP_PARAMETERS``: the Application's plugin parameters (``vars``, ``strict``,
  ``kubernetes-version``, ``chart``);
- ``ARGOCD_ENV_strict``, ``ARGOCD_ENV_kubernetes-version`` and ``ARGOCD_ENV_chart``: plugin ``env``
  entries, which Argo CD
  prefixes with ``ARGOCD_ENV_`` and passes with the name as written; the name is matched ignoring
  case and ``-``/``_`` (``ARGOCD_ENV_KUBERNETES_VERSION`` works too). Set on the sidecar container
  itself they are a fleet-wide default, since the request's entries come after the container's;
- ``KUBE_VERSION``: the destination cluster's version, the default ``kubernetes-version``;
- ``ARGOCD_APP_SOURCE_PATH``: to find the repository root.

A parameter wins over an env entry, which wins over ``KUBE_VERSION``, which wins over the built-in
default. All of them are part of Argo CD's manifest cache key (the app source with its plugin env
and parameters, and the cluster version), so a render stays a pure function of that key.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from renderer.codes import Code
from renderer.errors import ERROR, WARNING, Finding, Location, RenderError, fail, strict_labelled
from renderer.escape import literal
from renderer.load import limits
from renderer.load.roots import checkout_parts, source_path_refusal

CODES: list[Code] = [
    Code("CMP-ENV", ERROR, "An ARGOCD_ENV_* setting cozy-render reads has a bad value",
         "Plugin env entries `strict` (\"true\"/\"false\") and `kubernetes-version` (a bundled minor such as "
         "\"1.31\") arrive as ARGOCD_ENV_strict and ARGOCD_ENV_kubernetes-version. Two spellings of one setting "
         "with different values are refused as well. An empty value means unset.",
         "argo-cd reposerver/repository/repository.go getPluginParamEnvs (ARGOCD_ENV_ prefix)"),
    Code("CMP-SOURCE-PATH", ERROR, "ARGOCD_APP_SOURCE_PATH would move the repository root out of the checkout",
         "The cmp-server's working directory is the Application's folder in the checkout it unpacked, and "
         "ARGOCD_APP_SOURCE_PATH is that folder's path inside the repository: the repository root (which every "
         "inherits and manifests path must stay inside) is the working directory less that path. An absolute "
         "source path, one with `..`, or one naming more folders than lie between the working directory and the "
         "checkout (the `_cmp_server/<id>` folder, else the folder holding .git) would put the root above the "
         "checkout, where the sidecar's own files are; it is refused and nothing is rendered.",
         "argo-cd cmpserver/plugin/plugin.go (the request's working directory); reposerver/repository/"
         "repository.go newEnv (ARGOCD_APP_SOURCE_PATH)"),
    Code("CMP-KUBE-VERSION", WARNING, "KUBE_VERSION has no bundled schemas; the nearest bundled minor is used",
         "KUBE_VERSION (the destination cluster's version) picks the core-kind schemas when no parameter or env "
         "entry does. A version newer than the newest bundled minor is validated with the newest, an older one "
         "with the oldest, an unparseable one with the default; the render goes on. Set the kubernetes-version "
         "parameter to silence it. strict does not turn this notice into a failure: it is about the "
         "schemas cozy-render ships, not about the overlay.",
         "argo-cd reposerver/repository/repository.go getPluginEnvs (KUBE_VERSION, k8sversion.ParseGeneric)"),
]

ENV_PREFIX = "ARGOCD_ENV_"
# The platform chart's judge (renderer.effective.choice), settable as parameter or env entry `chart`.
CHART_MODES = ("model", "helm", "auto")
# Plugin env entries read: strict, kubernetes-version and chart. `vars` stays a parameter (a map has no env form).
_KUBE_VERSION_RE = re.compile(r"^\s*v?(\d{1,9})\.(\d{1,9})(?!\d)")  # bounded: int() of 5,000 digits raises


PARAMETERS_ENV = "ARGOCD_APP_PARAMETERS"


def _parameters_error(message: str, line: int = 1, col: int = 1) -> RenderError:
    return fail("CMP-PARAMS", message, Location(PARAMETERS_ENV, line, col))


def _refuse_deep_json(raw: str) -> None:
    """Nesting is counted on the text before json.loads, whose recursion would crash on 100,000 levels."""
    depth = 0
    in_string = escaped = False
    for index, char in enumerate(raw):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limits.MAX_PARAMETERS_DEPTH:
                raise _parameters_error(f"{PARAMETERS_ENV} is nested deeper than {limits.MAX_PARAMETERS_DEPTH} levels",
                                        1, index + 1)
        elif char in "]}":
            depth -= 1


def _refuse_surrogates(value: Any) -> None:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise _parameters_error(f"{PARAMETERS_ENV} holds a lone surrogate ({node[:40]!r}), which is not "
                                        "Unicode text") from None
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def parse_parameters(raw: str) -> dict[str, Any]:
    """ARGOCD_APP_PARAMETERS: a JSON list of {name, string|array|map}; all leaf values are strings.

    An Application with no plugin parameters sends ``null``: Argo CD marshals the empty
    ``ApplicationSourcePluginParameters`` slice as JSON null (pkg/apis/application/v1alpha1/types.go,
    argo-cd#11900). ``null``, an empty value and an unset variable all mean "no parameters".
    Size and nesting are bounded (``renderer.load.limits``) before parsing; text that is not Unicode (a lone
    surrogate, escaped or from a non-UTF-8 environment) is refused.
    """
    if not raw.strip():
        return {}
    if len(raw) > limits.MAX_PARAMETERS_BYTES:
        raise _parameters_error(f"{PARAMETERS_ENV} is larger than {limits.MAX_PARAMETERS_BYTES} characters")
    _refuse_deep_json(raw)
    _refuse_surrogates(raw)
    try:
        items = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _parameters_error(f"{PARAMETERS_ENV} is not JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:  # unreachable after _refuse_deep_json; kept so no input can crash the process
        raise _parameters_error(f"{PARAMETERS_ENV} is nested too deeply") from None
    except ValueError:  # a number of more than 4,300 digits (int_max_str_digits), issue 25 item 8
        raise _parameters_error(f"{PARAMETERS_ENV} holds a number with more digits than any value can use") from None
    _refuse_surrogates(items)
    if items is None:
        return {}
    if not isinstance(items, list):
        raise fail("CMP-PARAMS", "ARGOCD_APP_PARAMETERS must be a JSON list")
    params: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise fail("CMP-PARAMS", "every ARGOCD_APP_PARAMETERS entry needs a name")
        name = item["name"]
        value = item.get("map", item.get("array", item.get("string")))
        if name == "vars":
            if value is None and "map" in item:
                value = {}  # Argo CD sends an emptied map parameter as {"map": null} (Go's nil map)
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise fail("CMP-PARAMS", "parameter vars must be a map of strings")
        elif name == "strict":
            if value not in ("true", "false"):
                raise fail("CMP-PARAMS", f"parameter strict must be \"true\" or \"false\", got {literal(value)}")
        elif name == "kubernetes-version":
            if not isinstance(value, str):
                raise fail("CMP-PARAMS", "parameter kubernetes-version must be a string such as \"1.31\"")
            from renderer.check.schemas.catalog import normalize_kubernetes_version

            try:
                normalize_kubernetes_version(value)
            except ValueError as exc:  # a parameter's value, not an output-schema problem (not SCHEMA)
                raise fail("CMP-PARAMS", f"parameter kubernetes-version: {exc}") from None
        elif name == "chart":
            if value not in CHART_MODES:
                raise fail("CMP-PARAMS",
                           f"parameter chart must be one of {', '.join(CHART_MODES)}, got {literal(value)}")
        else:
            raise fail("CMP-PARAMS",
                       f"unknown parameter {literal(name)} (known: vars, strict, kubernetes-version, chart)")
        params[name] = value
    return params


class Settings(NamedTuple):
    """What one ``cmp generate`` request asks for, after precedence is applied."""

    vars: dict[str, str] | None
    strict: bool
    kubernetes_version: str | None  # None: the built-in default
    notices: list[Finding]  # CMP-KUBE-VERSION, printed on stderr; never fail the render
    chart: str = "model"  # who judges the platform chart (renderer.effective.choice): model | helm | auto


def _env_setting(environ: Mapping[str, str], name: str) -> str | None:
    """The value of plugin env entry ``name`` (any case, ``-`` or ``_``); empty means unset."""
    want = name.upper().replace("-", "_")
    found = {key: value for key, value in environ.items()
             if key.startswith(ENV_PREFIX) and key[len(ENV_PREFIX):].upper().replace("-", "_") == want
             and value != ""}
    if len(set(found.values())) > 1:
        spelled = ", ".join(f"{k}={literal(v)}" for k, v in sorted(found.items()))
        raise fail("CMP-ENV", f"conflicting plugin env entries for {name}: {spelled}")
    return next(iter(found.values()), None)


def kube_version_default(value: str) -> tuple[str | None, list[Finding]]:
    """The schema version for ``KUBE_VERSION`` (e.g. ``1.33.4``): its minor, or the nearest bundled one."""
    from renderer.check.schemas.catalog import DEFAULT_KUBERNETES_VERSION, bundled_versions
    from renderer.escape import MAX_VALUE_CHARS, quote

    if not value.strip():
        return None, []
    match = _KUBE_VERSION_RE.match(value)
    bundled = bundled_versions()
    if match is None:
        shown = repr(value) if len(value) <= MAX_VALUE_CHARS else quote(value)  # an env value: cut with a count
        return None, [Finding("CMP-KUBE-VERSION", f"KUBE_VERSION {shown} is not a Kubernetes version; "
                              f"validating with the default {_minor(DEFAULT_KUBERNETES_VERSION)}",
                              severity=WARNING)]
    wanted = (int(match.group(1)), int(match.group(2)))
    minors = [tuple(int(p) for p in v.split(".")[:2]) for v in bundled]
    if wanted in minors:
        return f"{wanted[0]}.{wanted[1]}", []
    nearest = minors[-1] if wanted > minors[-1] else minors[0]
    side = "newest" if wanted > minors[-1] else "oldest"
    chosen = f"{nearest[0]}.{nearest[1]}"
    return chosen, [Finding("CMP-KUBE-VERSION",
                            f"KUBE_VERSION {quote(value)} has no bundled schemas (bundled {_minor(bundled[0])}-"
                            f"{_minor(bundled[-1])}); validating with the {side}, {chosen}", severity=WARNING)]


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def settings(parameters: str, environ: Mapping[str, str], kube_version: str = "") -> Settings:
    """``parameters`` (ARGOCD_APP_PARAMETERS), then the ``ARGOCD_ENV_*`` entries of ``environ``, then
    ``kube_version`` (KUBE_VERSION); see the module docstring."""
    params = parse_parameters(parameters)
    strict_env = _env_setting(environ, "strict")
    if strict_env is not None and strict_env not in ("true", "false"):
        raise fail("CMP-ENV", f"plugin env strict must be \"true\" or \"false\", got {literal(strict_env)}")
    strict = params.get("strict", strict_env) == "true"
    notices: list[Finding] = []
    version = params.get("kubernetes-version") or None
    if version is None:
        version = _env_setting(environ, "kubernetes-version")
        if version is not None:
            from renderer.check.schemas.catalog import normalize_kubernetes_version

            try:
                normalize_kubernetes_version(version)
            except ValueError as exc:
                raise fail("CMP-ENV", f"plugin env kubernetes-version: {exc}") from None
    if version is None:
        version, notices = kube_version_default(kube_version)
    chart = params.get("chart") or _env_setting(environ, "chart") or "model"
    if chart not in CHART_MODES:
        raise fail("CMP-ENV", f"plugin env chart must be one of {', '.join(CHART_MODES)}, got {literal(chart)}")
    return Settings(params.get("vars") or None, strict, version, notices, chart)


class Checkout(NamedTuple):
    """What the cmp-server unpacked for this request."""

    root: Path  # the unpacked folder: the boundary inherits and manifests paths must stay inside
    prefix: str  # that folder's path inside the repository: "" unless Argo CD sent only a sub-tree


def checkout(app_dir: Path, source_path: str) -> Checkout | None:
    """The checkout Argo CD unpacked, from the working directory and ARGOCD_APP_SOURCE_PATH.

    Usually the working directory minus the source path. With the repo-server's
    ``--plugin-use-manifest-generate-paths`` the tarball holds only the common root of the
    Application's manifest-generate-paths (``overlays/`` for the shipped ApplicationSet), so the
    working directory is ``.../_cmp_server/<id>/clusters/c1`` for source path
    ``overlays/clusters/c1``: the unpacked folder is then the one below ``_cmp_server`` and its path
    in the repository is what the source path has left over (``overlays``). Argo CD may leave .git
    out of the tarball, so ordinary root detection can miss; this is exact. None when neither fits.
    The work is ``renderer.load.roots.checkout_parts``, which a render-cache hit calls without this module.
    """
    app = app_dir.absolute().parts
    refusal = source_path_refusal(app, source_path)
    if refusal is not None:
        raise fail("CMP-SOURCE-PATH", f"ARGOCD_APP_SOURCE_PATH {literal(source_path)} {refusal}")
    found = checkout_parts(app, source_path)
    return Checkout(Path(*found[0]), found[1]) if found else None


def repository_root(app_dir: Path, source_path: str) -> Path | None:
    """The unpacked folder of ``checkout``, or None."""
    found = checkout(app_dir, source_path)
    return found.root if found else None


def render_for_argocd(path: Path, request: Settings, unpacked: Checkout | None = None) \
        -> tuple[str, list[Finding], list[Path]]:
    """Render for the cmp-server. Paths in every message are relative to the repository root, the
    same on every sidecar and in the user's checkout (not the server's temporary folder)."""
    from renderer import output
    from renderer.load.roots import find_cluster_file, find_root
    from renderer.load.yamlio import display_relative_to
    from renderer.pipeline import Options, run

    root = unpacked.root if unpacked else None
    base = root or find_root(find_cluster_file(path).absolute())
    chart = None
    if request.chart != "model":  # the default never imports (or runs) helm on Argo CD's hot path
        from renderer.effective.choice import choose

        chart = choose(request.chart)
    options = Options(root=root, extra_vars=request.vars, kubernetes_version=request.kubernetes_version,
                      strict=request.strict, chart=chart)
    with display_relative_to(base, unpacked.prefix if unpacked else ""):
        done = run(path, options)
    if done.exit_code:
        # Under strict each warning fails the sync and says so (render --strict's rule); without it a
        # warning is never labelled, whatever errors refused the render.
        raise RenderError(strict_labelled(done.failures(), request.strict, "strict"), done.exit_code)
    (result,) = done.results
    warnings = [f for f in result.findings if f.severity != ERROR]
    if not result.manifests:
        # Empty output is a "success" to Argo CD, which would then prune the whole Application.
        raise fail("CMP-EMPTY", "render produced no objects; refusing to hand Argo CD an empty manifest set")
    shown = request.notices + warnings
    return output.to_yaml(with_warnings(result.manifests, shown)), shown, result.inputs


# On success the cmp-server only logs stderr (argo-cd cmpserver/plugin/plugin.go, "Plugin command
# successful"), so a warning would reach nobody. It goes on the cluster's platform Package instead,
# where the Argo CD UI shows it: in the live manifest, in the diff when it changes, and in the
# Package's health message (docs/argocd/install/argocd-cm-health.yaml appends it). Same input, same
# findings, same bytes: the output stays a pure function of Argo CD's cache key.
WARNINGS_ANNOTATION = "render.cozystack.io/warnings"
MAX_WARNINGS_SHOWN = 20
MAX_WARNINGS_CHARS = 8000  # annotations share a 256 KiB budget per object (apimachinery ValidateAnnotations)


def warnings_text(findings: list[Finding]) -> str:
    """One finding per line, as stderr prints it; a long list is cut with a count of the rest."""
    lines: list[str] = []
    size = 0
    for finding in findings:
        line = finding.format()
        if len(lines) == MAX_WARNINGS_SHOWN or size + len(line) > MAX_WARNINGS_CHARS:
            lines.append(f"... and {len(findings) - len(lines)} more (cozy-render check lists them all)")
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _warnings_target(manifests: list[dict[str, Any]]) -> int | None:
    """The platform Package (every cluster renders one, PLT rules), else the first Package, else none."""
    from renderer.model import PLATFORM_PACKAGE

    packages = [i for i, obj in enumerate(manifests)
                if obj.get("kind") == "Package" and str(obj.get("apiVersion", "")).startswith("cozystack.io/")]
    for i in packages:
        if (manifests[i].get("metadata") or {}).get("name") == PLATFORM_PACKAGE:
            return i
    return packages[0] if packages else None


def with_warnings(manifests: list[dict[str, Any]], findings: list[Finding]) -> list[dict[str, Any]]:
    """``manifests`` with ``findings`` in the WARNINGS_ANNOTATION of the platform Package; unchanged when
    there are none (or no Package to carry them: they are still on stderr, in the sidecar's log)."""
    target = _warnings_target(manifests) if findings else None
    if target is None:
        return manifests
    obj = dict(manifests[target])
    metadata = dict(obj.get("metadata") or {})
    annotations = dict(metadata.get("annotations") or {})
    annotations[WARNINGS_ANNOTATION] = warnings_text(findings)
    metadata["annotations"] = annotations
    obj["metadata"] = metadata
    return [*manifests[:target], obj, *manifests[target + 1:]]
