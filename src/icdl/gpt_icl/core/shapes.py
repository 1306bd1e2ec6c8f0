"""The shapes of the result files of ICDL sec. 5's studies (chapters ``gpt_icl``, ``gpt_depth``, ``gpt_plateau``,
``gpt_scale``, ``gpt_mechanism`` and the computation appendix's measurements), registered with
:mod:`icdl.repro.schema` when :mod:`icdl.gpt_icl` is imported: every load and save of such a file checks its
fields, the columns of its tables and that the tables a chapter reads are not empty."""

from icdl.gpt_icl.core.intervals import BLOCKS
from icdl.repro.schema import (
    ANY,
    FINITE,
    FLAG,
    INTEGER,
    NUMBER,
    SQUARES,
    TEXT,
    Fields,
    Keyed,
    List,
    Rows,
    Table,
    register,
)

_MODEL = ("attention",)
_HISTORY = Table(text=_MODEL, numbers=("dims", "examples", "loss", "step"))
_JOBS = Rows({"command": TEXT, "log": TEXT, "name": TEXT, "returncode": INTEGER, "seconds": NUMBER,
              "start_s": NUMBER})

#: the sums per block of prompts behind the intervals (icdl.gpt_icl.core.intervals): a model's (seed >= 0) or a
#: baseline's (seed -1) squared error per block, and the labels' sums per block, per judged set and position --
#: squared errors, counts and sums of squares finite and never negative, the labels' sums finite (one NaN would
#: spread to every resample; a negative squared error would pass for a very good model)
_SSE = List(SQUARES)
_LABEL_SUMS = {"n": List(SQUARES), "sy": List(FINITE), "syy": List(SQUARES)}
_BLOCKS = Rows({"depth": INTEGER, "model": TEXT, "seed": INTEGER, "set": TEXT, "position": INTEGER, "sse": _SSE})
_LABELS = Rows({"depth": INTEGER, "set": TEXT, "position": INTEGER, **_LABEL_SUMS})


#: the mechanism's measures' sums per block of prompts (mechanism.measures.block_measures), for intervals; cos is
#: empty for a candidate without sensitivities; the counts and sums of squares finite and never negative
_MEASURE_SQUARES = ("n", "own", "pred", "sens")
_MECH_BLOCKS = Table(text=("attention", "candidate", "mixture"),
                     numbers=("block", "cos", "depth", "n", "own", "position", "pred", "sens"), nullable=("cos",),
                     squares=_MEASURE_SQUARES)
_POWER_BLOCKS = Table(text=("attention", "candidate", "mixture", "task"),
                      numbers=("block", "cos", "depth", "n", "own", "position", "pred", "sens"), nullable=("cos",),
                      squares=_MEASURE_SQUARES)


def register_shapes() -> None:
    """Register every result file's shape with :mod:`icdl.repro.schema` (its package calls this on import;
    registering again is harmless)."""
    register(
        "gpt_icl",
        "icl",
        {
            "baselines": Table(text=("method", "mixture"), numbers=("depth", "position", "r2")),
            "curves": Table(
                text=("attention", "mixture"), numbers=("depth", "hi", "lo", "position", "r2", "seed", "steps")
            ),
            "history": Table(text=_MODEL, numbers=("depth", "dims", "examples", "loss", "seed", "step")),
            "blocks": _BLOCKS,
            "labels": _LABELS,
            "models": Rows({"depth": INTEGER, "attention": TEXT, "seed": INTEGER, "steps": INTEGER, "sha256": TEXT}),
            "complete": FLAG,
            "seconds": NUMBER,
        },
    )
    register("gpt_icl", "shift", {
        "curves": Table(text=_MODEL, numbers=("depth", "mu", "position", "r2", "seed")),
        "baselines": Table(text=("method", "set"), numbers=("depth", "position", "r2")),
        "blocks": _BLOCKS, "labels": _LABELS, "complete": FLAG})
    register("gpt_depth", "depth", {
        "table": Table(text=_MODEL, numbers=("examples", "hi", "lo", "n_layer", "r2")),
        "baselines": Table(text=("method",), numbers=("examples", "r2")),
        "history": Table(text=_MODEL, numbers=("dims", "examples", "loss", "n_layer", "step")),
        "training": Table(text=_MODEL, numbers=("n_layer", "seconds", "steps")),
        "complete": FLAG, "seconds": NUMBER}, optional={
        # a run with seeds (the experiments' protocol) stores its sums per block and the models it scored; the
        # one-seed runs before it did not, and are judged on their point value alone
        "blocks": Rows({"n_layer": INTEGER, "model": TEXT, "seed": INTEGER, "examples": INTEGER, "sse": _SSE}),
        "labels": Rows({"examples": INTEGER, **_LABEL_SUMS}),
        "models": Rows({"n_layer": INTEGER, "attention": TEXT, "seed": INTEGER, "steps": INTEGER, "sha256": TEXT})})
    # a schedule scan (icdl.gpt_icl.schedules.scan): every run's validation curve, the yardsticks on its prompts
    register("gpt_n01", "scan", {
        "history": Table(numbers=("lr", "batch", "step", "loss", "val_r2", "val_context_mean")),
        "levels": Fields({"context_mean": NUMBER, "least_squares": NUMBER}),
        "runs": Table(numbers=("lr", "batch", "steps", "seconds")), "complete": FLAG})
    # the recipe scan (icdl.gpt_icl.recipes.scan): every run's validation curve, per candidate, attention and seed;
    # the yardsticks on each seed's validation prompts; each run's steps and seconds
    register("gpt_n01", "recipes", {
        "history": Table(text=("candidate", "attention"),
                         numbers=("replicate", "step", "loss", "val_r2", "val_context_mean")),
        "levels": Table(numbers=("replicate", "context_mean", "least_squares")),
        "runs": Table(text=("candidate", "attention"), numbers=("replicate", "steps", "seconds")), "complete": FLAG})
    # the MLP baselines of one target depth, cached beside the main study's checkpoints (core.evaluation)
    register("gpt_icl", "checkpoints/baselines", {
        "rows": Table(text=("method", "mixture"), numbers=("position", "r2")), "settings": Fields({"seed": INTEGER})})
    # one (target depth, paired set, MLP position)'s block errors beside the checkpoints (core.paired_mlp): per block
    # of prompts, the squared error summed over its prompts after every epoch
    register("gpt_icl", "checkpoints/mlp", {
        "blocks": Keyed(List(SQUARES)),
        "settings": Fields({"seed": INTEGER, "depth": INTEGER, "prompts": INTEGER, "position": INTEGER,
                            "blocks": INTEGER, "set": TEXT})})
    # one unit's scores (a model depth and seed) beside its checkpoints, which the depth result is assembled from:
    # each squared error summed over the design's BLOCKS blocks of prompts (icdl.gpt_icl.depth.study._blocks), the
    # scores finite (the rows the design asks for: icdl.gpt_icl.depth.study._stored_unit)
    unit = {"n_layer": INTEGER, "attention": TEXT, "seed": INTEGER}
    register("gpt_depth", "checkpoints/score", {
        "blocks": Rows({"n_layer": INTEGER, "model": TEXT, "seed": INTEGER, "examples": INTEGER,
                        "sse": List(SQUARES, length=BLOCKS)}),
        "table": Rows({**unit, "examples": INTEGER, "r2": FINITE, "lo": FINITE, "hi": FINITE}),
        "models": Rows({**unit, "steps": INTEGER, "sha256": TEXT}),
        "training": Rows({**unit, "seconds": NUMBER, "steps": INTEGER}),
        "history": Rows({**unit, "step": INTEGER, "loss": NUMBER}),
        "settings": Fields({"models": ANY, "test": ANY})})
    register("gpt_plateau", "plateau", {
        "history": Table(text=("family",), numbers=("dims", "examples", "loss", "step", "val_context_mean", "val_r2")),
        "levels": Table(text=("family",), numbers=("context_mean", "least_squares")),
        "summary": Table(text=("family",), numbers=("context_mean", "final_excess", "final_r2", "least_squares",
                                                     "left_at_step", "linear_share_of_within", "within_share"),
                         nullable=("left_at_step",)),
        "shortcut": Table(numbers=("position", "r2 model", "r2 context mean", "r2 shortcut")),
        "complete": FLAG})
    register("gpt_scale", "scale", {
        "boot": Keyed(Table(numbers=("mlp@mlp", "least_squares@all", "context_mean@all", "knn@all"))),
        "curves": Table(text=_MODEL, numbers=("depth", "position", "r2", "step")),
        # a run too short for a trend (the wide profile's) fits no line: its table may be empty
        "fits": Table(text=_MODEL, numbers=("depth", "per_doubling", "per_doubling_lo", "per_doubling_hi", "forecast",
                                            "forecast_lo", "forecast_hi", "shortfall_first", "shortfall_last"),
                      min_rows=0),
        "history": Table(text=_MODEL, numbers=("depth", "dims", "examples", "loss", "step")),
        "jobs": _JOBS,
        "points": Table(text=("attention", "method"), numbers=("depth", "obj1", "r2_all", "r2_mlp_prompts", "step")),
        "shift": Table(text=_MODEL, numbers=("depth", "mu", "r2", "step")),
        "trend": Table(text=_MODEL, numbers=("depth", "step", "r2", "shortfall", "shortfall_lo", "shortfall_hi",
                                             "lead_knn", "lead_knn_lo", "lead_knn_hi", "lead_ls", "lead_ls_lo",
                                             "lead_ls_hi")),
        "complete": FLAG, "seconds": NUMBER})
    mechanism = {
        "alignment": Table(text=("attention", "candidate", "mixture"),
                           numbers=("cosine", "depth", "position", "pred_diff", "r2_candidate", "sens_diff")),
        "chosen": Table(text=_MODEL, numbers=("depth", "gd_eta", "gd_init_scale", "gd_pred_diff", "gd_steps",
                                              "ridge_lambda", "ridge_pred_diff")),
        "examples": Table(text=("attention", "candidate", "mixture"),
                          numbers=("coordinate", "depth", "prompt", "sensitivity")),
        "gd_scan": Table(text=_MODEL, numbers=("depth", "eta", "init_scale", "pred_diff", "steps")),
        "complete": FLAG,
        "seconds": NUMBER,
    }
    # the measures' sums per block of prompts, for intervals: written since the positive control (the control's run)
    for stem in ("mechanism", "checkpoints/mechanism"):  # the result, and each depth's part while the run goes on
        register("gpt_mechanism", stem, mechanism, optional={"blocks": _MECH_BLOCKS})
    # the power check's planted models (icdl.gpt_icl.mechanism.power): the sums per block of every task and depth,
    # and each (task, depth) unit's own file beside them while the run goes on (resumed from these)
    register("gpt_mechanism", "power", {"blocks": _POWER_BLOCKS, "complete": FLAG, "seconds": NUMBER})
    register("gpt_mechanism", "checkpoints/power", {"blocks": _POWER_BLOCKS, "seconds": NUMBER})
    register("computation", "timing", {
        "jobs": Rows({"command": TEXT, "name": TEXT, "returncode": INTEGER, "seconds": NUMBER, "start_s": NUMBER}),
        "complete": FLAG, "cpus": INTEGER, "wall_s": NUMBER, "workers": INTEGER})
    register("computation", "benchmark", {
        "cases": Rows({"batched_s": NUMBER, "depth": INTEGER, "loop_s_extrapolated": NUMBER, "prompts": INTEGER,
                       "speedup": NUMBER, "roofline_s": NUMBER, "products_s": NUMBER}),
        "threads": INTEGER})
    register(
        "computation",
        "speed",
        {
            "runs": Rows(
                {
                    "steps_per_s": NUMBER,
                    "matmul_flops": NUMBER,
                    "share_of_matmul": NUMBER,
                    "achieved_flops": NUMBER,
                    "processes": INTEGER,
                    "threads": INTEGER,
                    "round": INTEGER,
                }
            ),
            "side_by_side": Fields(
                {
                    "rows": Rows({"variant": TEXT, "steps_per_s": NUMBER, "share_of_matmul": NUMBER, "round": INTEGER}),
                    "steps": INTEGER,
                    "rounds": INTEGER,
                    "threads": INTEGER,
                }
            ),
            "flops_per_step": INTEGER,
            "rounds": INTEGER,
            "steps": INTEGER,
            "threads": INTEGER,
        },
    )
