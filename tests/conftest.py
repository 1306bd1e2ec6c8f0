import re

import pytest
import torch

#: math written as plain text, outside ``$…$``: a one-letter name with an underscore subscript (``d_x``,
#: ``L_f``, ``x_t``, ``|W_out|``), a caret power (``H^-1.8``, ``H^(−1/2)``, ``(w/4)^(2``), a TeX subscript
#: or superscript in braces, or a TeX command -- what a reader would see as code where a formula was meant
PSEUDO_MATH = re.compile(r"(?<![\w/.\-])[A-Za-zα-ωΑ-Ω]_[A-Za-z0-9({]|[A-Za-zα-ωΑ-Ω0-9)\]}|]\^[-−+({0-9A-Za-z]"
                         r"|\\[A-Za-z]+")


def pseudo_math(text: str) -> list[str]:
    """The pieces of ``text`` outside its ``$…$`` formulas that :data:`PSEUDO_MATH` finds."""
    plain = re.sub(r"\$[^$]*\$", " ", text)
    return [plain[max(0, m.start() - 12):m.end() + 12] for m in PSEUDO_MATH.finditer(plain)]


@pytest.fixture(autouse=True)
def _deterministic_torch():
    torch.manual_seed(0)
    yield
