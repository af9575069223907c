"""The start-up budget, in one place: what a cold ``render PATH`` and ``cmp generate`` may load, what a
render-cache hit may load, and where a function-level import is allowed (each with its reason).

Argo CD runs ``cmp generate`` once per Application per refresh and CI runs ``render PATH`` per cluster,
so process start-up is paid thousands of times a day. docs/startup-budget.md explains each entry and
measures each trick that keeps start-up small (``bench/bench_startup.py --tricks``); its tables are
generated from this module (``python -m renderer.generate``), and tests/test_startup_imports.py and
tests/test_function_imports.py hold the code to it. Plain data: importing this costs nothing.
"""

# Libraries a cold render and `cmp generate` of the samples do not load (other commands do, or only some
# overlays need them): (module, why it stays off the path).
HEAVY: tuple[tuple[str, str], ...] = (
    ("click", "the command line parser: the two hot argument vectors skip it (renderer.entry.fast_path)"),
    ("jinja2", "templates that are plain lookups are substituted without it (renderer.load.templating)"),
    ("kubernetes", "diff and doctor against a live cluster only"),
    ("deepdiff", "diff only"),
    ("jsonschema", "the validators are generated fastjsonschema code"),
    ("yaml", "PyYAML: never needed by a render"),
    ("dataclasses", "pulls in inspect and builds each class with exec: requests are NamedTuples"),
    ("inspect", "imported by dataclasses and others"),
    ("tempfile", "only for writing files (render --out, the cache's store)"),
    ("asyncio", "never needed by a render"),
    ("ssl", "only for a live cluster"),
    ("http.client", "only for a live cluster"),
    ("email", "imported by http.client"),
    ("difflib", "diff only"),
    ("argparse", "maintainer tools only"),
    ("decimal", "fastjsonschema's generated code imports it; renderer.jsonschema_runtime stands in"),
    ("shutil", "with bz2, lzma and fnmatch; renderer.executables finds programs without it"),
    ("bz2", "imported by shutil"),
    ("lzma", "imported by shutil"),
)
# Modules of a library the render uses in part (a prefix covers its submodules): fastjsonschema's schema
# compilers (renderer.jsonschema_runtime imports its exceptions without the package's __init__,
# renderer.lightimport).
HEAVY_PARTS: tuple[tuple[str, str], ...] = (
    ("fastjsonschema.draft", "the schema compilers: the validators are generated ahead of time"),
    ("fastjsonschema.generator", "a schema compiler"),
    ("fastjsonschema.ref_resolver", "a schema compiler"),
)
# A render-cache hit (renderer.cache.replay) replays stored bytes: cozy-render's modules it may load, and
# libraries and standard modules it must not (each pulls in more than the whole replay needs).
HIT_MODULES: tuple[str, ...] = ("renderer.entry", "renderer.cache", "renderer.runner", "renderer.streams",
                                "renderer.load", "renderer.load.roots")
HIT_ABSENT: tuple[str, ...] = ("ruamel.yaml", "fastjsonschema", "jinja2", "click", "json", "re", "pathlib", "typing")

# Why a function-level import may stay (tests/test_function_imports.py refuses any other):
START_UP = "start-up path"  # the module is on a cold render's or cmp generate's path and this is not
OPTIONAL = "optional dependency"  # the library may be missing, or only some commands need it
CYCLE = "breaking a cycle"  # a top-level import would close an import cycle (tests/test_import_graph.py)
WARM_UP = "daemon warm-up"  # imported by the daemon's warm-up, after the server noted the package's files:
# an upgrade that lands between the note and the import is then seen (README "Argo CD", the daemon)
PENDING = "pending hoist"  # not justified by start-up yet: to be hoisted to the top of its module
REASONS = (START_UP, OPTIONAL, CYCLE, WARM_UP, PENDING)
# Every function-level import of cozy-render's own modules or of a third-party library, as (the module
# that imports, the module imported, why it is not at the top of the file). One entry covers every such
# import of that module in that file; tests/test_function_imports.py refuses any other, and any entry
# nothing matches any more.
FUNCTION_IMPORTS: tuple[tuple[str, str, str], ...] = (
    ("renderer.batch", "renderer.childproc", START_UP),
    ("renderer.cache", "renderer.load.roots", START_UP),
    ("renderer.check", "renderer.check", START_UP),
    ("renderer.check", "renderer.check.rules", START_UP),
    ("renderer.check", "renderer.check.schemas", START_UP),
    ("renderer.check", "renderer.errors", START_UP),
    ("renderer.check.rules", "renderer.load.variants", START_UP),
    ("renderer.check.rules.package", "renderer.platform_chart", START_UP),
    ("renderer.check.rules.package", "renderer.platform_chart.model", START_UP),
    ("renderer.check.rules.platform", "renderer.model", START_UP),
    ("renderer.check.rules.platform", "renderer.platform_chart", START_UP),
    ("renderer.check.rules.platform", "renderer.platform_chart.model", START_UP),
    ("renderer.check.rules.platform", "renderer.resolve.platform", START_UP),
    ("renderer.check.schemas", "renderer.check.schemas", START_UP),
    ("renderer.check.schemas", "renderer.check.schemas.kubeconform", START_UP),
    ("renderer.check.schemas", "renderer.check.schemas.validator", START_UP),
    ("renderer.check.schemas", "renderer.errors", START_UP),
    ("renderer.check.schemas", "renderer.executables", START_UP),
    ("renderer.check.schemas.validator", "fastjsonschema", START_UP),
    ("renderer.check.schemas.validator", "renderer.check.schemas", START_UP),
    ("renderer.cli", "renderer", START_UP),
    ("renderer.cli", "renderer.check.schemas.catalog", START_UP),
    ("renderer.cli", "renderer.commands", START_UP),
    ("renderer.cli", "renderer.commands.completion", START_UP),
    ("renderer.cli", "renderer.commands.effective", START_UP),
    ("renderer.cli", "renderer.commands.schemas", START_UP),
    ("renderer.cli", "renderer.commands.version", START_UP),
    ("renderer.cli", "renderer.diff", START_UP),
    ("renderer.cli", "renderer.errors", START_UP),
    ("renderer.cli", "renderer.requests", START_UP),
    ("renderer.cli", "renderer.runner", START_UP),
    ("renderer.cmp", "renderer", START_UP),
    ("renderer.cmp", "renderer.check.schemas.catalog", START_UP),
    ("renderer.cmp", "renderer.effective.choice", START_UP),
    ("renderer.cmp", "renderer.escape", START_UP),
    ("renderer.cmp", "renderer.load.roots", START_UP),
    ("renderer.cmp", "renderer.load.yamlio", START_UP),
    ("renderer.cmp", "renderer.model", START_UP),
    ("renderer.cmp", "renderer.pipeline", START_UP),
    ("renderer.commands.cmp", "renderer", START_UP),
    ("renderer.commands.common", "renderer", START_UP),
    ("renderer.commands.common", "renderer.load.overlay", START_UP),
    ("renderer.commands.common", "renderer.load.roots", START_UP),
    ("renderer.commands.common", "renderer.pipeline", START_UP),
    ("renderer.commands.render", "renderer", START_UP),
    ("renderer.commands.render", "renderer.check", START_UP),
    ("renderer.commands.render", "renderer.commands", START_UP),
    ("renderer.commands.render", "renderer.commands.explain", START_UP),
    ("renderer.commands.render", "renderer.effective.choice", START_UP),
    ("renderer.commands.render", "renderer.emit", START_UP),
    ("renderer.commands.render", "renderer.escape", START_UP),
    ("renderer.commands.render", "renderer.pipeline", START_UP),
    ("renderer.entry", "renderer.cache", START_UP),
    ("renderer.entry", "renderer.childproc", START_UP),
    ("renderer.entry", "renderer.cli", START_UP),
    ("renderer.entry", "renderer.commands", START_UP),
    ("renderer.entry", "renderer.daemon.client", START_UP),
    ("renderer.entry", "renderer.requests", START_UP),
    ("renderer.entry", "renderer.runner", START_UP),
    ("renderer.errors", "renderer.escape", START_UP),
    ("renderer.load.overlay", "renderer.load", START_UP),
    ("renderer.load.overlay", "renderer.load.layercache", START_UP),
    ("renderer.load.overlay", "renderer.load.overlay_schema", START_UP),
    ("renderer.load.overlay_schema", "fastjsonschema", START_UP),
    ("renderer.load.overlay_schema", "renderer._generated", START_UP),
    ("renderer.load.overlay_schema", "renderer.jsonschema_runtime", START_UP),
    ("renderer.load.templating", "jinja2", START_UP),
    ("renderer.load.templating", "jinja2.exceptions", START_UP),
    ("renderer.load.templating", "jinja2.sandbox", START_UP),
    ("renderer.load.templating", "jinja2.utils", START_UP),
    ("renderer.load.variants", "renderer", START_UP),
    ("renderer.load.variants", "renderer.escape", START_UP),
    ("renderer.load.variants", "renderer.load", START_UP),
    ("renderer.load.variants", "renderer.load.yamlio", START_UP),
    ("renderer.output.check", "renderer.model", START_UP),
    ("renderer.output.yaml", "renderer.output", START_UP),
    ("renderer.output.yaml", "ruamel.yaml", START_UP),
    ("renderer.output.yaml", "ruamel.yaml.representer", START_UP),
    ("renderer.pipeline", "renderer", START_UP),
    ("renderer.pipeline", "renderer.effective.chart_check", START_UP),
    ("renderer.pipeline", "renderer.effective.helm", START_UP),
    ("renderer.pipeline", "renderer.load.yamlio", START_UP),
    ("renderer.platform_chart.gourl", "renderer.platform_chart.gotemplate", START_UP),
    ("renderer.platform_chart.model", "renderer.platform_chart", START_UP),
    ("renderer.report", "renderer", START_UP),
    ("renderer.report", "renderer.commands", START_UP),
    ("renderer.report", "renderer.escape", START_UP),
    ("renderer.report", "renderer.pipeline", START_UP),
    ("renderer.resolve", "renderer.platform_chart", START_UP),
    ("renderer.resolve", "renderer.platform_chart.model", START_UP),
    ("renderer.resolve", "renderer.resolve.features", START_UP),
    ("renderer.resolve", "renderer.resolve.features.context", START_UP),
    ("renderer.resolve.features.hubble", "renderer.platform_chart", START_UP),
    ("renderer.resolve.platform", "renderer.platform_chart.model", START_UP),
    ("renderer.runner", "renderer", START_UP),
    ("renderer.runner", "renderer.errors", START_UP),
    ("renderer.runner", "renderer.escape", START_UP),
    ("renderer.runner", "renderer.streams", START_UP),
    ("renderer.streams", "renderer.errors", START_UP),
    ("renderer.diff.live", "kubernetes", OPTIONAL),
    ("renderer.diff.live", "kubernetes.client", OPTIONAL),
    ("renderer.diff.live", "urllib3", OPTIONAL),
    ("renderer.diff.snapshot_yaml", "_ruamel_yaml", OPTIONAL),
    ("renderer.diff.snapshot_yaml", "yaml", OPTIONAL),
    ("renderer.diff.snapshot_yaml", "yaml._yaml", OPTIONAL),
    # the base install's stand-in for PyYAML's error class, beside ruamel.yaml.clib's parser
    ("renderer.diff.snapshot_yaml", "ruamel.yaml.error", OPTIONAL),
    ("renderer.daemon.server", "renderer.check.rules", WARM_UP),
    ("renderer.daemon.server", "renderer.commands", WARM_UP),
    ("renderer.daemon.server", "renderer.lazyre", WARM_UP),
    ("renderer.daemon.server", "renderer.load.overlay_schema", WARM_UP),
    ("renderer.daemon.server", "renderer.load.templating", WARM_UP),
    ("renderer.daemon.server", "renderer.load.variants", WARM_UP),
    ("renderer.daemon.server", "renderer.platform_chart.model", WARM_UP),
    ("renderer.daemon.server", "renderer.requests", WARM_UP),
    ("renderer.daemon.server", "ruamel.yaml.util", WARM_UP),
)


def _table(header: tuple[str, ...], rows: "list[tuple[str, str]] | list[tuple[str, str, str]]") -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def blocks() -> dict[str, str]:
    """The page's generated tables, by block name (``<!-- generated: NAME -->`` ... ``<!-- /generated -->``)."""
    reasons = {reason: sum(1 for entry in FUNCTION_IMPORTS if entry[2] == reason) for reason in REASONS}
    return {
        "heavy": _table(("module", "why a cold render and `cmp generate` leave it alone"),
                        [(f"`{name}`", why) for name, why in HEAVY]
                        + [(f"`{name}*`", why) for name, why in HEAVY_PARTS]),
        "hit": _table(("a cache hit may load", "a cache hit must not load"),
                      [(", ".join(f"`{m}`" for m in HIT_MODULES), ", ".join(f"`{m}`" for m in HIT_ABSENT))]),
        "reasons": _table(("reason", "entries"), [(reason, str(count)) for reason, count in reasons.items()]),
        "function-imports": _table(("module", "imports, inside a function", "reason"),
                                   [(f"`{module}`", f"`{imported}`", reason)
                                    for module, imported, reason in FUNCTION_IMPORTS]),
    }


def render_page(text: str) -> str:
    """``text`` (docs/startup-budget.md) with each generated block replaced by its table."""
    out: list[str] = []
    skipping = False
    made = blocks()
    for line in text.splitlines(keepends=True):
        if skipping:
            if line.strip() == "<!-- /generated -->":
                out.append(line)
                skipping = False
            continue
        out.append(line)
        if line.startswith("<!-- generated: ") and line.strip().endswith("-->"):
            name = line.strip()[len("<!-- generated: "):-len("-->")].strip()
            out.append(made[name] + "\n")
            skipping = True
    return "".join(out)
