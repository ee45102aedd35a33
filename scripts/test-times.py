#!/usr/bin/env python3
"""The suite's time table, from the output of `cargo test` runs (scripts/test-all.sh): each test
binary's seconds, the ten slowest tests, and each binary against its budget.

usage: test-times.py BUDGET_FILE LOG...

BUDGET_FILE has a line `<binary> <seconds>` per test binary (`#` comments). A binary past its
budget by more than half fails, and so does a binary the file doesn't name: a slow test is noticed
the day it lands, and the budget is raised on purpose or the test made faster.
"""
import re
import sys

RUNNING = re.compile(r"^\s+Running (?:unittests )?\S+ \((?P<path>[^)]+)\)")
TEST = re.compile(r"^test (?P<name>\S+) \.\.\. (?:ok|FAILED)(?: <(?P<secs>[\d.]+)s>)?")
RESULT = re.compile(r"^test result: .* finished in (?P<secs>[\d.]+)s")
SLACK = 1.5


def binary_name(path):
    """`/…/deps/table_shapes-0a1b2c` → `table_shapes`."""
    stem = path.rsplit("/", 1)[-1]
    return re.sub(r"-[0-9a-f]{16}$", "", stem)


def parse(paths):
    binaries, tests = {}, []
    for path in paths:
        current = None
        with open(path, encoding="utf-8", errors="replace") as log:
            for line in log:
                if m := RUNNING.match(line):
                    current = binary_name(m["path"])
                elif current and (m := TEST.match(line)) and m["secs"]:
                    tests.append((float(m["secs"]), f"{current}::{m['name']}"))
                elif current and (m := RESULT.match(line)):
                    binaries[current] = binaries.get(current, 0.0) + float(m["secs"])
                    current = None
    return binaries, tests


def budgets(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if len(line) == 2:
                out[line[0]] = float(line[1])
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binaries, tests = parse(sys.argv[2:])
    budget = budgets(sys.argv[1])
    broken = []
    print("test-times: seconds per test binary (budget; streams run side by side)")
    for name, secs in sorted(binaries.items(), key=lambda kv: -kv[1]):
        b = budget.get(name)
        if secs < 1 and b is None:
            continue  # unit tests of a crate without a slow test: no budget needed
        note = f"budget {b:.0f}" if b is not None else "no budget"
        if b is None or secs > SLACK * b:
            broken.append(f"{name}: {secs:.0f} s, {note}")
            note += "  <-- over"
        print(f"  {secs:8.1f}  {name}  ({note})")
    print("test-times: the ten slowest tests (seconds)")
    for secs, name in sorted(tests, reverse=True)[:10]:
        print(f"  {secs:8.1f}  {name}")
    if broken:
        print(f"test-times: past the budget by more than {SLACK - 1:.0%} (or without one), "
              f"in {sys.argv[1]}:")
        for b in broken:
            print(f"  {b}")
        sys.exit(1)


if __name__ == "__main__":
    main()
