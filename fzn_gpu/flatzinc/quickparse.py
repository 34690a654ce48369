"""The commonest FlatZinc item shapes, read by regular expressions: a plain variable
(`var 1..64: x :: is_defined_var;`, also read straight from the text where a model declares
thousands in a row: `quick_var_at`), a constraint whose arguments are names, ints and arrays
of them (`constraint int_lin_eq([1, -1], [x, y], 0) :: defines_var(x);`), and an array of
variables given by their names (`array [1..9600] of var int: x :: output_array([1..9600]) =
[X_1, X_2, ...];`). The first two are most of a big model's items (QAP 64: 16,000 of 16,035);
the third is few items of many names each (a big model's output array over every variable).
Lark spends about 25 us a token on them. Anything else, or anything unusual in these,
returns None and goes to the grammar, which stays the reference: tests/test_parser.py checks
that both read the same items alike."""

from __future__ import annotations

import re

from . import ast

NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_INT = r"-?[0-9]+"
_ANN_NAMED = rf"\s*::\s*{NAME}(?:\s*\(\s*{NAME}\s*\))?"  # `:: name` or `:: name(name)`
_ANNS = rf"((?:{_ANN_NAMED})*)"
_VAR_DECL = re.compile(rf"\s*var\s+(?:(bool|int)|({_INT})\s*\.\.\s*({_INT}))\s*:\s*({NAME}){_ANNS}\s*\Z")
_CONSTRAINT = re.compile(rf"\s*constraint\s+({NAME})\s*\(([^()]*)\){_ANNS}\s*\Z")
_RANGE = rf"{_INT}\s*\.\.\s*{_INT}"
# an output_array(...)-like annotation: a name and a list of index ranges
_RANGES_ANN = rf"\s*::\s*{NAME}\s*\(\s*\[\s*{_RANGE}(?:\s*,\s*{_RANGE})*\s*\]\s*\)"
_VAR_ARRAY = re.compile(
    rf"\s*array\s*\[\s*({_INT})\s*\.\.\s*({_INT})\s*\]\s*of\s+var\s+(?:(bool|int)|({_INT})\s*\.\.\s*({_INT}))"
    rf"\s*:\s*({NAME})((?:{_RANGES_ANN}|{_ANN_NAMED})*)\s*=\s*\[([^\[\]]*)\]\s*\Z"
)
_DIGITS = 40  # a bound longer than this is no int of any model: read the slow way, which says so
# a plain variable's item where the text is, with the white space before it (group 1) and its ';'
_VAR_AT = re.compile(rf"(\s*)var\s+(?:(bool|int)|({_INT})\s*\.\.\s*({_INT}))\s*:\s*({NAME}){_ANNS}\s*;")
_NAMES = re.compile(rf"\s*{NAME}(?:\s*,\s*{NAME})*\s*\Z")
_RANGE_PAIR = re.compile(rf"\s*({_INT})\s*\.\.\s*({_INT})\s*\Z")
_ANN = re.compile(rf"::\s*({NAME})(?:\s*\(\s*(?:({NAME})|\[([^\]]*)\])\s*\))?")
_ARG = re.compile(rf"\s*(?:\[([^\[\]]*)\]|({NAME})\s*\[\s*([0-9]+)\s*\]|({NAME})|({_INT}))\s*(,|\Z)")
_ELEM = re.compile(rf"\s*(?:({NAME})\s*\[\s*([0-9]+)\s*\]|({NAME})|({_INT}))\s*\Z")
KEYWORDS = frozenset(
    "predicate constraint solve satisfy minimize maximize array of int bool float set var true false".split()
)


def quick_item(text: str, literals: list, placeholder: str) -> ast.Item | None:
    """The item, if it has one of the two shapes; else None. `literals` holds the int arrays
    that the parser cut out of the text, named placeholder + their index."""
    if "%" in text:
        return None
    m = _CONSTRAINT.match(text)
    if m:
        args = _args(m.group(2), literals, placeholder)
        anns = _annotations(m.group(3))
        if args is None or anns is None or m.group(1) in KEYWORDS:
            return None
        return ast.ConstraintItem(m.group(1), args, anns)
    m = _VAR_ARRAY.match(text)
    if m:
        return _var_array(*m.groups())
    m = _VAR_DECL.match(text)
    if m:
        base, lo, hi, name, anns_text = m.groups()
        anns = _annotations(anns_text)
        if anns is None or name in KEYWORDS:
            return None
        domain = None if base else ast.IntSet.range(int(lo), int(hi))
        return ast.Decl(ast.Type(is_var=True, base=base or "int", domain=domain), name, anns, None)
    return None


def quick_var_at(text: str, pos: int, types: dict) -> tuple[ast.Decl, int, int] | None:
    """The plain variable declared from `pos` on (white space first), where the item there is
    one: (its Decl, where its text begins, where its ';' ends); else None. Read without cutting
    the item out of the text first: a model's tens of thousands of variables (magic square
    200's 40,000) took most of its reading so. `types`: the variable types met so far, by
    (base, lo, hi), shared between their Decls (ast.Type is frozen)."""
    m = _VAR_AT.match(text, pos)
    if m is None:
        return None
    lead, base, lo, hi, name, anns_text = m.groups()
    anns = _annotations(anns_text) if anns_text else []
    if anns is None or name in KEYWORDS or (lo and max(len(lo), len(hi)) > _DIGITS):
        return None  # an odd one: the item's own reading says what is wrong, and where
    key = (base, lo, hi)
    t = types.get(key)
    if t is None:
        domain = None if base else ast.IntSet.range(int(lo), int(hi))
        t = types[key] = ast.Type(is_var=True, base=base or "int", domain=domain)
    return ast.Decl(t, name, anns, None), pos + len(lead), m.end()


def _var_array(first, last, base, lo, hi, name, anns_text, elems) -> ast.Decl | None:
    """`array [first..last] of var <base or lo..hi>: name <anns> = [elems]`, or None."""
    anns = _annotations(anns_text)
    values = _elements(elems)
    if anns is None or values is None or name in KEYWORDS:
        return None
    domain = None if base else ast.IntSet.range(int(lo), int(hi))
    dims = ((int(first), int(last)),)
    return ast.Decl(ast.Type(is_var=True, base=base or "int", domain=domain, dims=dims), name, anns, values)


def _annotations(text: str) -> list[ast.Call] | None:
    """The annotations of a text its item's expression has matched: `:: name`, `:: name(name)`
    and `:: name([lo..hi, ...])` (output_array's index sets), in order."""
    anns = []
    for m in _ANN.finditer(text):
        name, arg, ranges = m.groups()
        if name in KEYWORDS or arg in KEYWORDS:
            return None
        if ranges is not None:
            pairs = [_RANGE_PAIR.match(r) for r in ranges.split(",")]
            sets = [ast.IntSet.range(int(p.group(1)), int(p.group(2))) for p in pairs if p]
            if len(sets) != len(pairs):
                return None
            anns.append(ast.Call(name, (sets,)))
        else:
            anns.append(ast.Call(name, (ast.Ident(arg),)) if arg else ast.Call(name))
    return anns


def _args(text: str, literals: list, placeholder: str) -> list | None:
    args: list = []
    arg: object
    pos, more = 0, bool(text.strip())
    while more:
        m = _ARG.match(text, pos)
        if m is None:
            return None
        elems, acc_name, acc_index, name, value = m.groups()[:5]
        if elems is not None:
            arg = _elements(elems)
        elif acc_name is not None:
            arg = None if acc_name in KEYWORDS else ast.ArrayAccess(acc_name, int(acc_index))
        elif name is not None:
            arg = _name(name, literals, placeholder)
        else:
            arg = int(value)
        if arg is None:
            return None
        args.append(arg)
        more = m.group(6) == ","
        pos = m.end()
        if more and not text[pos:].strip():
            return None  # a trailing comma: the grammar says where
    return args


def _elements(text: str) -> list | None:
    if not text.strip():
        return []
    if _NAMES.match(text):  # names alone (a big model's arrays of variables): one match for all
        names = [part.strip() for part in text.split(",")]
        if KEYWORDS.isdisjoint(names):
            return [ast.Ident(name) for name in names]
    out: list = []
    for part in text.split(","):
        m = _ELEM.match(part)
        if m is None:
            return None
        acc_name, acc_index, name, value = m.groups()
        if acc_name is not None:
            if acc_name in KEYWORDS:
                return None
            out.append(ast.ArrayAccess(acc_name, int(acc_index)))
        elif name is not None:
            if name in ("true", "false"):
                out.append(name == "true")
            elif name in KEYWORDS:
                return None
            else:
                out.append(ast.Ident(name))
        else:
            out.append(int(value))
    return out


def _name(name: str, literals: list, placeholder: str):
    if name in ("true", "false"):
        return name == "true"
    if name in KEYWORDS:
        return None
    literal = stashed(name, literals, placeholder)
    return literal if literal is not None else ast.Ident(name)


def stashed(name: str, literals: list, placeholder: str):
    """The array literal a placeholder name stands for, or None: a name that only looks like one
    (the text had digits right after a literal: `[1,2]3`) stays a name, and fails as one."""
    number = name[len(placeholder) :]
    if (
        name.startswith(placeholder)
        and number.isdecimal()
        and number == str(int(number))
        and int(number) < len(literals)
    ):
        return literals[int(number)]
    return None
