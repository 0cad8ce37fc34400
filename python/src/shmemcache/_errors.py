"""Statuses and exceptions: the one place that maps a shmemcache status to an exception class.

Every failed call raises ``Error`` or a subclass, with ``.status`` (a ``Status``) and the library's text.
A miss is not an error for ``get``/``get_into``/``delete`` (they return ``None``/``False``); the mapping
operations raise ``NotFound``, which is also a ``KeyError``.
"""
from __future__ import annotations

import enum
from typing import Optional

from . import _core

#: The C enum shmemcache_status_t, member names without the ``SHMEMCACHE_`` prefix.
Status = enum.IntEnum("Status", list(_core.STATUSES), module=__name__)
Status.__doc__ = "shmemcache_status_t: the C library's statuses (SHMEMCACHE_<NAME>)."


class Error(Exception):
    """A shmemcache call failed. ``status`` says how; ``str()`` is the library's text for it."""

    def __init__(self, message: str, status: Status) -> None:
        super().__init__(message)
        self.status = status


class NotFound(Error, KeyError):
    """``cache[key]`` / ``del cache[key]``: no pair for that key (``get`` returns None instead)."""

    def __init__(self, message: str, status: Status, key: object = None) -> None:
        super().__init__(message, status)
        self.key = key

    def __str__(self) -> str:  # KeyError would show repr(message)
        return str(self.args[0])


class InvalidArgument(Error, ValueError):
    """Bad input the library refused (empty key, a request already released, ...)."""


class KeyTooLong(Error, ValueError):
    """The key is longer than ``max_key_len``."""


class ValueTooLarge(Error, ValueError):
    """The value is longer than ``max_value_len``, or the pair cannot fit any block."""


class BufferTooSmall(Error, ValueError):
    """``get_into`` / ``iget``: the value does not fit the buffer; ``needed`` is its size."""

    def __init__(self, message: str, status: Status, needed: int = 0) -> None:
        super().__init__(message, status)
        self.needed = needed


class NoSpace(Error):
    """The server has no memory left for this pair."""


class WrongRole(Error):
    """A data call on a server PE, or ``serve()`` on a client PE."""


class SpillIOError(Error):
    """The SSD tier failed."""


class ConfigError(Error):
    """The configuration is unusable; the message says which setting to change."""


class ShutDown(Error):
    """The cache was closed (finalized)."""


class Exists(Error):
    """add: the key is present; store with a CAS token: the pair changed since the token (issue 15's calls)."""


class NotStored(Error):
    """replace / append / prepend: the key is absent (issue 15's calls)."""


class NotNumeric(Error):
    """incr: the stored value is not an unsigned decimal number of at most 20 digits (issue 15's calls)."""


class Timeout(Error):
    """A peer did not answer within op_timeout_ms; the message names the PE, ring and what was seen. Later calls
    that need that server raise it at once."""


class WrongThread(Error):
    """A call from another thread than the one that created the Cache while OpenSHMEM runs below
    SHMEM_THREAD_MULTIPLE (an application that started OpenSHMEM itself with plain shmem_init)."""


class NotSupported(Error):
    """shmemcache_arm (not exposed here): a server of the thread's requests in flight cannot wake this client."""


#: status -> exception class. Statuses without a row raise the base class Error.
_ERRORS: dict[Status, type[Error]] = {
    Status.NOT_FOUND: NotFound,
    Status.INVALID_ARGUMENT: InvalidArgument,
    Status.KEY_TOO_LONG: KeyTooLong,
    Status.VALUE_TOO_LARGE: ValueTooLarge,
    Status.BUFFER_TOO_SMALL: BufferTooSmall,
    Status.NO_SPACE: NoSpace,
    Status.WRONG_ROLE: WrongRole,
    Status.IO_ERROR: SpillIOError,
    Status.CONFIG_ERROR: ConfigError,
    Status.SHUT_DOWN: ShutDown,
    Status.EXISTS: Exists,
    Status.NOT_STORED: NotStored,
    Status.NOT_NUMERIC: NotNumeric,
    Status.TIMEOUT: Timeout,
    Status.WRONG_THREAD: WrongThread,
    Status.NOT_SUPPORTED: NotSupported,
}


def _make_error(status: int, needed: int, key: object, detail: str) -> Error:
    """Called by the extension for every failed call: the exception to raise."""
    status = Status(status)
    cls = _ERRORS.get(status, Error)
    message = _core.strerror(status) + (f": {detail}" if detail else "")
    if cls is BufferTooSmall:
        return BufferTooSmall(f"{message} (the value needs {needed} bytes)", status, needed)
    if cls is NotFound:
        return NotFound(f"{message}: {key!r}" if key is not None else message, status, key)
    return cls(message, status)


def error_for(status: int) -> Optional[type[Error]]:
    """The exception class a status raises (None for OK)."""
    status = Status(status)
    return None if status == Status.OK else _ERRORS.get(status, Error)


_core._set_error_factory(_make_error)
