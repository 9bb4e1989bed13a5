"""``python -m mfstein.cli`` runs the console dispatcher (as ``python -m mfstein``)."""

import sys

from mfstein.cli import main

sys.exit(main())
