"""The reader's language, for the book's own code cells: ``from specdec_lite.i18n import _``.

A line a code cell of the book prints is written in English, with named placeholders,
and goes through :func:`_`, the package's gettext catalogue::

    print(_("oracle calls per run: {calls}").format(calls=...))

The English edition prints it as written; the Chinese edition (``SPECDEC_LITE_LANGUAGE=zh_CN``,
:data:`ENV`) prints its translation from ``specdec_lite/locale/zh_CN/LC_MESSAGES/specdec_lite.po``.
:func:`scientific` writes a small number for the prose, ``3.0 × 10⁻³``.
This module is the public face of the package's private ``_i18n``, which every other module uses.
"""

from ._i18n import ENV, _, language, scientific

__all__ = ["ENV", "_", "language", "scientific"]
