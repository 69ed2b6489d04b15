"""``python -m specdec_lite.bench``: see the package docstring."""

from . import main

main()
