"""`cozy-render doctor` of one GPU cluster against the project's API fake, whole process.

Two states from tests/doctor/fake_state.py: a healthy container route (no log is read) and
passthrough on a host with the driver (the documented signature is found in container logs). Each
run is the whole `cozy-render doctor PATH --kubeconfig K` process, interleaved with the bare
interpreter (`python -I -S -c pass`) as the baseline of the same run; the table gives medians, the
ratio to the baseline, and the API requests one run makes (from the fake's request log).

Usage: python bench/bench_doctor.py [--runs N] [--write]   (--write replaces its section of bench/RESULTS.md)
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from results import write_section  # noqa: E402

SECTION = "## GPU doctor: `doctor PATH` against the API fake"
PYTHON = Path(sys.executable)


def timed(cmd: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    code = subprocess.run(cmd, capture_output=True, check=False).returncode
    return time.perf_counter() - start, code


def main() -> None:
    from tests.doctor import fake_state as fs

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="replace this section of bench/RESULTS.md")
    args = parser.parse_args()
    lines = [SECTION, "",
             f"Each run is a whole `cozy-render doctor PATH --kubeconfig K` process against the tests' API fake "
             f"(tests/doctor/fake_state.py, loopback HTTP), interleaved with the bare interpreter; median of "
             f"{args.runs}. Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}.",
             f"Reproduce: `.venv/bin/python bench/bench_doctor.py --runs {args.runs} --write` (or `bench/run.py`).", ""]
    cases = [("gpu-apt-01", "healthy container route", fs.healthy_container, 0),
             ("gpu-passthrough-01", "passthrough, host driver (logs read)", fs.host_driver_passthrough, 1)]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(REPO / "overlays", repo)
        (repo / ".git").mkdir()
        lines += ["| case | doctor median s | bare python median s | ratio | requests |",
                  "| --- | --- | --- | --- | --- |"]
        for cluster, label, build, expected in cases:
            fake = fs.DoctorFake().load(build())
            try:
                kubeconfig = fake.kubeconfig(Path(tmp) / f"{cluster}.kubeconfig", contexts=[cluster])
                cmd = [str(PYTHON.with_name("cozy-render")), "doctor", str(repo / "clusters" / cluster),
                       "--kubeconfig", str(kubeconfig)]
                doctor, bare = [], []
                for _ in range(args.runs):
                    fake.requests.clear()
                    seconds, code = timed(cmd)
                    if code != expected:
                        raise SystemExit(f"{cluster}: exit {code}, expected {expected}")
                    doctor.append(seconds)
                    bare.append(timed([str(PYTHON), "-I", "-S", "-c", "pass"])[0])
                requests = len(fake.requests)
            finally:
                fake.stop()
            d, b = statistics.median(doctor), statistics.median(bare)
            lines.append(f"| {label} | {d:.3f} | {b:.3f} | {d / b:.1f}x | {requests} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
