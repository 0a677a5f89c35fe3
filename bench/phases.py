"""Status latency by phase, for bench/zk_phases.sh.

Usage: phases.py WORK NAME...  Reads WORK/NAME.csv (oha's per-request rows: start in seconds
from its launch, ..., duration, ..., status), WORK/NAME.t0 (the launch, Unix seconds) and
WORK/NAME.phases ("phase from to" lines, Unix seconds). A request belongs to the phase its
start falls in, GUARD seconds clear of either end (the switch itself, and the launch time's
error, are left out). Prints, per phase: requests, p50, p99 and p99.9 over all its cycles;
p99's ratio to idle, with a 90 % interval from resampling whole cycles (each cycle's phases
together, so the interval keeps the pairing); and the flood's ratio to the pool full. For
the first NAME (agegate; the others are controls) the verdicts on the targets: status p99
with the pool full within 1.20x of idle, flooded within 1.10x.
"""

import csv
import random
import sys

GUARD = 0.2


def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def by_phase(work, name):
    t0 = float(open(f"{work}/{name}.t0").read())
    starts = []
    not_ok = 0
    with open(f"{work}/{name}.csv") as f:
        for row in csv.reader(f):
            if not row or not row[0][:1].isdigit():
                continue
            if row[6] != "200":
                not_ok += 1
            starts.append((t0 + float(row[0]), float(row[4]) * 1000))
    starts.sort()
    phases = {}
    for line in open(f"{work}/{name}.phases"):
        phase, a, b = line.split()
        a, b = float(a) + GUARD, float(b) - GUARD
        phases.setdefault(phase, []).append([ms for t, ms in starts if a <= t <= b])
    return phases, len(starts), not_ok


def main():
    work = sys.argv[1]
    rng = random.Random(1)
    for name in sys.argv[2:]:
        phases, total, not_ok = by_phase(work, name)
        print(f"== {name}: {total} requests, {not_ok} not 200")
        cycles = min(len(c) for c in phases.values())
        pooled = {p: [ms for c in cs for ms in c] for p, cs in phases.items()}
        draws = [[rng.randrange(cycles) for _ in range(cycles)] for _ in range(1000)]

        def ratio_interval(phase, base):
            rs = sorted(
                quantile([ms for k in d for ms in phases[phase][k]], 0.99)
                / quantile([ms for k in d for ms in phases[base][k]], 0.99)
                for d in draws)
            return rs[50], rs[949]

        for phase, cs in phases.items():
            xs = pooled[phase]
            line = (f"   {phase:5} {len(xs):6} requests: p50 {quantile(xs, .5):.3f}"
                    f"  p99 {quantile(xs, .99):.3f}  p99.9 {quantile(xs, .999):.3f} ms")
            if phase != "idle":
                lo, hi = ratio_interval(phase, "idle")
                line += (f"; p99 x{quantile(xs, .99) / quantile(pooled['idle'], .99):.2f} of idle"
                         f" [{lo:.2f}-{hi:.2f}]")
            if phase == "flood":
                lo, hi = ratio_interval("flood", "full")
                line += (f", x{quantile(xs, .99) / quantile(pooled['full'], .99):.2f} of full"
                         f" [{lo:.2f}-{hi:.2f}]")
            print(line)
            print("         p99 per cycle: " + " ".join(f"{quantile(c, .99):.2f}" for c in cs))
        if name != sys.argv[2]:
            continue
        for phase, target in (("full", 1.20), ("flood", 1.10)):
            ratio = quantile(pooled[phase], .99) / quantile(pooled["idle"], .99)
            verdict = "holds" if ratio <= target else "FAILS"
            print(f"   {name}: status p99 {phase} x{ratio:.2f} of idle (target <= {target:.2f} {verdict})")


main()
