#!/usr/bin/env python3
"""Sums the kernel times of an Nsight Compute CSV (ncu --csv --page raw --metrics
gpu__time_duration.sum, as scripts/gpu-check.sh profile writes it): one row per kernel name, its
launches and total time per profiled step, largest first. Steps are counted by the embedding
kernel, which opens each forward pass."""
import csv
import re
import sys
from collections import defaultdict


def short_name(name):
    name = re.sub(r"\(.*$", "", name) if not name.startswith("void ") else name[5:]
    name = re.sub(r"\(.*$", "", name)
    name = name.replace("sluice::kernels::", "").replace("(anonymous namespace)::", "")
    name = name.replace("__nv_bfloat16", "bf16").replace("__half", "f16")
    return name


def main(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    rows = list(csv.reader(lines))
    header = rows[0]
    name_col = header.index("Kernel Name")
    time_col = header.index("gpu__time_duration.sum")
    unit = rows[1][time_col]
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}.get(unit, 1.0)
    totals = defaultdict(float)
    counts = defaultdict(int)
    steps = 0
    for r in rows[2:]:
        if len(r) <= time_col or not r[time_col]:
            continue
        name = short_name(r[name_col])
        if "embedding" in name:
            steps += 1
        totals[name] += float(r[time_col].replace(",", "")) * scale
        counts[name] += 1
    steps = max(steps, 1)
    total = sum(totals.values())
    print(f"{path}: {sum(counts.values())} kernels, {steps} step(s), "
          f"{total / steps:.1f} us of kernel time a step")
    print("| kernel | launches a step | us a step | share |")
    print("|---|---:|---:|---:|")
    for name, t in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"| {name[:110]} | {counts[name] / steps:.0f} | {t / steps:.1f} | {100 * t / total:.1f}% |")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
