"""Fixtures for tests that run inside an OpenSHMEM job, on a client PE, through pe_driver.py."""
import pytest

import pe_session


def pytest_configure(config):
    config.addinivalue_line("markers", "mpi4py: needs the clients' mpi4py communicator (pe_driver.py --mpi4py)")
    if pe_session.cache is None:
        raise pytest.UsageError("these tests run inside an OpenSHMEM job: use python/tests/pe_driver.py "
                                "(tests/python/run_pytest_job.sh)")


@pytest.fixture
def cache():
    """This client PE's Cache (shared by every test; phase 1: open, phase 2: closed)."""
    return pe_session.cache


@pytest.fixture
def clients():
    """The clients' mpi4py communicator (tests that use it are marked mpi4py)."""
    assert pe_session.clients is not None, "mark the test mpi4py"
    return pe_session.clients


@pytest.fixture
def key(request, cache):
    """key(suffix) -> bytes: a key private to this client and this test, so concurrent clients never collide."""
    prefix = f"py:c{cache.client_rank}:{request.node.name}:".encode()
    return lambda suffix="": prefix + (suffix if isinstance(suffix, bytes) else str(suffix).encode())
