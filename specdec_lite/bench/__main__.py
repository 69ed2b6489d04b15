"""``python -m specdec_lite.bench``: see the package docstring.

numpy's BLAS is pinned to one thread (``OPENBLAS_NUM_THREADS=1``, unless already set):
on a shared machine, BLAS threads that spin while waiting for a core make the
exact-theory timings erratic. The variable must be set before numpy loads, so the
command starts itself again once with it.
"""

import os
import sys

if "OPENBLAS_NUM_THREADS" not in os.environ:
    os.execve(
        sys.executable,
        [sys.executable, "-m", "specdec_lite.bench", *sys.argv[1:]],
        {**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )

from . import main  # noqa: E402

main()
