"""FlatZinc text -> stream of AST items.

The file is cut at top-level semicolons (outside strings and comments) and each item is parsed
on its own by the LALR parser of grammar/flatzinc.lark, whose transformer builds the AST
directly. Items stream out one at a time, so a file of millions of constraints never holds
its whole parse tree in memory."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO, cast

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from .. import settings
from ..errors import SCALE_DOWN, FznError, nested_too_deeply
from ..resources import grammar_file
from . import ast
from .quickparse import quick_item, quick_var_at, stashed

_ITEM_END = re.compile(r'"(?:[^"\\\n]|\\.)*"|%[^\n]*|;')
_LEADING_SPACE = re.compile(r"(?:\s+|%[^\n]*)*")
# Literal arrays of decimal ints skip the LALR parser: each becomes one placeholder name that the
# transformer swaps back (qap_64's FlatZinc: 16k items, 1.5 MB, mostly such arrays).
_INT_ARRAY = re.compile(r"\[\s*-?\d+(?:\s*,\s*-?\d+)+\s*\](?![A-Za-z0-9_])")  # not glued to a name after it
_PLACEHOLDER = "__fzn_gpu_int_array_"

# Names a user can read, for the tokens the parser says it expected.
_TOKEN_WORDS = {
    "SEMICOLON": "';'",
    "COLON": "':'",
    "COMMA": "','",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "EQUAL": "'='",
    "__ANON_0": "'::'",
    "IDENT": "a name",
    "INT": "an integer",
    "FLOAT": "a float",
    "STRING": "a string",
    "VAR": "'var'",
}


def _int(tok: Token) -> int:
    text = str(tok)
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("-")
    if body.startswith("0x"):
        return sign * int(body[2:], 16)
    if body.startswith("0o"):
        return sign * int(body[2:], 8)
    return sign * int(body)


@v_args(inline=True)
class _ToAst(Transformer):
    """Builds ast.* objects as the LALR parser reduces (no intermediate tree)."""

    # --- literals
    def int_lit(self, tok):
        return _int(tok)

    def float_lit(self, tok):
        return float(tok)

    def true_lit(self):
        return True

    def false_lit(self):
        return False

    def string_lit(self, tok):
        return ast.Str(bytes(str(tok)[1:-1], "utf-8").decode("unicode_escape"))

    def __init__(self):
        super().__init__()
        self.literals: list[ast.IntList] = []  # this item's arrays, by placeholder number

    def ident(self, tok):
        name = str(tok)
        literal = stashed(name, self.literals, _PLACEHOLDER)
        return literal if literal is not None else ast.Ident(name)

    def array_access(self, name, index):
        return ast.ArrayAccess(str(name), _int(index))

    def array_lit(self, *items):
        return [x for x in items if x is not None]

    def call(self, name, *args):
        return ast.Call(str(name), tuple(args))

    def ann_atom(self, name):
        return ast.Call(str(name))

    def set_range(self, lo, hi):
        return ast.IntSet.range(_int(lo), _int(hi))

    def set_enum(self, *values):
        return ast.IntSet.of(_int(v) for v in values if v is not None)

    def float_range(self, lo, hi):
        return ast.FloatRange(float(lo), float(hi))

    def annotations(self, *anns):
        return list(anns)

    # --- types
    def t_bool(self):
        return ("bool", ast.IntSet.range(0, 1))

    def t_int(self):
        return ("int", None)

    def t_float(self):
        return ("float", None)

    def t_int_range(self, lo, hi):
        return ("int", ast.IntSet.range(_int(lo), _int(hi)))

    def t_float_range(self, lo, hi):
        return ("float", ast.FloatRange(float(lo), float(hi)))

    def t_int_set(self, *values):
        return ("int", ast.IntSet.of(_int(v) for v in values if v is not None))

    def t_set(self, elem):
        return ("set", elem[1])

    def scalar_type(self, *parts):
        is_var = len(parts) == 2
        base, domain = parts[-1]
        if base == "bool":
            domain = None
        return ast.Type(is_var=is_var, base=base, domain=domain)

    def index_range(self, lo, hi):
        return (_int(lo), _int(hi))

    def index_int(self):
        return None

    def array_type(self, *parts):
        elem = parts[-1]
        return ast.Type(is_var=elem.is_var, base=elem.base, domain=elem.domain, dims=tuple(parts[:-1]))

    # --- items
    def predicate_item(self, name, *params):
        return ast.PredicateDecl(str(name))

    def pred_param(self, type_, name):
        return None

    def decl_item(self, type_, name, anns, value=None):
        return ast.Decl(type_, str(name), anns, value)

    def constraint_item(self, name, *rest):
        *args, anns = rest
        return ast.ConstraintItem(str(name), [a for a in args if a is not None], anns)

    def satisfy(self):
        return ("satisfy", None)

    def minimize(self, expr):
        return ("minimize", expr)

    def maximize(self, expr):
        return ("maximize", expr)

    def solve_item(self, anns, goal):
        return ast.SolveItem(goal[0], goal[1], anns)


@lru_cache(maxsize=1)
def _parser() -> tuple[Lark, _ToAst]:
    # cache=True keeps the analysed grammar in the temp folder (keyed by the grammar's hash):
    # building it takes most of a second, inside the user's time limit, on every run
    transformer = _ToAst()
    return Lark(
        grammar_file().read_text(), parser="lalr", transformer=transformer, maybe_placeholders=True, cache=True
    ), transformer


def _parse_item(chunk: str):
    """One item's AST. Its literal int arrays are cut out first and read by int() (the same
    values the grammar's INT reads); the commonest item shapes are then read by quickparse,
    the rest by the grammar. An item the cut-down text does not parse is parsed again whole,
    so errors point into the text as written."""
    parser, transformer = _parser()
    if '"' in chunk or _PLACEHOLDER in chunk:
        return parser.parse(chunk)
    literals: list[ast.IntList] = []

    def stash(m: re.Match) -> str:
        literals.append(ast.IntList(map(int, m.group()[1:-1].split(","))))
        return f"{_PLACEHOLDER}{len(literals) - 1}"

    short = _INT_ARRAY.sub(stash, chunk)
    quick = quick_item(short, literals, _PLACEHOLDER)
    if quick is not None:
        return quick
    transformer.literals = literals
    try:
        return parser.parse(short)
    except UnexpectedInput:
        if not literals:
            raise
    finally:
        transformer.literals = []
    return parser.parse(chunk)


def _syntax_error(err: UnexpectedInput, text: str, filename: str, line: int, col: int) -> FznError:
    err_line = line + (err.line - 1 if err.line and err.line > 0 else 0)
    err_col = (col + err.column - 1) if err.line == 1 else err.column
    if isinstance(err, UnexpectedToken):
        got = "end of item" if err.token.type == "$END" else repr(str(err.token))
        expected = sorted(_TOKEN_WORDS.get(t, repr(t.lower())) for t in err.expected if not t.startswith("__"))
        msg = f"syntax error: unexpected {got}"
        if expected:
            msg += ", expected " + " or ".join(expected[:6])
    elif isinstance(err, UnexpectedCharacters):
        msg = f"syntax error: unexpected character {text[err.pos_in_stream or 0]!r}"
    else:
        msg = "syntax error: the item ends too early"
    return FznError(
        msg,
        file=filename,
        line=err_line,
        column=err_col,
        fix="this is not valid FlatZinc; regenerate it with `minizinc -c` or correct the item",
    )


def _skip_space(text: str, start: int) -> int:
    """Where the white space and comments from `start` end."""
    m = _LEADING_SPACE.match(text, start)
    return m.end() if m else start


def parse_raw(item: ast.RawConstraint, filename: str) -> ast.Item:
    """A constraint or variable that `parse_items_raw` kept as its text, read as every item is
    read, its errors located in the file."""
    # from the end of the line before, as the parser cuts items (its columns count from there)
    return item_at("\n" + item.text, filename, 0, len(item.text) + 1, item.line - 1, 0)


def item_at(text: str, filename: str, start: int, end: int, line: int, line_start: int) -> ast.Item:
    """The item text[start:end] (its ';' at end), line the line start is on (which begins at
    line_start): read, given its line number, or an FznError pointing into the text."""
    lead = _skip_space(text, start)
    first_line = line + text.count("\n", start, lead)
    chunk = text[start:end]
    try:
        item = _parse_item(chunk)
    except UnexpectedInput as err:
        col = start - line_start + 1
        raise _syntax_error(err, chunk, filename, line, col) from None
    except VisitError as err:  # a literal the transformer cannot read (e.g. a huge float)
        raise FznError(f"cannot read this item: {err.orig_exc}", file=filename, line=first_line) from None
    except ValueError:  # an integer of thousands of digits (Python's conversion limit)
        raise FznError(
            "a number on this line is too long to read",
            file=filename,
            line=first_line,
            fix=SCALE_DOWN,
        ) from None
    except RecursionError:
        raise nested_too_deeply(filename, first_line) from None
    item.line = first_line
    return item


def parse_items(text: str, filename: str = "<string>") -> Iterator[ast.Item]:
    """Yield the items of a FlatZinc text in order, each with its 1-based line number."""
    for item in _items(text, filename, raw=False):
        yield cast(ast.Item, item)


def parse_items_raw(text: str, filename: str = "<string>") -> Iterator[ast.Item | ast.RawConstraint]:
    """parse_items, but a constraint alone on its line comes as an ast.RawConstraint (its
    text), and a variable's declaration as an ast.RawVar, for lowering to read
    (lower.Lowering.fast_constraint, fast_var)."""
    return _items(text, filename, raw=True)


def _items(text: str, filename: str, raw: bool) -> Iterator[ast.Item | ast.RawConstraint]:
    start, line, line_start = 0, 1, 0
    pos = 0  # where the search for the item's ';' goes on (past strings and comments)
    types: dict = {}  # quick_var_at's shared variable types
    while True:
        if raw and (text.startswith("\nconstraint ", start) or text.startswith("\nvar ", start)):
            semi = text.find(";", start)  # an item alone on its line, as MiniZinc writes them
            body = text[start + 1 : semi]
            if semi >= 0 and "\n" not in body and '"' not in body and "%" not in body:
                line += 1
                yield ast.RawConstraint(body, line) if body[0] == "c" else ast.RawVar(body, line)
                line_start = start + 1
                start = pos = semi + 1
                continue
        quick = quick_var_at(text, start, types) if pos == start else None
        if quick is not None:
            item, lead, end = quick
            item.line = line + text.count("\n", start, lead)
            yield item
        else:
            m = _ITEM_END.search(text, pos)
            if m is None:
                break
            if m.group() != ";":
                pos = m.end()
                continue
            end = m.end()
            yield item_at(text, filename, start, m.start(), line, line_start)
        nl = text.count("\n", start, end)
        if nl:
            line += nl
            line_start = text.rfind("\n", start, end) + 1
        start = pos = end
    tail = text[start:]
    if _skip_space(tail, 0) != len(tail):
        lead = _skip_space(text, start)
        raise FznError(
            "the last item has no closing ';'",
            file=filename,
            line=line + text.count("\n", start, lead),
            fix="end every item with ';'",
        )


# The largest FlatZinc file read, in bytes: the MiniZinc Challenge's biggest flatten to a few
# hundred megabytes, and lowering one takes about five times its size in memory. A larger file
# (or an endless stream such as /dev/zero) is refused before it fills the machine's memory.
MAX_INPUT_MB_DEFAULT = 2048
_CHUNK = 1 << 24


def max_input_bytes() -> int:
    """FZN_GPU_MAX_INPUT_MB, else MAX_INPUT_MB_DEFAULT, in bytes."""
    return settings.integer("FZN_GPU_MAX_INPUT_MB", MAX_INPUT_MB_DEFAULT) << 20


def _read_bounded(stream: BinaryIO, name: str) -> str:
    """The stream's text, read in chunks: refused past max_input_bytes() or at a NUL byte
    (no FlatZinc text holds one; a binary file or a device such as /dev/zero does)."""
    limit = max_input_bytes()
    chunks: list[bytes] = []
    size = 0
    while chunk := stream.read(_CHUNK):
        nul = chunk.find(b"\0")
        if nul >= 0:
            raise FznError(
                f"{name} is not FlatZinc text (a NUL byte at offset {size + nul})",
                fix="pass a FlatZinc (.fzn) text file",
            )
        size += len(chunk)
        if size > limit:
            raise FznError(
                f"{name} is larger than {limit >> 20} MiB",
                fix="check that it is the FlatZinc file; FZN_GPU_MAX_INPUT_MB=N raises the limit to N MiB",
            )
        chunks.append(chunk)
    data = b"".join(chunks)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise FznError(f"{name} is not UTF-8 text (byte {err.start})", fix="pass a FlatZinc (.fzn) text file") from None


def read_text(path: str) -> tuple[str, str]:
    """The FlatZinc text and a display name; '-' reads standard input."""
    if path == "-":
        return _read_bounded(sys.stdin.buffer, "standard input"), "<stdin>"
    p = Path(path)
    if not p.exists():
        raise FznError(f"no such file: {path}", fix="check the path, or pass '-' to read FlatZinc from standard input")
    if p.is_dir():
        raise FznError(f"{path} is a folder, not a FlatZinc file", fix="pass the .fzn file itself")
    try:
        with p.open("rb") as f:
            return _read_bounded(f, str(path)), str(path)
    except OSError as err:
        raise FznError(f"{path} cannot be read: {err.strerror}", fix="check the file's permissions") from None
