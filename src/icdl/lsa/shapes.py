"""The shapes of the result files of Hagiwara's training study (chapter ``lsa_training``), registered with
:mod:`icdl.repro.schema` when :mod:`icdl.lsa` is imported: a benchmark or a training result whose fields are
missing or of the wrong kind is refused by name before it is read or copied into another result."""

from ..repro.schema import FLAG, INTEGER, NUMBER, TEXT, Fields, List, Rows, Table, register

_BENCHMARK = {"method": List(TEXT), "seconds": List(NUMBER), "speedup": List(NUMBER), "threads": List(INTEGER),
              "run_steps_per_s": List(NUMBER), "protocol_hours": List(NUMBER)}


def register_shapes() -> None:
    """Register every result file's shape with :mod:`icdl.repro.schema` (its package calls this on import;
    registering again is harmless)."""
    register("lsa_training", "benchmark", _BENCHMARK)
    register(
        "lsa_training",
        "training",
        {
            "W_in_abs": List(List(NUMBER)),
            "W_out_abs": List(List(NUMBER)),
            "benchmark": Table(text=("method",), numbers=("seconds", "speedup", "threads")),
            "chosen_run": INTEGER,
            "complete": FLAG,
            "epochs_done": INTEGER,
            "train_seconds_total": NUMBER,
            "curves": Fields(
                {
                    "cell": INTEGER,
                    "full": List(NUMBER),
                    "ls": List(NUMBER),
                    "through_cell": List(NUMBER),
                    "u": List(NUMBER),
                    "x": List(NUMBER),
                    "y": List(NUMBER),
                }
            ),
            "history": Table(numbers=("epoch", "run", "train_mse", "val_mse")),
            "segments": Rows({"from_epoch": INTEGER, "to_epoch": INTEGER, "runs": List(INTEGER), "seconds": NUMBER}),
            "settings": Fields({"runs": INTEGER, "epochs": INTEGER, "seed": INTEGER, "l1": NUMBER, "lr": NUMBER}),
            "table1": Table(numbers=("corr_inv_sigma_inv_V", "run", "test_mse")),
            "table2": Table(
                text=("cell",), numbers=("alpha0", "alpha1", "alpha2", "alpha3", "corr_z_f", "corr_z_ls", "run")
            ),
        },
    )
