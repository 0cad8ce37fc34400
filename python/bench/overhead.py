"""Per-call overhead of Python bindings over the C call, for get and set of 32 B and 4 KiB values.

Run as a 2-PE job (PE 0 serves, PE 1 measures), from the repository root:

    scripts/oshrun.sh -np 2 PYTHON python/bench/overhead.py [--candidates DIR] [--batches 200] [--calls 1000]

Each batch times `calls` calls of the C library from a C loop (shmemcache._core._bench_loop: the baseline, same
process, same handle, same key) and then `calls` calls from a Python loop through each binding; the overhead of a
binding is (its per-call time - the C per-call time of the same batch). Reported: p50 and mean over the batches, in
ns, with the C time itself. The Python loop's own cost (`for _ in range`, ~15-20 ns) is part of the overhead, as it
is for a user. Candidates (python/bench/candidates/build.sh DIR): cffi, pybind11, nanobind, each calling the C
library on the same handle with the same get/set semantics; "capi" is the shipped extension (shmemcache.Cache).
Output: a table, then one JSON line per row.
"""
import argparse
import importlib
import json
import os
import statistics
import sys
import time

import shmemcache
from shmemcache import _core


def load_candidates(directory, cache):
    sys.path.insert(0, directory)
    address, max_len = _core._handle_address(cache), cache.config["max_value_len"]
    found = {}
    for name, module, factory in (("cffi", "cffi_cache", "CffiCache"), ("pybind11", "_sc_pybind11", "Cache"),
                                  ("nanobind", "_sc_nanobind", "Cache")):
        try:
            found[name] = getattr(importlib.import_module(module), factory)(address, max_len)
        except ImportError as e:
            print(f"overhead: candidate {name} not built ({e})", file=sys.stderr)
    return found


def time_calls(function, args, calls):
    r = range(calls)
    start = time.perf_counter_ns()
    for _ in r:
        function(*args)
    return (time.perf_counter_ns() - start) / calls


def measure(cache, impls, op, size, batches, calls):
    key, value = b"overhead:%d" % size, os.urandom(size)
    cache.set(key, value)
    c_times, over = [], {name: [] for name in impls}
    names = list(impls)
    for b in range(batches):
        c_ns = _core._bench_loop(cache, op, key, value, calls) / calls
        c_times.append(c_ns)
        for name in names[b % len(names):] + names[:b % len(names)]:  # rotate the order batch by batch
            args = (key,) if op == "get" else (key, value)
            over[name].append(time_calls(getattr(impls[name], op), args, calls) - c_ns)
    return [{"op": op, "size": size, "binding": name, "c_p50_ns": statistics.median(c_times),
             "c_mean_ns": statistics.fmean(c_times), "overhead_p50_ns": statistics.median(samples),
             "overhead_mean_ns": statistics.fmean(samples), "batches": batches, "calls": calls}
            for name, samples in over.items()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", help="directory built by python/bench/candidates/build.sh")
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    with shmemcache.Cache() as cache:
        if cache.is_server:
            cache.serve()
            return
        if cache.client_rank != 0:
            return
        impls = {"capi": cache}
        if args.candidates:
            impls.update(load_candidates(args.candidates, cache))
        rows = [row for size in (32, 4096) for op in ("get", "set")
                for row in measure(cache, impls, op, size, args.batches, args.calls)]
        print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        print(f"{'op':4} {'size':>5} {'binding':9} {'C p50':>8} {'C mean':>8} {'over p50':>9} {'over mean':>9}  (ns)")
        for r in rows:
            print(f"{r['op']:4} {r['size']:5} {r['binding']:9} {r['c_p50_ns']:8.0f} {r['c_mean_ns']:8.0f} "
                  f"{r['overhead_p50_ns']:9.0f} {r['overhead_mean_ns']:9.0f}")
        for r in rows:
            print(json.dumps(r))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
