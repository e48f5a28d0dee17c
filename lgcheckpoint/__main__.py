"""``python -m lgcheckpoint`` is the ``lgcheckpoint`` command."""

import sys

from lgcheckpoint.cli import main

sys.exit(main())
