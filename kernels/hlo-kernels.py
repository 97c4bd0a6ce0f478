#!/usr/bin/env python3
"""Counts the kernels an XLA module launches per execution, from a dump made with
XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_text" (kernels/gpu-check --profile).

  hlo-kernels.py DIR [LABEL]

For each *after_optimizations.txt module it counts the instructions of the ENTRY computation other
than parameters, tuples, constants and bitcasts: on a GPU each fusion, library call (custom-call:
cuBLAS GEMM, cuDNN convolution) and copy is one kernel launch (a while loop's body would count apart;
fedbayes's training step has none).
"""
import collections
import glob
import os
import re
import sys

SKIP = {"parameter", "tuple", "get-tuple-element", "constant", "bitcast", "after-all", "partition-id", "replica-id"}


def count(text):
    """The launching instructions of the ENTRY computation of one HLO module, by kind."""
    entry = re.search(r"^ENTRY .*?^}", text, re.S | re.M)
    ops = collections.Counter()
    if not entry:
        return ops
    for line in entry.group(0).splitlines()[1:-1]:
        m = re.search(r"=.*?\s([a-z][a-z0-9-]*)\(", line)
        if not m or m.group(1) in SKIP:
            continue
        kind = m.group(1)
        if kind == "custom-call":
            target = re.search(r'custom_call_target="([^"]+)"', line)
            kind += ":" + (target.group(1) if target else "?")
        ops[kind] += 1
    return ops


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    label = sys.argv[2] if len(sys.argv) > 2 else ""
    paths = sorted(glob.glob(os.path.join(sys.argv[1], "*after_optimizations.txt")))
    if not paths:
        print(f"{label}: no *after_optimizations.txt under {sys.argv[1]}")
        return 1
    for path in paths:
        ops = count(open(path).read())
        total = sum(ops.values())
        detail = ", ".join(f"{k} {v}" for k, v in ops.most_common())
        print(f"{label}: {os.path.basename(path)}: {total} kernels per execution: {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
