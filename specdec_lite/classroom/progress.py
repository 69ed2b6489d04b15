"""The instructor's progress bar while a class is graded: graded, failed, remaining and an ETA (tqdm)."""

from __future__ import annotations

import sys

from .._i18n import _


class Progress:
    """graded / failed / remaining and an ETA on the instructor's terminal (tqdm); nothing when not a terminal."""

    def __init__(self, total: int, show: bool | None) -> None:
        from tqdm import tqdm

        show = sys.stderr.isatty() if show is None else show
        self.bar = tqdm(total=total, desc=_("grading"), unit=_("submission"), disable=not show, file=sys.stderr)
        self.graded = self.failed = 0
        self.total = total
        self._post()

    def _post(self) -> None:
        left = self.total - self.graded - self.failed
        self.bar.set_postfix_str(
            _("{graded} graded, {failed} failed, {left} remaining").format(
                graded=self.graded, failed=self.failed, left=left
            )
        )

    def step(self, ok: bool) -> None:
        if ok:
            self.graded += 1
        else:
            self.failed += 1
        self._post()
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()
