"""Which optimiser settings let the model learn a task, chosen on validation prompts before any judged run
(chapter ``gpt_n01``).

============  ==========================================================================================
``scan``      the profiles (one per task), the grid, the runs, the rule that picks a schedule, the file
``__main__``  ``python -m icdl.gpt_icl.schedules --profile <task>``
============  ==========================================================================================
"""

from . import scan

__all__ = ["scan"]
