// Where a search's time goes (FZN_GPU_PROFILE=1, docs/ARCHITECTURE.md "Profiling a node").
// Built with -DFZN_PROFILE, the search kernels read the device's cycle counter around their
// phases (propagation, settling, node copies, choice) and add the differences to the search's
// CNT_T_* counters; with -DFZN_CLOCK_PTX the counter is NVIDIA's %clock64 (the multiprocessor's
// cycles), and on a device without one it reads 0, so the counters stay 0 and only the counts
// (CNT_PASSES) say anything. Without FZN_PROFILE every macro is empty: no cost.

// A node's propagation runs to its fixpoint unless it outlasts both the slice's budget and
// this many units (propagations of a work-item, passes of a group): then it stops and the next
// slice resumes it (ST_PENDING). The floor keeps ordinary nodes whole whatever the budget
// (FZN_GPU_PROPAGATION_FLOOR sets it; the host always passes it).
#ifndef FZN_PROP_FLOOR
#define FZN_PROP_FLOOR 4096
#endif

#ifdef FZN_PROFILE
#ifdef FZN_CLOCK_PTX
inline ulong prof_clock(void) {
    ulong t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    return t;
}
#else
inline ulong prof_clock(void) { return 0; }
#endif
#define PROF_DECL(name) ulong name = 0
#define PROF_START(t0) ulong t0 = prof_clock()
#define PROF_ADD(acc, t0) ((acc) += prof_clock() - (t0))
// a phase's cycles less those its inner phases counted meanwhile (`inner`: their sum before)
#define PROF_NOTE(name, value) ulong name = (value)
#define PROF_ADD_OWN(acc, t0, inner, inner0) ((acc) += prof_clock() - (t0) - ((inner) - (inner0)))
// A search's counters, then per constraint kind its propagator's calls and the cycles inside
// them, summed over the work-items that ran them (engine/profile.py: `kindProfile` in -s).
#define CNT_ROW (NCNT + 2 * NKINDS)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define PROF_KIND(kprof, kind, t0) \
    do { atom_add(&(kprof)[2 * (kind)], 1L); atom_add(&(kprof)[2 * (kind) + 1], (long)(prof_clock() - (t0))); } while (0)
#else
#define PROF_DECL(name)
#define PROF_START(t0)
#define PROF_ADD(acc, t0)
#define PROF_NOTE(name, value)
#define PROF_ADD_OWN(acc, t0, inner, inner0)
#define CNT_ROW NCNT
#define PROF_KIND(kprof, kind, t0)
#endif

// A work-group slice's end by the device's clock. A budget of units ends each group's slice
// after the same work, not at the same time: groups whose units ran cheap sat idle while the
// slowest finished, and the launch lasted as long as that one. With the clock every group stops
// within microseconds of the others. FZN_TIMER_PTX: NVIDIA's %globaltimer (ns); FZN_TIMER_FAKE:
// every reading advances a counter of work-item 0's by 20 us (about a step of a group on a
// CPU), a stand-in that lets the clock's control flow run (and be tested) where no clock can
// be read. Either defines
// FZN_SLICE_CLOCK; without it only the budget ends a slice.
#if defined(FZN_TIMER_PTX)
#define FZN_SLICE_CLOCK
inline ulong slice_ns(ulong *ticks) {
    ulong t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#elif defined(FZN_TIMER_FAKE)
#define FZN_SLICE_CLOCK
inline ulong slice_ns(ulong *ticks) { return *ticks += 20000; }
#endif
