#!/usr/bin/env python3
"""The headroom frontier read off bench/RESULTS.md's generated "Headroom: ..." tables (issue 34).

For each table and world (tuned, topofit), each adaptive buffer's idle GPU-hours against the hand-sized
buffers' at the same p95 pending of inference pods, interpolated linearly between the two static points around
it (means over the seeds, as the tables give them). Prints a markdown table.

usage: scripts/headroom-frontier.py [bench/RESULTS.md] [--world topofit]
"""
import re
import sys


def seconds(cell):
    """'4.2 min ± 17.4 s' -> 252.0; '53.2 s' -> 53.2; '1.1 h' -> 3960."""
    value, unit = cell.split("±")[0].split()
    return float(value.replace(",", "")) * {"s": 1, "min": 60, "h": 3600}[unit]


def hours(cell):
    return float(cell.split("±")[0].split()[0].replace(",", ""))


def gpu_hours(value):
    return f"{value:,.0f}" if value >= 1000 else f"{value:,.1f}"


def cells(line, count):
    """The row's `count` cells: separated by two or more spaces, after the label."""
    parts = re.split(r"\s{2,}", line.strip())
    return parts[-count:]


def tables(text):
    for match in re.finditer(r"^### (Headroom: .*)$", text, re.M):
        body = text[match.end():text.find("```\n\n", text.find("```", match.end()) + 3)]
        lines = body.splitlines()
        header = next(l for l in lines if re.match(r"^\s+\S", l) and "+buffer" in l)
        policies = header.split()
        idle = next(l for l in lines if l.startswith("GPU-hours idle  "))
        p95 = next(l for l in lines if l.startswith("pending p95, inference pods"))
        yield match.group(1), policies, cells(idle, len(policies)), cells(p95, len(policies))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    world = "topofit"
    if "--world" in sys.argv:
        world = sys.argv[sys.argv.index("--world") + 1]
    path = args[0] if args else "bench/RESULTS.md"
    text = open(path).read()
    print("| workload | policy | idle GPU-hours | p95 pending, inference pods | static at that p95 | adaptive against it |")
    print("|---|---|---|---|---|---|")
    for title, policies, idle_cells, p95_cells in tables(text):
        points = {p: (hours(i), seconds(s)) for p, i, s in zip(policies, idle_cells, p95_cells) if p.split("+")[0] == world}
        static = sorted(((v[1], v[0], p) for p, v in points.items() if re.search(r"\+buffer:\d+$", p)), reverse=True)
        workload = title.split(": ", 1)[1]
        none = points.get(world)
        if none:
            print(f"| {workload} | {world} (none) | {gpu_hours(none[0])} | {none[1]:.1f} s | | |")
        for p95, idle, name in static:
            print(f"| | {name} | {gpu_hours(idle)} | {p95:.1f} s | | |")
        for name, (idle, p95) in points.items():
            if "adaptive" not in name:
                continue
            around = [(a, b) for a, b in zip(static, static[1:]) if a[0] >= p95 >= b[0]]
            if around:
                (p1, i1, _), (p2, i2, _) = around[0]
                at = i1 + (p1 - p95) / (p1 - p2) * (i2 - i1) if p1 != p2 else min(i1, i2)
                verdict = f"{(idle / at - 1) * 100:+.1f}%"
                print(f"| | {name} | {gpu_hours(idle)} | {p95:.1f} s | {gpu_hours(at)} | {verdict} |")
            else:
                lowest = static[-1] if static else None
                note = "outside the static points"
                if lowest and p95 <= lowest[0] and idle <= lowest[1]:
                    note = f"dominates {lowest[2]} ({gpu_hours(lowest[1])} at {lowest[0]:.1f} s)"
                elif lowest and p95 <= lowest[0]:
                    note = f"below {lowest[2]}'s p95 ({lowest[0]:.1f} s), at {(idle / lowest[1] - 1) * 100:+.1f}% its idle"
                print(f"| | {name} | {gpu_hours(idle)} | {p95:.1f} s | | {note} |")


if __name__ == "__main__":
    main()
