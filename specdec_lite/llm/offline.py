"""The shipped offline pair's command: ``python -m specdec_lite.llm.offline --check`` or ``--retrain``.

``--check`` verifies the shipped files against the SHA-256 hashes in their ``meta.json``;
``--retrain`` trains ``FallbackRecipe()`` again and says whether the files came out the
same (:func:`specdec_lite.llm.fallback.main`). A module of its own, so that running it
does not import :mod:`~specdec_lite.llm.fallback` twice.
"""

import sys

from .fallback import main

if __name__ == "__main__":
    sys.exit(main())
