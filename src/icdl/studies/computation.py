"""The settings of the book's computation appendix (chapter ``computation``): how the experiments'
programs are batched, compiled and sharded, and how fast they run against this machine's limits.

The measurements themselves live beside the code they time: :func:`icdl.lsa.training.benchmark_batched_vs_loop`
and :func:`icdl.lsa.training.segments_table` (Hagiwara's training study); :mod:`icdl.gpt_icl.core.measure`,
:mod:`icdl.gpt_icl.compute.speed`, :mod:`icdl.gpt_icl.reference` and :mod:`icdl.gpt_icl.compute.cost` (ICDL sec. 5). The
files ``results/computation/{speed,benchmark,timing}.<profile>.json`` are written by
``python -m icdl.gpt_icl --profile <profile>`` with ``--speed``, ``--benchmark`` and ``--workers 2``
(:data:`COMMANDS`).
"""

from __future__ import annotations

from ..repro.profiles import ProfileSet

PROFILES = ProfileSet(
    "computation",
    profiles={"quick": {"lsa_bench_steps": 20}, "reference": {"lsa_bench_steps": 100}},
    ranges={"lsa_bench_steps": (2, 10_000)},
)

#: the command that writes each measurement of the appendix (``{profile}`` filled in)
COMMANDS = {"speed": "python -m icdl.gpt_icl --profile {profile} --speed",
            "benchmark": "python -m icdl.gpt_icl --profile {profile} --benchmark",
            "timing": "python -m icdl.gpt_icl --profile {profile} --workers 2"}
