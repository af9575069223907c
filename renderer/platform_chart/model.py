"""The render-path model of one platform chart version, read from its generated catalogue.

``renderer/_generated/platform/<version>.json`` (``python -m renderer.generate``)
holds what the chart's bundle templates emit and under which conditions, as the chart's own Go
template text. ``ChartModel.evaluate`` replays it in Python, in the order helm executes the
templates (deepest path first, then reverse alphabetical: system, paas, naas, iaas), so the first
problem it finds is the one helm would report. No helm, no subprocess: this runs inside ``render``.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import json
import re
from collections.abc import Callable
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from renderer.model import GPU_OPERATOR
from renderer.platform_chart import DEFAULT_VERSION, shipped_versions
from renderer.platform_chart.gotemplate import GoTemplateError, evaluate, go_kind, go_quote, parsed, truthy
from renderer.tree import dig, helm_merge

GENERATED = Path(__file__).resolve().parents[1] / "_generated" / "platform"
_GO_TYPE = {"string": "string", "bool": "bool", "float64": "float64", "slice": "[]interface {}",
            "map": "map[string]interface {}", "invalid": "<nil>"}
# helm's engine executes templates sorted by path depth (deepest first), then reverse by name.
TEMPLATE_ORDER = ("templates/bundles/system.yaml", "templates/bundles/paas.yaml", "templates/bundles/naas.yaml",
                  "templates/bundles/iaas.yaml")


# Templates whose value reads the model replays with their type checks: the bundles (every emission,
# guard and `if`, in helm's order), the helpers they include.
REPLAYED_TEMPLATES = ("templates/_helpers.tpl", *TEMPLATE_ORDER)
# Value paths of the cluster-only templates the model replays (cluster_template_problems).
REPLAYED_CLUSTER_PATHS = {
    "templates/apps.yaml": ("publishing.certificates.solver",),
    "templates/containerd-registry-secret.yaml": ("registries.mirrors", "registries.config"),
}
# Bundle `if`s the generic replay cannot read (catalogue ``unmodelledChecks``), and what replays
# their values instead: the GPU wiring by hand, the rest read only cluster state (``lookup``) or a
# value urlParse already judged. tests/platform_chart/test_coverage.py fails on an entry not here.
REPLAYED_BY_HAND = {
    "not $replace": "_gpu_wiring_problem (replaceDefaults: any type is a truth value)",
    "and (not $replace) $deviceManagerOn": "_gpu_wiring_problem (vgpuDeviceManager field walk)",
    "$permitted": "_gpu_wiring_problem (built from the replayed lists)",
    "$mdevConfig": "_gpu_wiring_problem (mergeOverwrite map check)",
    "$kubevirtValues": "_gpu_wiring_problem and resources.cpuAllocationRatio (Sprig int takes any type)",
    "or $vgpuMgr.repository $vgpuMgr.version $imageCustomized $vgpuMgr.imagePullSecrets":
        "_gpu_wiring_problem (vgpuManager map check; its fields are truth values)",
    "(((.Values.gpu).vgpuDeviceManager).enabled)": "_gpu_wiring_problem (vgpuDeviceManager field walk)",
    "$gpuOperatorOverrides": "_gpu_wiring_problem (built from the replayed values)",
    "and $cozystackCm $cozystackCm.data": "cluster state (lookup of a ConfigMap), no platform value",
    "gt (len $hostPort) 1": "_anchor_problem urlParse (publishing.apiServerEndpoint)",
}


class ChartProblem(NamedTuple):
    """Where the chart fails: a ``fail`` guard's message, or a Go template error (``at <node>: why``)."""

    message: str
    template: str
    line: int
    key: tuple[str, ...]  # the platform value path that causes it, when known
    kind: str  # "fail" (a guard, reported as helm's "execution error") or "template"


class RenderedPackage(NamedTuple):
    """A Package the platform release renders: its variant and the component values it sets."""

    name: str
    variant: str
    bundle: str
    values: dict[tuple[str, ...], Any]  # leaf path under spec.components -> value
    gate: str | None  # the enabledPackages entry that makes it render, for optional packages


def chart_model(version: str | None) -> "ChartModel":
    """The model for ``version``; a version not shipped (a user's --platform-chart) uses the default's."""
    return _chart_model(version if version in shipped_versions() else DEFAULT_VERSION)


@lru_cache(maxsize=8)
def _chart_model(name: str) -> "ChartModel":
    return ChartModel(name, json.loads((GENERATED / f"{name}.json").read_text(encoding="utf-8")))


def go_format(value: Any) -> str:
    """Go's ``%v`` (and Sprig ``toString``) of a Helm value: numbers are float64 after Helm's JSON
    round trip (1e6 -> ``1e+06``), lists ``[a b]``, maps ``map[k:v]`` with sorted keys."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _go_float(float(value))
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    return str(value)


def _go_float(number: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64), as %v prints a float64: the shortest digits that round
    trip, in exponent form when the decimal exponent is below -4 or at least 6 (1e6 -> 1e+06)."""
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "+Inf" if number > 0 else "-Inf"
    if number == 0:
        return "0"
    from decimal import Decimal

    _sign, digit_tuple, exponent = Decimal(repr(abs(number))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    point = len(digit_tuple) + int(exponent)  # decimal point position after the first digit run
    lead = "-" if number < 0 else ""
    exp10 = point - 1
    if exp10 < -4 or exp10 >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{lead}{body}e{'+' if exp10 >= 0 else '-'}{abs(exp10):02d}"
    if point <= 0:
        return f"{lead}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{lead}{digits}{'0' * (point - len(digits))}"
    return f"{lead}{digits[:point]}.{digits[point:]}"


_EXACT_FLOAT64 = 2 ** 53


def as_helm_reads(tree: Any) -> Any:
    """``tree`` with every number as helm holds it: values reach the chart through a JSON round trip
    (sigs.k8s.io/yaml, then encoding/json into interface{}), so every number is a float64, and an
    integer beyond 2^53 is rounded to the nearest float64 (9007199254740993 becomes
    9007199254740992). Integers stay Python ints (the model prints and converts them as float64
    already); only their value is rounded. The input is not modified; an unchanged subtree is shared."""
    if isinstance(tree, bool):
        return tree
    if isinstance(tree, int):
        if -_EXACT_FLOAT64 <= tree <= _EXACT_FLOAT64:
            return tree
        try:
            return int(float(tree))
        except OverflowError:  # beyond float64: not a number helm could hold; left for the rules to judge
            return tree
    if isinstance(tree, dict):
        out = {k: as_helm_reads(v) for k, v in tree.items()}
        return tree if all(out[k] is tree[k] for k in tree) else out
    if isinstance(tree, list):
        items = [as_helm_reads(v) for v in tree]
        return tree if all(a is b for a, b in zip(items, tree, strict=True)) else items
    return tree


def go_type(value: Any) -> str:
    return _GO_TYPE[go_kind(value)]


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")


def url_parse_error(value: Any) -> str | None:
    """Why Sprig ``urlParse`` (Go ``url.Parse``, ``renderer.platform_chart.gourl``) fails on ``value``,
    in helm's words, or None when it parses."""
    from renderer.platform_chart import gourl

    if not isinstance(value, str):
        return f"wrong type for value; expected string; got {go_type(value)}"
    error = gourl.parse(value).error
    if error:
        return f"error calling urlParse: unable to parse url: parse {go_quote(value)}: {error}"
    return None


class ChartModel:
    def __init__(self, version: str, data: dict[str, Any]) -> None:
        self.version = version
        self.data = data
        self.emits: dict[str, list[dict[str, Any]]] = data["emits"]
        self.sources: dict[str, Any] = data["sources"]
        self._reads = set(data["reads"])

    def unchecked_reads(self) -> list[tuple[str, str]]:
        """(template, value path) pairs the chart reads and the model does not replay: a value there is
        reported as not checked without helm (PLT-18), never passed in silence."""
        out = []
        for template, paths in sorted(self.data.get("readsBy", {}).items()):
            if template in REPLAYED_TEMPLATES:
                continue
            replayed = REPLAYED_CLUSTER_PATHS.get(template, ())
            out += [(template, path) for path in paths if path not in replayed]
        return out

    def reads(self, dotted_path: str) -> bool:
        return any(r == dotted_path or r.startswith(dotted_path + ".") for r in self._reads)

    def effective_values(self, variant: str, values: dict[str, Any]) -> dict[str, Any]:
        """values.yaml, values-<variant>.yaml, then ``values``, with numbers as helm holds them (float64)."""
        variant_values = self.data["variantValues"].get(variant, {})
        return as_helm_reads(helm_merge(helm_merge(self.data["chartDefaults"], variant_values), values))

    def optional_packages(self, bundle: str) -> list[str]:
        """Names the bundle emits only from enabledPackages: the optional helper, and names whose
        emission condition reads enabledPackages (the bootbox gate, gpu-operator)."""
        out = []
        for name, entries in self.emits.items():
            if any(e["bundle"] == bundle and (e["helper"] == "optional" or
                                              any("enabledPackages" in w for w in e["when"])) for e in entries):
                out.append(name)
        return out

    def default_packages(self, bundle: str) -> list[str]:
        optional = set(self.optional_packages(bundle))
        return [name for name, entries in self.emits.items()
                if name not in optional and any(e["bundle"] == bundle for e in entries)]

    def gates(self, bundle: str) -> dict[str, list[str]]:
        """enabledPackages entries that switch on other names (``has "cozystack.bootbox" ...``)."""
        out: dict[str, list[str]] = {}
        for name, entries in self.emits.items():
            for e in entries:
                for w in e["when"]:
                    found = re.match(r'^has "([^"]+)" \(default \(list\) \.Values\.bundles\.enabledPackages\)$', w)
                    if e["bundle"] == bundle and found:
                        out.setdefault(found.group(1), []).append(name)
        return out

    @cached_property
    def _plan(self) -> dict[str, list[tuple[int, int, str, Any]]]:
        """Every step helm takes, per template, in execution order: (line, order, kind, payload)."""
        plan: dict[str, list[tuple[int, int, str, Any]]] = {t: [] for t in TEMPLATE_ORDER}
        for name, entries in self.emits.items():
            for entry in entries:
                plan[entry["template"]].append((entry["line"], 1, "emit", (name, entry, entry["gate"])))
        for entry in self.data["checks"]:
            plan[entry["template"]].append((entry["line"], 0, "check", entry))
        for entry in self.data["guards"]:
            plan[entry["template"]].append((entry["line"], 0, "guard", entry))
        for marker, spots in self.data["anchors"].items():
            for spot in spots:
                plan[spot["template"]].append((spot["line"], 0, "anchor", (marker, spot, self._emission_near(spot))))
        for steps in plan.values():
            steps.sort(key=lambda step: (step[0], step[1]))
        return plan

    def evaluate(self, values: dict[str, Any],
                 component_values: Callable[[str], dict[tuple[str, ...], Any]] | None = None) \
            -> tuple[dict[str, RenderedPackage], list[ChartProblem]]:
        """(Packages the chart emits, problems in helm's execution order) for effective ``values``."""
        memo: dict[str, Any] = {}
        trees = self.data["parsed"]

        def value(text: str) -> Any:
            """One expression's value (or its Go template error), computed once per evaluation."""
            if text not in memo:
                try:
                    memo[text] = evaluate(trees.get(text) or parsed(text), values)
                except GoTemplateError as exc:
                    memo[text] = exc
            found = memo[text]
            if isinstance(found, GoTemplateError):
                raise found
            return found

        def holds(conditions: list[str]) -> bool:
            return all(truthy(value(c)) for c in conditions)

        rendered: dict[str, RenderedPackage] = {}
        problems: list[ChartProblem] = []
        for template in TEMPLATE_ORDER:
            failed = False
            for line, _, kind, payload in self._plan[template]:
                if failed and kind != "emit":
                    continue  # text/template stops the file at its first error; names are still modelled
                try:
                    outcome = self._step(kind, payload, values, value, holds, rendered, component_values)
                except GoTemplateError as exc:
                    outcome = None if failed else ChartProblem(str(exc), template, line,
                                                               exc.key or node_key(exc.at), "template")
                if isinstance(outcome, ChartProblem) and not failed:
                    problems.append(outcome)
                    failed = True
        problems += self.cluster_template_problems(values)
        return rendered, problems

    def cluster_template_problems(self, values: dict[str, Any]) -> list[ChartProblem]:
        """Go template errors of the templates that run only in a cluster (apps.yaml,
        containerd-registry-secret.yaml), which no offline render of the bundles reaches: the value
        conversions at ``clusterAnchors``, in helm's words (checked against real helm)."""
        anchors = self.data.get("clusterAnchors") or {}
        problems: list[ChartProblem] = []

        def problem(marker: str, at: str, why: str, key: tuple[str, ...]) -> None:
            spot = anchors.get(marker)
            if spot is not None:
                problems.append(ChartProblem(f"at <{at}>: {why}", spot["template"], spot["line"], key, "template"))

        certificates = dig(values, "publishing", "certificates")
        if isinstance(certificates, dict) and not truthy(certificates.get("wildcardSecretName")):
            solver = certificates.get("solver")
            if solver is not None and not isinstance(solver, str):
                problem('eq .Values.publishing.certificates.solver "dns01"',
                        'eq .Values.publishing.certificates.solver "dns01"',
                        "error calling eq: incompatible types for comparison", ("publishing", "certificates", "solver"))
        found = _registry_problem(values.get("registries"))
        if found is not None:
            problem(*found)
        return problems

    def _step(self, kind: str, payload: Any, values: dict[str, Any], value: Callable[[str], Any],
              holds: Callable[[list[str]], bool], rendered: dict[str, RenderedPackage],
              component_values: Callable[[str], dict[tuple[str, ...], Any]] | None) -> ChartProblem | None:
        if kind == "emit":
            name, entry, gate = payload
            if not holds(entry["when"]):
                return None
            if _has(name, value("default (list) .Values.bundles.disabledPackages"), "disabledPackages"):
                return None
            if entry["helper"] == "optional" and \
                    not _has(name, value("default (list) .Values.bundles.enabledPackages"), "enabledPackages"):
                return None
            variant = entry["variant"]
            if isinstance(variant, dict):
                variant = value(variant["expr"])
                variant = go_format(variant) if truthy(variant) else "default"
            rendered[name] = RenderedPackage(name, str(variant), entry["bundle"],
                                             component_values(name) if component_values else {}, gate)
            return None
        if kind == "check":
            if holds(payload["when"]):
                value(payload["expr"])
            return None
        if kind == "guard":
            if not holds(payload["when"]):
                return None
            message = _fail_message(payload["message"], values)
            return ChartProblem(message, payload["template"], payload["line"], message_key(message), "fail")
        marker, spot, emission = payload
        if emission is None or not holds(emission["when"]):
            return None
        return _anchor_problem(marker, spot, values)

    def _emission_near(self, spot: dict[str, Any]) -> dict[str, Any] | None:
        """The emission the anchored expression belongs to: the next one after it in the same file."""
        best = None
        for entries in self.emits.values():
            for e in entries:
                if e["template"] == spot["template"] and e["line"] >= spot["line"] and \
                        (best is None or e["line"] < best["line"]):
                    best = e
        return best


def _in_order(collection: Any) -> list[Any]:
    """What ``range`` visits: a list in order, a map's values by sorted key."""
    if isinstance(collection, dict):
        return [collection[k] for k in sorted(collection, key=str)]
    return list(collection) if isinstance(collection, list) else []


def _registry_problem(registries: Any) -> tuple[str, str, str, tuple[str, ...]] | None:
    """containerd-registry-secret.yaml's first Go template error for these values, or None (every
    message checked against real helm, tests/platform_chart/test_coverage.py)."""
    if registries is None:
        return None
    if not isinstance(registries, dict):
        return ("if .Values.registries.mirrors", ".Values.registries.mirrors",
                "can't evaluate field mirrors in type interface {}", ("registries",))
    mirrors, config = registries.get("mirrors"), registries.get("config")
    if not truthy(mirrors):
        return None
    if not isinstance(mirrors, (dict, list)):
        return ("range $registry, $mirror := .Values.registries.mirrors", ".Values.registries.mirrors",
                f"range can't iterate over {go_format(mirrors)}", ("registries", "mirrors"))
    for mirror in _in_order(mirrors):
        if not isinstance(mirror, dict):
            if mirror is None:
                return ("if $mirror.endpoints", "$mirror.endpoints", "nil pointer evaluating interface {}.endpoints",
                        ("registries", "mirrors"))
            return ("if $mirror.endpoints", "$mirror.endpoints",
                    "can't evaluate field endpoints in type interface {}", ("registries", "mirrors"))
        endpoints = mirror.get("endpoints")
        if not truthy(endpoints):
            continue
        if not isinstance(endpoints, (dict, list)):
            return ("range $endpoint := $mirror.endpoints", "$mirror.endpoints",
                    f"range can't iterate over {go_format(endpoints)}", ("registries", "mirrors"))
        for endpoint in _in_order(endpoints):
            index = "index $.Values.registries.config $endpoint"
            if config is None:
                return (index, index, "error calling index: index of untyped nil", ("registries", "config"))
            if isinstance(config, (list, str)):  # a string indexes like a slice of bytes
                return (index, index, f"error calling index: cannot index slice/array with type {go_type(endpoint)}",
                        ("registries", "config"))
            if not isinstance(config, dict):
                return (index, index, f"error calling index: can't index item of type {go_type(config)}",
                        ("registries", "config"))
            if not isinstance(endpoint, str):
                return (index, index, f"error calling index: value has type {go_type(endpoint)}; should be string",
                        ("registries", "mirrors"))
            entry = config.get(endpoint)
            if not truthy(entry):
                continue
            if not isinstance(entry, dict):
                return ("if $endpointConfig.tls }}", "$endpointConfig.tls",
                        f"can't evaluate field tls in type {go_type(entry)}", ("registries", "config"))
            tls, auth = entry.get("tls"), entry.get("auth")
            if truthy(tls) and not isinstance(tls, dict):
                return ("if $endpointConfig.tls.insecureSkipVerify", "$endpointConfig.tls.insecureSkipVerify",
                        "can't evaluate field insecureSkipVerify in type interface {}", ("registries", "config"))
            if truthy(auth) and not isinstance(auth, dict):
                return ("$endpointConfig.auth.username", "$endpointConfig.auth.username",
                        "can't evaluate field username in type interface {}", ("registries", "config"))
    return None


def _anchor_problem(marker: str, spot: dict[str, Any], values: dict[str, Any]) -> ChartProblem | None:
    """Value conversions the chart makes outside `if`s (urlParse, ternary, stageCniPlugins), where
    the enclosing emission renders."""
    if marker.startswith("urlParse"):
        if not truthy(evaluate(parsed(".Values.networking"), values)):
            return None
        endpoint = evaluate(parsed(".Values.publishing.apiServerEndpoint"), values)
        why = url_parse_error(endpoint) if truthy(endpoint) else None
        if why:
            # A non-string fails on the argument itself (helm: at <$apiServerEndpoint>), a bad string in urlParse.
            raise GoTemplateError("urlParse $apiServerEndpoint" if isinstance(endpoint, str) else "$apiServerEndpoint",
                                  why)
    elif marker.startswith("ternary"):
        enabled = evaluate(parsed(".Values.authentication.oidc.enabled"), values)
        if not isinstance(enabled, bool):
            # A null or absent key is the zero interface{} to text/template, so helm says "interface {}".
            got = "interface {}" if enabled is None else go_type(enabled)
            raise GoTemplateError(".Values.authentication.oidc.enabled",
                                  f"wrong type for value; expected bool; got {got}")
    elif marker.startswith("trimPrefix"):
        # system.yaml: $ingressNs := .Values.publishing.ingressName | default "tenant-root", then
        # trimPrefix, which takes a string (a number or bool is a Go template error there).
        namespace = evaluate(parsed(".Values.publishing.ingressName"), values)
        if truthy(namespace) and not isinstance(namespace, str):
            raise GoTemplateError("$ingressNs", f"wrong type for value; expected string; got {go_type(namespace)}")
    elif marker.startswith(("$userPci", "$vgpuMgr")):
        _gpu_wiring_problem(marker, values)
    elif marker.startswith("include"):
        networking = evaluate(parsed(".Values.networking"), values)
        if not truthy(networking):
            networking = {}
        if not isinstance(networking, dict):
            raise GoTemplateError("dig", "error calling dig: interface conversion")
        setting = networking.get("stageCniPlugins")
        if setting is not None and go_format(setting).lower() not in STAGE_CNI_SPELLINGS:
            message = (f"networking.stageCniPlugins: expected a boolean, got {go_quote(go_format(setting))} "
                       "-- leaving it unset follows the bundle variant")
            return ChartProblem(message, spot["template"], spot["line"], ("networking", "stageCniPlugins"), "fail")
    return None


STAGE_CNI_SPELLINGS = ("true", "yes", "on", "1", "false", "no", "off", "0")


def _gpu_wiring_problem(marker: str, values: dict[str, Any]) -> None:
    """iaas.yaml's GPU wiring, in the order helm executes it, raising the Go template error helm
    prints for a wrong-typed ``gpu.*`` value (each message checked against real helm,
    tests/platform_chart/test_gpu_wiring.py). Runs only where the chart runs it: gpu-operator
    bundle-enabled, the variant already validated (the fail guard above it)."""
    found = values.get("bundles")
    bundles: dict[str, Any] = found if isinstance(found, dict) else {}
    enabled, disabled = bundles.get("enabledPackages") or [], bundles.get("disabledPackages") or []
    if not isinstance(enabled, list) or not isinstance(disabled, list):
        return  # `has` fails first (the model reports that at $gpuEnabled)
    if not _has(GPU_OPERATOR, enabled, "enabledPackages") or _has(GPU_OPERATOR, disabled, "disabledPackages"):
        return
    found = bundles.get("iaas")
    iaas: dict[str, Any] = found if isinstance(found, dict) else {}
    variant = iaas.get("gpuOperatorVariant") if truthy(iaas.get("gpuOperatorVariant")) else "default"
    if variant not in ("default", "vgpu"):
        return  # the variant guard fails first
    gpu = values.get("gpu")

    def walk(node: Any, field: str, key: tuple[str, ...]) -> Any:
        """``(node).field`` in text/template: nil gives nothing, a map its entry, anything else fails."""
        if node is None:
            return None
        if not isinstance(node, dict):
            raise GoTemplateError(".Values.gpu", f"can't evaluate field {field} in type {go_type(node)}", key)
        return node.get(field)

    def concat(item: Any, at: str, key: tuple[str, ...]) -> None:
        if truthy(item) and not isinstance(item, list):  # `default (list) x`, then Sprig concat
            raise GoTemplateError(at, f"error calling concat: Cannot concat type {go_kind(item)} as list", key)

    def as_map(item: Any, at: str, key: tuple[str, ...]) -> dict[str, Any]:
        if truthy(item) and not isinstance(item, dict):  # `default (dict) x`, then a map argument
            raise GoTemplateError(at, f"wrong type for value; expected map[string]interface {{}}; got {go_type(item)}",
                                  key)
        return item if isinstance(item, dict) else {}

    if marker.startswith("$userPci"):
        permitted = walk(gpu, "permittedHostDevices", ("gpu",))
        user_pci = walk(permitted, "pciHostDevices", ("gpu", "permittedHostDevices"))
        user_mdev = walk(permitted, "mediatedDevices", ("gpu", "permittedHostDevices"))
        user_config = walk(gpu, "mediatedDevicesConfiguration", ("gpu",))
        if variant == "default":
            concat(user_pci, "concat $pci $userPci", ("gpu", "permittedHostDevices", "pciHostDevices"))
            return
        walk(walk(gpu, "vgpuDeviceManager", ("gpu",)), "enabled", ("gpu", "vgpuDeviceManager"))
        concat(user_pci, "concat $pci $userPci", ("gpu", "permittedHostDevices", "pciHostDevices"))
        concat(user_mdev, "concat $mdev $userMdev", ("gpu", "permittedHostDevices", "mediatedDevices"))
        as_map(user_config, "$userMdevConfig", ("gpu", "mediatedDevicesConfiguration"))
        return
    if variant != "vgpu":
        return
    manager = as_map(walk(gpu, "vgpuManager", ("gpu",)), "$vgpuMgr", ("gpu", "vgpuManager"))
    if "image" in manager:
        image = manager["image"] if truthy(manager["image"]) else ""
        if not isinstance(image, str):
            raise GoTemplateError('ne (default "" $vgpuMgr.image) "vgpu-manager"',
                                  "error calling ne: incompatible types for comparison",
                                  ("gpu", "vgpuManager", "image"))


def _has(name: str, listed: Any, key: str) -> bool:
    if listed is None:
        return False
    if not isinstance(listed, list):
        raise GoTemplateError("has $name $disabled" if key == "disabledPackages" else "has $name $enabled",
                              # Sprig mustHas prints the reflect.Kind ("map"), not the Go type
                              f"error calling has: Cannot find has on type {go_kind(listed)}")
    return any(go_kind(item) == "string" and item == name for item in listed)


def _fail_message(text: str, values: dict[str, Any]) -> str:
    if text.startswith('"'):
        return json.loads(text)
    found = re.match(r'^\(printf ("(?:[^"\\]|\\.)*")\s+(.*)\)$', text, re.S)
    if not found:
        return text
    template, arg = json.loads(found.group(1)), evaluate(parsed(found.group(2)), values)
    return template.replace("%q", go_quote(go_format(arg))).replace("%v", go_format(arg)).replace(
        "%s", go_format(arg))


def message_key(message: str) -> tuple[str, ...]:
    found = re.match(r"^([A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)+)", message)
    return tuple(found.group(1).split(".")) if found else ()


def node_key(at: str) -> tuple[str, ...]:
    """The value path in a Go template error node: ``.Values.a.b`` or ``dig "x" "y" d .Values.a``."""
    dig = re.match(r'^dig((?: "[^"]+")+) \S+ \.Values((?:\.[\w-]+)*)$', at)
    if dig:
        return tuple([p for p in dig.group(2).split(".") if p] + re.findall(r'"([^"]+)"', dig.group(1)))
    found = re.search(r"\.Values((?:\.[\w-]+)+)", at)
    if found:
        return tuple(found.group(1).lstrip(".").split("."))
    if "apiServerEndpoint" in at:
        return ("publishing", "apiServerEndpoint")
    if at == "$ingressNs":
        return ("publishing", "ingressName")
    if at.startswith("has $name $disabled"):
        return ("bundles", "disabledPackages")
    if at.startswith("has $name $enabled"):
        return ("bundles", "enabledPackages")
    if "gpuVariant" in at:
        return ("bundles", "iaas", "gpuOperatorVariant")
    return ()


_CATALOGUES: dict[tuple[int, str], dict[str, Any]] = {}


def versioned_catalogue(base: dict[str, Any], version: str | None) -> dict[str, Any]:
    """``variants/catalogue.yaml`` with every PackageSource the chart version ships taken from the
    chart (variants, components, install blocks, dependsOn: no ``partial`` left for them); entries
    the chart does not carry (the operator-made platform source, user additions) stay as written."""
    model = chart_model(version)
    key = (id(base), model.version)
    cached = _CATALOGUES.get(key)
    if cached is not None and cached["_base"] is base:
        return cached["catalogue"]
    packages = dict(base.get("packages") or {})
    for name, source in model.sources.items():
        packages[name] = {"variants": {
            variant: {"dependsOn": list(spec["dependsOn"]),
                      "components": {c: {"install": c in spec["installed"]} for c in spec["components"]}}
            for variant, spec in source["variants"].items()}}
    catalogue = {**base, "packages": packages, "platformVersion": model.version}
    _CATALOGUES[key] = {"_base": base, "catalogue": catalogue}
    return catalogue
