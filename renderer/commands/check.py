"""``cozy-render check``: render without refusing, validate output schemas, run every rule, report.

One ``pipeline.run`` whoever watches: a terminal only adds the progress bar, grouped warnings and a
summary line. Every cluster's findings (input errors included) are reported in every format.
"""

from __future__ import annotations

from renderer import report
from renderer.requests import CheckRequest


def run(req: CheckRequest) -> int:
    from renderer.commands import fleet
    from renderer.effective.choice import choose
    from renderer.pipeline import Options

    chart = choose(req.chart, req.helm)
    options = Options(req.variants, req.root, None, req.kubernetes_version, req.validator, strict=req.strict,
                      refuse=False, chart=chart, flux=True)
    watched = req.all_clusters and req.fmt == "text" and fleet.watching()
    done, seconds = fleet.run_watched(req.path, options, all_clusters=req.all_clusters, watched=watched,
                                      label="checking")
    report.show("findings", req.fmt, report.FindingsReport(
        done.tagged(), chart, len(done.clusters), sum(len(r.objects) for r in done.results), done.exit_code,
        watched, req.verbose, seconds))
    return done.exit_code
