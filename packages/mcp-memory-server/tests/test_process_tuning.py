"""The process-wide settings the server applies at start (mcp_memory_server.runtime.process_tuning)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from mcp_memory_server.runtime import process_tuning

CHILD = textwrap.dedent(
    """
    import json, os, sys
    from mcp_memory_server.runtime.process_tuning import fix_mmap_threshold, tune_process
    tune_process()
    print(json.dumps({"blas": os.environ.get("OPENBLAS_NUM_THREADS"), "again": fix_mmap_threshold()}))
    """
)


def run_child(**env: str) -> str:
    clean = {
        k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MALLOC_MMAP_THRESHOLD_")
    }
    result = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, env={**clean, **env}, check=True
    )
    return result.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_threshold_is_fixed_on_glibc_and_blas_is_single_threaded() -> None:
    # mallopt returns 1 on success; calling it again (as the child does) succeeds again
    assert run_child() == '{"blas": "1", "again": true}'


def test_explicit_environment_wins() -> None:
    assert (
        run_child(OPENBLAS_NUM_THREADS="2", MALLOC_MMAP_THRESHOLD_="65536") == '{"blas": "2", "again": false}'
    )


def test_other_platforms_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process_tuning.sys, "platform", "darwin")
    monkeypatch.delenv(process_tuning.MMAP_THRESHOLD_ENV, raising=False)
    assert process_tuning.fix_mmap_threshold() is False
