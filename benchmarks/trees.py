"""What the benchmarks that compare two checkouts (``--before`` / ``--tree``) share."""

from __future__ import annotations

import hashlib
import os
import tempfile


def tree_cache(tree: str) -> str:
    """An mfstein cache folder of its own for the child processes of checkout ``tree``
    (pass it as ``MFSTEIN_CACHE_DIR``).  Two checkouts sharing one cache take turns
    recompiling what the other compiled (a compiled function's cache stamp is the
    digest of its source files, :func:`mfstein.ground.jit.source_stamp`), so each
    timed first call would include a compilation: the first ``simulate`` took 6-8 s
    in both trees that way against about 1 s with a cache of its own, and the
    supermarket's exact solve at N = 320 some 1.6 s more."""
    digest = hashlib.sha1(os.path.abspath(tree).encode()).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), "mfstein-bench-trees", digest)
