"""``python -m oraclegap.book``: see :mod:`oraclegap.book`."""

import sys

from . import main

sys.exit(main())
