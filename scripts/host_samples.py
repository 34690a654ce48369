"""Where a search's host time goes between its slices, from py-spy's sampling (a run's raw
output: `py-spy record --idle -r 1000 -f raw -o RUN.raw -- python3 -m fzn_gpu ...`).

A count's slices are a few milliseconds of host work between launches of tens of
milliseconds, hundreds of times: wrapping each step in timers (scripts/search_steps.py) adds
its own cost to every call and leaves the loop's own lines unnamed, and an in-process
sampler (scripts/sample_profile.py) takes the interpreter's lock every millisecond, in the
very host time measured. py-spy samples from outside (--nonblocking: without stopping the
process) and names every line. Prints, for the samples inside Phase.run but not
inside its launch (the host's part of the slices), the share of each step Phase.run called
and of each line of Phase.run itself, then the innermost frames of the project or numpy
under them; samples in the launch and elsewhere are counted beside. Usage:
    python3 scripts/host_samples.py RUN.raw [RATE_HZ]"""

from __future__ import annotations

import collections
import re
import sys

FRAME = re.compile(r"^(?P<fn>[^ ]+) \((?P<file>[^:]+):(?P<line>\d+)\)$")


def parse(path: str) -> list[tuple[list[str], int]]:
    """The raw file's stacks (outermost frame first) and their sample counts."""
    stacks = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            stacks.append((stack.split(";"), int(count)))
    return stacks


def name(frame: str, with_line: bool = False) -> str:
    m = FRAME.match(frame)
    if not m:
        return frame
    short = m["file"].split("site-packages/")[-1]
    return f"{m['fn']} ({short}:{m['line']})" if with_line else f"{m['fn']} ({short})"


def function(frame: str) -> str:
    """The frame's function without its class (py-spy names methods Class.method)."""
    return frame.split(" (", 1)[0].rsplit(".", 1)[-1]


def in_phase_run(frame: str) -> bool:
    return function(frame) == "run" and "engine/phase.py" in frame


def summarise(stacks: list[tuple[list[str], int]], rate: float) -> str:
    total = sum(n for _, n in stacks)
    launch = host = 0
    steps: collections.Counter = collections.Counter()
    leaves: collections.Counter = collections.Counter()
    for frames, n in stacks:
        at = next((i for i, f in enumerate(frames) if in_phase_run(f)), None)
        if at is None:
            continue
        below = frames[at + 1 :]
        if below and function(below[0]) == "launch" and "engine/phase.py" in below[0]:
            launch += n
            continue
        host += n
        # the step Phase.run called, or the loop's own line
        steps[name(below[0]) if below else name(frames[at], with_line=True)] += n
        ours = [f for f in below if "fzn_gpu/" in f or "numpy/" in f]
        leaves[name(ours[-1], with_line=True) if ours else "(Phase.run itself)"] += n

    def seconds(n: int) -> str:
        return f"{n / rate:.3f} s" if rate else f"{n} samples"

    out = [
        f"samples {total}; in Phase.run's launches {seconds(launch)}, "
        f"in Phase.run between launches {seconds(host)}, elsewhere {seconds(total - launch - host)}",
        "between launches, by step of Phase.run (or its own line):",
    ]
    out += [f"  {seconds(n):>10}  {k}" for k, n in steps.most_common(25)]
    out.append("between launches, by innermost frame of fzn_gpu or numpy:")
    out += [f"  {seconds(n):>10}  {k}" for k, n in leaves.most_common(25)]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    rate = float(argv[1]) if len(argv) == 2 else 0.0
    print(summarise(parse(argv[0]), rate))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
