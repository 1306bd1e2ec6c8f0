"""The settings of the book's computation appendix (chapter ``computation``): how the experiments'
programs are batched, compiled and sharded, and how fast they run against this machine's limits.

The measurements themselves live beside the code they time: :func:`icdl.lsa.training.benchmark_batched_vs_loop`
and :func:`icdl.lsa.training.segments_table` (Hagiwara's training study), :func:`icdl.gpt_icl.speed.benchmark_table`
and :func:`icdl.gpt_icl.speed.speed` (ICDL sec. 5).
"""

from __future__ import annotations

from ..book.profiles import ProfileSet

PROFILES = ProfileSet(
    "computation",
    profiles={"quick": {"lsa_bench_steps": 20}, "reference": {"lsa_bench_steps": 100}},
    ranges={"lsa_bench_steps": (2, 10_000)},
)
