"""The fuzzer's second reference: a fuzz model (tools/fuzz.py) posted to OR-Tools CP-SAT
directly from the fuzzer's own list of constraints, so it shares nothing with fzn-gpu's parser,
lowering or kernels, nor with Gecode. Asked where fzn-gpu and Gecode disagree.

Semantics are FlatZinc's: int_div truncates, int_mod takes the dividend's sign, both fail on
a zero divisor; int_pow with a negative exponent is 1 div x^-y; an element index outside the
array fails. A model CP-SAT refuses (it rejects any linear sum that could overflow 64 bits)
gives no answer (None)."""

from __future__ import annotations

import itertools

from fzn_gpu.flatzinc.check import _pow

LIMIT = 2**31 - 2


def solve(case, time_limit_s: float = 20.0, max_solutions: int = 200_000, first_only: bool = False):
    """An Answer (tools/fuzz.py) for `case`, or None where CP-SAT cannot say. first_only:
    for a satisfaction model, one solution or UNSATISFIABLE (not every solution)."""
    try:
        from ortools.sat.python import cp_model
    except ImportError:
        return None
    from fuzz import Answer

    m = cp_model.CpModel()
    var: dict[str, object] = {}
    for name, decl, is_bool in zip(case.names, case.decls, case.bools):
        var[name] = _declare(m, cp_model, name, decl, is_bool)
        if var[name] is None:  # an empty domain
            return Answer(complete=True, unsat=True)

    def term(t: str):
        if t == "true":
            return 1
        if t == "false":
            return 0
        if t in var:
            return var[t]
        return int(t)

    def literal(t: str):
        """A Boolean literal for OnlyEnforceIf (constants become fixed variables)."""
        x = term(t)
        if isinstance(x, int):
            b = m.new_bool_var("")
            m.add(b == x)
            return b
        return x

    for key, args in case.constraints:
        _post(m, cp_model, key, args, term, literal, case)

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = 1
    names = list(var)
    if case.kind == "satisfy" and first_only:
        status = solver.solve(m)
        if status == cp_model.INFEASIBLE:
            return Answer(complete=True, unsat=True)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        return Answer(solutions=[{n: int(solver.value(var[n])) for n in names}])
    if case.kind == "satisfy":
        found: list[dict[str, int]] = []

        class Collect(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                found.append({n: int(self.value(var[n])) for n in names})
                if len(found) >= max_solutions:
                    self.stop_search()

        solver.parameters.enumerate_all_solutions = True
        status = solver.solve(m, Collect())
        if status == cp_model.MODEL_INVALID or status == cp_model.UNKNOWN:
            return None
        if status == cp_model.INFEASIBLE:
            return Answer(complete=True, unsat=True)
        if status != cp_model.OPTIMAL:  # stopped before the end
            return None
        return Answer(solutions=found, complete=True)
    obj = var[case.objective]
    (m.minimize if case.kind == "minimize" else m.maximize)(obj)
    status = solver.solve(m)
    if status == cp_model.INFEASIBLE:
        return Answer(complete=True, unsat=True)
    if status != cp_model.OPTIMAL:
        return None
    return Answer(solutions=[{n: int(solver.value(var[n])) for n in names}], complete=True)


def _declare(m, cp_model, name: str, decl: str, is_bool: bool):
    if is_bool:
        return m.new_bool_var(name)
    if decl == "int":
        return m.new_int_var(-LIMIT, LIMIT, name)
    if decl.startswith("{"):
        values = [int(v) for v in decl[1:-1].split(",") if v]
        if not values:
            return None
        return m.new_int_var_from_domain(cp_model.Domain.from_values(values), name)
    lo, hi = (int(v) for v in decl.split(".."))
    if lo > hi:
        return None
    return m.new_int_var(lo, hi, name)


def _array(a: str) -> list[str]:
    return [t for t in a[1:-1].split(", ") if t]


def _set(cp_model, s: str):
    if s.startswith("{"):
        return cp_model.Domain.from_values([int(v) for v in s[1:-1].split(",") if v])
    lo, hi = (int(v) for v in s.split(".."))
    return cp_model.Domain(lo, hi)


def _post(m, cp_model, key: str, args: list[str], term, literal, case) -> None:
    base = key.removesuffix("_reif").removesuffix("_imp")
    mode = "reif" if key.endswith("_reif") else "imp" if key.endswith("_imp") else None
    r = literal(args[-1]) if mode else None

    def enforce(pos_ct_fn, neg_ct_fn=None) -> None:
        """pos holds when r (always, without r); with _reif, neg holds when not r."""
        if r is None:
            pos_ct_fn(None)
            return
        pos_ct_fn(r)
        if mode == "reif":
            neg_ct_fn(r.Not())

    def lin(expr_fn, rel: str, negate: bool = False):
        def post(lit):
            e = expr_fn()
            rr = {"eq": "ne", "ne": "eq", "le": "gt", "lt": "ge"}[rel] if negate else rel
            ct = {
                "eq": lambda: m.add(e[0] == e[1]),
                "ne": lambda: m.add(e[0] != e[1]),
                "le": lambda: m.add(e[0] <= e[1]),
                "lt": lambda: m.add(e[0] < e[1]),
                "gt": lambda: m.add(e[0] > e[1]),
                "ge": lambda: m.add(e[0] >= e[1]),
            }[rr]()
            if lit is not None:
                ct.only_enforce_if(lit)

        return post

    if base in ("int_eq", "int_ne", "int_le", "int_lt", "bool_eq", "bool_le", "bool_lt", "bool_ne"):
        rel = base.split("_")[1]
        pair = lambda: (term(args[0]), term(args[1]))  # noqa: E731
        enforce(lin(pair, rel), lin(pair, rel, negate=True))
    elif base in ("int_lin_eq", "int_lin_ne", "int_lin_le", "bool_lin_le"):
        cs = [int(c) for c in _array(args[0])]
        xs = [term(t) for t in _array(args[1])]
        rel = base.split("_")[-1]
        pair = lambda: (sum(c * x for c, x in zip(cs, xs)), int(args[2]))  # noqa: E731
        enforce(lin(pair, rel), lin(pair, rel, negate=True))
    elif base == "bool_lin_eq":
        cs = [int(c) for c in _array(args[0])]
        xs = [term(t) for t in _array(args[1])]
        m.add(sum(c * x for c, x in zip(cs, xs)) == term(args[2]))
    elif base == "int_plus":
        m.add(term(args[0]) + term(args[1]) == term(args[2]))
    elif base == "int_times":
        m.add_multiplication_equality(_var(m, term(args[2])), [_var(m, term(args[0])), _var(m, term(args[1]))])
    elif base in ("int_div", "int_mod"):
        a, b, c = (term(t) for t in args)
        nz = m.new_int_var_from_domain(cp_model.Domain.from_intervals([[-LIMIT, -1], [1, LIMIT]]), "")
        m.add(nz == b)
        q = m.new_int_var(-LIMIT, LIMIT, "")
        m.add_division_equality(q, _var(m, a), nz)
        if base == "int_div":
            m.add(q == c)
        else:
            p = m.new_int_var(-2 * LIMIT, 2 * LIMIT, "")
            m.add_multiplication_equality(p, [nz, q])
            m.add(c == a - p)
    elif base in ("int_min", "int_max"):
        fn = m.add_min_equality if base == "int_min" else m.add_max_equality
        fn(_var(m, term(args[2])), [term(args[0]), term(args[1])])
    elif base == "int_abs":
        m.add_abs_equality(_var(m, term(args[1])), term(args[0]))
    elif base == "int_pow":
        _pow_table(m, args, term, case)
    elif base in ("array_int_element", "array_var_int_element", "array_bool_element", "array_var_bool_element"):
        items = [term(t) for t in _array(args[1])]
        if not items:
            m.add_bool_or([])  # an empty array has no element: false
            return
        idx = m.new_int_var(0, len(items) - 1, "")
        m.add(idx == term(args[0]) - 1)
        m.add_element(idx, items, _var(m, term(args[2])))
    elif base in ("array_int_maximum", "array_int_minimum"):
        xs = [term(t) for t in _array(args[1])]
        if not xs:
            m.add_bool_or([])
            return
        (m.add_max_equality if base.endswith("maximum") else m.add_min_equality)(_var(m, term(args[0])), xs)
    elif base == "set_in":
        dom = _set(cp_model, args[1])
        x = term(args[0])
        enforce(lambda lit: _in_domain(m, x, dom, lit), lambda lit: _in_domain(m, x, dom.complement(), lit))
    elif base == "fzn_all_different_int":
        xs = [term(t) for t in _array(args[0])]
        if len(xs) > 1:
            m.add_all_different(xs)
    elif base == "bool2int":
        m.add(term(args[0]) == term(args[1]))
    elif base in ("bool_not", "bool_xor_2"):
        m.add(term(args[0]) != term(args[1]))
    elif base in ("bool_and", "bool_or", "bool_xor"):
        a, b, r3 = literal(args[0]), literal(args[1]), literal(args[2])
        imp = key.endswith("_imp")
        if base == "bool_and":
            m.add_bool_and([a, b]).only_enforce_if(r3)
            if not imp:
                m.add_bool_or([a.Not(), b.Not()]).only_enforce_if(r3.Not())
        elif base == "bool_or":
            m.add_bool_or([a, b]).only_enforce_if(r3)
            if not imp:
                m.add_bool_and([a.Not(), b.Not()]).only_enforce_if(r3.Not())
        else:
            m.add(a != b).only_enforce_if(r3)
            if not imp:
                m.add(a == b).only_enforce_if(r3.Not())
    elif base in ("array_bool_and", "array_bool_or"):
        xs = [literal(t) for t in _array(args[0])]
        r3 = literal(args[1])
        imp = key.endswith("_imp")
        if base == "array_bool_and":
            m.add_bool_and(xs).only_enforce_if(r3)
            if not imp:
                m.add_bool_or([x.Not() for x in xs]).only_enforce_if(r3.Not())
        else:
            m.add_bool_or(xs).only_enforce_if(r3)
            if not imp:
                m.add_bool_and([x.Not() for x in xs]).only_enforce_if(r3.Not())
    elif base == "array_bool_xor":
        m.add_bool_xor([literal(t) for t in _array(args[0])])
    elif base == "bool_clause":
        ps = [literal(t) for t in _array(args[0])]
        ns = [literal(t) for t in _array(args[1])]
        clause = ps + [n.Not() for n in ns]
        enforce(
            lambda lit: _and_if(m.add_bool_or(clause), lit),
            lambda lit: _and_if(m.add_bool_and([c.Not() for c in clause]), lit),
        )
    else:
        raise KeyError(f"no CP-SAT translation for {key}: add it to tools/fuzz_cpsat.py")


def _var(m, x):
    if isinstance(x, int):
        v = m.new_int_var(x, x, "")
        return v
    return x


def _and_if(ct, lit):
    if lit is not None:
        ct.only_enforce_if(lit)


def _in_domain(m, x, dom, lit) -> None:
    ct = m.add_linear_expression_in_domain(x if not isinstance(x, int) else m.new_constant(x), dom)
    _and_if(ct, lit)


def _pow_table(m, args: list[str], term, case) -> None:
    """int_pow(a, b, z) over the finite domains of a and b: the allowed (a, b, z) triples."""
    doms = []
    for t in args[:2]:
        if t.lstrip("-").isdigit():
            doms.append([int(t)])
        else:
            doms.append(case.domains[case.names.index(t)])
    rows = []
    for a, b in itertools.product(*doms):
        if a == 0 and b < 0:
            continue
        z = _pow(a, b) if b < 64 or abs(a) <= 1 else LIMIT + 1
        if abs(z) <= LIMIT:
            rows.append((a, b, z))
    xs = [_var(m, term(t)) for t in args]
    m.add_allowed_assignments(xs, rows)
