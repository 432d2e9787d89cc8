#!/usr/bin/env python3
"""Lays out an NTT block timeline (`rhea bench ops` with RHEA_NTT_TIMELINE_OUT=DIR and
RHEA_NVRTC_DEFINES=NTT_TIMELINE=<records>, see crates/rhea-cuda/src/timeline.rs) launch by launch.

    python3 scripts/timeline.py DIR/rescale.tsv [LAUNCHES]

Each launch's blocks are told apart by their shape (grid, threads) and block index: the j-th
block with index b of a shape belongs to that shape's j-th launch. For each launch, in order of
its first block's start (µs from the first block of the file): the first and last block start,
the first and last block end, and the median and largest block duration. A block's start is
when its thread 0 entered the kernel, so it includes any wait for the kernel before it (PDL
launches start blocks early)."""
import collections
import sys


def load(path):
    with open(path) as f:
        next(f)
        return [tuple(map(int, line.split('\t'))) for line in f if line.strip()]


def launches(records):
    by_shape = collections.defaultdict(list)
    for r in records:
        by_shape[(r[0], r[1])].append(r)
    out = []
    for shape, blocks in by_shape.items():
        blocks.sort(key=lambda r: r[4])
        seen = collections.Counter()
        groups = collections.defaultdict(list)
        for r in blocks:
            groups[seen[r[3]]].append(r)
            seen[r[3]] += 1
        out.extend((shape, j, g) for j, g in groups.items())
    out.sort(key=lambda x: min(r[4] for r in x[2]))
    return out


def main():
    records = load(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    t0 = min(r[4] for r in records)
    print(f"{len(records)} blocks; µs from the first block's start")
    print(f"{'grid x threads':>16} {'#':>4} {'blocks':>6} {'start':>9} {'last start':>10} "
          f"{'first end':>9} {'last end':>9} {'dur med':>8} {'dur max':>8}")
    for (grid, threads), j, blocks in launches(records)[:limit]:
        st = sorted(r[4] for r in blocks)
        en = sorted(r[5] for r in blocks)
        du = sorted(r[5] - r[4] for r in blocks)
        us = lambda t: (t - t0) / 1e3
        print(f"{grid:>9} x {threads:<4} {j:>4} {len(blocks):>6} {us(st[0]):>9.2f} "
              f"{us(st[-1]):>10.2f} {us(en[0]):>9.2f} {us(en[-1]):>9.2f} "
              f"{du[len(du) // 2] / 1e3:>8.2f} {du[-1] / 1e3:>8.2f}")


if __name__ == '__main__':
    main()
