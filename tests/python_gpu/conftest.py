"""conftest.py - pytest for the Python package's GPU tests (the GPU
machine, torch): TileKernels' per-test seeding (its tests/
pytest_random_plugin.py: `--seed`, default 0, and every test seeded with
seed + sha256(node id) mod 2^31, so a test's data depends on its id
alone), the folder on sys.path for tk_testing (the helpers of TileKernels'
tile_kernels.testing.numeric), and the selected cases of test_ops_gpu.py
handed over, so that the next ones run on every core while one is
asserted (and, at the session's end, those not started are dropped).
"""
import hashlib
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_addoption(parser):
    parser.addoption("--seed", type=int, default=0,
                     help="shifts every test's random data (TileKernels' "
                          "--seed)")


@pytest.fixture(autouse=True)
def _seeded(request):
    digest = hashlib.sha256(request.node.nodeid.encode()).hexdigest()
    torch.manual_seed((request.config.getoption("--seed") + int(digest, 16))
                      % 2**31)


def pytest_collection_finish(session):
    ops_gpu = sys.modules.get("test_ops_gpu")
    if ops_gpu is None:
        return
    ops_gpu.will_run([(item.callspec.params["op"],
                       item.callspec.params["index"])
                      for item in session.items
                      if item.module is ops_gpu and
                      hasattr(item, "callspec")])


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    ops_gpu = sys.modules.get("test_ops_gpu")
    if ops_gpu is not None:
        ops_gpu.stop()
