"""The ground: the light modules every layer of mfstein may import.

Errors and their one-sentence checks (:mod:`mfstein.ground.errors`,
:mod:`mfstein.ground.exceptions`), the parsing of numbers and arguments, the
limits, file writing and streams, the cache directory, compiled code and generated
source, signals and time limits, progress and display, the lazy exports and the
one table of fast paths.  The ground imports nothing of ``derive``, ``numeric``,
``sim`` or the command line (``tests/test_layers.py``); it has its own folder,
apart from the command line ``mfstein/cli/`` that sits on top of everything.
"""
