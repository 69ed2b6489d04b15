"""A wrong answer reads as feedback: the check's message, not a traceback through the package.

A graded cell ends with ``check_x(answer).assert_correct()``, which raises ``NotYet`` on a wrong answer.
Executed in a real kernel (nbclient, ipykernel), its error output is the message alone, in English or in
Chinese, with no frame of ``specdec_lite``; the cell still fails (an ``error`` output, what nbgrader scores
0). A student's own exception, raised in their code, keeps its traceback. One kernel for all of it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CJK = re.compile("[\u4e00-\u9fff]")

CELLS = [
    "import os\nfrom specdec_lite.exercises.part1 import check_tv\n\ndef tv(p, q):\n    return abs(p - q).sum()",
    "check_tv(tv).assert_correct()",  # English: the factor 1/2 is missing
    "os.environ['SPECDEC_LITE_LANGUAGE'] = 'zh_CN'\ncheck_tv(tv).assert_correct()",  # the same, in Chinese
    "def ratio(p, q):\n    return q / p\n\nratio(0.0, 1.0)",  # the student's own error
]


def test_a_failed_check_shows_its_message_and_a_student_error_its_traceback(monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.delenv("SPECDEC_LITE_LANGUAGE", raising=False)  # the kernel starts in English
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in CELLS])
    NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3").execute()
    setup, english, chinese, own = (next((o for o in c.outputs if o.output_type == "error"), None) for c in nb.cells)
    assert setup is None, setup
    for err, verdict in ((english, "Not yet."), (chinese, "还不对。")):
        assert err is not None and err.ename == "NotYet", err
        assert err.traceback == [err.evalue] and err.evalue.startswith(verdict), err
        assert "specdec_lite" not in err.evalue and "Traceback" not in err.evalue, err
    assert _CJK.search(chinese.evalue) and not _CJK.search(english.evalue)
    assert own is not None and own.ename == "ZeroDivisionError", own
    shown = _ANSI.sub("", "\n".join(own.traceback))
    assert len(own.traceback) > 1 and "in ratio" in shown and "return q / p" in shown, shown
