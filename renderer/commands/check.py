"""``cozy-render check``: render without refusing, validate output schemas, run every rule, report.

One ``pipeline.run`` whoever watches: a terminal only adds the progress bar, grouped warnings and a
summary line. Every cluster's findings (input errors included) are reported in every format.
"""

from __future__ import annotations

from typing import Any

from renderer import report, shard
from renderer import shard_report as sharded
from renderer.commands import fleet
from renderer.effective.choice import choose
from renderer.pipeline import Options, jobs_for
from renderer.requests import CheckRequest


def _nothing(_result: Any) -> None:
    return None


def run(req: CheckRequest) -> int:
    part = shard.requested(req.shard, req.all_clusters)
    chart = choose(req.chart, req.helm)
    options = Options(req.variants, req.root, None, req.kubernetes_version, req.validator, strict=req.strict,
                      refuse=False, chart=chart, flux=True, jobs=jobs_for(req.jobs), shard=part)
    watched = req.all_clusters and req.fmt == "text" and fleet.watching()
    # only the findings and counts are reported, so workers send back nothing else (keep)
    done, seconds = fleet.run_watched(req.path, options, all_clusters=req.all_clusters, watched=watched,
                                      label="checking", keep=_nothing)
    findings = report.FindingsReport(done.tagged(), chart, len(done.clusters), sum(c.objects for c in done.clusters),
                                     done.exit_code, watched, req.verbose, seconds)
    if part is not None and req.fmt == "json":  # what `merge` needs to join the shards
        ran = [(c.path, c.name) for c in done.clusters]
        sharded.show_json("findings", findings, sharded.section(part, "check", req, ran))
    else:
        report.show("findings", req.fmt, findings)
    return done.exit_code
