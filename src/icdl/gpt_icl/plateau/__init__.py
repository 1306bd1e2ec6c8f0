"""The context-mean plateau, measured (chapter ``gpt_plateau``): a finding of ours, not a claim of ICDL.

=========  ==========================================================================================
``study``  the profiles, the runs from scratch on three target families, the shortcut analysis, the file
=========  ==========================================================================================
"""

from . import study

__all__ = ["study"]
