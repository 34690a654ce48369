"""The one list of constraint kinds: FlatZinc name -> argument signature and kind number.

Lowering encodes every constraint by its signature into one int64 row of its kind's table;
the OpenCL header (kernels/generated_kinds.h) is generated from this list, so Python and the
kernels never keep two lists of kind numbers by hand (see fzn_gpu.runtime.codegen).

Signature fields:
  var     a variable (int, bool, float or set); constants are interned as fixed variables
  var[]   an array of variables, encoded as [n, idx_1..idx_n]
  int     a parameter int or bool, encoded as itself
  int[]   an array of parameter ints or bools, encoded as [n, v_1..v_n]
  set     a parameter set of int, encoded as [k, lo_1, hi_1, .., lo_k, hi_k]
  set[]   an array of parameter sets, encoded as [n, set_1..set_n]
  float   a parameter float, encoded as its IEEE-754 bits
  float[] an array of parameter floats, encoded as [n, bits_1..bits_n]
"""

from __future__ import annotations

from dataclasses import dataclass

# regular's state sets in the kernels, as bitmasks of this many 64-bit words: automata of at
# most 64 * REGULAR_WORDS states are lowered natively, bigger ones go to MiniZinc's
# decomposition (mznlib/fzn_regular.mzn says so, tests/test_globals.py pins it);
# runtime/kernel_abi.py writes it into the kernels' header
REGULAR_WORDS = 4


@dataclass(frozen=True)
class ConstraintKind:
    id: int
    name: str  # the FlatZinc predicate (several kinds may share one: set_in)
    key: str  # unique table name
    signature: tuple[str, ...]
    domain: str  # int, bool, float or set: which engine family runs it

    @property
    def wake(self) -> int:
        """What wakes it: WAKE_FIX, WAKE_BND or WAKE_DOM. int_lin_eq on two bitmaps with unit
        coefficients of opposite signs is domain consistent (kernels/prop_linear.cl, post_lin),
        which engine/pack.py tells row by row."""
        return WAKE_FIX if self.key in WAKE_ON_FIX else WAKE_BND if self.key in WAKE_ON_BOUNDS else WAKE_DOM

    @property
    def strength(self) -> str:
        """STRENGTH_DOMAIN or STRENGTH_SOUND: what its propagator promises at a fixpoint."""
        return STRENGTH_DOMAIN if self.key in _DOMAIN_CONSISTENT else STRENGTH_SOUND

    @property
    def shared_by_variable(self) -> bool:
        """Whether a work-group may share its propagator out, a part per variable of its first
        array (SHARED_BY_VARIABLE)."""
        return self.key in SHARED_BY_VARIABLE

    @property
    def group_length_at(self) -> int:
        """Where its row holds the length that makes a work-group walk it together
        (SHARED_BY_GROUP), or -1 for kinds one work-item always runs."""
        return SHARED_BY_GROUP.get(self.key, -1)


# What wakes a constraint's propagator (Gecode's propagation conditions): by default any
# change of a watched variable's domain (WAKE_DOM). WAKE_FIX: its propagator prunes only from
# fixed variables (value consistency: x != y, a linear disequality, all_different's value
# elimination), as Gecode subscribes such propagators to PC_INT_VAL; on a bounds-only domain
# the value it removes may later become a bound, refused when the variable is fixed to it.
# WAKE_BND: it reads bounds alone (bounds reasoning: linear and order relations), so a value
# taken from inside a domain gives it nothing. The watch lists carry the event of each entry
# (engine/pack.py); a fixed variable's bounds have moved too, so WAKE_BND entries wake then.
WAKE_DOM, WAKE_BND, WAKE_FIX = 0, 1, 2
WAKE_ON_FIX = frozenset({"int_ne", "int_lin_ne", "fzn_all_different_int", "fzn_alldifferent_except", "fzn_gpu_circuit"})
WAKE_ON_BOUNDS = frozenset(
    {f"{base}{suffix}" for base in ("int_le", "int_lt", "int_lin_le", "int_lin_eq") for suffix in ("", "_reif", "_imp")}
    | {
        "fzn_cumulative",
        "fzn_diffn",
        "fzn_lex_lesseq_int",
        "fzn_lex_lesseq_bool",
        "fzn_lex_less_int",
        "fzn_lex_less_bool",
        "fzn_increasing_int",
        "fzn_increasing_bool",
        "fzn_decreasing_int",
        "fzn_decreasing_bool",
    }
)

# What each int/bool propagator promises at its fixpoint (tests/test_strength.py checks it
# against brute force on random instances whose variables are distinct). DOMAIN: every value
# left has a support among the domains (domain consistency). Every other kind is SOUND: it
# removes only values without a support and fails a node whose variables are all fixed to a
# non-solution, but keeps some unsupported values: a linear equality reasons on bounds over
# the reals (x + y = z with x, y in {0, 3} keeps z = 1), arithmetic and element on hulls, a
# reified equality decides its literal from the hulls unless a side is fixed.
STRENGTH_DOMAIN, STRENGTH_SOUND = "domain", "sound"
_DOMAIN_CONSISTENT = frozenset(
    {
        f"{base}{suffix}"
        for base in ("int_le", "int_lt", "int_lin_le", "bool_eq", "bool_le", "bool_lt", "bool_clause")
        for suffix in ("", "_reif", "_imp")
    }
    | {
        "set_in",
        "set_in_imp",
        "int_ne",
        "int_lin_ne",
        "int_lin_ne_imp",
        "bool2int",
        "bool_not",
        "bool_ne",
        "bool_ne_reif",
        "bool_and",
        "bool_and_imp",
        "bool_or",
        "bool_or_imp",
        "bool_xor",
        "bool_xor_imp",
        "bool_xor_2",
        "array_bool_and",
        "array_bool_and_imp",
        "array_bool_or",
        "array_bool_or_imp",
        "array_bool_xor",
        "array_bool_element",
        "array_var_bool_element",
        "bool_lin_le",
    }
)

# Kinds whose propagator a work-group shares out over several work-items, each taking the
# variables i = p, p + P, ... of the row's first array (kernels/dispatch.cl, propagate_part):
# every part reads the whole constraint and narrows its own variables, so a pass lasts as long
# as the longest part instead of one work-item updating every variable. A part does one round;
# what it fixes wakes the constraint again. At most PARTS_MAX parts (kernel_abi).
SHARED_BY_VARIABLE = frozenset({"fzn_all_different_int"})

# Kinds whose long rows a work-group walks together (kernels/propagators_group.cl): each
# work-item takes terms i = lid, lid + w, ... of the row, the group adds up their partial sums
# (linear) or supports (element) in local memory, or gathers a circuit's fixed successors
# there, and each narrows its own terms, where one work-item walking such a row kept the rest
# of its warp waiting (docs/bench/measurements.md). The value: the row position of the row's length
# (its number of terms), which decides whether it is long enough (kernel_abi.GROUP_ROW_MIN).
SHARED_BY_GROUP = {
    "int_lin_eq": 0,
    "int_lin_le": 0,
    "bool_lin_eq": 0,
    "bool_lin_le": 0,
    "array_int_element": 1,
    "array_bool_element": 1,
    "fzn_gpu_circuit": 1,
}

# The globals of kernels/globals.cl: rows whose arrays must fit together (lower.py checks
# them), tested against brute force by tests/test_globals.py rather than the per-builtin test.
GLOBALS = frozenset(
    {
        "fzn_table_int",
        "fzn_table_bool",
        "fzn_gpu_circuit",
        "fzn_gpu_subcircuit",
        "fzn_diffn",
        "fzn_gpu_inverse",
        "fzn_gpu_regular",
        "fzn_global_cardinality",
        "fzn_global_cardinality_closed",
        "fzn_global_cardinality_low_up",
        "fzn_global_cardinality_low_up_closed",
        "fzn_alldifferent_except",
        "fzn_cumulative",
        "fzn_count_eq",
        "fzn_among",
        "fzn_lex_lesseq_int",
        "fzn_lex_lesseq_bool",
        "fzn_lex_less_int",
        "fzn_lex_less_bool",
        "fzn_nvalue",
        "fzn_increasing_int",
        "fzn_increasing_bool",
        "fzn_decreasing_int",
        "fzn_decreasing_bool",
        "fzn_gpu_bin_packing_load",
    }
)

_V, _VA, _I, _IA, _S, _SA, _F, _FA = "var", "var[]", "int", "int[]", "set", "set[]", "float", "float[]"


def _reified(base: str, sig: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """`base`, `base_reif` and `base_imp`: the last two take one more var (the literal)."""
    return [(base, sig), (base + "_reif", sig + (_V,)), (base + "_imp", sig + (_V,))]


def _build() -> list[tuple[str, str, tuple[str, ...], str]]:
    specs: list[tuple[str, str, tuple[str, ...], str]] = []

    def add(name, sig, dom, key=None):
        specs.append((name, key or name, tuple(sig), dom))

    # ---- int
    for rel in ("eq", "ne", "le", "lt"):
        for n, s in _reified(f"int_{rel}", (_V, _V)):
            add(n, s, "int")
    for rel in ("eq", "ne", "le"):
        for n, s in _reified(f"int_lin_{rel}", (_IA, _VA, _I)):
            add(n, s, "int")
    for op in ("plus", "times", "div", "mod", "min", "max", "pow"):
        add(f"int_{op}", (_V, _V, _V), "int")
    add("int_abs", (_V, _V), "int")
    add("array_int_element", (_V, _IA, _V), "int")
    add("array_var_int_element", (_V, _VA, _V), "int")
    add("array_bool_element", (_V, _IA, _V), "int")
    add("array_var_bool_element", (_V, _VA, _V), "int")
    add("array_int_maximum", (_V, _VA), "int")
    add("array_int_minimum", (_V, _VA), "int")
    for n, s in _reified("set_in", (_V, _S)):
        add(n, s, "int")
    # native globals declared in mznlib/
    add("fzn_all_different_int", (_VA,), "int")  # on the device [n, x..., offset...]: engine/views.py
    # (kernels/globals.cl, GLOBALS; fzn_gpu_*: an index offset the FlatZinc array lost, from mznlib/)
    add("fzn_table_int", (_VA, _IA), "int")
    add("fzn_table_bool", (_VA, _IA), "int")
    add("fzn_gpu_circuit", (_I, _VA), "int")
    add("fzn_gpu_subcircuit", (_I, _VA), "int")
    add("fzn_diffn", (_VA, _VA, _VA, _VA), "int")
    add("fzn_gpu_inverse", (_VA, _I, _VA, _I), "int")
    add("fzn_gpu_regular", (_VA, _I, _I, _IA, _I, _S), "int")
    add("fzn_global_cardinality", (_VA, _IA, _VA), "int")
    add("fzn_global_cardinality_closed", (_VA, _IA, _VA), "int")
    add("fzn_global_cardinality_low_up", (_VA, _IA, _IA, _IA), "int")
    add("fzn_global_cardinality_low_up_closed", (_VA, _IA, _IA, _IA), "int")
    add("fzn_alldifferent_except", (_VA, _S), "int")
    add("fzn_cumulative", (_VA, _VA, _VA, _V), "int")
    add("fzn_count_eq", (_VA, _V, _V), "int")
    add("fzn_among", (_V, _VA, _S), "int")
    for strict in ("", "_less"):
        for base in ("int", "bool"):
            name = f"fzn_lex{strict or '_lesseq'}_{base}"
            add(name, (_VA, _VA), "int")
    add("fzn_nvalue", (_V, _VA), "int")
    for name in ("fzn_increasing_int", "fzn_increasing_bool", "fzn_decreasing_int", "fzn_decreasing_bool"):
        add(name, (_VA,), "int")
    add("fzn_gpu_bin_packing_load", (_VA, _I, _VA, _IA), "int")
    # ---- bool
    add("bool2int", (_V, _V), "int")
    for rel in ("eq", "le", "lt"):
        for n, s in _reified(f"bool_{rel}", (_V, _V)):
            add(n, s, "int")
    add("bool_not", (_V, _V), "int")
    add("bool_ne", (_V, _V), "int")
    add("bool_ne_reif", (_V, _V, _V), "int")
    for op in ("and", "or", "xor"):
        add(f"bool_{op}", (_V, _V, _V), "int")
        add(f"bool_{op}_imp", (_V, _V, _V), "int")
    add("bool_xor", (_V, _V), "int", key="bool_xor_2")
    add("array_bool_and", (_VA, _V), "int")
    add("array_bool_or", (_VA, _V), "int")
    add("array_bool_and_imp", (_VA, _V), "int")
    add("array_bool_or_imp", (_VA, _V), "int")
    add("array_bool_xor", (_VA,), "int")
    add("bool_clause", (_VA, _VA), "int")
    add("bool_clause_reif", (_VA, _VA, _V), "int")
    add("bool_clause_imp", (_VA, _VA, _V), "int")
    add("bool_lin_eq", (_IA, _VA, _V), "int")
    add("bool_lin_le", (_IA, _VA, _I), "int")
    # ---- float (kernels/floats.cl)
    for rel in ("eq", "ne", "le", "lt"):
        for n, s in _reified(f"float_{rel}", (_V, _V)):
            add(n, s, "float")
        for n, s in _reified(f"float_lin_{rel}", (_FA, _VA, _F)):
            add(n, s, "float")
    for op in ("plus", "times", "div", "min", "max", "pow"):
        add(f"float_{op}", (_V, _V, _V), "float")
    for op in (
        "abs",
        "sqrt",
        "exp",
        "ln",
        "log10",
        "log2",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
    ):
        add(f"float_{op}", (_V, _V), "float")
    add("int2float", (_V, _V), "float")
    for n, s in _reified("float_in", (_V, _F, _F)):
        add(n, s, "float")
    add("float_dom", (_V, _FA), "float")
    add("array_float_element", (_V, _FA, _V), "float")
    add("array_var_float_element", (_V, _VA, _V), "float")
    add("array_float_maximum", (_V, _VA), "float")
    add("array_float_minimum", (_V, _VA), "float")
    # ---- set (kernels/propagators_set.cl, engine/sets.py)
    for n, s in _reified("set_in", (_V, _V)):
        add(n, s, "set", key=n + "_var")
    for rel in ("eq", "ne", "le", "lt", "subset", "superset"):
        for n, s in _reified(f"set_{rel}", (_V, _V)):
            add(n, s, "set")
    for op in ("union", "intersect", "diff", "symdiff"):
        add(f"set_{op}", (_V, _V, _V), "set")
    add("set_card", (_V, _V), "set")
    add("array_set_element", (_V, _SA, _V), "set")
    add("array_var_set_element", (_V, _VA, _V), "set")
    return specs


KINDS: list[ConstraintKind] = [ConstraintKind(i, n, k, s, d) for i, (n, k, s, d) in enumerate(_build())]
assert GLOBALS <= {k.key for k in KINDS}
assert _DOMAIN_CONSISTENT <= {k.key for k in KINDS}
BY_KEY: dict[str, ConstraintKind] = {k.key: k for k in KINDS}
BY_NAME: dict[str, list[ConstraintKind]] = {}
for _k in KINDS:
    BY_NAME.setdefault(_k.name, []).append(_k)


def kinds_named(name: str) -> list[ConstraintKind]:
    """The kinds a FlatZinc predicate may lower to (one, except for overloads like set_in)."""
    return BY_NAME.get(name, [])
