"""A Dask scheduler given by its address: the rule for the address and the
connection, for every entry that takes ``scheduler=`` (Dask is optional:
``pip install mfstein[dist]``).  Standard library only until a connection is made."""

from __future__ import annotations

import re
from typing import Any

from mfstein.ground.errors import ParameterError

#: ``[tcp|tls|ucx|ws|wss]://host:port``, ``host:port`` or an in-process scheduler's
#: ``inproc://host/pid/n`` (a ``LocalCluster(processes=False)``).
ADDRESS = re.compile(
    r"((tcp|tls|inproc|ucx|ws|wss)://)?[A-Za-z0-9_.\-\[\]:]+:\d{1,5}/?|inproc://[\w.\-/]+"
)


def check_scheduler_address(scheduler: Any) -> str:
    """Refuse at once (one sentence) what cannot be a scheduler's address, instead of
    after a connection timeout."""
    if not isinstance(scheduler, str) or not ADDRESS.fullmatch(scheduler):
        raise ParameterError(
            "scheduler must be the address of a running Dask scheduler, such as "
            f"tcp://127.0.0.1:8786, got {scheduler!r}."
        )
    return scheduler


def dask_client(scheduler: str) -> Any:
    """A ``dask.distributed.Client`` connected to ``scheduler`` (one sentence when Dask
    is not installed or nothing answers there)."""
    check_scheduler_address(scheduler)
    try:
        from dask.distributed import Client
    except ImportError:
        raise ParameterError(
            "scheduler needs dask.distributed, which is not installed; install mfstein[dist]."
        ) from None
    try:
        return Client(scheduler, timeout="10s", set_as_default=False)
    except Exception:  # OSError, TimeoutError, ValueError (bad address), ...
        raise ParameterError(
            "scheduler must be the address of a running Dask scheduler, could not "
            f"connect to {scheduler!r}."
        ) from None
