"""``python -m dpkmeans_classroom``: see :mod:`dpkmeans_classroom.commands`."""

from dpkmeans_classroom.commands import main

raise SystemExit(main())
