"""mpi4py and shmemcache in one process (MPI initialised first, by mpi4py): the clients exchange data both
through MPI and through the cache."""
import numpy as np
import pytest

pytestmark = pytest.mark.mpi4py


def test_mpi_was_initialised_first():
    from mpi4py import MPI

    assert MPI.Is_initialized() and not MPI.Is_finalized()
    assert MPI.COMM_WORLD.Get_size() == 3


def test_clients_communicator(cache, clients):
    assert clients.Get_size() == cache.num_clients
    assert clients.Get_rank() == cache.client_rank
    assert clients.allreduce(cache.client_rank) == sum(range(cache.num_clients))


def test_arrays_written_by_one_client_read_by_the_others(cache, clients):
    rank, size = cache.client_rank, cache.num_clients
    mine = np.random.default_rng(rank).standard_normal((64, 64))
    cache.set(f"mpi4py:field:{rank}", mine)
    clients.Barrier()  # every client has stored its field
    checked = 0
    for other in range(size):
        expected = np.random.default_rng(other).standard_normal((64, 64))
        out = np.empty((64, 64))
        assert cache.get_into(f"mpi4py:field:{other}", out) == out.nbytes
        assert np.array_equal(out, expected)
        checked += 1
    assert clients.allreduce(checked) == size * size
    clients.Barrier()  # nobody deletes before everyone has read
    assert cache.delete(f"mpi4py:field:{rank}")


def test_mpi_traffic_with_requests_in_flight(cache, clients, key):
    requests = [cache.iset(key(i), np.full(256, i, dtype=np.int64)) for i in range(32)]
    total = clients.allreduce(np.arange(10), op=__import__("mpi4py").MPI.SUM)
    assert (total == np.arange(10) * clients.Get_size()).all()
    assert all(r.wait() is None for r in requests)
    assert np.array_equal(np.frombuffer(cache.get(key(31)), dtype=np.int64), np.full(256, 31))
