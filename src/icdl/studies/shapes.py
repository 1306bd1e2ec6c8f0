"""The shapes of the result files of the chapter studies (:mod:`icdl.studies`), registered with
:mod:`icdl.repro.schema` when the package is imported: each load and save checks the fields, the columns and
that the tables are not empty."""

from ..repro.schema import INTEGER, Fields, List, Table, register


def register_shapes() -> None:
    """Register every result file's shape with :mod:`icdl.repro.schema` (its package calls this on import;
    registering again is harmless)."""
    register("icgd_linear", "summary", {
        "settings": Fields({"d": INTEGER, "n": INTEGER, "prompts": INTEGER, "steps": INTEGER, "seed": INTEGER}),
        "summary": Table(numbers=("eta", "final risk (GD)", "final risk (transformer)", "least-squares risk",
                                  "max token spread", "max |ŵ − w_GD| over path"))})
    register("diffusion_score", "study", {
        "final_errors": Table(text=("method",), numbers=("H", "score_error")),
        "identity": Table(text=("f",), numbers=("constant", "difference", "dsm_risk", "se", "sm_risk")),
        "mean_errors": Table(text=("method",), numbers=("H", "score_error", "step")),
        "queries": Table(numbers=("H", "gd", "prompt", "score", "transformer", "x_query")),
        "theorem1": Table(numbers=("H", "eta_eps", "final_distance_to_gd", "step_deviation"), flags=("within",))})
    register("softmax", "fits", {
        "curves": Table(numbers=("heldout_relative", "hidden", "loss", "step", "train_relative")),
        "one_step": Table(numbers=("hidden", "max_error", "mean_error", "mean_step", "params", "relative")),
        "paths": Table(text=("route",), numbers=("distance", "risk_fitted", "risk_gd", "step")),
        "settings": Fields({"widths": List(INTEGER), "seed": INTEGER, "steps": INTEGER})})
