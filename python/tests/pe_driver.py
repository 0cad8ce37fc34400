"""Runs the Python package's tests inside one OpenSHMEM job: every PE of the job runs this driver.

    scripts/oshrun.sh [--tcp] -np 3 PYTHON python/tests/pe_driver.py --report-dir DIR [--mpi4py] [PYTEST ARGS]

  1. (--mpi4py) `from mpi4py import MPI` before shmemcache is imported: MPI is initialised first, the case of an
     mpi4py application; the clients get their own communicator (COMM_WORLD split, collective on every PE).
  2. Every PE constructs the Cache (collective). The server PE serves, in a second thread, while its main thread
     creates DIR/server.serving: possible only because serve() lets the GIL go (test_threads.py waits for it).
     Each client PE runs pytest on the tests of phase 1 with the cache in pe_session, its output to
     DIR/client<rank>.log, its report to DIR/client<rank>.xml, while the other client does the same (tests use
     keys private to their client, and a barrier of the clients' communicator where they meet).
  3. Every PE closes the cache (collective; each client from 3 threads at once while a 4th calls get() and a 5th
     iset(), the outcomes in pe_session; close_from_threads). Each client runs phase 2, the tests of a closed cache.
  4. Each client writes DIR/client<rank>.rc (0 or the failing pytest exit status) and exits with it, so the job
     fails when any PE fails. pytest's "no tests collected" (exit 5) counts as a failure.
tests/python/run_pytest_job.sh launches this, prints the per-client logs and checks that every client reported.
"""
import argparse
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PHASE_2 = ["test_closed.py"]


def run_pytest(report_dir, rank, phase, selection, extra):
    """pytest.main with this client's output in its own log file; returns the exit status (5 -> failure)."""
    import pytest

    log_path = os.path.join(report_dir, f"client{rank}.log")
    args = ["-p", "no:cacheprovider", "-rfE", "--rootdir", HERE, "-o", "console_output_style=classic",
            f"--junitxml={os.path.join(report_dir, f'client{rank}-phase{phase}.xml')}", *selection, *extra]
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(log_path, "a") as log:
        log.write(f"===== client {rank}, phase {phase}: pytest {' '.join(args)}\n")
        log.flush()
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            status = pytest.main(args)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
    if status == pytest.ExitCode.NO_TESTS_COLLECTED:
        print(f"client {rank}: phase {phase} collected no tests: failing", file=sys.stderr)
    return int(status)


def serve_beside_main_thread(cache, marker):
    """cache.serve() in a second thread while this thread creates `marker`. The switch interval is raised so that
    this thread gets the GIL only when the serving thread lets it go: inside serve() if the call runs with the GIL
    released, else only once serve() returned, i.e. after every client closed, too late for test_threads.py."""
    entering, failure = threading.Event(), []

    def run():
        entering.set()
        try:
            cache.serve()
        except BaseException as e:  # re-raised in the main thread
            failure.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e4)
    try:
        thread = threading.Thread(target=run, name="serve")
        thread.start()
        entering.wait()
        with open(marker, "w") as f:
            f.write(f"serving: {thread.is_alive()}\n")
    finally:
        sys.setswitchinterval(old)
    thread.join()
    if failure:
        raise failure[0]


def close_from_threads(cache, key):
    """close() from 3 threads at once while a 4th keeps calling get() and a 5th keeps issuing iset(): one
    finalizes, the others return once it has (close() is idempotent, from any thread); the caller gets ShutDown;
    the issuer gets ShutDown at issue once close() began, and every request it was given completes with its real
    outcome (None), its unfinished dropped ones collected meanwhile. A request left pending completes inside the
    finalizing close() with BufferTooSmall, whose error factory closes again from that thread: that re-entrant
    close() returns at once (it waited for itself forever before). The outcomes, for test_closed.py."""
    import shmemcache
    from shmemcache import _core, _errors

    outcomes, started = {}, [threading.Event(), threading.Event()]
    reentrant_key = key + b":reentrant"
    cache.set(reentrant_key, bytes(64))
    left_pending = cache.iget(reentrant_key, 8)  # completed by close(): BUFFER_TOO_SMALL

    def reentrant_factory(status, needed, key_, detail):
        if status == shmemcache.Status.BUFFER_TOO_SMALL and "reentrant" not in outcomes:
            outcomes["reentrant"] = "entered"
            try:
                cache.close()
                outcomes["reentrant"] = f"returned, closed={cache.closed}"
            except BaseException as e:
                outcomes["reentrant"] = repr(e)
        return _errors._make_error(status, needed, key_, detail)

    def caller():
        started[0].set()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                cache.get(key)
            except shmemcache.ShutDown:
                outcomes["caller"] = "ShutDown"
                return
            except BaseException as e:
                outcomes["caller"] = repr(e)
                return
        outcomes["caller"] = "no ShutDown within 120 s of calls"

    def issuer():
        kept, issued, wrong = [], 0, []

        def check(request):
            try:
                outcome = request.wait()
                if outcome is not None:
                    wrong.append(repr(outcome))
            except BaseException as e:
                wrong.append(repr(e))

        started[1].set()
        deadline = time.monotonic() + 120
        while True:
            if time.monotonic() > deadline:
                outcomes["issuer"] = "no ShutDown within 120 s of issues"
                return
            try:
                request = cache.iset(key + b":issued", b"%d" % issued)
            except shmemcache.ShutDown:
                break
            except BaseException as e:
                outcomes["issuer"] = repr(e)
                return
            issued += 1
            if issued % 2:
                kept.append(request)  # the others are dropped unfinished: collected, maybe while close() runs
            del request
            if len(kept) > 256:
                check(kept.pop(0))
        for request in kept:
            check(request)
        outcomes["issuer"] = "ok" if not wrong else f"{len(wrong)} of {issued} requests: {wrong[:3]}"

    def closer(name):
        try:
            cache.close()
            outcomes[name] = "ok"
        except BaseException as e:
            outcomes[name] = repr(e)

    _core._set_error_factory(reentrant_factory)
    try:
        others = [threading.Thread(target=caller), threading.Thread(target=issuer)]
        for thread in others:
            thread.start()
        for event in started:
            event.wait()
        closers = [threading.Thread(target=closer, args=(f"close{i}",)) for i in range(3)]
        for thread in closers:
            thread.start()
        for thread in closers + others:
            thread.join()
    finally:
        _core._set_error_factory(_errors._make_error)
    try:
        left_pending.wait()
        outcomes["left_pending"] = "no error"
    except shmemcache.BufferTooSmall as e:
        outcomes["left_pending"] = f"BufferTooSmall({e.needed})"
    except BaseException as e:
        outcomes["left_pending"] = repr(e)
    return outcomes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--report-dir", required=True)
    parser.add_argument("--mpi4py", action="store_true", help="import mpi4py (MPI_Init) before shmemcache")
    args, extra = parser.parse_known_args()

    comm = None
    if args.mpi4py:
        from mpi4py import MPI  # MPI_Init_thread happens here, before OpenSHMEM

    import pe_session
    import shmemcache

    status = 0
    with shmemcache.Cache() as cache:
        if args.mpi4py:
            world = MPI.COMM_WORLD
            comm = world.Split(1 if not cache.is_server else 0, world.Get_rank())
        marker = os.path.join(args.report_dir, "server.serving")
        if cache.is_server:
            serve_beside_main_thread(cache, marker)
            return 0
        rank = cache.client_rank
        pe_session.cache, pe_session.clients, pe_session.serving_marker = cache, comm, marker
        selection = [os.path.join(HERE, f) for f in sorted(os.listdir(HERE))
                     if f.startswith("test_") and f.endswith(".py") and f not in PHASE_2]
        if not args.mpi4py:
            selection += ["-m", "not mpi4py"]
        status = run_pytest(args.report_dir, rank, 1, selection, extra)
        pe_session.close_outcomes = close_from_threads(cache, b"py:close-race")
    # The cache is closed on every PE here (collective).
    pe_session.cache = cache
    status = status or run_pytest(args.report_dir, rank, 2, [os.path.join(HERE, f) for f in PHASE_2], extra)
    with open(os.path.join(args.report_dir, f"client{rank}.rc"), "w") as f:
        f.write(f"{status}\n")
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
