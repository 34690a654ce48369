"""The code is lint-clean, formatted and type-checked (ruff and mypy, configured in
pyproject.toml): a mistake pyflakes or bugbear sees, an unsorted import, an unformatted file
or a type error in a checked module fails here, in CI's test run."""

import subprocess
import sys

from helpers import ROOT


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_finds_nothing():
    r = ruff("check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_file_is_formatted():
    r = ruff("format", "--no-cache", "--check", ".")
    assert r.returncode == 0, r.stdout + r.stderr  # `ruff format .` fixes it


def test_mypy_finds_nothing(tmp_path):
    """Every module of the package, as mypy reads them (pyproject.toml)."""
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr
