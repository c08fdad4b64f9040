"""``python -m dpkmeans``: see :mod:`dpkmeans.cli`."""

from dpkmeans.cli import main

raise SystemExit(main())
