"""Generate a fleet overlay tree of N clusters for the fleet bench, mixing every sample shape.

The tree has the layout of the bundled sample (``overlays/``): the shared ``base/`` layers and
``extra/`` manifests copied as they are, and ``clusters/<name>/cluster.yaml`` for N clusters. Cluster
``i`` takes the shape of sample ``i mod S`` (S = every cluster folder under ``overlays/clusters``, in
name order: every GPU route, Hubble patch and own, VLANs on apt and Talos, ...), with its own name,
domain and, for VLAN shapes, its own VLAN ids, so no two clusters render the same bytes while every
cluster still renders exactly what its sample does. The output is deterministic: the same N gives
the same files.

Usage: python bench/gen_fleet.py N DIR   (DIR must not exist, or be empty)
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "overlays"


def sample_shapes() -> list[tuple[str, str]]:
    """(name, cluster.yaml text) of every bundled sample cluster, in name order."""
    return [(p.parent.name, p.read_text(encoding="utf-8"))
            for p in sorted((SAMPLES / "clusters").glob("*/cluster.yaml"))]


def cluster_text(shape: str, text: str, index: int) -> tuple[str, str]:
    """The overlay of cluster ``index`` cut from sample ``shape``: (new name, text)."""
    name = f"{shape}-{index:04d}"
    text = text.replace(shape, name)  # metadata.name and the domain carry the sample's name
    # VLAN ids stay valid (1-4094) and distinct per cluster; bridges follow the ids as in the samples.
    offset = (index * 7) % 3000

    def shift(m: re.Match[str]) -> str:
        return f"{m.group(1)}{int(m.group(2)) + offset}"

    text = re.sub(r"(\bid: )(\d+)", shift, text)
    text = re.sub(r"(\bname: vlan)(\d+)", shift, text)
    text = re.sub(r"(\bbridge: br)(\d+)", shift, text)
    return name, text


def generate(count: int, out: Path) -> list[str]:
    """Write a fleet of ``count`` clusters under ``out``; returns the cluster names."""
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out} exists and is not empty")
    out.mkdir(parents=True, exist_ok=True)
    for shared in ("base", "extra"):
        shutil.copytree(SAMPLES / shared, out / shared)
    shapes = sample_shapes()
    names = []
    for i in range(count):
        shape, text = shapes[i % len(shapes)]
        name, body = cluster_text(shape, text, i)
        folder = out / "clusters" / name
        folder.mkdir(parents=True)
        (folder / "cluster.yaml").write_text(body, encoding="utf-8")
        names.append(name)
    return names


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("count", type=int)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    names = generate(args.count, args.out)
    print(f"wrote {len(names)} clusters ({len(sample_shapes())} shapes) under {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
