"""The interface between the host and the Adaptive Search kernel (kernels/adaptive.cl): the
codes of soft constraints, invariants and variable groups, the header of the model buffer, the
per-walk scalars and the control words. This is the one copy: `defines()` gives the kernel its
`#define`s (LS_SOFT_LIN, LS_INV_LIN, LS_GROUP_PERM, LSH_NV, LSW_ITER, LSC_FOUND, ...), and the
host (fzn_gpu/local/) reads the same names here."""

from __future__ import annotations

from enum import IntEnum


class Soft(IntEnum):
    """A soft constraint: its error is 0 where it holds, else a measure of how far it is from
    holding, and the walk minimises the sum of the errors. Rows (ints of the model buffer):
    LIN      [rel, n, c_1..c_n, x_1..x_n, rhs]       sum c_i x_i rel rhs
             error |s - rhs| (EQ), max(0, s - rhs) (LE), s == rhs (NE); rhs (here and in
             the invariants LIN and LINREIF) takes two ints, low and high 32 bits (wide):
             number partitioning's sum of squares passes 2^31 from n = 2,352 on
    ALLDIFF  [n, x_1..x_n, vmin, span, hist]      values repeated (each value beyond its first)
    CLAUSE   [npos, p.., nneg, q..]               1 unless some p is 1 or some q is 0
    REIF     [r, kind, row of the invariant kind] r must equal the invariant's value; 1 if not
    IMP      [r, kind, row of the invariant kind] r = 1 needs the invariant's value 1; 1 if not
    FUNC     [y, kind, row of the invariant kind] y must equal the invariant's value: the
             distance (1 + |difference| up to 2^16; 2^16 where the function is undefined)
    DOMAIN   [x, k, lo_1, hi_1, ..]               x in the ranges: 0, else 1 + distance (up to 2^16)
    TABLE    [n, x_1..x_n, ntuples, tuples..]     1 unless some tuple equals x
    COUNT    [n, x_1..x_n, y, c, lo, hi]          #(x_i = value) within [lo, hi], value y's (a
             variable, or -1 and the value in c), lo = hi = c's value where c is a variable
             (else -1 and the bounds): the distance to the range
    XOR      [n, x_1..x_n]                        1 unless an odd number of x are 1
    """

    LIN = 0
    ALLDIFF = 1
    CLAUSE = 2
    REIF = 3
    IMP = 4
    FUNC = 5
    DOMAIN = 6
    TABLE = 7
    COUNT = 8
    XOR = 9


class Rel(IntEnum):
    """A linear relation's comparison."""

    EQ = 0
    LE = 1
    NE = 2


class Inv(IntEnum):
    """An invariant: a variable's value computed from others (a constraint that defines it,
    MiniZinc's defines_var), in topological order. Rows:
    LIN      [n, c_1..c_n, x_1..x_n, rhs, a]  y = (rhs - sum c_i x_i) / a, a = +-1 (rhs: two ints)
    ARITH    [op, a, b]                  y = a op b (Arith; ABS reads a alone)
    ELEM     [idx, n, v_1..v_n]          y = v_idx (1-based), undefined outside 1..n
    VELEM    [idx, n, x_1..x_n]          y = x_idx
    EXTREMUM [max, n, x_1..x_n]          y = max or min of the x
    LINREIF  [rel, n, c.., x.., rhs]  y = (sum c_i x_i rel rhs) (rhs: two ints)
    CLAUSE   [flip, npos, p.., nneg, q..]        y = flip xor (some p is 1 or some q is 0)
    XOR      [n, x_1..x_n]               y = the parity of the x
    SETIN    [x, k, lo_1, hi_1, ..]      y = (x in the ranges)
    COUNT    [n, x_1..x_n, y, c]         y = #(x_i = value), value y's (or c where y is -1)
    A function undefined at its inputs (division by zero, an index out of range, a linear
    quotient that is not whole) leaves its variable at LS_UNDEFINED, which no domain holds, so
    the variable's DOMAIN constraint carries the error."""

    LIN = 0
    ARITH = 1
    ELEM = 2
    VELEM = 3
    EXTREMUM = 4
    LINREIF = 5
    CLAUSE = 6
    XOR = 7
    SETIN = 8
    COUNT = 9


class Arith(IntEnum):
    """ARITH's operations (int_plus and the copies are linear: Inv.LIN)."""

    TIMES = 0
    DIV = 1
    MOD = 2
    MIN = 3
    MAX = 4
    POW = 5
    ABS = 6


class Group(IntEnum):
    """How a walk moves the decision variables of a group, keeping one constraint true by
    construction (an implicit constraint, as in constraint-based local search): FREE, a value
    of its domain; PERM, an all_different whose variables share a domain of exactly as many
    values (a permutation: moves swap two variables' values); SORTED_STRICT and SORTED, a chain
    x_1 < x_2 < .. (or <=) over one interval: a move replaces one value of the sorted sequence
    and the sequence is sorted again."""

    FREE = 0
    PERM = 1
    SORTED_STRICT = 2
    SORTED = 3


class H(IntEnum):
    """The model buffer's header: sizes, then offsets (in ints) of its arrays."""

    NV = 0  # variables of the model
    NDEC = 1  # decision variables (the walk moves them)
    NG = 2  # groups
    NINV = 3  # invariants
    NSOFT = 4  # soft constraints
    HIST = 5  # all_different histogram entries a walk keeps
    KMAX = 6  # changes a move may make (more: the move is not taken)
    TMAX = 7  # soft constraints a move may touch
    DMAX = 8  # invariants a move may wake
    CAND_MAX = 9  # candidate values of a FREE variable's move (a sample beyond)
    CAND_ALL = 10  # the most candidate moves any decision variable has
    LO = 11  # [nv] declared bounds (int32; LS_UNDEFINED outside every one)
    HI = 12
    DR_OFF = 13  # [nv + 1] each variable's domain ranges in DR
    DR = 14
    DSIZE = 15  # [nv] values in each domain (capped at 2^30)
    DEC_VAR = 16  # [ndec] the model variable of each decision variable
    DEC_GROUP = 17  # [ndec] its group, or -1 (FREE)
    DEC_POS = 18  # [ndec] its position in its group
    DEC_OF = 19  # [nv] the decision index of a model variable, or -1
    G_TYPE = 20  # [ng] Group
    G_OFF = 21  # [ng + 1] members (decision indices, chain order) in G_MEM
    G_MEM = 22
    G_LO = 23  # [ng] a sorted group's interval
    G_HI = 24
    INV_TYPE = 25  # [ninv] Inv, topological order
    INV_OUT = 26  # [ninv] the variable it defines
    INV_ROW = 27  # [ninv] its row in DATA
    SOFT_TYPE = 28  # [nsoft] Soft
    SOFT_ROW = 29  # [nsoft] its row in DATA
    MEMB_OFF = 30  # [nv + 1] the soft constraints that read each variable (MEMB_C), with
    MEMB_C = 31  # the variable's coefficient in a LIN one (MEMB_COEF, else 0)
    MEMB_COEF = 32
    DEP_OFF = 33  # [ndec + 1] the invariants a decision variable wakes, transitively,
    DEP = 34  # in topological order
    INF_OFF = 35  # [ndec + 1] the soft constraints whose error it carries (its projected
    INF = 36  # error: its own and its invariants' variables')
    SOFT_WEIGHT = 37  # [nsoft] what each soft constraint's error is multiplied by
    DATA = 38
    SW_OK = 39  # [ndec] 1: a swap of the decision variable may be scored from its swap terms
    SW_OFF = 40  # [ndec + 1] its swap terms in SW (SwapTerm.SIZE ints each)
    SW = 41
    SW_CLASS = 42  # [ndec] its swap class (network._swap_classes): a swap within one is null; -1 none
    SIZE = 43  # ints of the header


class SwapTerm(IntEnum):
    """One term of a decision variable's swap list (H.SW): a soft constraint that a change of
    the variable alters, directly (INV -1: the variable's own coefficient in it) or through an
    invariant that computes a function of this variable alone (INV: the invariant; COEF: its
    variable's coefficient), with what scoring the constraint needs beside the walk's sums, so
    that a swap's score reads no row (kernels/adaptive.cl, swap_delta). KIND: a LIN
    constraint's Rel, SWAP_ALLDIFF, or SWAP_DOMAIN (RHS then holds the DOMAIN row's offset in
    DATA)."""

    C = 0  # the soft constraint
    COEF = 1
    INV = 2
    KIND = 3
    RHS = 4  # two ints (network.wide)
    WEIGHT = 6  # the constraint's weight (H.SOFT_WEIGHT)
    SIZE = 7


SWAP_ALLDIFF = -1  # SwapTerm.KIND of an all_different (a swap within it leaves its histogram)
SWAP_DOMAIN = -2  # SwapTerm.KIND of a DOMAIN constraint (on the variable, or on an invariant's)
SWAP_TERMS_MAX = 16  # swap terms a decision variable may have and be marked SW_OK


class W(IntEnum):
    """A walk's scalars (ints), kept between launches."""

    ITER = 0  # iterations of this restart
    RNG = 1  # its random state
    LAST_BEST = 2  # the iteration that last lowered the restart's best error
    RESTARTS = 3
    RESETS = 4
    MOVES = 5  # moves made (all restarts), low word
    SKIPPED = 6  # candidate moves beyond KMAX/TMAX/DMAX, not taken
    STATUS = 7  # 0 fresh (to initialise), 1 walking, 2 solved
    ITERS_LO = 8  # iterations in all, low and high words
    ITERS_HI = 9
    SIZE = 10


class L(IntEnum):
    """A walk's 64-bit scalars."""

    TOTAL = 0  # the sum of the soft constraints' errors
    BEST = 1  # the least total of this restart
    SIZE = 2


class C(IntEnum):
    """Control words shared by every walk of a launch."""

    FOUND = 0  # set once some walk has reached error 0 (it stops there: LSW_STATUS 2)
    STOP = 1  # set by the host: every walk returns at its next iteration
    SIZE = 2


UNDEFINED = -(2**31)  # an invariant's value where its function is undefined
ERROR_CAP = 1 << 16  # a DOMAIN or FUNC error's distance part, at most


class Param(IntEnum):
    """The walk's tuning, one int each (the kernel's `params` argument), after Adaptive Search's
    own: a variable is frozen for a number of moves (not iterations), so that at a local minimum,
    where nothing moves, frozen variables add up until a reset. Probabilities in parts of 1000."""

    FREEZE_LOCAL_MIN = 0  # moves a variable stays frozen after a local minimum at it
    FREEZE_SWAP = 1  # moves both variables of a move stay frozen after it
    RESET_LIMIT = 2  # frozen variables that trigger a reset
    RESET_PERCENT = 3  # share of the decision variables a reset gives fresh values (percent)
    LOCAL_MIN = 4  # probability of treating a plateau (best move changes nothing) as a
    # local minimum rather than following it
    RESTART_ITERS = 5  # iterations without a new best before the walk restarts
    EXHAUSTIVE = 6  # neighbourhoods of at most this many moves may be searched whole:
    # every move of every variable, where the highest error is shared by at
    # least half of the variables not frozen (it then says nothing of which
    # to move, as on number partitioning, whose paper searches every swap); 0: never
    SAMPLE = 7  # a whole neighbourhood's moves evaluated in one iteration, at most
    # (every k-th from a random start beyond)
    RESET_PERCENT_WHOLE = 8  # after a whole neighbourhood without an improving move, this share of
    # the variables gets fresh values at once (RESET_LIMIT does not apply)
    FAST_SWAP = 9  # 1: a swap in a permutation scored from the constraints' sums alone where
    # both variables are marked H.SW_OK (kernels/adaptive.cl, swap_delta); 0: every move
    # through the general evaluation (the same scores: tests compare them)
    SIZE = 10


def defines() -> list[str]:
    """The `#define` lines of the Adaptive Search kernel's header."""
    lines = []
    for enum, prefix in (
        (Soft, "LS_SOFT_"),
        (Rel, "LS_REL_"),
        (Inv, "LS_INV_"),
        (Arith, "LS_ARITH_"),
        (Group, "LS_GROUP_"),
        (H, "LSH_"),
        (W, "LSW_"),
        (L, "LSL_"),
        (C, "LSC_"),
        (Param, "LSP_"),
        (SwapTerm, "LSS_"),
    ):
        lines += [f"#define {prefix}{m.name} {m.value}" for m in enum]
    lines.append(f"#define LS_UNDEFINED ({UNDEFINED})")
    lines.append(f"#define LS_ERROR_CAP {ERROR_CAP}")
    lines.append(f"#define LS_SWAP_ALLDIFF ({SWAP_ALLDIFF})")
    lines.append(f"#define LS_SWAP_DOMAIN ({SWAP_DOMAIN})")
    lines.append(f"#define LS_SWAP_TERMS_MAX {SWAP_TERMS_MAX}")
    return lines


def header() -> str:
    return "// generated by fzn_gpu/runtime/local_abi.py: do not edit\n" + "\n".join(defines()) + "\n"
