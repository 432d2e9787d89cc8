#!/usr/bin/env python3
"""Lays out a kernel block timeline (`rhea bench ops` with RHEA_TIMELINE_OUT=DIR and
RHEA_NVRTC_DEFINES=KERNEL_TIMELINE=<records>, see crates/rhea-cuda/src/timeline.rs) launch by
launch.

    python3 scripts/timeline.py DIR/rescale.tsv [LAUNCHES]
    python3 scripts/timeline.py --iteration DIR/mul_relin.tsv

Each launch's blocks are told apart by their source and shape (grid, grid y, threads) and block
index: the j-th block with index (x, y) of a shape belongs to that shape's j-th launch. For each
launch, in order of its first block's start (µs from the first block of the file): the first
and last block start, the first and last block end, and the median and largest block duration.
A block's start is when its thread 0 entered the kernel, so it includes any wait for the kernel
before it (PDL launches start blocks early).

--iteration: the file holds back-to-back runs of one operation; finds the launches of one run
(the shortest repeating sequence of shapes), and prints for each launch the medians over the
runs (the first and last runs left out) of its times relative to its run's first launch, and
the run's period."""
import collections
import statistics
import sys

FIELDS = ('source', 'grid', 'grid_y', 'threads', 'sm', 'block', 'block_y', 'start', 'end')


def load(path):
    with open(path) as f:
        header = next(f).split()
        if header[0] != 'source':
            sys.exit(f"{path}: not a kernel timeline (header {header})")
        out = []
        for line in f:
            if line.strip():
                v = line.split('\t')
                out.append(dict(zip(FIELDS, [v[0]] + [int(x) for x in v[1:]])))
        return out


def launches(records):
    by_shape = collections.defaultdict(list)
    for r in records:
        by_shape[(r['source'], r['grid'], r['grid_y'], r['threads'])].append(r)
    out = []
    for shape, blocks in by_shape.items():
        blocks.sort(key=lambda r: r['start'])
        seen = collections.Counter()
        groups = collections.defaultdict(list)
        for r in blocks:
            key = (r['block'], r['block_y'])
            groups[seen[key]].append(r)
            seen[key] += 1
        out.extend((shape, j, g) for j, g in groups.items())
    out.sort(key=lambda x: min(r['start'] for r in x[2]))
    return out


def summary(blocks):
    st = sorted(r['start'] for r in blocks)
    en = sorted(r['end'] for r in blocks)
    du = sorted(r['end'] - r['start'] for r in blocks)
    return st[0], st[-1], en[0], en[-1], du[len(du) // 2], du[-1]


def name(shape):
    source, grid, grid_y, threads = shape
    g = f"{grid}" if grid_y == 1 else f"{grid}x{grid_y}"
    return f"{source:>13} {g:>9} x {threads:<4}"


HEAD = (f"{'source':>13} {'grid':>9} x {'thr':<4} {'start':>9} {'last start':>10} "
        f"{'first end':>9} {'last end':>9} {'dur med':>8} {'dur max':>8}")


def row(label, times):
    s, ls, fe, le, dm, dx = times
    return (f"{label} {s:>9.2f} {ls:>10.2f} {fe:>9.2f} {le:>9.2f} {dm:>8.2f} {dx:>8.2f}")


def per_launch(path, limit):
    records = load(path)
    t0 = min(r['start'] for r in records)
    print(f"{len(records)} blocks; µs from the first block's start")
    print(f"{'':>5}{HEAD}")
    for shape, j, blocks in launches(records)[:limit]:
        s, ls, fe, le, dm, dx = summary(blocks)
        us = lambda t: (t - t0) / 1e3
        print(f"{j:>4} " + row(name(shape), (us(s), us(ls), us(fe), us(le), dm / 1e3, dx / 1e3)))


def per_iteration(path):
    ls = launches(load(path))
    shapes = [x[0] for x in ls]
    period = next((p for p in range(1, len(shapes) // 3 + 1)
                   if all(shapes[i] == shapes[i % p] for i in range(len(shapes)))), None)
    if period is None:
        sys.exit(f"{path}: no repeating sequence of launches")
    runs = len(ls) // period
    inner = range(1, runs - 1) if runs > 2 else range(runs)
    firsts = [summary(ls[i * period][2])[0] for i in range(runs)]
    spans = [firsts[i + 1] - firsts[i] for i in range(runs - 1)]
    print(f"{runs} runs of {period} launches; period (median) "
          f"{statistics.median(spans) / 1e3:.1f} µs; µs from the run's first block")
    print(HEAD)
    for k in range(period):
        cols = []
        for m in range(6):
            vals = []
            for i in inner:
                t = summary(ls[i * period + k][2])[m]
                vals.append(t if m >= 4 else t - firsts[i])
            cols.append(statistics.median(vals) / 1e3)
        print(row(name(shapes[k]), cols))


def main():
    args = sys.argv[1:]
    if args and args[0] == '--iteration':
        per_iteration(args[1])
    elif args:
        per_launch(args[0], int(args[1]) if len(args) > 1 else 40)
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
