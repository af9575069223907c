"""The platform as it will really be: the vendored platform chart rendered by a real ``helm``.

- ``renderer.effective.helm`` runs ``helm template`` on an offline-safe scratch copy of the chart,
  values layered as the operator does;
- ``renderer.effective.packages`` builds the effective Package set (the chart's Packages with
  cozy-render's own objects applied on top) for ``cozy-render effective``;
- ``renderer.effective.chart_check`` is the check stage's one source of "what the platform renders"
  when helm is there (``platform_view``: helm's Packages, PLT-CHART on a chart failure), which the
  rules read through ``RuleContext.platform``; ``chart_findings`` is the chart's verdict alone;
- ``renderer.commands.effective`` is the command body (``run(request)``) and ``platforms``.

Never on the ``render`` / ``cmp generate`` path: those stay helm-free (the Python model in
``renderer.platform_chart.model`` pre-empts the chart's failures there).
"""

from __future__ import annotations

from renderer.codes import Code
from renderer.errors import ERROR

CODES: list[Code] = [
    Code("PLT-CHART", ERROR, "The real platform chart fails to render the platform values",
         "`check` renders the vendored platform chart with a real helm, values layered as the operator "
         "does (values.yaml, values-<variant>.yaml, the rendered platform values). Any chart failure "
         "fails the whole platform release in the cluster; the message is the chart's own (a `fail` "
         "guard or a Go template error), located at the overlay value that set the offending key "
         "where one is found.",
         "reference (b); C:packages/core/platform/templates/bundles/*.yaml"),
    Code("PLT-HELM", ERROR, "No usable helm to render the platform chart with, or helm itself failed",
         "`effective` (and the chart check, when asked for explicitly) needs helm 3 or 4 on PATH or "
         "given with --helm (https://helm.sh/docs/intro/install/ lists the official binaries and packages). "
         "helm's own failure is PLT-HELM too, at the chart it was rendering, never the chart's error: "
         "stopped by its limits (3 s of CPU, +0.1 s per further cluster of a batch; 256 MiB of data; "
         "60 s; 64 MiB of output), a Go runtime crash or stack dump (also when an address-space limit "
         "below about 1 GiB keeps Go from starting), or a binary that does not answer `helm version` "
         "as helm 3 or 4.",
         "reference/platform-chart/README.md, Getting a real helm binary"),
    Code("PLT-CHART-FILES", ERROR, "A --platform-chart folder holds a file cozy-render will not hand to helm",
         "The chart given with --platform-chart is copied, file by file, into a private scratch folder "
         "before helm reads it, through one folder walker (renderer.walk): a link is followed only when "
         "what it names is inside the chart folder, so `.Files.Get`, `.Files.Glob` and values files can "
         "never reach a file outside it (a link to /proc/self/environ would hand cozy-render's own "
         "environment to the chart). A link out of the chart, a link to nothing, a link loop, a FIFO, "
         "socket or device, more than 10,000 files, 64 MiB or 32 folders of nesting is refused, naming "
         "the entry and never reading its target. Replace the link with the file it should hold.",
         "SECURITY.md, Budgets and limits"),
    Code("PLT-VERSION", ERROR, "platform.version names no vendored platform chart",
         "cozy-render ships the platform chart at the versions `cozy-render platforms` lists; for any "
         "other version pass `--platform-chart DIR` (a copy of packages/core/platform/).",
         "README, Effective platform (supported versions)"),
]


