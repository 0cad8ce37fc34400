"""shmemcache for Python: a distributed in-memory key-value cache inside an OpenSHMEM job.

Run every PE of the job with the same script (``oshrun -np 3 python3 app.py``)::

    import shmemcache

    with shmemcache.Cache() as cache:            # collective: every PE constructs it
        if cache.is_server:
            cache.serve()                        # until every client has closed its cache
        else:
            cache[b"answer"] = b"42"
            assert cache.get("answer") == b"42"  # str keys are UTF-8

``Cache`` is the C handle (``shmemcache_t``); keyword arguments are ``shmemcache_config_t`` fields. Failed
calls raise ``Error`` subclasses (see ``Status`` and ``_errors``). Threads may share a Cache: every library call
runs with the GIL released, so a thread blocked in a call (``serve()`` included) does not hold up the others.
"""
from ._core import (
    C_VERSION,
    MODE_ADD,
    MODE_APPEND,
    MODE_PREPEND,
    MODE_REPLACE,
    MODE_SET,
    Cache,
    Request,
    default_config,
    last_error,
    strerror,
)
from ._errors import (
    BufferTooSmall,
    ConfigError,
    Error,
    Exists,
    InvalidArgument,
    KeyTooLong,
    NoSpace,
    NotFound,
    NotNumeric,
    NotStored,
    ShutDown,
    SpillIOError,
    Status,
    Timeout,
    WrongThread,
    NotSupported,
    ValueTooLarge,
    WrongRole,
    error_for,
)

__version__ = "%d.%d.%d" % C_VERSION

__all__ = [
    "Cache", "Request", "Status", "Error", "NotFound", "InvalidArgument", "KeyTooLong", "ValueTooLarge",
    "BufferTooSmall", "NoSpace", "WrongRole", "SpillIOError", "ConfigError", "ShutDown", "Exists",
    "NotStored", "NotNumeric", "Timeout", "WrongThread", "NotSupported",
    "default_config", "last_error", "strerror", "error_for", "C_VERSION",
    "MODE_SET", "MODE_ADD", "MODE_REPLACE", "MODE_APPEND", "MODE_PREPEND",
]
