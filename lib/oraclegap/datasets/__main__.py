"""``python -m oraclegap.datasets``: see :mod:`oraclegap.datasets.cli`."""

import sys

from .cli import main

sys.exit(main())
