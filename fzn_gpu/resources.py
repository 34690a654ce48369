"""Where grammar/, kernels/ and mznlib/ live: beside the package in a checkout, or inside the
wheel as fzn_gpu._data.* once installed. Everything else asks this module, never a path."""

from __future__ import annotations

from pathlib import Path


def resource_dir(name: str) -> Path:
    """The folder `name` (grammar, kernels or mznlib), from a checkout or an installed wheel."""
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir():
        return checkout
    installed = Path(__file__).resolve().parent / "_data" / name
    if installed.is_dir():
        return installed
    raise FileNotFoundError(f"fzn-gpu is installed without its {name}/ folder; reinstall the package")


def grammar_file() -> Path:
    return resource_dir("grammar") / "flatzinc.lark"


def kernels_dir() -> Path:
    return resource_dir("kernels")


def mznlib_dir() -> Path:
    return resource_dir("mznlib")
