"""Wall-clock sampling profile of one fzn-gpu run, every thread, for start-up and latency work.

cProfile sees only the thread it starts in and a run ends with os._exit (fzn_gpu/exiting.py),
so neither it nor its atexit dump fits a portfolio run. This samples every thread's stack every
INTERVAL seconds from a daemon thread and, when the run ends, writes per thread the functions
with the most inclusive wall time and the time of their first and last sample (when a phase
ran), to stderr or to $PROFILE_OUT.

With --warm first, the profile is of a run as a warm solver server's spare makes it
(fzn_gpu/server.py): imports done, OpenCL started, a context for every device and the model's
programs loaded (a first run, in a process of its own, builds and notes them) before the
sampling starts.

Usage: python scripts/sample_profile.py [--warm] [fzn-gpu arguments] model.fzn
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import time

INTERVAL = 0.001
TOP = 45


def warm_like_a_spare(argv: list[str]) -> None:
    """What a spare has done before its client connects, this model's programs included."""
    import tempfile

    from fzn_gpu import cli, exiting, server
    from fzn_gpu.runtime import device, opencl_start

    server._preload()
    recent = os.path.join(tempfile.mkdtemp(), "server")
    child = os.fork()
    if child == 0:  # the first run: builds the programs and notes them, as a served run does
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        device.program_used = lambda *used: server._note_program(recent, *used)
        try:
            cli.main(argv)
        finally:
            exiting.finish(0)
    os.waitpid(child, 0)
    opencl_start.begin("all", every_type=True)
    opencl_start.wait()
    device.all_devices()
    server._preload_programs(recent)


def main() -> None:
    from fzn_gpu import cli, clock, exiting

    argv = sys.argv[1:]
    if argv[:1] == ["--warm"]:
        argv = argv[1:]
        warm_like_a_spare(argv)
        clock.STARTED = time.monotonic()

    start = time.perf_counter()
    inclusive: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    first: dict[tuple[str, str], float] = {}
    last: dict[tuple[str, str], float] = {}
    samples: collections.Counter[str] = collections.Counter()

    def sample() -> None:
        me = threading.get_ident()
        while True:
            now = time.perf_counter() - start
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                thread = names.get(ident, str(ident))
                samples[thread] += 1
                seen = set()
                while frame is not None:
                    code = frame.f_code
                    key = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}:{code.co_name}"
                    if key not in seen:
                        seen.add(key)
                        inclusive[thread][key] += 1
                        first.setdefault((thread, key), now)
                        last[(thread, key)] = now
                    frame = frame.f_back
            time.sleep(INTERVAL)

    def report(_code: int) -> None:
        out = open(os.environ["PROFILE_OUT"], "w") if os.environ.get("PROFILE_OUT") else sys.stderr
        total = time.perf_counter() - start
        print(f"# wall {total:.3f} s, sampled every {INTERVAL * 1000:.0f} ms", file=out)
        for thread, counter in sorted(inclusive.items(), key=lambda kv: -samples[kv[0]]):
            n = samples[thread]
            print(f"\n## thread {thread}: {n} samples", file=out)
            for key, hits in counter.most_common(TOP):
                t0, t1 = first[(thread, key)], last[(thread, key)]
                print(f"{hits / n * 100:6.1f}%  {t0:7.3f}-{t1:7.3f} s  {key}", file=out)
        out.flush()

    threading.Thread(target=sample, name="sampler", daemon=True).start()
    exiting.on_exit(report)
    sys.argv = ["fzn-gpu", *argv]
    cli.main(argv)


if __name__ == "__main__":
    main()
