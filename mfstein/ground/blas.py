"""How many BLAS threads mfstein's own hot loops use (threadpoolctl).

In the ground (:mod:`numeric.precision` re-exports these names) so that a
caller that only limits threads -- the exact solver's first call -- does not
import mpmath.  Standard library and threadpoolctl (when used) only.
"""

from __future__ import annotations

import contextlib
from typing import Any

from mfstein.ground.errors import check_int

#: Environment variable that sets how many BLAS/OpenMP threads mfstein's own
#: hot loops may use (default 1; ``0`` or ``all`` leaves the libraries' default).
BLAS_THREADS_ENV = "MFSTEIN_BLAS_THREADS"


def blas_thread_limit() -> int | None:
    """Threads allowed to BLAS inside mfstein's hot loops (``None``: no limit).

    Read from ``$MFSTEIN_BLAS_THREADS`` on each call: a positive integer, or
    ``0``/``all`` for the libraries' own default.  The default is 1, because the
    loops call BLAS on small or medium matrices many times and, on a shared
    machine, threads that wait for busy cores make them 20--300x slower.
    """
    import os

    text = os.environ.get(BLAS_THREADS_ENV, "1").strip().lower()
    if text in ("0", "all", "", "none"):
        return None
    return check_int(BLAS_THREADS_ENV, text, 1)


class limited_blas(contextlib.ContextDecorator):
    """Context manager limiting BLAS threads to :func:`blas_thread_limit` (threadpoolctl).

    A no-op when the limit is ``None`` or threadpoolctl is missing.  Nested uses
    are cheap: only the outermost one talks to threadpoolctl.  Also a decorator
    (``@limited_blas()``): each call of the decorated function runs under the
    limit.

    Override the limit with the environment variable ``MFSTEIN_BLAS_THREADS``
    (:data:`BLAS_THREADS_ENV`): a number of threads, or ``all`` for the
    libraries' own default.
    """

    def _recreate_cm(self) -> limited_blas:
        return type(self)()  # a fresh instance per call: re-entrant, thread-safe state

    _depth = 0
    #: (number of imported modules, ThreadpoolController): scanning the loaded
    #: libraries costs milliseconds, so it is redone only after new imports.
    _controller: tuple[int, Any] | None = None

    @classmethod
    def _get_controller(cls) -> Any:
        import sys

        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - a declared dependency
            return None
        if cls._controller is None or cls._controller[0] != len(sys.modules):
            cls._controller = (len(sys.modules), ThreadpoolController())
        return cls._controller[1]

    def __enter__(self) -> limited_blas:
        cls = type(self)
        self._ctl = None
        if cls._depth == 0:
            n = blas_thread_limit()
            controller = self._get_controller() if n is not None else None
            if controller is not None:
                self._ctl = controller.limit(limits=n, user_api="blas")
        cls._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        type(self)._depth -= 1
        if self._ctl is not None:
            self._ctl.restore_original_limits()
