"""Argo CD CMP adapter: parameters in, one YAML stream out. No printing, no exiting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from renderer import limits
from renderer.errors import Finding, Location, RenderError, fail

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
    Size and nesting are bounded (``renderer.limits``) before parsing; text that is not Unicode (a lone
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
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise fail("CMP-PARAMS", "parameter vars must be a map of strings")
        elif name == "strict":
            if value not in ("true", "false"):
                raise fail("CMP-PARAMS", f"parameter strict must be \"true\" or \"false\", got {value!r}")
        elif name == "kubernetes-version":
            if not isinstance(value, str):
                raise fail("CMP-PARAMS", "parameter kubernetes-version must be a string such as \"1.31\"")
        else:
            raise fail("CMP-PARAMS", f"unknown parameter {name!r} (known: vars, strict, kubernetes-version)")
        params[name] = value
    return params


def repository_root(app_dir: Path, source_path: str) -> Path | None:
    """The checkout Argo CD unpacked: the working directory minus ARGOCD_APP_SOURCE_PATH.

    Argo CD may leave .git out of the tarball (a recommended speed-up), so the usual root detection
    can miss; this is exact. None when the working directory does not end with the source path.
    """
    parts = [p for p in Path(source_path).parts if p not in ("", ".", "/")]
    if not parts or ".." in parts:
        return None
    app = app_dir.absolute()
    if tuple(app.parts[-len(parts):]) != tuple(parts):
        return None
    return Path(*app.parts[:-len(parts)])


def render_for_argocd(path: Path, params: dict[str, Any], root: Path | None = None) \
        -> tuple[str, list[Finding], list[Path]]:
    from renderer import output
    from renderer.pipeline import render_many

    (result,), warnings = render_many([path], root=root, strict=params.get("strict") == "true",
                                      extra_vars=params.get("vars") or None,
                                      kubernetes_version=params.get("kubernetes-version") or None)
    if not result.manifests:
        # Empty output is a "success" to Argo CD, which would then prune the whole Application.
        raise fail("CMP-EMPTY", "render produced no objects; refusing to hand Argo CD an empty manifest set")
    return output.to_yaml(result.manifests), warnings, result.inputs
