"""A work-group chooses the branching variable as one work-item does: each of its work-items
takes the best of its share of the variables, and work-item 0 the best of theirs, ties going
to the earlier variable (search_group.cl, choose_group). A one-search dive
(FZN_GPU_DIVE_MS) finds the leftmost solution of the annotated search, so both execution
models print the same first solution under every variable selection, on a model with more
variables than a group has work-items and many ties in size and bounds. The same with the
choice by keys (search_group.cl, var_key and group_min)."""

import pytest

from fzn_gpu.runtime.codegen import VAR_SELECT

from conftest import add_cl_options, use_kernel
from helpers import solve_text

N = 45
# every selection but dom_w_deg, whose weights count the failures each execution model meets
SELECTIONS = [s for s in VAR_SELECT if s != "dom_w_deg"]


def model(selection: str, value: str) -> str:
    # bounds of both signs (smallest and largest order them as signed numbers)
    lines = [f"var {1 - 3 * (i % 4 == 1)}..{3 + (i * 7) % 9}: x{i} :: output_var;" for i in range(N)]
    for i in range(N - 1):
        lines.append(f"constraint int_ne(x{i}, x{i + 1});")
    for i in range(0, N - 2, 3):  # a few variables in more constraints (occurrence)
        lines.append(f"constraint int_lin_le([1, 1], [x{i}, x{i + 2}], {4 + i % 5});")
    names = ", ".join(f"x{i}" for i in range(N))
    lines.append(f"solve :: int_search([{names}], {selection}, {value}, complete) satisfy;")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("keyed", [False, True])
def test_a_group_picks_the_variable_a_work_item_picks(selection, keyed, monkeypatch):
    """keyed: the group's choice by a 32-bit key per variable and two minimums over the group
    (what a group of one warp does on NVIDIA, FZN_WARP_PTX), built here portably
    (FZN_KEYED_CHOICE); selections without a key keep the pairwise choice."""
    monkeypatch.setenv("FZN_GPU_DIVE_MS", "20000")
    first = {}
    for kernel in ("item", "group"):
        use_kernel(monkeypatch, kernel)
        if keyed and kernel == "group":
            add_cl_options(monkeypatch, "-DFZN_KEYED_CHOICE")
        for value in ("indomain_min", "indomain_max"):
            found, outcome = solve_text(model(selection, value), num_solutions=1)
            assert len(found) == 1, (kernel, selection, value)
            first[kernel, value] = found[0]
    for value in ("indomain_min", "indomain_max"):
        assert first["item", value] == first["group", value], (selection, value)
