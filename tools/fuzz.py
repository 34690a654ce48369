#!/usr/bin/env python3
"""Differential fuzzing of fzn-gpu against Gecode on random FlatZinc models.

Each seed makes one small model over the int and bool builtins of fzn_gpu.flatzinc.registry (every
kind, with its reified and half-reified forms): searched variables with small, holey, wide or
huge domains, Aux variables defined by functional constraints (products, squares, divisions,
powers, sums with coefficients near 2^31, elements with holes, extrema, reifications) and
declared `var int`, big ranges or narrowed domains, then constraints of any kind over any of
them and constants from -2^31+2 to 2^31-2; satisfaction or optimisation, with or without
search annotations. fzn-gpu solves it in-process (PoCL), `fzn-gecode` as a subprocess, and
the answers are compared: status (satisfiable, UNSATISFIABLE, proven), every solution of -a
(as sets), optima; every solution fzn-gpu prints goes through the independent checker.

A disagreement is saved as DIR/seed-N.fzn with DIR/seed-N.txt (both answers); models where
Gecode itself ran out of time are skipped, and fzn-gpu running out of time where Gecode did not
is counted (slow), never a disagreement unless it claimed something false.

    python3 tools/fuzz.py --seeds 0:20000 --jobs 2 --out fuzz-out
    python3 tools/fuzz.py --show 123          # print seed 123's model

Exit status 1 when there is a disagreement.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fzn_gpu.flatzinc.check import Checker, _pow  # noqa: E402
from fzn_gpu.runtime.codegen import VAL_SELECT, VAR_SELECT  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fzn_gpu.flatzinc.parser import parse_items  # noqa: E402
from fzn_gpu.flatzinc.registry import GLOBALS, KINDS  # noqa: E402

LIMIT = 2**31 - 2

# ---------------------------------------------------------------- argument types per kind
# b bool var, i int var, b[] / i[] arrays of them, C int constant, C[] constants,
# B[] bool constants, S a set constant
B, I, BA, IA, C, CA, BCA, S = "b", "i", "b[]", "i[]", "C", "C[]", "B[]", "S"  # noqa: E741


def arg_types(key: str) -> tuple[str, ...]:
    """The FlatZinc argument types of a registry kind (the registry knows var/int only)."""
    base = key.removesuffix("_reif").removesuffix("_imp")
    lit = (B,) if base != key else ()
    if base in ("int_eq", "int_ne", "int_le", "int_lt"):
        return (I, I) + lit
    if base in ("int_lin_eq", "int_lin_ne", "int_lin_le"):
        return (CA, IA, C) + lit
    if base in ("int_plus", "int_times", "int_div", "int_mod", "int_min", "int_max", "int_pow"):
        return (I, I, I)
    if base == "int_abs":
        return (I, I)
    if base == "array_int_element":
        return (I, CA, I)
    if base == "array_var_int_element":
        return (I, IA, I)
    if base == "array_bool_element":
        return (I, BCA, B)
    if base == "array_var_bool_element":
        return (I, BA, B)
    if base in ("array_int_maximum", "array_int_minimum"):
        return (I, IA)
    if base == "set_in":
        return (I, S) + lit
    if base == "fzn_all_different_int":
        return (IA,)
    if base == "bool2int":
        return (B, I)
    if base in ("bool_eq", "bool_le", "bool_lt"):
        return (B, B) + lit
    if base in ("bool_not", "bool_xor_2"):
        return (B, B)
    if base == "bool_ne":
        return (B, B) + lit
    if base in ("bool_and", "bool_or", "bool_xor", "bool_and_imp", "bool_or_imp", "bool_xor_imp"):
        return (B, B, B)
    if base in ("array_bool_and", "array_bool_or", "array_bool_and_imp", "array_bool_or_imp"):
        return (BA, B)
    if base == "array_bool_xor":
        return (BA,)
    if base == "bool_clause":
        return (BA, BA) + lit
    if base == "bool_lin_eq":
        return (CA, BA, I)
    if base == "bool_lin_le":
        return (CA, BA, C)
    raise KeyError(f"the fuzzer has no argument types for {key}: add them to tools/fuzz.py")


# the builtins; the native globals (registry.GLOBALS) have brute-force tests of their own
# (tests/test_globals.py)
INT_KINDS = [k for k in KINDS if k.domain == "int" and k.key not in GLOBALS]

# kinds that define their last (or stated) argument from the others: Aux variables come from these
DEFINING = {  # key -> index of the defined argument
    "int_plus": 2,
    "int_times": 2,
    "int_div": 2,
    "int_mod": 2,
    "int_min": 2,
    "int_max": 2,
    "int_pow": 2,
    "int_abs": 1,
    "array_int_element": 2,
    "array_var_int_element": 2,
    "array_int_maximum": 0,
    "array_int_minimum": 0,
    "bool2int": 1,
    "int_lin_eq": -1,
    "bool_lin_eq": 2,
    "int_eq_reif": 2,
    "int_le_reif": 2,
    "int_lt_reif": 2,
    "int_ne_reif": 2,
    "int_lin_le_reif": 3,
    "int_lin_eq_reif": 3,
    "set_in_reif": 2,
    "array_bool_and": 1,
    "array_bool_or": 1,
    "bool_and": 2,
    "bool_or": 2,
    "bool_xor": 2,
    "array_bool_element": 2,
    "array_var_bool_element": 2,
}


@dataclass
class Var:
    name: str
    is_bool: bool
    decl: str  # the FlatZinc domain text
    values: list[int] | None  # the domain's values when finite and small, else None
    defined: bool = False


BRUTE_FORCE_MAX = 300_000  # assignments the brute-force arbiter may enumerate


@dataclass
class Case:
    seed: int
    text: str  # the model fzn-gpu solves
    gecode_text: str  # the same model in the names Gecode knows
    kind: str  # satisfy, minimize, maximize
    objective: str | None
    names: list[str]
    domains: list[list[int] | None]  # each variable's values (None: too many to enumerate)
    decls: list[str]  # each variable's declared domain (FlatZinc text)
    bools: list[bool]
    constraints: list[tuple[str, list[str]]]  # (registry key, argument texts)


class Builder:
    """One random model; see the module's docstring for what it draws from."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.vars: list[Var] = []
        self.named = 0
        self.items: list[str] = []  # constraint items
        self.constraints: list[tuple[str, list[str]]] = []
        self.gecode_items: list[str] = []
        self.copies = 0  # variables that stand for a repeated one, for Gecode
        self.gecode_decls: list[str] = []

    # -------------------------------------------------------- values
    def const(self, scale: str | None = None) -> int:
        r = self.rng
        scale = scale or r.choices(["small", "medium", "large", "extreme"], [55, 20, 15, 10])[0]
        if scale == "small":
            return r.randint(-5, 5)
        if scale == "medium":
            return r.choice([-1, 1]) * r.randint(6, 1000)
        if scale == "large":
            return r.choice([-1, 1]) * r.randint(10**5, 10**9)
        return r.choice([LIMIT, -LIMIT, 2**30, -(2**30), LIMIT - 1, 46340, -46341, 2**16])

    def coef(self) -> int:
        r = self.rng
        c = self.const(r.choices(["small", "medium", "large", "extreme"], [70, 12, 10, 8])[0])
        return c if c else r.choice([1, -1])

    def domain(self, searched: bool) -> tuple[str, list[int] | None]:
        r = self.rng
        styles = ["small", "holes", "medium", "wide", "huge", "unbounded", "empty"]
        weights = [45, 18, 14, 8, 8, 0, 1] if searched else [14, 8, 8, 10, 15, 40, 0]
        style = r.choices(styles, weights)[0]
        if style == "small":
            lo = r.randint(-6, 4)
            hi = lo + r.randint(0, 7)
            return f"{lo}..{hi}", list(range(lo, hi + 1))
        if style == "holes":
            vals = sorted(r.sample(range(-8, 9), r.randint(2, 6)))
            return "{" + ",".join(map(str, vals)) + "}", vals
        if style == "medium":
            lo = r.randint(-60, 10)
            hi = lo + r.randint(10, 90)
            return f"{lo}..{hi}", list(range(lo, hi + 1))
        if style == "wide":  # beyond a bitmap: bounds reasoning
            lo = r.randint(-3000, 0)
            return f"{lo}..{lo + r.randint(1100, 4000)}", None
        if style == "huge":
            lo, hi = r.choice([(-LIMIT, LIMIT), (0, LIMIT), (-LIMIT, 0), (-(10**9), 10**9), (10**6, 10**8)])
            return f"{lo}..{hi}", None
        if style == "empty":
            return r.choice(["1..0", "{}"]), []
        return "int", None

    def fresh(self) -> str:
        self.named += 1
        return f"x{self.named - 1}"

    def new_var(self, is_bool: bool, searched: bool) -> Var:
        name = self.fresh()
        if is_bool:
            v = Var(name, True, "bool", [0, 1], defined=not searched)
        else:
            decl, values = self.domain(searched)
            v = Var(name, False, decl, values, defined=not searched)
        self.vars.append(v)
        return v

    # -------------------------------------------------------- arguments
    def pick(
        self, want_bool: bool, allow_const: bool = True, finite: bool = False, taken: list[str] | None = None
    ) -> str:
        """A variable (or now and then a constant) of the wanted type; mostly one that the
        constraint does not use yet (`taken`), since a repeated variable often makes it false."""
        r = self.rng
        pool = [v.name for v in self.vars if v.is_bool == want_bool and v.values != [] and (not finite or v.values)]
        if taken and r.random() < 0.8:
            pool = [n for n in pool if n not in taken] or pool
        if not pool or (allow_const and r.random() < 0.12):
            if want_bool:
                return r.choice(["true", "false"])
            return str(self.const("small" if finite else None))
        return r.choice(pool)

    def sample(self, text: str) -> int:
        """A value the argument can take (constants are themselves)."""
        vals = self.values_of(text)
        if vals:
            return self.rng.choice(vals)
        decl = next(v.decl for v in self.vars if v.name == text)
        if ".." in decl:
            lo, hi = (int(x) for x in decl.split(".."))
            return self.rng.randint(lo, hi)
        return self.const(self.rng.choice(["small", "medium", "large"]))

    def planted_rhs(self, coefs: str, xs: str, key: str) -> int:
        """The sum at a random value of each variable (so the constraint holds there), less a
        little slack for `<=`, kept within the 32-bit range."""
        cs = [int(c) for c in coefs[1:-1].split(", ") if c]
        terms = [t for t in xs[1:-1].split(", ") if t]
        total = sum(c * self.sample(t) for c, t in zip(cs, terms))
        if key.startswith(("int_lin_le", "bool_lin_le")):
            total += self.rng.randint(0, 3)
        return max(-LIMIT, min(LIMIT, total))

    def values_of(self, text: str) -> list[int] | None:
        if text in ("true", "false"):
            return [int(text == "true")]
        if text.lstrip("-").isdigit():
            return [int(text)]
        return next(v.values for v in self.vars if v.name == text)

    def args(self, key: str, defined: str | None = None, def_pos: int | None = None) -> list[str]:
        r = self.rng
        types = arg_types(key)
        n = r.randint(1, 4)
        out: list[str] = []
        for pos, t in enumerate(types):
            if def_pos is not None and pos == (def_pos % len(types)) and key != "int_lin_eq":
                out.append(defined)
                continue
            if t in (B, I):
                finite = key == "int_pow" and pos < 2
                out.append(self.pick(t == B, finite=finite, taken=out))
            elif t in (BA, IA):
                k = n if not key.startswith("bool_clause") or r.random() < 0.9 else 0
                items: list[str] = []
                for _ in range(k):
                    items.append(self.pick(t == BA, taken=items + out))
                out.append("[" + ", ".join(items) + "]")
            elif t == C:
                if key.startswith(("int_lin", "bool_lin")) and r.random() < 0.6:
                    out.append(str(self.planted_rhs(out[0], out[1], key)))
                else:
                    out.append(str(self.const()))
            elif t == CA:
                if "element" in key:
                    out.append("[" + ", ".join(str(self.const()) for _ in range(n)) + "]")
                else:
                    out.append("[" + ", ".join(str(self.coef()) for _ in range(n)) + "]")
            elif t == BCA:
                out.append("[" + ", ".join(r.choice(["true", "false"]) for _ in range(n)) + "]")
            elif t == S:
                if r.random() < 0.3:
                    lo = self.const(r.choice(["small", "medium", "large"]))
                    out.append(f"{lo}..{lo + r.randint(0, 10 ** r.randint(0, 6))}")
                else:
                    vals = sorted(set(self.const("small") for _ in range(r.randint(1, 5))))
                    out.append("{" + ",".join(map(str, vals)) + "}")
        if "element" in key and r.random() < 0.7:  # an index variable ranging around 1..n
            m = out[1].count(",") + 1 if out[1] != "[]" else 0
            idx = Var(self.fresh(), False, "", None)
            lo, hi = r.randint(-1, 1), r.randint(max(m - 1, 0), m + 1)
            vals = [v for v in range(lo, hi + 1) if r.random() < 0.8] or [lo]
            idx.decl = "{" + ",".join(map(str, vals)) + "}"
            idx.values = vals
            self.vars.append(idx)
            out[0] = idx.name
        if key == "int_lin_eq" and defined is not None:  # the defined variable, coefficient -1 or 1
            cs = out[0][1:-1].split(", ") + [r.choice(["-1", "1"])]
            xs = out[1][1:-1].split(", ") + [defined]
            out[0], out[1] = "[" + ", ".join(cs) + "]", "[" + ", ".join(xs) + "]"
        return out

    # -------------------------------------------------------- items
    def add(self, key: str, args: list[str], defines: str | None = None) -> None:
        name = next(k.name for k in KINDS if k.key == key)
        self.constraints.append((key, list(args)))
        ann = f" :: defines_var({defines})" if defines else ""
        self.items.append(f"constraint {name}({', '.join(args)}){ann};")
        self.gecode_items.append(self.for_gecode(key, name, args) + ann + ";")

    def for_gecode(self, key: str, name: str, args: list[str]) -> str:
        """The constraint in a form fzn-gecode reads: its own names, int_pow (which it lacks)
        as a table (pow_table), and a variable that occurs twice replaced at its second
        occurrence by a copy, tied to it by two inequalities (Gecode 6.2 answers some
        constraints wrongly when they repeat a variable, x mod x = x among them, and merges
        variables that int_eq ties)."""
        if key != "int_pow":
            args = self.distinct(args)
        if key == "fzn_all_different_int":
            return f"constraint all_different_int({args[0]})"
        if key == "bool_xor_2":
            return f"constraint bool_not({args[0]}, {args[1]})"
        if key == "int_pow":
            return self.pow_table(args)
        return f"constraint {name}({', '.join(args)})"

    def distinct(self, args: list[str]) -> list[str]:
        seen: set[str] = set()
        kinds = {v.name: v.is_bool for v in self.vars}

        def one(token: str) -> str:
            if token not in kinds:
                return token
            if token not in seen:
                seen.add(token)
                return token
            copy = f"copy{self.copies}"
            self.copies += 1
            t, rel = ("bool", "bool_le") if kinds[token] else ("int", "int_le")
            self.gecode_decls.append(f"var {t}: {copy};")
            self.gecode_items += [f"constraint {rel}({token}, {copy});", f"constraint {rel}({copy}, {token});"]
            return copy

        out = []
        for a in args:
            if a.startswith("[") and a.endswith("]"):
                out.append("[" + ", ".join(one(t) for t in a[1:-1].split(", ") if t) + "]")
            else:
                out.append(one(a))
        return out

    def pow_table(self, args: list[str]) -> str:
        """int_pow(a, b, z) as a table over its distinct variables: the rows are the values of
        a's and b's (finite) variables with z's value appended when z is another variable."""
        import itertools

        def is_const(t: str) -> bool:
            return t.lstrip("-").isdigit() or t in ("true", "false")

        free = list(dict.fromkeys(t for t in args[:2] if not is_const(t)))
        z_col = not is_const(args[2]) and args[2] not in free
        rows = []
        for combo in itertools.product(*(self.values_of(t) for t in free)):
            val = dict(zip(free, combo))
            a, b = (val[t] if t in val else int(t) for t in args[:2])
            if a == 0 and b < 0:
                continue
            z = _pow(a, b) if b < 64 or abs(a) <= 1 else LIMIT + 1
            if abs(z) > LIMIT:
                continue
            if not z_col and (val[args[2]] if args[2] in val else int(args[2])) != z:
                continue
            rows.append(",".join(map(str, combo + ((z,) if z_col else ()))))
        columns = free + ([args[2]] if z_col else [])
        if not columns:
            return "constraint bool_eq(true, " + ("true" if rows else "false") + ")"
        return f"constraint gecode_table_int([{', '.join(columns)}], [{', '.join(rows)}])"

    def build(self) -> Case:
        r = self.rng
        for _ in range(r.randint(1, 4)):
            self.new_var(r.random() < 0.3, searched=True)
        for _ in range(r.choices([0, 1, 2, 3], [15, 40, 30, 15])[0]):
            key = r.choice(sorted(DEFINING))
            pos = DEFINING[key]
            types = arg_types(key)
            is_bool = types[pos % len(types)] == B if key != "int_lin_eq" else False
            args_before = len(self.vars)
            v = self.new_var(is_bool, searched=False)
            self.vars.pop()  # not an argument of its own definition
            args = self.args(key, v.name, pos)
            self.vars.insert(args_before, v)
            self.add(key, args, defines=v.name)
        for _ in range(r.choices([0, 1, 2, 3], [8, 45, 32, 15])[0]):
            kind = r.choice(INT_KINDS)
            self.add(kind.key, self.args(kind.key))
        kind = r.choices(["satisfy", "minimize", "maximize"], [55, 22, 23])[0]
        ints = [v for v in self.vars if not v.is_bool]
        objective = r.choice(ints).name if kind != "satisfy" and ints else None
        if objective is None:
            kind = "satisfy"
        ann = self.annotation()
        decls = []
        for v in self.vars:
            defined = " :: is_defined_var" if v.defined else ""
            decls.append(f"var {v.decl}: {v.name} :: output_var{defined};")
        solve = f"solve{ann} {kind}{' ' + objective if objective else ''};"
        text = "\n".join(decls + self.items + [solve]) + "\n"
        gecode_text = "\n".join(decls + self.gecode_decls + self.gecode_items + [solve]) + "\n"
        return Case(
            self.seed,
            text,
            gecode_text,
            kind,
            objective,
            [v.name for v in self.vars],
            [v.values for v in self.vars],
            [v.decl for v in self.vars],
            [v.is_bool for v in self.vars],
            self.constraints,
        )

    def annotation(self) -> str:
        r = self.rng
        if r.random() < 0.6:
            return ""
        parts = []
        ints = [v.name for v in self.vars if not v.is_bool and not v.defined]
        bools = [v.name for v in self.vars if v.is_bool and not v.defined]
        for kind, names in (("int_search", ints), ("bool_search", bools)):
            if names and r.random() < 0.8:
                chosen = r.sample(names, r.randint(1, len(names)))
                parts.append(f"{kind}([{', '.join(chosen)}], {r.choice(VAR_SELECT)}, {r.choice(VAL_SELECT)}, complete)")
        if not parts:
            return ""
        return " :: " + (parts[0] if len(parts) == 1 else f"seq_search([{', '.join(parts)}])")


def make_case(seed: int) -> Case:
    return Builder(seed).build()


# ---------------------------------------------------------------- answers
@dataclass
class Answer:
    solutions: list[dict[str, int]] = field(default_factory=list)
    complete: bool = False  # `==========` (all / optimum proven) or UNSATISFIABLE
    unsat: bool = False
    error: str | None = None  # the solver refused or failed (message)
    timed_out: bool = False
    note: str = ""  # what fzn-gpu said on stderr about an incomplete end
    seconds: float = 0.0


def parse_stream(text: str) -> Answer:
    ans = Answer()
    current: dict[str, int] = {}
    for line in text.splitlines():
        line = line.strip()
        if line == "----------":
            ans.solutions.append(current)
            current = {}
        elif line == "==========":
            ans.complete = True
        elif line == "=====UNSATISFIABLE=====":
            ans.unsat = ans.complete = True
        elif " = " in line and line.endswith(";"):
            name, value = line[:-1].split(" = ", 1)
            current[name] = 1 if value == "true" else 0 if value == "false" else int(value)
    return ans


def run_gecode(case: Case, time_limit_s: float, all_solutions: bool = True) -> Answer:
    with tempfile.NamedTemporaryFile("w", suffix=".fzn", delete=False) as f:
        f.write(case.gecode_text)
        path = f.name
    try:
        t0 = time.monotonic()
        try:
            flags = ["-a"] if all_solutions else []
            p = subprocess.run(
                ["fzn-gecode", *flags, "-time", str(int(time_limit_s * 1000)), path],
                capture_output=True,
                text=True,
                timeout=time_limit_s + 10,
            )
        except subprocess.TimeoutExpired:
            return Answer(timed_out=True, seconds=time.monotonic() - t0)
        ans = parse_stream(p.stdout)
        ans.seconds = time.monotonic() - t0
        if p.returncode != 0 or "Error" in p.stdout + p.stderr:
            ans.error = (p.stdout + p.stderr).strip()[-300:] or f"Gecode exited with status {p.returncode}"
        elif not ans.complete and (all_solutions or not ans.solutions):
            ans.timed_out = True
        return ans
    finally:
        os.unlink(path)


def kernel_of(seed: int) -> str:
    """The execution model a seed runs under: even seeds a work-item per sub-search space,
    odd ones a work-group (the GPU's), both on PoCL: half of those with slices ended by the
    clock (NVIDIA's default; on PoCL its stand-in counter), the other half with a stack of one
    level, so that every deeper one is recomputed from the path (what a big model does on a
    GPU)."""
    return "item" if seed % 2 == 0 else "group-recompute" if seed % 4 == 3 else "group-clock"


@contextlib.contextmanager
def kernel_env(seed: int):
    """The seed's execution model (kernel_of) in the environment the engine reads, for the
    seed's run only: the fuzzer runs in-process (and in pytest), so what one seed sets must not
    reach the next seed or a later test."""
    model_name = kernel_of(seed)
    wanted = {
        "FZN_GPU_KERNEL": model_name.split("-")[0],
        "FZN_GPU_STACK_LEVELS": "1" if model_name == "group-recompute" else None,
        "FZN_GPU_SLICE_CLOCK": "1" if model_name == "group-clock" else None,
    }
    saved = {k: os.environ.get(k) for k in wanted}
    try:
        _set_env(wanted)
        yield
    finally:
        _set_env(saved)


def _set_env(values: dict[str, str | None]) -> None:
    """Set each variable, or unset it where its value is None."""
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def run_fzn_gpu(case: Case, time_limit_s: float, all_solutions: bool = True, **options) -> Answer:
    """fzn-gpu in this process (PoCL): the same stream the command line prints. `options`:
    more SolveOptions (an engine, restarts, a solution limit)."""
    with kernel_env(case.seed):
        return _run_fzn_gpu(case, time_limit_s, all_solutions, options)


def _run_fzn_gpu(case: Case, time_limit_s: float, all_solutions: bool, options: dict) -> Answer:
    from fzn_gpu.engine import SolveRun
    from fzn_gpu.errors import FznError
    from fzn_gpu.flatzinc.lower import lower
    from fzn_gpu.options import SolveOptions

    out = io.StringIO()
    t0 = time.monotonic()
    try:
        model = lower(parse_items(case.text, "fuzz.fzn"), "fuzz.fzn")
        run = SolveRun(model, SolveOptions(all_solutions=all_solutions, devices="cpu", **options), out=out)
        run.run_until(t0 + time_limit_s)
    except FznError as err:
        return Answer(error=str(err), seconds=time.monotonic() - t0)
    ans = parse_stream(out.getvalue())
    ans.seconds = time.monotonic() - t0
    outcome = run.outcome
    if outcome is not None and outcome.error:
        ans.note = outcome.error
    if not ans.complete and not ans.note and (all_solutions or options.get("num_solutions") or not ans.solutions):
        ans.timed_out = True
    return ans


def brute_force(case: Case) -> Answer | None:
    """Every assignment the checker accepts, when the domains are small enough to enumerate
    (else None): the arbiter where fzn-gpu and Gecode disagree, since Gecode 6.2 itself errs on
    some constraints that repeat a variable (x mod x = x, parity with a repeated literal)."""
    import itertools
    import math

    if any(d is None for d in case.domains) or math.prod(len(d) for d in case.domains) > BRUTE_FORCE_MAX:
        return None
    checker = Checker(parse_items(case.text, "fuzz.fzn"))
    found = [
        dict(zip(case.names, combo))
        for combo in itertools.product(*case.domains)
        if not checker.check(dict(zip(case.names, combo)))
    ]
    if case.kind != "satisfy" and found:
        sense = 1 if case.kind == "minimize" else -1
        found = [min(found, key=lambda sol: sense * sol[case.objective])]
    return Answer(solutions=found, complete=True, unsat=not found)


# ---------------------------------------------------------------- judging
def objective_of(case: Case, sol: dict[str, int]) -> int:
    return sol[case.objective]


def judge(case: Case, mine: Answer, ref: Answer, first_only: bool = False, name: str = "Gecode") -> tuple[str, str]:
    """(verdict, detail) of fzn-gpu's answer against a reference's (see docs/TESTING.md).
    Every dispute has a witness, a solution one side printed and the other's claim excludes,
    and the independent checker settles it: a valid witness of the reference's that fzn-gpu
    excluded is fzn-gpu's bug (DISAGREE); a valid one of fzn-gpu's (all are checked first), or an
    invalid one of the reference's, is the reference's (reference-wrong). first_only: both asked
    for one solution of a satisfaction model."""
    checker = Checker(parse_items(case.text, "fuzz.fzn"))

    def valid(sol: dict[str, int]) -> bool:
        return not checker.check(sol)

    for sol in mine.solutions:
        bad = checker.check(sol)
        if bad:
            return "DISAGREE", f"fzn-gpu printed a non-solution: {bad[0]} in {sol}"
    if mine.note:
        return "DISAGREE", f"fzn-gpu ended incomplete: {mine.note}"
    if mine.error and ref.error:
        return "agree", "both refused the model"
    if ref.error:
        return "skipped", f"{name} failed: {ref.error[-120:]}"
    if mine.error:
        return "DISAGREE", f"fzn-gpu refused the model: {mine.error}"
    if mine.unsat and ref.solutions:  # a witness against fzn-gpu's UNSATISFIABLE
        if valid(ref.solutions[0]):
            return "DISAGREE", f"false UNSATISFIABLE: {name} has {ref.solutions[0]}"
        return "reference-wrong", f"{name} printed a non-solution"
    if ref.unsat and mine.solutions:
        return "reference-wrong", f"{name} says UNSATISFIABLE; fzn-gpu has checked solutions"
    if first_only:
        if ref.timed_out:
            return "skipped", f"{name} ran out of time"
        if mine.timed_out:
            return "slow", "fzn-gpu ran out of time (first solution)"
        return "agree", "unsatisfiable" if ref.unsat else "satisfiable"
    if case.kind == "satisfy":
        got = [tuple(s[n] for n in case.names) for s in mine.solutions]
        if len(set(got)) != len(got):
            return "DISAGREE", "fzn-gpu printed a solution twice"
        want = {tuple(s[n] for n in case.names) for s in ref.solutions}
        missing = [dict(zip(case.names, t)) for t in sorted(want - set(got))]
        missed = [sol for sol in missing if valid(sol)]
        if ref.timed_out:
            return "skipped", f"{name} ran out of time"
        if mine.timed_out:
            return "slow", f"fzn-gpu ran out of time ({len(got)} of {len(want)} solutions)"
        if missed:
            return "DISAGREE", f"{len(got)} solutions vs {name}'s {len(want)}; missing valid ones such as {missed[0]}"
        if set(got) != want:
            return "reference-wrong", (
                f"{name} lists {len(want)} solutions, fzn-gpu {len(got)}: "
                f"{len(set(got) - want)} checked ones {name} lacks, "
                f"{len(missing)} non-solutions of {name}'s"
            )
        return "agree", f"{len(want)} solutions"
    # optimisation: the last solution is the best
    sense = 1 if case.kind == "minimize" else -1
    best_ref = objective_of(case, ref.solutions[-1]) if ref.solutions else None
    best_mine = objective_of(case, mine.solutions[-1]) if mine.solutions else None
    if best_mine is not None and best_ref is not None and sense * best_mine < sense * best_ref and ref.complete:
        return "reference-wrong", f"fzn-gpu's checked {best_mine} beats {name}'s proven optimum {best_ref}"
    if best_mine is not None and best_ref is not None and sense * best_ref < sense * best_mine and mine.complete:
        if valid(ref.solutions[-1]):
            return "DISAGREE", f"fzn-gpu's proven optimum {best_mine}, {name} has {best_ref}"
        return "reference-wrong", f"{name}'s {best_ref} is a non-solution"
    if ref.timed_out:
        return "skipped", f"{name} ran out of time"
    if mine.timed_out:
        return "slow", f"fzn-gpu ran out of time (best {best_mine}, {name} {best_ref})"
    return "agree", f"optimum {best_ref}" if best_ref is not None else "UNSATISFIABLE"


def fuzz_one(seed: int, time_limit_s: float = 5.0) -> tuple[int, str, str, Case, Answer, Answer]:
    """Gecode first; where Gecode gives no answer (time, crash, a model it refuses), CP-SAT
    posted from the fuzzer's own constraint list, else enumeration through the checker."""
    seed, verdict, detail, case, mine, ref, first_only = _compare(seed, time_limit_s)
    if verdict == "skipped":
        import fuzz_cpsat

        for name, arbiter in (
            ("CP-SAT", lambda: fuzz_cpsat.solve(case, first_only=first_only)),
            ("brute force", lambda: brute_force(case)),
        ):
            exact = arbiter()
            if exact is not None:
                again, why = judge(case, mine, exact, first_only=first_only, name=name)
                return seed, again, f"{why} ({detail})", case, mine, exact
    return seed, verdict, detail, case, mine, ref


def _compare(seed: int, time_limit_s: float):
    """Gecode and fzn-gpu on one seed: all solutions, or (when Gecode cannot list them all in
    time) the first one; (seed, verdict, detail, case, fzn-gpu's answer, Gecode's, first_only)."""
    case = make_case(seed)
    ref = run_gecode(case, time_limit_s)
    if ref.timed_out and case.kind == "satisfy":  # too many solutions: compare the status
        ref = run_gecode(case, time_limit_s, all_solutions=False)
        mine = run_fzn_gpu(case, time_limit_s * 2, all_solutions=False)
        verdict, detail = judge(case, mine, ref, first_only=True)
        return seed, verdict, detail, case, mine, ref, True
    mine = run_fzn_gpu(case, time_limit_s * 2 if not ref.timed_out else time_limit_s)
    verdict, detail = judge(case, mine, ref)
    return seed, verdict, detail, case, mine, ref, False


def _worker(args):
    seed, limit = args
    try:
        seed, verdict, detail, case, mine, ref = fuzz_one(seed, limit)
    except Exception:  # a crash of fzn-gpu (or of a reference) is reported, not lost
        import traceback

        return seed, "DISAGREE", "crashed: " + traceback.format_exc()[-1500:], make_case(seed), {}, {}
    return seed, verdict, detail, case, _summary(mine), _summary(ref)


def _summary(a: Answer) -> dict:
    return {
        "solutions": len(a.solutions),
        "complete": a.complete,
        "unsat": a.unsat,
        "error": a.error,
        "timed_out": a.timed_out,
        "note": a.note,
        "seconds": round(a.seconds, 3),
        "last": a.solutions[-1] if a.solutions else None,
    }


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0:200", help="A:B, the seeds A..B-1")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 1)))
    ap.add_argument("--out", default="fuzz-out", help="folder for disagreements and the summary")
    ap.add_argument("--time-limit", type=float, default=5.0, help="Gecode's seconds per model (fzn-gpu: twice that)")
    ap.add_argument("--show", type=int, help="print one seed's model and exit")
    args = ap.parse_args(argv)
    if args.show is not None:
        print(make_case(args.show).text, end="")
        return 0
    a, b = (int(x) for x in args.seeds.split(":"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    counts: collections.Counter = collections.Counter()
    t0 = time.monotonic()
    jobs = [(s, args.time_limit) for s in range(a, b)]
    ctx = multiprocessing.get_context("spawn")
    log = (out / "verdicts.jsonl").open("w")  # every verdict but agree, one line each
    with ctx.Pool(args.jobs) as pool, log:
        for seed, verdict, detail, case, mine, ref in pool.imap_unordered(_worker, jobs, chunksize=4):
            counts[verdict] += 1
            if verdict != "agree":
                log.write(json.dumps({"seed": seed, "verdict": verdict, "detail": detail}) + "\n")
                log.flush()
            done = sum(counts.values())
            if done % 500 == 0:
                print(
                    f"{done}/{b - a} models, {dict(counts)}, {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True
                )
            if verdict == "DISAGREE":
                (out / f"seed-{seed}.fzn").write_text(case.text)
                (out / f"seed-{seed}.txt").write_text(
                    f"{detail}\n\nfzn-gpu: {json.dumps(mine)}\nGecode: {json.dumps(ref)}\n\nGecode's model:\n{case.gecode_text}"
                )
                print(f"seed {seed}: DISAGREE: {detail}", flush=True)
    summary = {
        "seeds": f"{a}:{b}",
        "models": b - a,
        **counts,
        "seconds": round(time.monotonic() - t0, 1),
        "commit": _commit(),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary))
    return 1 if counts["DISAGREE"] else 0


if __name__ == "__main__":
    sys.exit(main())
