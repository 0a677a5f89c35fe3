"""Summarises bench/run.sh's wrk outputs: per phase and workload, the median req/s and
p50 over the rounds, the worst p99, the non-2xx count, agegate's peak RSS, the median of
the rounds' ratios to the ceiling, and whether each target holds. Prints two Markdown
tables: the realistic workloads (creates with distinct customIds), on which the targets are
judged, then the variants (creates without a customId, or all with the same one), judged
only for errors. Exits 1 if a target is missed.

    python3 bench/report.py OUT_DIR CONNECTIONS
"""

import collections
import pathlib
import re
import statistics
import sys

out, connections = pathlib.Path(sys.argv[1]), sys.argv[2]
UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}

# Targets: the least ratio of agegate's req/s to the ceiling's, per backend and
# workload.
RATIO = {"sqlite": {"get": 0.85, "create": 0.35, "mixed": 0.55}, "postgres": {"get": 0.6, "create": 0.35}}
VARIANTS = ("create-no-id", "create-same-id")
P99_MS, RSS_MIB, GROWTH = 5.0, 64.0, 0.10


def parse(path):
    text = path.read_text()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    lat = {}
    for pct in ("50", "99"):
        m = re.search(pct + r"%\s+([\d.]+)(us|ms|s)\b", text)
        lat[pct] = float(m.group(1)) * UNIT_MS[m.group(2)]
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errors = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: (.*)", text)
    if m:
        errors += sum(int(n) for n in re.findall(r"\d+", m.group(1)))
    return rps, lat["50"], lat["99"], errors


runs = collections.defaultdict(list)
by_round = {}
for f in sorted(out.glob("*.*.*.*")):
    phase, workload, server, round_ = f.name.split(".")
    runs[(phase, workload, server)].append(parse(f))
    by_round[(phase, workload, server, round_)] = parse(f)[0]

# The ratio of each round compares runs made back to back; the machine's speed drifts
# between rounds (more than 30 % on a shared VM), so ratios are taken per round first.
ratios = collections.defaultdict(list)
for (phase, workload, server, round_), rps in by_round.items():
    ceiling = by_round.get((phase, workload, "ceiling", round_))
    if server == "agegate" and ceiling:
        ratios[(phase, workload)].append(rps / ceiling)

rows, variant_rows, failures = [], [], []
summary = {}
for (phase, workload, server), results in sorted(runs.items()):
    rps = statistics.median(r[0] for r in results)
    p50 = statistics.median(r[1] for r in results)
    p99 = max(r[2] for r in results)
    errors = sum(r[3] for r in results)
    summary[(phase, workload, server)] = (rps, p50, p99, errors)

for (phase, workload, server), (rps, p50, p99, errors) in sorted(summary.items()):
    if server != "agegate":
        continue
    ceiling = summary.get((phase, workload, "ceiling"))
    ratio = statistics.median(ratios[(phase, workload)]) if ratios[(phase, workload)] else float("nan")
    rss_file = out / f"{phase}.rss"
    rss = int(rss_file.read_text()) / 1024 if rss_file.exists() else float("nan")
    notes = []
    backend = "postgres" if phase.startswith("postgres") else "sqlite"
    variant = workload in VARIANTS
    target = None if variant else RATIO[backend].get(workload)
    if target is not None and not ratio >= target:
        notes.append(f"ratio < {target}")
    if backend == "sqlite" and not variant and p99 > P99_MS:
        notes.append(f"p99 > {P99_MS:g} ms")
    if errors:
        notes.append("non-2xx")
    if backend == "sqlite" and not rss <= RSS_MIB:
        notes.append(f"RSS > {RSS_MIB:g} MiB")
    if phase.endswith("-grown") and not variant:
        before = phase[: -len("-grown")]
        # The newest invites compare with the first phase's reads of all it stored.
        base_workload = "get" if workload == "get-newest" else workload
        base = summary.get((before, base_workload, "agegate"))
        base_ratios = ratios[(before, base_workload)]
        if base and base_ratios:
            # Phases run minutes apart, and the machine's speed drifts more than the 10 %
            # in question between them; each phase's ratio to the ceiling of its own
            # rounds is what compares.
            change = ratio / statistics.median(base_ratios) - 1
            notes.append(f"{change:+.1%} vs before growth ({rps / base[0] - 1:+.1%} in req/s)")
            if not change >= -GROWTH:
                notes.append(f"dropped more than {GROWTH:.0%}")
    failed = [n for n in notes if "vs before growth" not in n]
    failures += [f"{phase} {workload}: {n}" for n in failed]
    (variant_rows if variant else rows).append(
        f"| {phase} | {workload} | {ceiling[0] if ceiling else 0:,.0f} | {rps:,.0f} | {ratio:.3f}× "
        f"| {p50:.2f} / {ceiling[1] if ceiling else 0:.2f} | {p99:.2f} / {ceiling[2] if ceiling else 0:.2f} "
        f"| {errors} | {rss:.1f} | {'; '.join(notes) or 'ok'} |"
    )

print(
    f"\n{connections} connections; req/s and p50 are medians over the rounds, the ratio is the median"
    " of each round's ratio, p99 the worst round; latency agegate / ceiling.\n"
)
print("| phase | workload | ceiling req/s | agegate req/s | ratio | p50 ms | p99 ms | non-2xx | peak RSS MiB | targets |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
print("\n".join(rows))
if variant_rows:
    print("\nVariants (not judged but for errors): creates without a customId, or all with the same one.\n")
    print("| phase | workload | ceiling req/s | agegate req/s | ratio | p50 ms | p99 ms | non-2xx | peak RSS MiB | targets |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    print("\n".join(variant_rows))
if failures:
    print("\nmissed: " + ", ".join(failures))
    sys.exit(1)
print("\nevery target met")
