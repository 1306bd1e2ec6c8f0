"""A training recipe fitted per attention and task, the incumbent in the grid (issue 67; chapter ``gpt_n01``).

============  ==========================================================================================
``scan``      the candidates, the profiles, the rule that picks a recipe per attention, flatness
``run``       training the runs (sharded, resumable) and writing the result
``__main__``  ``python -m icdl.gpt_icl.recipes --profile <task>``
============  ==========================================================================================
"""

from . import run, scan

__all__ = ["run", "scan"]
