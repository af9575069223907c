"""`cmp generate` on a render-cache miss through the resident renderer, against in-process and against
`kubectl kustomize`, whole process, same machine, same run (issue 37 item 1).

For the richest bundled sample this times, interleaved, median of N runs:

- `cozy-render cmp generate` in the sample's folder (ARGOCD_APP_SOURCE_PATH set, no cache), in-process;
- the same with COZY_RENDER_DAEMON_SOCKET naming a `cozy-render daemon serve` this script starts (and
  always stops): the client process plus the forked worker's render;
- the same through the daemon with the sidecar image's `cozy-render` (docs/argocd/Dockerfile writes it
  over pip's console script, which imports `re`): the figure the target is about;
- the floors: a bare interpreter (`-I -S`), and one with `site` and `-P` as the image's command starts;
- `kubectl kustomize <dir>` over the same objects written by `render --out`; skipped without kubectl;

then the sidecar's case: 100 Applications (the samples in turn), 8 at a time, in-process and through the
daemon, as throughput, both with the image's command. Every daemon output is compared byte for byte
with the in-process one, and the server's log must count one worker per request (no silent fallback).

Targets (issue 37): through the daemon <= 0.5x kubectl kustomize; the sidecar's throughput >= 2x in-process.

Usage: python bench/bench_daemon.py [--runs N] [--apps N] [--venv DIR] [--write]
       (--venv: an existing environment with cozy-render installed; otherwise one is built from a wheel)
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import proc
import targets
from bench_startup import richest_sample
from results import write_section

REPO = proc.REPO
IN_PROCESS = "cmp generate, in-process"
CONSOLE = "cmp generate, through the daemon (pip's console script)"
IMAGE = "cmp generate, through the daemon (the image's command)"
BARE = "bare python (-I -S)"
SITE = "python -P with site (the image command's floor)"
SECTION = "## Resident renderer: `cmp generate` through the daemon vs in-process vs kustomize"
TARGET_KUSTOMIZE = 0.5
TARGET_THROUGHPUT = 2.0
CONCURRENCY = 8


class Daemon:
    """`cozy-render daemon serve --verbose` on a socket in ``folder``; stopped by ``stop``."""

    def __init__(self, cozy: list[str], folder: Path) -> None:
        self.socket = folder / "run" / "daemon.sock"
        self.log = folder / "daemon.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([*cozy, "daemon", "serve", "--socket", str(self.socket),
                                          "--verbose"], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         env=proc.ENV)
        deadline = time.monotonic() + 120
        while "serving" not in self.log.read_text() and time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"daemon serve exited {self.proc.returncode}: {self.log.read_text()}")
            time.sleep(0.05)

    def served(self) -> int:
        return sum(" worker " in line for line in self.log.read_text().splitlines())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def image_launcher(python: Path, where: Path) -> list[str]:
    """The sidecar image's `cozy-render` for ``python``: the Dockerfile's own printf line, run here."""
    text = re.sub(r"\\\n", " ", (REPO / "docs" / "argocd" / "Dockerfile").read_text())
    (line,) = [x for x in text.splitlines() if x.startswith("RUN printf") and "> /usr/local/bin/cozy-render" in x]
    command = line.removeprefix("RUN ").split(" && ")[0].strip()
    command = command.replace('"$(command -v python3)"', shlex.quote(str(python)))
    command = command.replace("/usr/local/bin/cozy-render", shlex.quote(str(where)))
    subprocess.run(["/bin/sh", "-c", command], check=True)
    where.chmod(0o755)
    return [str(where)]


def generate(cozy: list[str], app: Path, env: dict[str, str]) -> tuple[int, bytes, bytes]:
    done = subprocess.run([*cozy, "cmp", "generate"], cwd=app, env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, check=False)
    return done.returncode, done.stdout, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--apps", type=int, default=100, help="Applications of the sidecar case")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    parser.add_argument("--venv", type=Path, help="existing environment with cozy-render installed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        python = (args.venv / "bin" / "python") if args.venv else proc.build_venv(Path(scratch) / "venv")
        text = run(python, args, Path(scratch))
    print(text)
    if args.write:
        write_section(SECTION, text)


def run(python: Path, args: argparse.Namespace, scratch: Path) -> str:
    load = os.getloadavg()[0]  # the machine may be shared: say how busy it was
    sample, count = richest_sample(python)
    cozy = proc.cozy_render(python)
    kubectl = proc.kubectl()
    base = {k: v for k, v in proc.ENV.items() if not k.startswith(("ARGOCD_", "COZY_RENDER"))}
    cmp_env = {**base, "ARGOCD_APP_SOURCE_PATH": sample.relative_to(REPO).as_posix()}
    out = scratch / "out"
    subprocess.run([*cozy, "render", str(sample), "--out", str(out)], check=True, env=base)
    launcher = image_launcher(python, scratch / "cozy-render")
    daemon = Daemon(launcher, scratch)
    try:
        served_env = {**cmp_env, "COZY_RENDER_DAEMON_SOCKET": str(daemon.socket)}
        expected = generate(cozy, sample, cmp_env)
        if generate(cozy, sample, served_env) != expected or generate(launcher, sample, served_env) != expected \
                or daemon.served() != 2:
            raise SystemExit("the daemon's output differs from in-process, or it did not serve")
        cases: dict[str, tuple[list[str], dict[str, str], Path | None]] = {
            IN_PROCESS: ([*cozy, "cmp", "generate"], cmp_env, sample),
            CONSOLE: ([*cozy, "cmp", "generate"], served_env, sample),
            IMAGE: ([*launcher, "cmp", "generate"], served_env, sample),
            BARE: (proc.bare_interpreter(python), base, None),
            SITE: ([str(python), "-P", "-c", "pass"], base, None),
        }
        if kubectl:
            cases["kubectl kustomize"] = ([kubectl, "kustomize", str(out)], base, None)
        for cmd, env, cwd in cases.values():  # warm the page cache; not counted
            proc.timed(cmd, env, cwd)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (cmd, env, cwd) in cases.items():
                times[name].append(proc.timed(cmd, env, cwd))
        sidecar, differing = sidecar_case(launcher, served_env, cmp_env, args.apps)
        served = daemon.served()
    finally:
        daemon.stop()
    med = {name: statistics.median(v) * 1000 for name, v in times.items()}
    lines = [
        SECTION,
        "",
        f"Sample: `{sample.relative_to(REPO)}` ({count} objects, the richest). Median of {args.runs} interleaved "
        f"runs, whole process, render-cache miss; the daemon is `cozy-render daemon serve` of the same "
        f"environment (bytecode: {'yes' if proc.has_bytecode(python) else 'NO'}). Machine: {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, load average {load:.2f} at the start.",
        f"Reproduce: `.venv/bin/python bench/bench_daemon.py --runs {args.runs} --apps {args.apps} --write`.",
        "",
    ]
    lines += [f"- {name}: {ms:.1f} ms" for name, ms in med.items()]
    through = med[IMAGE]
    lines.append(f"- through the daemon (the image's command) / in-process: {through / med[IN_PROCESS]:.2f}x")
    if "kubectl kustomize" in med:
        kustomize = med["kubectl kustomize"]
        lines.append(targets.line("through the daemon (the image's command) / kubectl kustomize", through / kustomize,
                                  "<=", TARGET_KUSTOMIZE, "x"))
        lines.append(f"- through the daemon (pip's console script) / kubectl kustomize: "
                     f"{med[CONSOLE] / kustomize:.2f}x")
        lines.append(f"- in-process / kubectl kustomize: {med[IN_PROCESS] / kustomize:.2f}x")
        lines.append(f"- floors / kubectl kustomize: bare python {med[BARE] / kustomize:.2f}x, "
                     f"python -P with site {med[SITE] / kustomize:.2f}x")
    else:
        lines.append("- through the daemon / kubectl kustomize: not measured (kubectl is not on PATH)")
    in_process_s, daemon_s = sidecar
    lines += [
        f"- sidecar, {args.apps} Applications {CONCURRENCY} at a time: in-process {args.apps / in_process_s:.1f}/s, "
        f"through the daemon {args.apps / daemon_s:.1f}/s",
        targets.line("sidecar throughput, daemon / in-process", in_process_s / daemon_s, ">=", TARGET_THROUGHPUT, "x"),
        f"- differing outputs: {differing}; requests the daemon's workers ran: {served} "
        f"(of {2 * args.runs + 4 + args.apps}: every timed one, the checks and the warm-ups, the sidecar's)",
    ]
    return "\n".join(lines) + "\n"


def sidecar_case(cozy: list[str], served_env: dict[str, str], cmp_env: dict[str, str],
                 apps: int) -> tuple[tuple[float, float], int]:
    """Wall seconds for ``apps`` generates, CONCURRENCY at once, in-process then through the daemon;
    and how many daemon outputs differed from in-process."""
    clusters = sorted(p for p in (REPO / "overlays" / "clusters").iterdir() if (p / "cluster.yaml").exists())
    jobs = [clusters[i % len(clusters)] for i in range(apps)]

    def env_for(app: Path, env: dict[str, str]) -> dict[str, str]:
        return {**env, "ARGOCD_APP_SOURCE_PATH": app.relative_to(REPO).as_posix()}

    expected = {app: generate(cozy, app, env_for(app, cmp_env)) for app in clusters}
    walls, differing = [], 0
    for env in (cmp_env, served_env):
        start = time.perf_counter()
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            results = list(pool.map(lambda app, e=env: (app, generate(cozy, app, env_for(app, e))), jobs))
        walls.append(time.perf_counter() - start)
        differing += sum(result != expected[app] for app, result in results)
    return (walls[0], walls[1]), differing


if __name__ == "__main__":
    main()
