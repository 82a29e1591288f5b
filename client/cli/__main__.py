"""``python -m client.cli``: the same as the ``solitaire`` command."""

from __future__ import annotations

import sys

from client.cli.program import main

sys.exit(main())
