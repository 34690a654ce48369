"""A device whose programs do not build is left out with one line and the fix (device_check.py,
device.all_devices): the probe itself on this machine's CPU, its verdict cached per device and
driver, a CPU that one platform cannot build for served by another, and a machine where no
device builds (PoCL made to fail with a bad build flag) ending in one clear message, never a
traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from fzn_gpu.errors import FznError
from fzn_gpu.runtime import device, device_check

from helpers import ROOT
from test_cli import QUEENS6, fzn


@pytest.fixture
def fresh_devices(monkeypatch, tmp_path):
    """Probe verdicts in a folder of the test's own, the device list read anew around it."""
    monkeypatch.setenv("FZN_GPU_CACHE_DIR", str(tmp_path / "builds"))
    device.all_devices.cache_clear()
    yield tmp_path / "builds"
    device.all_devices.cache_clear()


def test_the_probe_builds_runs_and_checks_on_this_cpu_and_keeps_its_verdict(fresh_devices):
    import pyopencl as cl

    d = cl.get_platforms()[0].get_devices()[0]
    assert device_check.run_probe(d) is None
    assert device_check.probe(d) is None
    [kept] = list(fresh_devices.glob("probe-*"))
    assert kept.read_text() == "ok\n"
    kept.write_text("failed unknown target CPU 'generic'\n")  # a verdict read back, not probed again
    assert device_check.probe(d) == "unknown target CPU 'generic'"
    assert device_check.probe(d, fresh=True) is None  # check-devices probes afresh


def test_a_cpu_one_platform_cannot_build_for_is_served_by_another(fresh_devices, monkeypatch):
    """pip's PoCL listing the CPU first but building nothing for it, Debian's beside it."""
    import pyopencl as cl

    real = cl.get_platforms()
    cpu = real[0].get_devices()[0]
    broken_cpu = SimpleNamespace(name="pthread-" + device.cpu_brand(cpu.name), type=cl.device_type.CPU)
    broken = SimpleNamespace(name="Portable Computing Language", get_devices=lambda: [broken_cpu])
    monkeypatch.setattr(cl, "get_platforms", lambda: [broken, *real])
    real_probe = device_check.probe
    monkeypatch.setattr(
        device_check,
        "probe",
        lambda d, fresh=False: "unknown target CPU 'generic'" if d is broken_cpu else real_probe(d, fresh),
    )
    found = device.all_devices()
    assert [device.cpu_brand(d.name) for d in found] == [device.cpu_brand(cpu.name)]
    assert found[0].cl_device is not broken_cpu and device.left_out() == []
    # alone, the broken platform leaves no device, and the run says why and what to do
    monkeypatch.setattr(cl, "get_platforms", lambda: [broken])
    device.all_devices.cache_clear()
    assert device.all_devices() == ()
    [gone] = device.left_out()
    assert "unknown target CPU 'generic'" in gone.why
    with pytest.raises(FznError) as err:
        device.select_devices("all")
    assert "no OpenCL device here builds programs" in err.value.message and "pocl-opencl-icd" in (err.value.fix or "")


def test_where_no_device_builds_the_run_says_so_in_one_message(tmp_path):
    """PoCL made to refuse every build (an invalid build option): the run ends with one message
    naming the device and the fix, --list-devices marks it left out, check-devices exits 1."""
    env = dict(
        os.environ,
        POCL_EXTRA_BUILD_FLAGS="-mcpu=generic",
        FZN_GPU_CACHE_DIR=str(tmp_path / "builds"),
        FZN_GPU_SERVER="off",
    )

    def fzn_gpu(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "fzn_gpu", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
        )

    r = fzn_gpu(fzn(tmp_path, QUEENS6))
    assert r.returncode != 0 and "Traceback" not in r.stderr and "----------" not in r.stdout
    assert "no OpenCL device here builds programs" in r.stderr and "fix:" in r.stderr, r.stderr
    listed = fzn_gpu("--list-devices")
    assert "left out: its programs do not build" in listed.stdout, listed.stdout
    checked = fzn_gpu("check-devices")
    assert checked.returncode == 1 and "does not build programs" in checked.stderr, checked.stderr
