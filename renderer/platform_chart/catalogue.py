"""Generate the platform catalogue of each vendored chart version from the chart itself.

    python -m renderer.generate [--check]   # writes these with every other generated file

For every version under ``charts/``: every PackageSource in ``sources/*.yaml`` (variants, their
components, which components install, ``dependsOn``), and every Package the bundle templates emit
(``templates/bundles/*.yaml`` through the ``cozystack.platform.package*`` helpers in
``_helpers.tpl``): its bundle, helper (default / optional / components), variant (a literal, or the
chart expression that picks it), and the chain of ``if`` conditions it is emitted under, kept as the
chart's own Go template text (``renderer.platform_chart.gotemplate`` evaluates it). Also the chart
defaults and the variant values files, and the ``fail`` guards. The result is written to
``renderer/_generated/platform/<version>.json`` by ``python -m renderer.generate`` (``--check``
fails CI when one is stale).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from renderer.platform_chart import CHARTS, DEFAULT_VERSION, shipped_versions
from renderer.platform_chart.gotemplate import Unsupported, parse

GENERATED = Path(__file__).resolve().parents[1] / "_generated" / "platform"
HELPERS = {
    "cozystack.platform.package": "package",
    "cozystack.platform.package.default": "default",
    "cozystack.platform.package.optional": "optional",
    "cozystack.platform.package.optional.default": "optional",
}
_ACTION = re.compile(r"{{-?\s*(.*?)\s*-?}}", re.S)
_INCLUDE = re.compile(r'^include\s+"(?P<define>[^"]+)"\s+(?P<args>.*)$', re.S)
_LIST_ARGS = re.compile(r'^\(list\s+"(?P<name>[^"]+)"(?:\s+(?P<variant>"[^"]*"|\$\w+))?(?P<rest>.*)\)$', re.S)
_ASSIGN = re.compile(r"^(?P<var>\$\w+)\s*:=\s*(?P<expr>.*)$", re.S)
# A plain field walk of two or more keys (not the nil-safe parenthesised form, `((.Values.gpu).x)`).
_VALUES_CHAIN = re.compile(r"(?<![\w).])\.Values(?:\.[A-Za-z_][\w-]*){2,}(?![\w(])")
_FAIL = re.compile(r'^fail\s+(?P<arg>"(?:[^"\\]|\\.)*"|\(printf .*\))$', re.S)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def scan_template(text: str, file: str) -> dict[str, Any]:
    """Emissions, fail guards, includes of local defines and variable definitions in one template."""
    defines: dict[str, list[dict[str, Any]]] = {}
    top: list[dict[str, Any]] = []
    variables: dict[str, str] = {}
    # Each stack frame: (kind, condition text for this branch, previous branch conditions)
    stack: list[tuple[str, str | None, list[str]]] = []
    current_define: str | None = None

    def conditions() -> list[str]:
        out: list[str] = []
        for kind, cond, previous in stack:
            if kind != "if":
                continue
            out.extend(f"not ({p})" for p in previous)
            if cond is not None:
                out.append(cond)
        return out

    for found in _ACTION.finditer(text):
        action = found.group(1).strip()
        if action.startswith("/*") or not action:
            continue
        line = _line_of(text, found.start())
        target = defines[current_define] if current_define is not None else top
        if action.startswith("define "):
            current_define = action.split('"')[1]
            defines[current_define] = []
            stack.append(("define", None, []))
            continue
        if action.startswith("if "):
            target.append({"check": action[3:].strip(), "when": conditions(), "template": file, "line": line})
            stack.append(("if", action[3:].strip(), []))
            continue
        if action.startswith("else if "):
            kind, cond, previous = stack.pop()
            stack.append(("if", None, [*previous, cond or "true"]))
            target.append({"check": action[8:].strip(), "when": conditions(), "template": file, "line": line})
            stack[-1] = ("if", action[8:].strip(), [*previous, cond or "true"])
            continue
        if action == "else":
            kind, cond, previous = stack.pop()
            stack.append(("if", None, [*previous, cond or "true"]))
            continue
        if action.startswith(("range ", "with ")):
            stack.append((action.split()[0], None, []))
            continue
        if action == "end":
            kind, _, _ = stack.pop()
            if kind == "define":
                current_define = None
            continue
        assign = _ASSIGN.match(action)
        if assign and current_define is None:
            if assign["var"] != "$_":
                variables.setdefault(assign["var"], assign["expr"].strip())
            # Go evaluates every argument of an assignment (no and/or short cut here), so each plain
            # `.Values.a.b` walk in it fails as helm does on a non-map on the way (`networking: "x"`
            # fails at <.Values.networking.podCIDR> in the ipv4 dict): each is checked at this line.
            if not re.search(r"\b(?:and|or)\b", assign["expr"]):
                for chain in dict.fromkeys(_VALUES_CHAIN.findall(assign["expr"])):
                    target.append({"check": chain, "when": conditions(), "template": file, "line": line})
            continue
        failed = _FAIL.match(action)
        if failed:
            target.append({"fail": failed["arg"], "when": conditions(), "template": file, "line": line})
            continue
        include = _INCLUDE.match(action)
        if include and current_define not in HELPERS:
            define = include["define"]
            args = include["args"].strip()
            entry: dict[str, Any] = {"include": define, "when": conditions(), "template": file, "line": line}
            if define in HELPERS:
                listed = _LIST_ARGS.match(args)
                if not listed:
                    raise Unsupported(f"{file}:{line}: cannot read the arguments of {define}: {args}")
                helper = HELPERS[define]
                variant = listed["variant"]
                if define.endswith(".default") or variant is None:
                    variant_value: Any = "default"
                elif variant.startswith('"'):
                    variant_value = variant.strip('"') or "default"
                else:
                    variant_value = {"expr": variant}
                entry.update(name=listed["name"], helper=helper, variant=variant_value,
                             components=bool(listed["rest"].strip().replace("$", "", 1).strip()))
            target.append(entry)
    return {"defines": defines, "top": top, "variables": variables}


def _expand(entries: list[dict[str, Any]], defines: dict[str, list[dict[str, Any]]], outer: list[str],
            file: str, call_line: int | None = None) -> list[dict[str, Any]]:
    """Inline includes of local defines; their entries take the include's file and line (helm
    executes them there)."""
    out: list[dict[str, Any]] = []
    for entry in entries:
        when = outer + entry["when"]
        placed = {"template": file, "line": call_line} if call_line is not None else {}
        if "fail" in entry or "check" in entry or "name" in entry:
            out.append({**entry, "when": when, **placed})
        elif entry["include"] in defines:
            out.extend(_expand(defines[entry["include"]], defines, when, file,
                               call_line if call_line is not None else entry["line"]))
    return out


def _resolve_variables(expr: str, variables: dict[str, str], depth: int = 0) -> str:
    """Inline ``$var`` definitions so a condition stands alone (``$gpuEnabled`` in iaas.yaml)."""
    if depth > 5:
        raise Unsupported(f"variables nest too deep in {expr}")

    def replace(found: re.Match[str]) -> str:
        name = found.group(0)
        if name == "$" or name not in variables:
            return name
        # cozyVar keeps the variable's name for error messages (helm prints `at <eq $gpuVariant ...>`).
        return f'(cozyVar "{name}" (' + _resolve_variables(variables[name], variables, depth + 1) + "))"

    return re.sub(r"\$\w+", replace, expr)


def _check_expr(expr: str) -> None:
    parse(expr, {})


def generate(chart: Path) -> dict[str, Any]:
    """The catalogue of one chart folder (plain JSON data)."""
    yaml = YAML(typ="safe")
    helpers = scan_template((chart / "templates" / "_helpers.tpl").read_text(encoding="utf-8"), "_helpers.tpl")
    emits: dict[str, list[dict[str, Any]]] = {}
    guards: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    unmodelled: list[dict[str, Any]] = []
    for template in sorted((chart / "templates" / "bundles").glob("*.yaml")):
        file = f"templates/bundles/{template.name}"
        scanned = scan_template(template.read_text(encoding="utf-8"), file)
        defines = {**helpers["defines"], **scanned["defines"]}
        variables = scanned["variables"]
        for entry in _expand(scanned["top"], defines, [], file):
            when = [_resolve_variables(c, variables) for c in entry["when"]]
            if "check" in entry:
                # Every `if` the chart evaluates: the model replays the ones it can read to find
                # Go template errors (a field walk through a bool, eq across kinds, dig on a bool).
                expr = _resolve_variables(entry["check"], variables)
                try:
                    for condition in [*when, expr]:
                        _check_expr(condition)
                except Unsupported as exc:
                    unmodelled.append({"template": file, "line": entry["line"], "expr": entry["check"],
                                       "why": str(exc)})
                    continue
                checks.append({"bundle": template.stem, "template": file, "line": entry["line"], "when": when,
                               "expr": expr})
                continue
            for condition in when:
                _check_expr(condition)
            if "fail" in entry:
                message = entry["fail"]
                if message.startswith("(printf"):
                    message = _resolve_variables(message, variables)
                guards.append({"bundle": template.stem, "template": file, "line": entry["line"], "when": when,
                               "message": message})
                continue
            variant = entry["variant"]
            if isinstance(variant, dict):
                variant = {"expr": _resolve_variables(variant["expr"], variables)}
            gate = entry["name"] if entry["helper"] == "optional" else next(
                iter(re.findall(r'has \(?"([^"]+)"\)? \(default \(list\) \.Values\.bundles\.enabledPackages',
                                " ".join(when))), None)
            emits.setdefault(entry["name"], []).append({
                "bundle": template.stem, "template": file, "line": entry["line"], "helper": entry["helper"],
                "variant": variant, "components": entry["components"], "when": when, "gate": gate})
    sources: dict[str, Any] = {}
    for path in sorted((chart / "sources").glob("*.yaml")):
        for doc in yaml.load_all(path.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or doc.get("kind") != "PackageSource":
                continue
            variants = {}
            for variant in (doc.get("spec") or {}).get("variants") or []:
                components = variant.get("components") or []
                variants[variant["name"]] = {
                    "dependsOn": list(variant.get("dependsOn") or []),
                    "components": [c["name"] for c in components],
                    "installed": [c["name"] for c in components if c.get("install") is not None],
                }
            sources[doc["metadata"]["name"]] = {"file": f"sources/{path.name}", "variants": variants}
    values = {name: yaml.load((chart / name).read_text(encoding="utf-8")) or {}
              for name in sorted(p.name for p in chart.glob("values*.yaml"))}
    variant_values: dict[str, Any] = {"default": {}}
    for name, data in values.items():
        if name.startswith("values-"):
            variant_values[name[len("values-"):-len(".yaml")]] = data
    expressions = {w for entries in emits.values() for e in entries for w in e["when"]}
    expressions |= {e["variant"]["expr"] for entries in emits.values() for e in entries
                    if isinstance(e["variant"], dict)}
    expressions |= {w for g in guards for w in g["when"]} | {w for c in checks for w in [*c["when"], c["expr"]]}
    expressions |= set(MODEL_EXPRESSIONS)
    return {
        "generatedFrom": f"{chart.name} (python -m renderer.generate)",
        # Every expression the model evaluates, parsed ahead of time (a render skips the tokenizer).
        "parsed": {text: _as_json(parse(text)) for text in sorted(expressions)},
        "chartDefaults": values.get("values.yaml", {}),
        "variantValues": variant_values,
        "sources": sources,
        "emits": dict(sorted(emits.items())),
        "guards": guards,
        "checks": checks,
        "unmodelledChecks": unmodelled,
        "anchors": _anchors(chart),
        "clusterAnchors": _cluster_anchors(chart),
        "reads": _reads(chart),
        "readsBy": _reads_by_template(chart),
        "files": {f"files/{p.name}": yaml.load(p.read_text(encoding="utf-8"))
                  for p in sorted((chart / "files").glob("*.yaml"))},
    }


# Expressions renderer.platform_chart.model evaluates itself (beside the chart's own conditions).
MODEL_EXPRESSIONS = ("default (list) .Values.bundles.disabledPackages",
                     "default (list) .Values.bundles.enabledPackages", ".Values.networking",
                     ".Values.publishing.apiServerEndpoint", ".Values.authentication.oidc.enabled",
                     ".Values.publishing.ingressName")


def _as_json(node: Any) -> Any:
    return [_as_json(n) for n in node] if isinstance(node, (tuple, list)) else node


# Template spots the model checks by hand (values the chart converts, not tests): marker -> where.
ANCHOR_MARKERS = (
    "urlParse $apiServerEndpoint",
    'ternary "true" "false" .Values.authentication.oidc.enabled',
    'include "cozystack.platform.stageCniPlugins"',
    'trimPrefix "tenant-" $ingressNs',
    # iaas.yaml's GPU wiring (replayed by renderer.platform_chart.model._gpu_wiring_problem): the
    # kubevirt half, then the vgpu overrides of the gpu-operator Package.
    "$userPci := default (list)",
    "$vgpuMgr := default (dict)",
)


# Spots in the templates that run only in a cluster (``helm template`` of the bundles leaves them out)
# whose value conversions the model replays (``renderer.platform_chart.model.cluster_template_problems``).
CLUSTER_MARKERS = (
    'eq .Values.publishing.certificates.solver "dns01"',
    "if $mirror.endpoints",
    "range $endpoint := $mirror.endpoints",
    "index $.Values.registries.config $endpoint",
    "if $endpointConfig.tls }}",
    "if $endpointConfig.tls.insecureSkipVerify",
    "if $endpointConfig.auth",
    "if .Values.registries.mirrors",
    "range $registry, $mirror := .Values.registries.mirrors",
    "$endpointConfig.auth.username",
)
CLUSTER_TEMPLATES = ("apps.yaml", "containerd-registry-secret.yaml")


def _cluster_anchors(chart: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in CLUSTER_TEMPLATES:
        path = chart / "templates" / name
        if not path.is_file():
            continue
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for marker in CLUSTER_MARKERS:
                if marker in text and marker not in out:
                    start = marker.removeprefix("if ").removeprefix("range $endpoint := ").removesuffix(" }}")
                    out[marker] = {"template": f"templates/{name}", "line": number, "col": text.index(start) + 1}
    return out


def _anchors(chart: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for template in sorted((chart / "templates" / "bundles").glob("*.yaml")):
        for number, text in enumerate(template.read_text(encoding="utf-8").splitlines(), 1):
            for marker in ANCHOR_MARKERS:
                if marker in text:
                    out.setdefault(marker, []).append({"template": f"templates/bundles/{template.name}",
                                                       "line": number, "col": text.index(marker) + 1})
    return out


def _reads_by_template(chart: Path) -> dict[str, list[str]]:
    """The platform value paths each template reads (``templates/<name>``), for the model's account of
    what it replays and what it reports as not checked without helm (PLT-18)."""
    out: dict[str, list[str]] = {}
    for file in sorted(p for p in (chart / "templates").rglob("*") if p.is_file() and p.suffix in (".yaml", ".tpl")):
        found = _paths_in(file.read_text(encoding="utf-8"))
        if found:
            out[file.relative_to(chart).as_posix()] = sorted(found)
    return out


def _paths_in(raw: str) -> set[str]:
    found: set[str] = set()
    text = "\n".join(line for line in raw.splitlines() if not line.lstrip().startswith(("{{/*", "{{- /*")))
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    for match in re.finditer(r"\.Values((?:\.[A-Za-z_][\w-]*)+)", text):
        found.add(match.group(1).lstrip("."))
    for match in re.finditer(r'dig((?:\s+"[^"]+")+)\s+\S+\s+\(?\$?\w*\.Values((?:\.[A-Za-z_]\w*)*)', text):
        keys = re.findall(r'"([^"]+)"', match.group(1))
        found.add(".".join([p for p in match.group(2).split(".") if p] + keys))
    return found


def _reads(chart: Path) -> list[str]:
    """Every platform value path the chart's templates read (``.Values.a.b``, ``dig``): the bundles and
    helpers, and the templates that run only in a cluster (apps.yaml, containerd-registry-secret.yaml,
    ...), so that "this version does not read the key" (PLT-14) is true of the whole chart."""
    found: set[str] = set()
    for file in sorted(p for p in (chart / "templates").rglob("*") if p.is_file() and p.suffix in (".yaml", ".tpl")):
        found |= _paths_in(file.read_text(encoding="utf-8"))
    return sorted(found)


def generated_text(version: str) -> str:
    return json.dumps(generate(CHARTS / version), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


README = Path(__file__).resolve().parents[2] / "README.md"
TABLE_START = ("<!-- supported-versions: generated by python -m renderer.generate "
               "from renderer/platform_chart/charts -->")
TABLE_END = "<!-- /supported-versions -->"


def supported_versions_table(generated: dict[str, dict[str, Any]]) -> str:
    """The README's supported-versions table, from ``charts/vendored.json`` and each catalogue."""
    records = json.loads((CHARTS / "vendored.json").read_text(encoding="utf-8"))
    all_reads = {version: set(data["reads"]) for version, data in generated.items()}
    lines = ["| `platform.version` | upstream ref | commit | date | PackageSources | Packages the bundles can emit "
             "| keys only this version reads |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for version, data in generated.items():
        record = records.get(version, {})
        others = set().union(*(r for v, r in all_reads.items() if v != version))
        own = sorted(all_reads[version] - others)
        shown = f"`{version}` (default)" if version == DEFAULT_VERSION else f"`{version}`"
        lines.append(f"| {shown} | `{record.get('ref', '?')}` | `{str(record.get('commit', '?'))[:9]}` "
                     f"| {record.get('date', '?')} | {len(data['sources'])} | {len(data['emits'])} "
                     f"| {', '.join(f'`{key}`' for key in own) or '-'} |")
    return "\n".join(lines) + "\n"


def _readme_with_table(generated: dict[str, dict[str, Any]]) -> bytes | None:
    if not README.is_file():
        return None
    text = README.read_text(encoding="utf-8")
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        return None
    head = text[:start + len(TABLE_START)] + "\n"
    return (head + supported_versions_table(generated) + text[end:]).encode()


def expected_files() -> dict[Path, bytes]:
    """Every generated catalogue file and its content (``python -m renderer.generate`` writes them),
    and the README's supported-versions table."""
    generated = {version: generate(CHARTS / version) for version in shipped_versions()}
    files = {GENERATED / f"{version}.json": (json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
             .encode() for version, data in generated.items()}
    readme = _readme_with_table(generated)
    if readme is not None:
        files[README] = readme
    return files
