"""What pe_driver.py hands to the tests of one client PE (read by conftest.py)."""
cache = None  # the shmemcache.Cache of this PE (closed during phase 2)
clients = None  # with --mpi4py: an mpi4py communicator of the client PEs only; else None
serving_marker = None  # a file the server PE's main thread creates while its serve() runs in another thread
close_outcomes = None  # the clients' close() from several threads at once (pe_driver.close_from_threads)
