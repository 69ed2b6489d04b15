"""``python -m specdec_lite.classroom``: see the package's docstring."""

from specdec_lite.classroom.cli import main

raise SystemExit(main())
