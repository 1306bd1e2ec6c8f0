"""The committed files each chapter needs, declared: its result files, the ledgers its claims are recorded in,
and the checkpoints its figures and judges read. ``tests/test_required_files.py`` fails when a declared file is
missing (deleted, or never committed: a verdict would vanish from the book with CI green) and when a committed
file under ``results/`` is not declared here (so the list stays whole). Removing a file therefore means
removing it here too, in the same reviewed change."""

from __future__ import annotations

#: the models of main-study profile n01, every one committed (three seeds, target depths 3, 4, 6, both attentions;
#: seed 0's files carry no seed in their name), made by python -m icdl.gpt_icl --profile n01 --part main
N01_MODELS = tuple(f"gpt_{f'seed{seed}_' if seed else ''}depth{depth}_{attention}"
                     for seed in range(3) for depth in (3, 4, 6) for attention in ("relu", "softmax"))

#: the models of main-study profile fitted whose training has finished, committed (seed 0's file names carry no seed)
FITTED_DONE: tuple[str, ...] = (
    "gpt_depth3_softmax", "gpt_depth3_relu", "gpt_seed1_depth3_softmax", "gpt_seed1_depth3_relu",
    "gpt_depth4_softmax", "gpt_depth4_relu", "gpt_seed1_depth4_softmax", "gpt_seed1_depth4_relu",
    "gpt_depth6_softmax", "gpt_depth6_relu", "gpt_seed1_depth6_softmax", "gpt_seed1_depth6_relu",
    "gpt_seed2_depth3_softmax", "gpt_seed2_depth3_relu", "gpt_seed2_depth4_softmax", "gpt_seed2_depth4_relu",
    "gpt_seed2_depth6_softmax", "gpt_seed2_depth6_relu",
)

#: the runs of the recipe scan at n01 (python -m icdl.gpt_icl.recipes --profile n01 at b27c12e), every one at the
#: horizon (the command without --shard assembled recipes.n01.json from them at that commit)
RECIPES_N01_DONE: tuple[str, ...] = tuple(f"recipe_{c}_{a}_seed{r}" for r in (0, 1) for a in ("softmax", "relu")
                                          for c in ("incumbent", "cosine"))

#: the runs of the recipe scan on ICDL's task committed so far (python -m icdl.gpt_icl.recipes --profile icdl at
#: bebc64f, one thread, each committed as it finished; the scan is in progress: pins.IN_PROGRESS, and the command
#: resumes), declared by gpt_n01, which will show the scan once its result is written
RECIPES_ICDL_DONE: tuple[str, ...] = (*(f"recipe_{c}_{a}_seed0" for a in ("softmax", "relu")
                                         for c in ("incumbent", "cosine")),
                                      *(f"recipe_{c}_softmax_seed1" for c in ("incumbent", "cosine")),
                                      "recipe_incumbent_relu_seed1")

#: the models of the design trained until flat, every one at the horizon (python -m icdl.gpt_icl --profile n01-flat
#: --part main --depths D --seeds S at ac0550a), committed as each finished
FLAT_DONE: tuple[str, ...] = tuple(f"gpt_{seed}depth{depth}_{att}" for depth in (3, 4, 6)
                                   for seed in ("", "seed1_", "seed2_") for att in ("softmax", "relu"))
#: its MLP's files (icdl.gpt_icl.core.paired_mlp: the curves' cache per target depth and, per target depth, paired set
#: and MLP position, the block errors), every one (python -m icdl.gpt_icl.core.paired_mlp --profile n01-flat --shard
#: 1/2 at 9383519; --shard 0/2 started there, stopped, and resumed to the end at bebc64f, where the same computation
#: lives in core.mlp_blocks -- moved at 44507d5, a resumed cache tested bit for bit against one call); the run reads
#: them
FLAT_MLP_DONE: tuple[str, ...] = (
    *(f"baselines_depth{depth}.json" for depth in (3, 4, 6)),
    *(f"mlp_depth{depth}_paired{shift}_q{q}.json" for depth in (3, 4, 6) for shift in ("", "_mu-0.5", "_mu0.5")
      for q in (6, 21, 40)),
)

#: the (task, target depth) units of the power check's seeds run, every one committed (the design registered at
#: 9936b75, issue 68: none run yet; the first design's six units and result are in git at 4791d03)
POWER_UNITS_DONE: tuple[str, ...] = ()

#: the target depths of the mechanism study's seeds-n01 run, every one committed (python -m
#: icdl.gpt_icl.mechanism --profile seeds-n01 at 2724e0d assembled mechanism.seeds-n01.json from them)
MECHANISM_N01_DONE = (3, 4, 6)

#: chapter id (``mutation``: the mutation run of ``tests/mutation.py``; ``pins``: :mod:`icdl.repro.pins`' manifest)
#: -> the committed files it needs
REQUIRED: dict[str, tuple[str, ...]] = {
    "attention_passes": (
        "results/ledger/attention_passes.quick.json",
    ),
    "computation": (
        "results/computation/benchmark.reference.json",
        "results/computation/speed.reference.json",
        "results/computation/timing.reference.json",
        "results/ledger/computation.quick.json",
    ),
    "diffusion_score": (
        "results/diffusion_score/study.reference.json",
        "results/ledger/diffusion_score.quick.json",
    ),
    "gpt_depth": (
        "results/gpt_depth/checkpoints/reference/score_L10_seed0.json",
        "results/gpt_depth/checkpoints/reference/score_L10_seed1.json",
        "results/gpt_depth/checkpoints/reference/score_L10_seed2.json",
        "results/gpt_depth/checkpoints/reference/score_L4_seed0.json",
        "results/gpt_depth/checkpoints/reference/score_L4_seed1.json",
        "results/gpt_depth/checkpoints/reference/score_L4_seed2.json",
        "results/gpt_depth/checkpoints/reference/score_L6_seed0.json",
        "results/gpt_depth/checkpoints/reference/score_L6_seed1.json",
        "results/gpt_depth/checkpoints/reference/score_L6_seed2.json",
        "results/gpt_depth/checkpoints/reference/score_L8_seed0.json",
        "results/gpt_depth/checkpoints/reference/score_L8_seed1.json",
        "results/gpt_depth/checkpoints/reference/score_L8_seed2.json",
        "results/gpt_depth/depth.reference.json",
        "results/ledger/gpt_depth.quick.json",
    ),
    "gpt_icl": (
        "results/gpt_icl/checkpoints/reference/baselines_depth3.json",
        "results/gpt_icl/checkpoints/reference/baselines_depth4.json",
        "results/gpt_icl/checkpoints/reference/baselines_depth6.json",
        "results/gpt_icl/checkpoints/reference/gpt_depth3_relu.pt",
        "results/gpt_icl/checkpoints/reference/gpt_depth3_relu.pt.json",
        "results/gpt_icl/checkpoints/reference/gpt_depth3_softmax.pt",
        "results/gpt_icl/checkpoints/reference/gpt_depth3_softmax.pt.json",
        "results/gpt_icl/checkpoints/reference/gpt_depth4_relu.pt",
        "results/gpt_icl/checkpoints/reference/gpt_depth4_relu.pt.json",
        "results/gpt_icl/checkpoints/reference/gpt_depth4_softmax.pt",
        "results/gpt_icl/checkpoints/reference/gpt_depth4_softmax.pt.json",
        "results/gpt_icl/checkpoints/reference/gpt_depth6_relu.pt",
        "results/gpt_icl/checkpoints/reference/gpt_depth6_relu.pt.json",
        "results/gpt_icl/checkpoints/reference/gpt_depth6_softmax.pt",
        "results/gpt_icl/checkpoints/reference/gpt_depth6_softmax.pt.json",
        # profile n01's eighteen models (9 500 steps each), which its result and the mechanism's n01 run read
        *(f"results/gpt_icl/checkpoints/n01/{name}{suffix}"
          for name in N01_MODELS for suffix in (".pt", ".pt.json")),
        # profile fitted's models finished so far (its run goes on from them, at the commit that trained the first;
        # the models of an earlier start, before its claims were registered at dcdbd53, are discarded)
        *(f"results/gpt_icl/checkpoints/fitted/{name}{suffix}"
          for name in FITTED_DONE for suffix in (".pt", ".pt.json")),
        "results/gpt_icl/icl.fitted.json",
        "results/gpt_icl/icl.n01.json",
        "results/gpt_icl/icl.reference.json",
        "results/gpt_icl/shift.fitted.json",
        "results/gpt_icl/shift.n01.json",
        "results/gpt_icl/shift.reference.json",
        "results/ledger/gpt_icl.quick.json",
    ),
    "gpt_mechanism": (
        "results/gpt_mechanism/mechanism.control.json",
        "results/gpt_mechanism/mechanism.seeds.json",
        "results/gpt_mechanism/mechanism.seeds-n01.json",
        "results/ledger/gpt_mechanism.quick.json",
        # the power check (python -m icdl.gpt_icl.mechanism.power --profile seeds): its units, each kept as it
        # finishes (its result, power.seeds.json, joins them once the run is committed)
        # ... and its run at the tests' sizes (--profile quick at 98ab1d9), a look at the design's workings that
        # judges nothing
        "results/gpt_mechanism/power.quick.json",
        *(f"results/gpt_mechanism/checkpoints/seeds/power_{unit}.json" for unit in POWER_UNITS_DONE),
        *(f"results/gpt_mechanism/checkpoints/seeds-n01/mechanism_depth{d}.json" for d in MECHANISM_N01_DONE),
    ),
    "gpt_n01": (
        *(f"results/gpt_n01/checkpoints/recipes_n01/{name}{suffix}"
          for name in RECIPES_N01_DONE for suffix in (".pt", ".pt.json")),
        "results/gpt_n01/recipes.n01.json",
        *(f"results/gpt_n01/checkpoints/recipes_icdl/{name}{suffix}"
          for name in RECIPES_ICDL_DONE for suffix in (".pt", ".pt.json")),
        "results/gpt_icl/icl.n01-flat.json",  # the design trained until flat, judged here
        "results/gpt_icl/shift.n01-flat.json",
        *(f"results/gpt_icl/checkpoints/n01-flat/{name}{suffix}"
          for name in FLAT_DONE for suffix in (".pt", ".pt.json")),
        *(f"results/gpt_icl/checkpoints/n01-flat/{name}" for name in FLAT_MLP_DONE),
        "results/gpt_n01/scan.icdl.json",
        "results/gpt_n01/scan.n01.json",
        "results/ledger/gpt_n01.quick.json",
    ),
    "gpt_plateau": (
        "results/gpt_plateau/plateau.reference.json",
    ),
    "gpt_scale": (
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth3_relu.pt",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth3_relu.pt.json",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth3_softmax.pt",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth3_softmax.pt.json",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth4_relu.pt",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth4_relu.pt.json",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth4_softmax.pt",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth4_softmax.pt.json",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth6_relu.pt",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth6_relu.pt.json",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth6_softmax.pt",
        "results/gpt_scale/checkpoints/reference/gpt_scale_depth6_softmax.pt.json",
        "results/gpt_scale/scale.reference.json",
        "results/gpt_scale/scale.wide.json",
        "results/ledger/gpt_scale.quick.json",
    ),
    "gradient_decomposition": (
        "results/ledger/gradient_decomposition.quick.json",
        "results/ledger/gradient_decomposition.reference.json",
    ),
    "icgd_linear": (
        "results/icgd_linear/summary.quick.json",
        "results/icgd_linear/summary.reference.json",
        "results/ledger/icgd_linear.quick.json",
        "results/ledger/icgd_linear.reference.json",
    ),
    "icgd_transformer": (
        "results/ledger/icgd_transformer.quick.json",
    ),
    "lsa_construction": (
        "results/ledger/lsa_construction.quick.json",
    ),
    "lsa_training": (
        "results/ledger/lsa_training.quick.json",
        "results/lsa_training/benchmark.l1e-3.json",
        "results/lsa_training/benchmark.l1e-4.json",
        "results/lsa_training/benchmark.nol1-sized.json",
        "results/lsa_training/benchmark.nol1.json",
        "results/lsa_training/benchmark.reference.json",
        "results/lsa_training/checkpoint.l1e-3.pt",
        "results/lsa_training/checkpoint.l1e-3.pt.json",
        "results/lsa_training/checkpoint.l1e-4.pt",
        "results/lsa_training/checkpoint.l1e-4.pt.json",
        "results/lsa_training/checkpoint.nol1-sized.pt",
        "results/lsa_training/checkpoint.nol1-sized.pt.json",
        "results/lsa_training/checkpoint.nol1.pt",
        "results/lsa_training/checkpoint.nol1.pt.json",
        "results/lsa_training/checkpoint.reference.pt",
        "results/lsa_training/checkpoint.reference.pt.json",
        "results/lsa_training/training.l1e-3.json",
        "results/lsa_training/training.l1e-4.json",
        "results/lsa_training/training.nol1-sized.json",
        "results/lsa_training/training.nol1.json",
        "results/lsa_training/training.reference.json",
    ),
    "mutation": (
        "results/mutation/mutation.json",
    ),
    "pins": (  # the sha256 of every committed result no ledger pins (icdl.repro.pins)
        "results/pins.json",
    ),
    "relu_sums": (
        "results/ledger/relu_sums.quick.json",
    ),
    "softmax": (
        "results/ledger/softmax.quick.json",
        "results/softmax/fits.reference.json",
    ),
}
