"""One fzn-gpu run under cProfile, the engines' threads (LNS islands, devices) included: at the
run's end each thread's busiest functions go to stderr (Python 3.12 profiles every thread with
one profiler, printed as the main thread's). Where a GPU island's step spends its host time
(docs/bench/measurements.md, LNS on every device). Run in the process (FZN_GPU_SERVER=off):
    FZN_GPU_SERVER=off python3 scripts/host_profile_threads.py [fzn-gpu arguments]
PROF_TOP=N functions a thread (35), PROF_SORT=tottime|cumulative."""

import cProfile
import io
import os
import pstats
import sys
import threading

profs = []
_orig_run = threading.Thread.run


def _run(self):
    p = cProfile.Profile()
    try:
        p.enable()
    except ValueError:  # Python 3.12: one profiler sees every thread
        return _orig_run(self)
    profs.append((self.name, p))
    try:
        _orig_run(self)
    finally:
        p.disable()


threading.Thread.run = _run
from fzn_gpu import exiting  # noqa: E402

_orig_finish = exiting.finish


def _finish(code):
    top = int(os.environ.get("PROF_TOP", "35"))
    for name, p in profs:
        s = io.StringIO()
        st = pstats.Stats(p, stream=s)
        if not st.total_tt or st.total_tt < 0.2:
            continue
        st.sort_stats(os.environ.get("PROF_SORT", "tottime")).print_stats(top)
        print(f"==== thread {name}: {st.total_tt:.2f} s\n" + s.getvalue(), file=sys.stderr)
    _orig_finish(code)


exiting.finish = _finish
sys.argv = ["fzn-gpu"] + sys.argv[1:]
from fzn_gpu.launch import main  # noqa: E402

_mp = cProfile.Profile()
profs.append(("main", _mp))
_mp.enable()
main()
