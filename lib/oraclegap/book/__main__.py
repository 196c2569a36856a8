"""``python -m oraclegap.book``: see `oraclegap.book`."""

import sys

from .cli import main

sys.exit(main())
