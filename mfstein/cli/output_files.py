"""The check of a file a command will write (``--plot``, ``--csv``), before any work:
one sentence naming the option when it cannot be written.  Standard library only."""

from __future__ import annotations

import os
from pathlib import Path

from mfstein.ground.errors import ParameterError


def check_output_file(option: str, text: str, suffixes: tuple[str, ...]) -> Path:
    """The file ``option`` names, after checking that it can be written (nothing is
    created): its suffix one of ``suffixes``, its directory existing and writable,
    the file writable when it exists; a symbolic link is checked (and later written)
    through, at its target."""
    import tempfile

    from mfstein.ground.io import write_target

    path = write_target(text)
    if path.is_dir():
        raise ParameterError(f"{option} {text} is a directory; give a file name.")
    if Path(text).suffix.lower() not in suffixes:
        raise ParameterError(f"{option} must end in one of {', '.join(suffixes)}, got {text!r}.")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ParameterError(f"{option} {text}: the directory {parent} does not exist.")
    if path.exists() and not os.access(path, os.W_OK):
        raise ParameterError(f"{option} {text} exists and is not writable.")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".mfstein-out-", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError:
        raise ParameterError(f"{option} {text}: the directory {parent} is not writable.") from None
    return Path(text)
