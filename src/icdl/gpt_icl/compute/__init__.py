"""What the models of ICDL sec. 5 cost to run (the book's computation appendix).

========  ===========================================================================================
``cost``  REB's cost comparison, measured, and its judge
``speed`` training steps timed against a same-run matmul and the HuggingFace GPT-2 block design
========  ===========================================================================================

FLOP counts and the machine's rates are the core's (:mod:`icdl.gpt_icl.core.measure`); the timing of the
whole reference run is :mod:`icdl.gpt_icl.reference`'s.
"""

from . import cost, speed

__all__ = ["cost", "speed"]
