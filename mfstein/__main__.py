"""``python -m mfstein`` runs the console dispatcher."""

import sys

from mfstein.cli import main

sys.exit(main())
