"""ICDL objective 4 (Fig. 7, chapter ``gpt_depth``): is a deeper transformer a better in-context learner?

=========  ==========================================================================================
``study``  the profiles, the models of every depth and seed, the study and its result file
``judge``  the verdict on intervals over seeds and prompts: the smallest gain from shallow to deep
=========  ==========================================================================================
"""

from . import judge, study

__all__ = ["judge", "study"]
