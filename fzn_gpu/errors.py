"""One error type for bad input: the CLI prints it as one line (file:line: message. fix) and
exits non-zero, never with a traceback."""

from __future__ import annotations


class FznError(Exception):
    """A problem with the user's input or machine that the user can act on."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        fix: str | None = None,
        exit_code: int = 1,
    ):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.fix = fix
        self.exit_code = exit_code

    def located(self, file: str | None = None, line: int | None = None) -> FznError:
        """Fill in a location that the raiser did not know."""
        self.file = self.file or file
        self.line = self.line or line
        return self

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line:
                where += f":{self.line}"
                if self.column:
                    where += f":{self.column}"
            where += ": "
        text = f"{where}error: {self.message}"
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text


class Unsupported(FznError):
    """The input is valid FlatZinc, but this solver cannot run it (a constraint or type that
    no kernel implements). The status printed is UNKNOWN, never a guess."""


# The fix for a number beyond what the solver reads (parser.py, lower.py)
SCALE_DOWN = "fzn-gpu, like Gecode, works with 32-bit integers: scale the model's numbers down"


def nested_too_deeply(file: str, line: int) -> FznError:
    """An item nested past Python's recursion limit (its reading or its lowering)."""
    return FznError(
        "this item is nested too deeply to read", file=file, line=line, fix="regenerate the FlatZinc with `minizinc -c`"
    )
