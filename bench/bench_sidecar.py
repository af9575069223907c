"""The Argo CD sidecar under load: N concurrent `cmp generate` processes over M Applications, sharing one
render cache, started the way argocd-cmp-server starts them (README "Sizing the repo-server").

argocd-cmp-server handles the repo-server's generate requests in parallel (one goroutine per gRPC stream,
bounded only by the repo-server's --parallelismlimit), and for each one unpacks the repository into a fresh
``$TMPDIR/_cmp_server/<random>/`` folder, runs the plugin's generate command in the Application's path with
its own environment plus the request's (``ARGOCD_APP_*``, ``KUBE_VERSION``, ``ARGOCD_APP_PARAMETERS``),
in a process group of its own, and deletes the folder afterwards; on a cancelled request it signals that
process group (SIGTERM, SIGKILL 5 s later) (argo-cd cmpserver/plugin/plugin.go runCommand,
getTempDirMustCleanup). Every process of the sidecar shares ``COZY_RENDER_CACHE_DIR`` (an emptyDir).

For each N, on a generated fleet (``gen_fleet.py``, every sample shape):

- **cold**: an empty cache; every Application once, N at a time; every 10th request is killed part-way
  through its render (SIGKILL or SIGTERM to its process group, after a delay drawn from the serial
  render's duration, so some die while writing the cache), then asked again, as Argo CD retries;
- **warm**: the same cache; every Application once more.

Every output of a request that was not killed must be byte-identical (stdout and stderr) to a serial,
cache-less `cmp generate` of the same Application; every entry left in the cache must be whole (valid JSON
whose stdout and stderr are one Application's serial output). Reported: mismatches, torn entries, temp
files left by killed writers, throughput (renders per second, and per core) and latency (p50, p99).

``tests/commands/test_cmp_load.py`` runs the same harness, bounded (N = 2 and 8, a small fleet).

Usage: python bench/bench_sidecar.py [--apps 200] [--concurrency 2 8 32] [--python PY] [--write]
(--python: a venv's interpreter with cozy-render installed; default: a fresh wheel install, bench/proc.py)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_fleet
import targets

SECTION = "## Sidecar under load: concurrent `cmp generate` sharing one cache"
KUBE_VERSION = "1.33.4"


class Result(NamedTuple):
    app: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    killed: bool


def make_fleet(count: int, where: Path) -> tuple[Path, list[str]]:
    """A repository holding ``overlays/`` with ``count`` clusters; (its root, the cluster names)."""
    repo = where / "repo"
    names = gen_fleet.generate(count, repo / "overlays")
    return repo, names


def sidecar_environment(base: dict[str, str], home: Path, cache: Path | None) -> dict[str, str]:
    """The sidecar container's own environment (docs/argocd/install/repo-server-sidecar.yaml)."""
    env = {k: v for k, v in base.items() if not k.startswith(("ARGOCD_", "COZY_RENDER", "KUBE_"))}
    env["HOME"] = str(home)
    if cache is not None:
        env["COZY_RENDER_CACHE_DIR"] = str(cache)
    return env


def request_environment(app: str) -> dict[str, str]:
    """What the repo-server adds for an Application of the shipped ApplicationSet (no parameters:
    ARGOCD_APP_PARAMETERS is JSON null; reposerver/repository/repository.go newEnv, getPluginParamEnvs)."""
    revision = "3c780acd417f086f8f18d040d0d7020ff55d3ba3"
    return {
        "ARGOCD_APP_NAME": f"cozystack-{app}",
        "ARGOCD_APP_NAMESPACE": "cozy-system",
        "ARGOCD_APP_PROJECT_NAME": "default",
        "ARGOCD_APP_REVISION": revision,
        "ARGOCD_APP_REVISION_SHORT": revision[:7],
        "ARGOCD_APP_REVISION_SHORT_8": revision[:8],
        "ARGOCD_APP_SOURCE_PATH": f"overlays/clusters/{app}",
        "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example.com/platform/cozystack-gitops.git",
        "ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
        "KUBE_VERSION": KUBE_VERSION,
        "KUBE_API_VERSIONS": "v1,v1/ConfigMap,v1/Namespace,cozystack.io/v1alpha1,cozystack.io/v1alpha1/Package",
        "ARGOCD_APP_PARAMETERS": "null",
    }


class Sidecar:
    """One sidecar: its command, environment, temporary folder and (shared) render cache."""

    def __init__(self, repo: Path, command: Sequence[str], work: Path, cache: Path | None,
                 base_env: dict[str, str] | None = None) -> None:
        self.repo = repo
        self.command = list(command)
        self.tmp = work / "tmp"
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.env = sidecar_environment(dict(os.environ if base_env is None else base_env), self.tmp, cache)

    def checkout(self) -> Path:
        """A fresh copy of the repository where the cmp-server unpacks a request's tarball."""
        folder = self.tmp / "_cmp_server" / uuid.uuid4().hex
        shutil.copytree(self.repo, folder, symlinks=True)
        return folder

    def generate(self, app: str, kill_after: float | None = None, kill_signal: int = signal.SIGKILL,
                 checkout: Path | None = None) -> Result:
        """One generate request: a fresh checkout (``checkout``, else made now), the process in the app path,
        the checkout removed (by the caller, when it made it). The time is the process's alone, as the
        cmp-server has unpacked before it starts."""
        owned = checkout is None
        checkout = checkout or self.checkout()
        try:
            env = {**self.env, **request_environment(app)}
            started = time.perf_counter()
            process = subprocess.Popen(self.command, cwd=checkout / "overlays" / "clusters" / app, env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                       start_new_session=True)  # its own process group, as the cmp-server does
            killed = False
            try:
                stdout, stderr = process.communicate(timeout=kill_after)
            except subprocess.TimeoutExpired:
                killed = True
                with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                    os.killpg(process.pid, kill_signal)
                stdout, stderr = process.communicate()
            return Result(app, process.returncode, stdout, stderr, time.perf_counter() - started, killed)
        finally:
            if owned:
                shutil.rmtree(checkout, ignore_errors=True)


def serial_baseline(sidecar: Sidecar, apps: Sequence[str]) -> dict[str, Result]:
    """Every Application rendered alone, without a cache: the bytes every concurrent run must give."""
    out = {}
    for app in apps:
        result = sidecar.generate(app)
        if result.returncode != 0:
            raise SystemExit(f"serial cmp generate of {app} failed:\n{result.stderr}")
        out[app] = result
    return out


class Round(NamedTuple):
    results: list[Result]  # every request, killed ones included, in request order
    seconds: float  # wall time of the round's processes (checkouts made beforehand)


def run_round(sidecar: Sidecar, apps: Sequence[str], concurrency: int, *, kill_every: int = 0,
              kill_window: float = 1.0, seed: int = 20) -> Round:
    """Every app once, ``concurrency`` at a time; every ``kill_every``-th request is killed after a delay
    drawn from [0, kill_window) seconds and asked again once the others are done."""
    rng = random.Random(seed)
    plan: list[tuple[str, float | None, int]] = []
    for i, app in enumerate(apps):
        if kill_every and i % kill_every == kill_every - 1:
            plan.append((app, rng.uniform(0.0, kill_window), rng.choice([signal.SIGKILL, signal.SIGTERM])))
        else:
            plan.append((app, None, signal.SIGKILL))
    # The checkouts are made before the clock starts and removed after it stops: unpacking and cleaning
    # up are the cmp-server's work (Go, in parallel); done in this process's threads they would measure
    # Python's lock instead of the renders.
    ready = [(app, after, sig, sidecar.checkout()) for app, after, sig in plan]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        started = time.perf_counter()
        results = list(pool.map(lambda p: sidecar.generate(*p), ready))
        seconds = time.perf_counter() - started
        retries = [(r.app, None, signal.SIGKILL, sidecar.checkout()) for r in results if r.killed]
        started = time.perf_counter()
        results += list(pool.map(lambda p: sidecar.generate(*p), retries))
        seconds += time.perf_counter() - started
    for *_, folder in ready + retries:  # the cmp-server's cleanup, also off the clock
        shutil.rmtree(folder, ignore_errors=True)
    return Round(results, seconds)


def mismatches(results: Sequence[Result], expected: dict[str, Result]) -> list[str]:
    """Requests that completed (were not killed) but did not print the serial bytes."""
    bad = []
    for r in results:
        if r.killed:
            continue
        want = expected[r.app]
        if (r.returncode, r.stdout, r.stderr) != (0, want.stdout, want.stderr):
            bad.append(r.app)
    return bad


class CacheState(NamedTuple):
    entries: int
    torn: list[str]  # entries that are not whole: unreadable, or not one Application's serial output
    leftovers: int  # temporary files of writers killed before their rename


def inspect_cache(cache: Path, expected: dict[str, Result]) -> CacheState:
    outputs = {(r.stdout, r.stderr) for r in expected.values()}
    entries = sorted(cache.glob("*.json"))
    torn = []
    for path in entries:
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            whole = (entry["stdout"], entry["stderr"]) in outputs and isinstance(entry["inputs"], dict)
        except (OSError, ValueError, KeyError, TypeError):
            whole = False
        if not whole:
            torn.append(path.name)
    leftovers = len([p for p in cache.iterdir() if p.name.startswith(".entry-")]) if cache.exists() else 0
    return CacheState(len(entries), torn, leftovers)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class Phase(NamedTuple):
    name: str
    concurrency: int
    requests: int
    killed: int
    seconds: float
    latencies: list[float]
    mismatched: int


def measure(repo: Path, apps: Sequence[str], command: Sequence[str], work: Path, concurrency: int,
            expected: dict[str, Result], kill_window: float,
            base_env: dict[str, str] | None = None) -> tuple[list[Phase], CacheState]:
    """The cold and warm rounds at one concurrency, on a cache of its own."""
    cache = work / f"cache-{concurrency}"
    sidecar = Sidecar(repo, command, work / f"sidecar-{concurrency}", cache, base_env)
    phases = []
    for name, kill_every in (("cold", 10), ("warm", 0)):
        done = run_round(sidecar, apps, concurrency, kill_every=kill_every, kill_window=kill_window)
        finished = [r for r in done.results if not r.killed]
        phases.append(Phase(name, concurrency, len(done.results), len(done.results) - len(finished), done.seconds,
                            [r.seconds for r in finished], len(mismatches(done.results, expected))))
    return phases, inspect_cache(cache, expected)


def report(apps: int, serial: dict[str, Result], rows: list[tuple[list[Phase], CacheState]], python: str) -> str:
    serial_times = [r.seconds for r in serial.values()]
    n_cores = cores()
    lines = [
        SECTION, "",
        f"`python bench/bench_sidecar.py --apps {apps}` ({python}): {apps} Applications of a generated fleet "
        f"(every sample shape), each request a fresh checkout and a new `cozy-render cmp generate` process with "
        f"the cmp-server's environment, all sharing one `COZY_RENDER_CACHE_DIR`; {n_cores} cores. Cold: empty "
        "cache, every 10th request killed (SIGKILL or SIGTERM to its process group) part-way and retried. Warm: "
        "the same cache again. Every completed output is compared byte for byte with a serial cache-less run.",
        "",
        f"Serial, no cache: median {statistics.median(serial_times):.3f} s, p99 {percentile(serial_times, 0.99):.3f} s "
        "per render.",
        "",
        "| N | round | requests (killed) | wall s | renders/s | renders/s per core | p50 s | p99 s | mismatches "
        "| cache entries (torn) | temp files left |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for phases, state in rows:
        for phase in phases:
            rate = len(phase.latencies) / phase.seconds if phase.seconds else float("nan")
            lines.append(
                f"| {phase.concurrency} | {phase.name} | {phase.requests} ({phase.killed}) | {phase.seconds:.1f} | "
                f"{rate:.2f} | {rate / n_cores:.2f} | {percentile(phase.latencies, 0.5):.3f} | "
                f"{percentile(phase.latencies, 0.99):.3f} | {phase.mismatched} | "
                f"{state.entries} ({len(state.torn)}) | {state.leftovers} |")
    lines.append("")
    phases = [p for phases, _ in rows for p in phases]
    states = [s for _, s in rows]
    lines.append(targets.line("outputs that differ from a serial cache-less run", sum(p.mismatched for p in phases),
                              "<=", 0, digits=0))
    lines.append(targets.line("torn cache entries", sum(len(s.torn) for s in states), "<=", 0, digits=0))
    lines.append(targets.line("temporary files left by killed writers", sum(s.leftovers for s in states), "<=", 0,
                              digits=0))
    warm = [p for p in phases if p.name == "warm" and p.latencies]
    if warm:
        worst = max(warm, key=lambda p: percentile(p.latencies, 0.99))
        lines.append(f"- warm p99 latency, worst N ({worst.concurrency}): {percentile(worst.latencies, 0.99):.3f} s")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--apps", type=int, default=200)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[2, 8, 32])
    parser.add_argument("--python", type=Path, help="a venv's python with cozy-render installed")
    parser.add_argument("--write", action="store_true", help="replace this section of bench/RESULTS.md")
    args = parser.parse_args(argv)
    import proc

    with tempfile.TemporaryDirectory(prefix="cozy-sidecar-") as tmp:
        work = Path(tmp)
        python = args.python or proc.build_venv(work / "venv")
        command = [*proc.cozy_render(python), "cmp", "generate"]
        repo, apps = make_fleet(args.apps, work)
        serial = serial_baseline(Sidecar(repo, command, work / "serial", None, proc.ENV), apps)
        kill_window = statistics.median(r.seconds for r in serial.values())
        rows = [measure(repo, apps, command, work, n, serial, kill_window, proc.ENV) for n in args.concurrency]
        text = report(args.apps, serial, rows, "fresh wheel install" if args.python is None else str(args.python))
    print(text)
    if args.write:
        from results import write_section

        write_section(SECTION, text)
    bad = sum(p.mismatched for phases, _ in rows for p in phases) + sum(len(s.torn) for _, s in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
