"""The registry of every result the book must reproduce from the three source documents
(ICDL, the authors' answers to its reviewers REB, and Hagiwara's LSA; cited in ``book/references.bib``).

One :class:`Claim` per row of the reproducibility report. ``source`` is the item
in the words of the papers' own numbering, ``paper`` the paper's value or qualitative claim.
``chapter`` is the id of the chapter that records it (``notebooks/<chapter>.py``; one constant
per chapter below); ``None`` means not yet covered,
and the report lists it as such. ``test`` is the pytest node that guards the
number or the construction behind the record.

A claim with a chapter must have a record in ``results/ledger/`` (checked by
``tests/test_ledger.py``); adding a chapter's claims here is how a chapter
registers what it promises to check.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    paper: str
    chapter: str | None = None
    test: str | None = None


def _c(id, source, paper, chapter=None, test=None):  # a short constructor for the table
    return Claim(id, source, paper, chapter, test)


ICGD_LINEAR = "icgd_linear"
GRADIENT = "gradient_decomposition"
LSA_CONSTRUCTION = "lsa_construction"
LSA_TRAINING = "lsa_training"
RELU_SUMS = "relu_sums"
PASSES = "attention_passes"
THEOREM1 = "icgd_transformer"
GPT_ICL = "gpt_icl"
GPT_DEPTH = "gpt_depth"
GPT_MECHANISM = "gpt_mechanism"
GPT_SCALE = "gpt_scale"
COMPUTATION = "computation"
SOFTMAX = "softmax"
DIFFUSION = "diffusion_score"

CLAIMS: tuple[Claim, ...] = (
    # ---- ICDL theory -------------------------------------------------------------------
    _c("icdl-prompt", "ICDL eq. 2.1 (prompt H)",
       "$H \\in \\mathbb{R}^{D\\times(n+1)}$, columns $[x_i; y_i; q_i]$, $y_{n+1} = 0$, $q_i = [0; 1; t_i]$",
       ICGD_LINEAR, "tests/test_prompts.py::test_prompt_layout_matches_eq_2_1"),
    _c("icdl-icgd-one-step", "ICDL Problem 1 / Def. 7 (one ICGD step by ReLU attention)",
       "a ReLU-attention layer with 1/n normalisation can carry out a gradient step in context",
       ICGD_LINEAR, "tests/test_linear_gd.py::test_one_layer_is_one_gd_step"),
    _c("icdl-icgd-L-steps", "ICDL Problem 1 (L stacked steps follow GD)",
       "$L$ blocks leave $\\hat w^{(l)} = w_{\\mathrm{GD}}^{(l)}$ in every token ($\\epsilon = 0$ for linear "
       "regression)",
       ICGD_LINEAR, "tests/test_linear_gd.py::test_stacked_layers_follow_gd"),
    _c("icdl-def1", "ICDL Def. 1 / Def. 10 (N-layer network)",
       "no biases, activation on every layer including the output; $w$ stacks rows $v_{j,k}$ (eq. 3.2)",
       GRADIENT, "tests/test_networks.py::test_flat_vector_round_trip_and_order"),
    _c("icdl-def2", "ICDL Def. 2 parameter counts",
       "$D_1 = dK$, $D_j = (j-1)K^2 + dK$ ($2 \\le j \\le N-1$), $D_N = (N-2)K^2 + 2dK$",
       GRADIENT, "tests/test_networks.py::test_parameter_counts_def2"),
    _c("icdl-lemma1", "ICDL Lemma 1",
       "$\\nabla L_n(w) = \\frac{1}{2n} \\sum_i [A_i(1); \\dots; A_i(N)]$ exactly (float64 round-off vs autograd)",
       GRADIENT, "tests/test_networks.py::test_lemma1_matches_autograd"),
    _c("icdl-lemma15", "ICDL Lemma 15 ($d_x \\ne d_y$)",
       "the same decomposition holds with input size ≠ output size",
       GRADIENT, "tests/test_networks.py::test_lemma1_matches_autograd"),
    _c("icdl-lemma7", "ICDL Def. 4 / Lemma 7 (sum of ReLUs)",
       "$H \\le C(k) C_l^2 \\log(1 + C_l/\\epsilon)/\\epsilon^2$, $C \\le C(k) C_l$ for $C^s$ targets",
       RELU_SUMS, "tests/test_relu_sums.py::test_def4_constraints_and_rate"),
    _c("reb-sigmoid-sum", "REB, answer to a reviewer: fit the sum-of-ReLUs coefficients for sigmoid at ε = 1e-5",
       "coefficients found by a fitting problem for sigmoid at ε = 1e-5",
       RELU_SUMS, "tests/test_relu_sums.py::test_sigmoid_reaches_1e_5"),
    _c("reb-multiplication-sum",
       "REB, answer to a reviewer: the element-wise multiplication layer replaced by sums of ReLUs",
       "element-wise multiplication can be replaced by sums of ReLUs at a larger size",
       RELU_SUMS, "tests/test_relu_sums.py::test_product_by_relus"),
    _c("icdl-lemma2", "ICDL Lemma 2 (forward pass $\\hat p_i(j)$)",
       "error (3.8) $\\le (\\sum_{l<j} K^{l/2} L_r^l B_v^l) \\sqrt{K} \\epsilon_r$; $B_\\theta \\le 1 + K C_1$",
       PASSES, "tests/test_attention_passes.py::test_lemma2_error_within_bound_3_8"),
    _c("icdl-lemma3", "ICDL Lemma 3 ($\\hat r\'$)",
       "error $\\le \\epsilon_{r\'} + L_{r\'} B_v E_r \\epsilon_r$ (3.12); $B_\\theta \\le 1 + K(N-1) C_2$",
       PASSES, "tests/test_attention_passes.py::test_lemma3_error_within_bound_3_12"),
    _c("icdl-lemma4", "ICDL Lemma 4 (g ≈ u)",
       "error $\\le \\epsilon_l + L_l E_r \\epsilon_r$ (3.14); $B_\\theta \\le \\max\\{R_3+1, C_3\\}$",
       PASSES, "tests/test_attention_passes.py::test_lemma4_error_within_bound_3_14"),
    _c("icdl-lemma5", "ICDL Lemma 5 (backward recursion $\\hat s_i(j)$)",
       "$N$ layers of element-wise multiplication, error (3.18); $B_\\theta \\le 1$",
       PASSES, "tests/test_attention_passes.py::test_lemma5_backward_layers_are_the_recursion"),
    _c("icdl-lemma6", "ICDL Lemma 6",
       "$|\\hat s - s| \\le E_s^r \\epsilon_r + E_s^{r\'} \\epsilon_{r\'} + E_s^l \\epsilon_l$",
       THEOREM1, "tests/test_icgd_transformer.py::test_lemma6_bound_holds_and_is_not_vacuous"),
    _c("icdl-thm1", "ICDL Theorem 1",
       "$(2N+4)L$ layers do $L$ steps of ICGD; heads $\\tilde O(\\epsilon^{-2})$, width $O(NK^2) + D_w$, norms "
       "$O(\\eta) + C_w + 1$",
       THEOREM1, "tests/test_icgd_transformer.py::test_transformer_follows_projected_gd_within_corollary_1_1"),
    _c("icdl-cor1.1", "ICDL Corollary 1.1",
       "$\\lVert \\hat w^{l} - w_{\\mathrm{GD}}^{l} \\rVert \\le L_f^{-1} (1 + n L_f)^l \\epsilon$",
       THEOREM1, "tests/test_icgd_transformer.py::test_transformer_follows_projected_gd_within_corollary_1_1"),
    _c("icdl-lemma14", "ICDL Lemma 14", "the loss along $\\hat w^{(l)}$ decreases as along GD",
       THEOREM1, "tests/test_icgd_transformer.py::test_loss_decreases_along_the_transformer_path_lemma_14"),
    _c("reb-width", "REB width O(NK² + 3NK + 3K)", "hidden width of the construction",
       THEOREM1, "tests/test_icgd_transformer.py::test_reb_width_formula"),
    _c("reb-sigmoid-constants", "REB, answer to a reviewer: the constants for a sigmoid network of width 32",
       "$K = 32$, $L_f = N (w/4)^{2(N-1)}$, width $O(1024 N)$",
       THEOREM1, "tests/test_icgd_transformer.py::test_reb_sigmoid_example_width"),
    _c("reb-layer-counts", "REB, answer to a reviewer: layer counts against Wang et al. (2024)",
       "Wang et al. (ICML 2024) need O(N²L) layers, (2N+4)L here",
       THEOREM1, "tests/test_icgd_transformer.py::test_transformer_follows_projected_gd_within_corollary_1_1"),
    _c("icdl-thm2", "ICDL Theorem 2 (softmax)", "4L softmax layers do L ICGD steps (existence)",
       SOFTMAX, "tests/test_softmax.py::test_fitted_softmax_step_follows_gd_on_held_out_prompts"),
    _c("icdl-thm2-size", "ICDL Theorem 2 / Lemma 16 (accuracy with size)",
       "any accuracy with enough size: the fitted step's error should fall as the blocks widen",
       SOFTMAX, "tests/test_softmax.py::test_width_trend_criterion_both_sides"),
    _c("icdl-lemma16", "ICDL Lemma 16", "FF∘Attn∘FF blocks approximate continuous permutation-equivariant maps",
       SOFTMAX, "tests/test_softmax.py::test_quantiser_is_exact_on_the_grid_and_monotone"),
    _c("icdl-lemma17", "ICDL Lemma 17", "softmax attention is a contextual mapping on quantised inputs",
       SOFTMAX, "tests/test_softmax.py::test_rank_one_attention_separates_small_grids"),
    # ---- ICDL experiments ----------------------------------------------------------------
    _c("icdl-obj1", "ICDL objective 1 (Figs. 2–4)", "ICL R² comparable to the trained MLP baseline up to 50 examples",
       GPT_ICL, "tests/test_gpt_verdicts.py::test_obj1_both_sides_of_the_tolerance_and_inconclusive_between"),
    _c("icdl-obj2-shift", "ICDL objective 2 (Figs. 2–4)", "R² drops as the test mixture moves away from pretraining",
       GPT_ICL, "tests/test_gpt_verdicts.py::test_obj2_mixtures_need_a_fall_at_every_step"),
    _c("icdl-obj2-length", "ICDL objective 2 (Figs. 3–4)", "softmax degrades past the pretraining length, ReLU less",
       GPT_ICL, "tests/test_gpt_verdicts.py::test_obj2_length_compares_relu_with_its_softmax_twin"),
    _c("icdl-obj3", "ICDL objective 3 (Figs. 5–6)",
       "with shifted target parameters, ICL stays comparable to the network trained on the prompt",
       GPT_ICL, "tests/test_gpt_verdicts.py::test_obj3_is_objective_1_on_the_shifted_prompts"),
    _c("gpt-obj3-drop", "ICDL objective 3 (Figs. 5–6), as an absolute fall (this book's form)",
       "not claimed by ICDL in this form: R² at the training length falls by at most 0.1 when μ moves to ±0.5",
       GPT_ICL, "tests/test_gpt_verdicts.py::test_the_shift_drop_is_the_largest_fall_from_mu_0"),
    _c("gpt-task-linear", "ICDL sec. 5's task, measured (this book's question)",
       "not claimed by ICDL: within a prompt, ICDL's targets at x ~ N(−2, I) are almost linear (under 5 % of "
       "the label variance is left by a linear fit), so the task barely tests learning a deep network",
       GPT_ICL, "tests/test_gpt_tasks.py::test_variance_split_on_families_whose_answer_is_known"),
    _c("gpt-task-n01", "ICDL sec. 5's task at the baselines' inputs, measured (this book's question)",
       "not claimed by ICDL: with x ~ N(0, I), the inputs of REB's network baselines, the same targets leave "
       "at least 15 % of the label variance to the part no linear fit within a prompt explains",
       GPT_ICL, "tests/test_gpt_tasks.py::test_variance_split_on_families_whose_answer_is_known"),
    # ICDL's questions asked again where the task needs a deep network: the main study's models and schedule,
    # trained and tested with x ~ N(0, I) (profile n01 of chapter gpt_icl; icdl.gpt_icl.n01)
    _c("gpt-n01-beats-ls", "ICDL sec. 5 at x ~ N(0, I) (this book's question)",
       "not claimed by ICDL in this form: where a linear fit within a prompt leaves at least 15 % of the label "
       "variance, every trained transformer (each averaged over its seeds) predicts better than least squares on "
       "the prompt's examples",
       GPT_ICL, "tests/test_gpt_n01.py::test_each_claim_both_sides_of_its_line_and_inconclusive_between"),
    _c("gpt-n01-obj1", "ICDL objective 1 at x ~ N(0, I) (this book's question)",
       "not claimed by ICDL on this task: ICL R² comparable to the MLP trained on the prompt (objective 1) where "
       "the targets are far from linear",
       GPT_ICL, "tests/test_gpt_n01.py::test_each_claim_both_sides_of_its_line_and_inconclusive_between"),
    _c("gpt-n01-depth-gap", "ICDL sec. 5 at x ~ N(0, I) (this book's question)",
       "not claimed by ICDL: the transformer's excess error over the MLP, "
       r"$(\mathrm{MSE} - \mathrm{MSE}_{\mathrm{MLP}})/\mathrm{MSE}_{\mathrm{MLP}}$, grows with "
       "the depth of the target networks (6 layers against 3)",
       GPT_ICL, "tests/test_gpt_n01.py::test_each_claim_both_sides_of_its_line_and_inconclusive_between"),
    _c("icdl-obj4", "ICDL objective 4 (Fig. 7)", "deeper transformers are better (depth 4, 6, 8, 10)",
       GPT_DEPTH, "tests/test_gpt_depth.py::test_judge_depth_both_sides"),
    # ---- ICDL's experiments with more training: how much of the shortfall is scale? ----------
    _c("scale-shortfall-falls", "ICDL objective 1, trained 4× longer (this book's question)",
       "not claimed by ICDL: the shortfall below the MLP falls with training (its fitted change per doubling "
       "of the steps below 0 for every model)",
       GPT_SCALE, "tests/test_gpt_scale.py::test_fit_recovers_a_planted_slope_on_the_target_clock_and_its_forecast"),
    _c("icdl-obj1-longer", "ICDL objective 1 (Figs. 2–4), on the longest-trained models",
       "ICL R² comparable to the trained MLP baseline up to the training length",
       GPT_SCALE, "tests/test_gpt_scale.py::test_judge_both_sides_of_each_threshold"),
    _c("scale-beats-knn", "This book: the models beat the simplest local rule once trained longer",
       "not claimed by ICDL: R² above 3-NN's at the training length for every model",
       GPT_SCALE, "tests/test_gpt_scale.py::test_judge_both_sides_of_each_threshold"),
    _c("scale-forecast", "ICDL objective 1: would the paper's 500 k steps suffice at our size?",
       "not claimed by ICDL: the fitted trend reaches objective 1's tolerance within 500 k steps",
       GPT_SCALE, "tests/test_gpt_scale.py::test_fit_recovers_a_planted_slope_on_the_target_clock_and_its_forecast"),
    _c("icdl-obj3-longer", "ICDL objective 3 (Figs. 5–6), on the longest-trained models",
       "a shift of the target-parameter distribution hurts little",
       GPT_SCALE, "tests/test_gpt_scale.py::test_judge_both_sides_of_each_threshold"),
    _c("scale-wider-closer", "ICDL objective 1 at twice the width (this book's question)",
       "not claimed by ICDL: at the main study's steps, twice the width (3.9× the parameters), trained with the "
       "width-64 learning rate and warm phase, brings every model closer to the MLP",
       GPT_SCALE, "tests/test_gpt_scale.py::test_the_wider_judge_both_sides_of_each_threshold"),
    _c("scale-width-over-steps", "ICDL objective 1: width or steps at equal training compute? (this book's question)",
       "not claimed by ICDL: at equal training FLOPs the wider model, trained with the width-64 learning rate and "
       "warm phase, is closer to the MLP than the narrow one trained longer",
       GPT_SCALE, "tests/test_gpt_scale.py::test_the_width_comparison_pairs_the_models_and_matches_their_compute"),
    _c("scale-wider-tuned-closer",
       "ICDL objective 1 at twice the width, its learning rate tuned (this book's question)",
       "not claimed by ICDL: at the main study's steps, twice the width, with its learning rate chosen at that width "
       "by a scan of at least three rates, brings every model closer to the MLP",
       GPT_SCALE, "tests/test_gpt_scale.py::test_the_tuned_width_claims_wait_for_a_scan"),
    _c("scale-width-tuned-over-steps", "ICDL objective 1: tuned width or steps at equal training compute? (this book's "
       "question)",
       "not claimed by ICDL: at equal training FLOPs the wider model, its learning rate chosen at its width by a scan "
       "of at least three rates, is closer to the MLP than the narrow one trained longer",
       GPT_SCALE, "tests/test_gpt_scale.py::test_the_tuned_width_claims_wait_for_a_scan"),
    _c("icdl-obj1-wider", "ICDL objective 1 (Figs. 2–4), on the wider models",
       "ICL R² comparable to the trained MLP baseline up to the training length",
       GPT_SCALE, "tests/test_gpt_scale.py::test_the_wider_judge_both_sides_of_each_threshold"),
    _c("icdl-obj3-wider", "ICDL objective 3 (Figs. 5–6), on the wider models",
       "a shift of the target-parameter distribution hurts little",
       GPT_SCALE, "tests/test_gpt_scale.py::test_the_wider_judge_both_sides_of_each_threshold"),
    # ---- this book's own question: which algorithm do the trained models run? --------------
    _c("mech-nearest-gd", "This book: hypothesis 1 (the review's first weakness asks it)",
       "not claimed by ICDL: a trained model is nearer GD on an N-layer network than any linear or local rule",
       GPT_MECHANISM, "tests/test_gpt_mechanism.py::test_judge_both_sides_of_each_threshold"),
    _c("mech-sensitivity-gd", "This book: hypothesis 2",
       "not claimed by ICDL: the model's $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ points where GD's does "
       "(mean cosine ≥ 0.8)",
       GPT_MECHANISM, "tests/test_gpt_mechanism.py::test_a_model_that_is_gd_is_found_with_its_step_size"),
    _c("mech-shift-gd", "This book: hypothesis 3",
       "not claimed by ICDL: hypothesis 1 still holds on inputs from the mixture (.5, .5)",
       GPT_MECHANISM, "tests/test_gpt_mechanism.py::test_judge_both_sides_of_each_threshold"),
    _c("mech-longer-toward-gd", "This book: hypothesis 4 (four times the training)",
       "not claimed by ICDL: with more training every model moves toward GD on the network, away from the "
       "linear and local rules",
       GPT_MECHANISM, "tests/test_gpt_mechanism.py::test_the_longer_judge_both_sides_of_each_threshold"),
    _c("mech-longer-nearest-gd", "This book: hypothesis 1 after four times the training",
       "not claimed by ICDL: a model trained four times longer is nearer GD on the network than any linear or "
       "local rule",
       GPT_MECHANISM, "tests/test_gpt_mechanism.py::test_the_longer_judge_both_sides_of_each_threshold"),
    _c("mech-fair-nearest-gd", "This book: hypothesis 1 with GD given a fair chance",
       "not claimed by ICDL: with GD's step size, steps and start tuned on a grid whose chosen member is interior, "
       "every model is nearer GD on an N-layer network than any linear or local rule, by prediction difference",
       GPT_MECHANISM, "tests/test_gpt_mechanism_fair.py::test_the_fair_judge_both_sides_of_each_threshold"),
    _c("mech-fair-sens-gd", "This book: GD nearest by the sensitivities, given a fair chance",
       "not claimed by ICDL: every model's $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ is nearer GD's "
       "than any linear or local rule's in L2 (von Oswald et al.'s second measure)",
       GPT_MECHANISM, "tests/test_gpt_mechanism_fair.py::test_the_fair_judge_both_sides_of_each_threshold"),
    _c("mech-fair-cosine-gd", "This book: hypothesis 2 with GD given a fair chance",
       "not claimed by ICDL: every model's $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ points where "
       "the fairly tuned GD's does (mean cosine ≥ 0.8)",
       GPT_MECHANISM, "tests/test_gpt_mechanism_fair.py::test_the_fair_judge_both_sides_of_each_threshold"),
    _c("mech-flow-nearest-gd", "This book: hypothesis 1 with GD tuned in gradient-flow time",
       "not claimed by ICDL: with GD tuned on a grid whose chosen member is interior in its flow time ηL and start "
       "scale (its step size at an edge of the grid only where the neighbouring step size at the same ηL leaves the "
       "scan flat), every model is nearer GD on an N-layer network than any linear or local rule, by prediction "
       "difference",
       GPT_MECHANISM, "tests/test_gpt_mechanism_flow.py::test_the_flow_judge_both_sides_of_each_threshold"),
    _c("mech-flow-sens-gd", "This book: GD nearest by the sensitivities, tuned in gradient-flow time",
       "not claimed by ICDL: every model's $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ is nearer that "
       "of GD tuned in flow time than any linear or local rule's in L2",
       GPT_MECHANISM, "tests/test_gpt_mechanism_flow.py::test_the_flow_judge_both_sides_of_each_threshold"),
    _c("mech-flow-cosine-gd", "This book: hypothesis 2 with GD tuned in gradient-flow time",
       "not claimed by ICDL: every model's $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ points where "
       "that of GD tuned in flow time does (mean cosine ≥ 0.8)",
       GPT_MECHANISM, "tests/test_gpt_mechanism_flow.py::test_the_flow_judge_both_sides_of_each_threshold"),
    _c("mech-flow-median-gd", "This book: hypothesis 1 by a robust measure (the median block of prompts)",
       "not claimed by ICDL: on the median block of test prompts every model is nearer GD tuned in flow time than "
       "the simple rule nearest it over all prompts, by prediction difference",
       GPT_MECHANISM, "tests/test_gpt_mechanism_flow.py::test_the_flow_judge_both_sides_of_each_threshold"),
    _c("mech-seeds-nearest-gd", "This book: hypothesis 1 over the main study's seeds",
       "not claimed by ICDL: averaged over the main study's seeds of each model, every model is nearer GD on an "
       "N-layer network, tuned in flow time for each seed's model, than any linear or local rule, by prediction "
       "difference",
       GPT_MECHANISM, "tests/test_gpt_mechanism_seeds.py::test_the_seeds_judge_both_sides_of_each_threshold"),
    _c("mech-seeds-sens-gd", "This book: GD nearest by the sensitivities, over the main study's seeds",
       "not claimed by ICDL: averaged over the seeds, every model's $\\partial \\hat y / \\partial "
       "x_{\\mathrm{query}}$ is nearer that of GD tuned in flow time than any linear or local rule's in L2",
       GPT_MECHANISM, "tests/test_gpt_mechanism_seeds.py::test_the_seeds_judge_both_sides_of_each_threshold"),
    _c("mech-seeds-cosine-gd", "This book: hypothesis 2 over the main study's seeds",
       "not claimed by ICDL: averaged over the seeds, every model's $\\partial \\hat y / \\partial "
       "x_{\\mathrm{query}}$ points where that of GD tuned in flow time does (mean cosine ≥ 0.8)",
       GPT_MECHANISM, "tests/test_gpt_mechanism_seeds.py::test_the_seeds_judge_both_sides_of_each_threshold"),
    _c("mech-seeds-median-gd", "This book: hypothesis 1 by the median block, over the main study's seeds",
       "not claimed by ICDL: averaged over the seeds, on the median block of test prompts every model is nearer GD "
       "tuned in flow time than the simple rule nearest it over all prompts, by prediction difference",
       GPT_MECHANISM, "tests/test_gpt_mechanism_seeds.py::test_the_seeds_judge_both_sides_of_each_threshold"),
    _c("mech-control-linear", "This book: the positive control (a transformer trained on linear targets)",
       "not claimed by ICDL: the measures find a linear fit (least squares, ridge, or GD or the Adam-trained MLP on "
       "a one-layer network) nearest a transformer trained on linear regression, not a local rule",
       GPT_MECHANISM, "tests/test_gpt_mechanism.py::test_the_control_judge_both_sides_of_each_threshold"),
    # ---- ICDL appendix G, REB data and cost ----------------------------------------------
    _c("icdl-lemma19", "ICDL Lemma 19 (diffusion score ICL)", "score matching reduces to ICGD on a ReLU network",
       DIFFUSION, "tests/test_diffusion.py::test_transformer_learns_the_score_in_context"),
    _c("reb-dsm", "REB corrected score-matching data",
       "$y_i = -(x_{i,t} - \\alpha_t x_i)/h_t$, $\\alpha_t = e^{-t/2}$, $h_t = 1 - e^{-t}$",
       DIFFUSION, "tests/test_diffusion.py::test_dsm_targets_have_the_score_as_mean"),
    _c("reb-flops", "REB cost (FLOPs)", "ICL 3.34 GFLOPs (76 tokens × 22 M params); training 7.56 GFLOPs",
       COMPUTATION, "tests/test_gpt_cost.py::test_cost_counts_match_the_formulas"),
    _c("reb-complexity", "REB cost (theory)", "ICL O(n L N³ K⁵ / ε²) vs training O(n L N K²)",
       THEOREM1, "tests/test_icgd_transformer.py::test_flop_comparison_icl_costs_more_than_gd"),
    _c("reb-times", "REB cost (A100 times)", "forward 1.38 s; one step 0.04 s, 100 steps ≈ 4 s",
       COMPUTATION, "tests/test_gpt_cost.py::test_cost_judge_both_sides"),
    # ---- LSA (Hagiwara) -----------------------------------------------------------------
    _c("lsa-construction", "LSA sec. 3 (TF(4,2,2) construction)", "output → ȳ + (C/V)(u − x̄) as R and N grow",
       LSA_CONSTRUCTION, "tests/test_lsa.py::test_construction_tends_to_least_squares"),
    _c("lsa-appendix-a", "LSA Appendix A", "two different inputs with the same LSA output",
       LSA_CONSTRUCTION, "tests/test_lsa.py::test_appendix_a_same_output"),
    _c("lsa-appendix-b", "LSA Appendix B", "TF(4,3,2) without LayerNorm does two GD steps (eqs. 66–67)",
       LSA_CONSTRUCTION, "tests/test_lsa.py::test_appendix_b_two_gd_steps"),
    _c("lsa-table1-error", "LSA Table 1 (test error)", "errors 0.00063 – 0.00267 over 10 runs (median 0.00097)",
       LSA_TRAINING, "tests/test_lsa.py::test_evaluate_on_the_construction"),
    _c("lsa-table1-corr", "LSA Table 1 (corr of 1/σ with 1/V)", "correlations −0.005 – 0.926 over 10 runs",
       LSA_TRAINING, "tests/test_lsa.py::test_evaluate_on_the_construction"),
    _c("lsa-fig2", "LSA Fig. 2",
       "$|W_{\\mathrm{in}}|$ and $|W_{\\mathrm{out}}|$ (4×51), log colour: the (3, 51) output weight dominates",
       LSA_TRAINING, "tests/test_lsa.py::test_fig2_is_judged_on_the_query_cells_alone"),
    _c("lsa-table2", "LSA Table 2", "corr(z, f) = 0.99479, corr(z, LS) = −0.99396; coefficients as listed",
       LSA_TRAINING, "tests/test_lsa.py::test_evaluate_on_the_construction"),
    _c("lsa-fig3", "LSA Fig. 3", "fitted curve on [−3, 3], full output and via the (3, 51) cell, close to LS",
       LSA_TRAINING, "tests/test_lsa.py::test_judge_reads_the_paper_criteria"),
    _c("lsa-conclusion", "LSA conclusion", "some runs use the LayerNorm division (corr > 0.9 in ≥ 1 run)",
       LSA_TRAINING, "tests/test_lsa.py::test_judge_reads_the_paper_criteria"),
    _c("lsa-l1-dominance", "LSA sec. 4 at a stronger ℓ1 penalty (the paper does not give its strength)",
       "Fig. 2's premise: one query-token cell far above the others (the largest ≥ 10× the second) in the analysed "
       "run, at ℓ1 = 1e-4 or 1e-3",
       LSA_TRAINING, "tests/test_lsa.py::test_the_l1_scan_judge_takes_the_best_strength"),
    _c("lsa-l1-table2", "LSA Table 2 at a stronger ℓ1 penalty",
       "Table 2's correlations (corr(z, f) and |corr(z, LS)| > 0.95) in the analysed run, at ℓ1 = 1e-4 or 1e-3",
       LSA_TRAINING, "tests/test_lsa.py::test_the_l1_scan_judge_takes_the_best_strength"),
)

#: the documents the claims come from, by the prefix of their ids, in the order the summaries list them
DOCUMENTS = {"icdl": "ICDL (the paper)", "reb": "REB (its review discussion)", "lsa": "LSA (Hagiwara)",
             "book": "This book's own questions"}
#: claim-id prefixes of this book's own questions (which algorithm the models run; what longer training does; our
#: own forms of the GPT experiments' claims)
_BOOK_PREFIXES = ("mech", "scale", "gpt")


def document(claim_id: str) -> str:
    """The document a claim comes from (a key of :data:`DOCUMENTS`), from its id's prefix."""
    prefix = claim_id.split("-", 1)[0]
    prefix = "book" if prefix in _BOOK_PREFIXES else prefix
    if prefix not in DOCUMENTS:
        raise KeyError(f"claim id {claim_id!r} has no known document prefix; known: {sorted(DOCUMENTS)}")
    return prefix


CLAIMS_BY_ID: dict[str, Claim] = {c.id: c for c in CLAIMS}
if len(CLAIMS_BY_ID) != len(CLAIMS):  # pragma: no cover - guards edits of the table above
    raise RuntimeError("duplicate claim ids in icdl.claims.CLAIMS")


def get_claim(claim_id: str) -> Claim:
    try:
        return CLAIMS_BY_ID[claim_id]
    except KeyError:
        raise KeyError(f"unknown claim id {claim_id!r}; known ids: {sorted(CLAIMS_BY_ID)}") from None


def claims_for(chapter: str) -> list[Claim]:
    return [c for c in CLAIMS if c.chapter == chapter]


# ---- criteria as data ------------------------------------------------------------------------------


_OPS = {"<": lambda v, t: v < t, "<=": lambda v, t: v <= t, ">": lambda v, t: v > t, ">=": lambda v, t: v >= t,
        "==": lambda v, t: v == t, "gate": lambda v, t: v >= t}


@dataclass(frozen=True)
class Condition:
    """One comparison of a criterion: the recorded number ``key`` against ``threshold`` by ``op``.

    Where the record also holds an interval for the number (``<key>_lo`` and ``<key>_hi``: over seeds and
    prompts, say), the comparison is decided by the interval: it holds when the whole interval lies on the
    passing side, fails when the whole interval lies on the failing side, and is undecided (``None``) when the
    interval straddles the threshold -- a margin inside the noise decides nothing. A number recorded without an
    interval (a deterministic check: the theory) is its own interval of one point, never undecided.

    ``op = "gate"``: a condition on the design, not on the finding (``key`` at least ``threshold``: a positive
    control passed, a candidate given a fair chance). Unmet, it leaves the whole claim undecided, whatever
    the other conditions say (:func:`criterion_verdict`): a verdict counts only where its gates are met."""
    key: str
    op: str
    threshold: float

    def holds(self, values: dict) -> bool:
        v = values.get(self.key)
        return v is not None and v == v and bool(_OPS[self.op](float(v), self.threshold))  # NaN never holds

    def verdict(self, values: dict) -> bool | None:
        """True, False, or None where the recorded interval straddles the threshold (see the class)."""
        if self.op == "gate":
            return True if self.holds(values) else None
        lo, hi = values.get(f"{self.key}_lo"), values.get(f"{self.key}_hi")
        if lo is None or hi is None or self.op == "==":
            return self.holds(values)
        if not (lo == lo and hi == hi and lo <= hi):  # NaN or reversed ends: no interval to decide on
            return False
        ends = [self.holds({self.key: lo}), self.holds({self.key: hi})]
        return True if all(ends) else False if not any(ends) else None


def _all(*conditions: tuple[str, str, float]) -> tuple[Condition, ...]:
    return tuple(Condition(k, op, float(t)) for k, op, t in conditions)


#: 1.0 for a check that held, 0.0 for one that did not (for checks that are exact by construction)
HELD = ("held", "==", 1)

#: every claim's criterion, as the numbers a chapter records and the comparisons they must pass -- all of
#: them (the ledger re-judges every stored record from its numbers, passes included). A chapter's own
#: verdict must agree with this table, or recording the claim fails. ``value`` is also the number a
#: registered mismatch's band is about.
CRITERIA: dict[str, tuple[Condition, ...]] = {
    "icdl-prompt": _all(HELD),
    "icdl-icgd-one-step": _all(("value", "<", 1e-13)),
    "icdl-icgd-L-steps": _all(("value", "<", 1e-13), ("token_spread", "<", 1e-13)),
    "icdl-def1": _all(HELD),
    "icdl-def2": _all(HELD),
    "icdl-lemma1": _all(("value", "<", 1e-12)),
    "icdl-lemma15": _all(("value", "<", 1e-12)),
    "icdl-lemma7": _all(("value", "<=", -0.5), ("c_change", "<", 0.05)),
    "reb-sigmoid-sum": _all(("value", "<=", 1e-5)),
    "reb-multiplication-sum": _all(("value", "<=", 1e-3)),
    "icdl-lemma2": _all(("bounds_held", "==", 1), ("relu_error", "<", 1e-12)),
    "icdl-lemma3": _all(HELD),
    "icdl-lemma4": _all(HELD),
    "icdl-lemma5": _all(("value", "<", 1e-14), ("shrinks_with_H", "==", 1)),
    "icdl-lemma6": _all(HELD),
    "icdl-thm1": _all(("bounds_held", "==", 1), ("heads_slope", ">=", -2)),
    "icdl-cor1.1": _all(HELD),
    "icdl-lemma14": _all(HELD),
    "reb-width": _all(("value", "<=", 0)),
    "reb-sigmoid-constants": _all(HELD),
    "reb-layer-counts": _all(("value", "==", 0)),
    "icdl-thm2": _all(("value", "<=", 0.5), ("risk_falls", "==", 1)),
    "icdl-thm2-size": _all(("value", "<", -0.15), ("widest", "<=", 0.08)),
    "icdl-lemma16": _all(HELD),
    "icdl-lemma17": _all(("value", ">", 0)),
    # objectives 1–3 on three seeds, paired prompts and 90 % intervals (icdl.gpt_icl.verdicts; each number
    # recorded with value_lo and value_hi): the largest shortfall below the MLP on its prompts; the smallest fall
    # of R² from one mixture to the next; the smallest margin of the ReLU model's change past the training
    # length over its softmax twin's; objective 1's shortfall on the shifted targets; our absolute form of 3
    "icdl-obj1": _all(("value", "<=", 0.05)),
    "icdl-obj2-shift": _all(("value", ">", 0)),
    "icdl-obj2-length": _all(("value", ">", 0)),
    "icdl-obj3": _all(("value", "<=", 0.05)),
    "gpt-obj3-drop": _all(("value", "<=", 0.1)),
    "icdl-obj4": _all(("value", ">", 0)),
    # registered before the run of icdl.gpt_icl.tasks.task_content_table that judges them (chapter gpt_icl), but
    # after the exploratory measurement reported in the issue that asked for them (1.6–2.6 % at N(−2, I), 15–20 %
    # at N(0, I), another seed and code): the largest nonlinear share over d = 5, 20 and target depths 3, 4, 6
    # at x ~ N(−2, I), and the smallest at x ~ N(0, I), each over its whole 90 % interval over prompts
    "gpt-task-linear": _all(("value", "<", 0.05)),
    "gpt-task-n01": _all(("value", ">=", 0.15)),
    # registered before any run of profile n01 of chapter gpt_icl (the main study's models and schedule with
    # x ~ N(0, I) in training and test: python -m icdl.gpt_icl --profile n01 --part main), judged by
    # icdl.gpt_icl.n01.judge on its paired prompts over three seeds, each over its whole 90 % interval: the
    # smallest error relative to least squares, (MSE_LS − MSE)/MSE_LS, over target depths and attentions at
    # the MLP's last position up to the training length; objective 1's number (the largest shortfall below the
    # MLP at its positions up to the training length); the smaller over the attentions of the excess error over
    # the MLP, (MSE − MSE_MLP)/MSE_MLP, at target depth 6 minus that at depth 3, at that last position (a ratio
    # of errors, not a difference of R², whose denominator's offset share grows with depth). Each model's MSE is
    # pooled over its seeds. Registered again at 21aab27 (REGISTERED), still before any run: the first
    # registration (ae6f39a) judged the depth gap on the R² shortfall
    "gpt-n01-beats-ls": _all(("value", ">", 0)),
    "gpt-n01-obj1": _all(("value", "<=", 0.05)),
    "gpt-n01-depth-gap": _all(("value", ">", 0)),
    # registered before the first reference run of chapter gpt_mechanism (icdl.gpt_icl.mechanism.judge): the
    # largest ratio over the models of GD's prediction difference to the nearest simple rule's; the smallest
    # mean cosine of the sensitivities; the ratio again on the shifted mixture
    "mech-nearest-gd": _all(("value", "<", 1)),
    "mech-sensitivity-gd": _all(("value", ">=", 0.8)),
    "mech-shift-gd": _all(("value", "<", 1)),
    # registered before any run of python -m icdl.gpt_icl.mechanism --profile control (judge_control): the main
    # study's architecture and schedule trained on depth-1 (linear) targets, measured at the training length on
    # the pretraining mixture. value: the largest over the two attentions of the nearest linear fit's prediction
    # difference over the nearest local rule's (3-NN, context mean); sens: the largest of the nearest linear
    # fit's sensitivity L2 difference; cosine: the smallest of the largest mean cosine with a linear fit. Linear
    # fits: least squares, ridge, GD and the Adam-trained MLP (both on a one-layer network there). Each number
    # with its 90 % interval over blocks of the test prompts (one seed: prompt noise only)
    "mech-control-linear": _all(("value", "<", 1), ("sens", "<", 0.25), ("cosine", ">=", 0.9)),
    # registered before any run of python -m icdl.gpt_icl.mechanism --profile fair (judge_fair): hypotheses 1
    # and 2 asked again with GD given a fair chance -- a grid of (η, L, start scale) wide enough that the member
    # nearest each model is interior in η and in the start scale, and at the largest L only where the scan is
    # flat there (its prediction difference changes by less than 5 % over the last doubling of L); ridge's λ
    # likewise interior. On the main study's six models at the training length, pretraining mixture, each
    # number with its 90 % interval over blocks of the test prompts (paired: the same resampled prompts for
    # every candidate). value: the largest over the models of GD's prediction difference over the nearest simple
    # rule's; of GD's sensitivity L2 difference over the smallest among the simple rules; the smallest mean
    # cosine with GD. Gates, each 1 or 0: ``control`` (mech-control-linear passed) and ``fair`` (every model's
    # GD and ridge members meet the conditions above); a gate not met leaves the claim inconclusive
    "mech-fair-nearest-gd": _all(("value", "<", 1), ("control", "gate", 1), ("fair", "gate", 1)),
    "mech-fair-sens-gd": _all(("value", "<", 1), ("control", "gate", 1), ("fair", "gate", 1)),
    "mech-fair-cosine-gd": _all(("value", ">=", 0.8), ("control", "gate", 1), ("fair", "gate", 1)),
    # registered before any run of python -m icdl.gpt_icl.mechanism --profile flow (judge_flow): the fair
    # claims asked again on a grid read in gradient-flow time T = ηL. The fair run chose members along one flow
    # time (ηL ≈ 102) and one model at the grid's smallest η, where halving η at the same T hardly moves the scan;
    # so the gate ``flow`` asks, per model: the chosen start scale interior on the grid; the chosen T neither the
    # smallest nor the largest T of the grid at that start scale; the chosen η at an edge of the grid only where
    # the scan at the neighbouring η of the grid at the same T and start scale exists and differs by less than
    # 5 % (relative); ridge's λ interior. Same models, positions, prompts, intervals and thresholds as the fair
    # claims; gate ``control`` as there. mech-flow-median-gd's value: the largest over the models of the median
    # over blocks of the test prompts of GD's prediction difference in the block over that of the simple rule
    # nearest the model over all prompts (on each resample: the resampled blocks, the rule nearest on them)
    "mech-flow-nearest-gd": _all(("value", "<", 1), ("control", "gate", 1), ("flow", "gate", 1)),
    "mech-flow-sens-gd": _all(("value", "<", 1), ("control", "gate", 1), ("flow", "gate", 1)),
    "mech-flow-cosine-gd": _all(("value", ">=", 0.8), ("control", "gate", 1), ("flow", "gate", 1)),
    "mech-flow-median-gd": _all(("value", "<", 1), ("control", "gate", 1), ("flow", "gate", 1)),
    # registered before any run of python -m icdl.gpt_icl.mechanism --profile seeds (judge_seeds): the flow
    # claims asked over the main study's three seeds (0, 1, 2) of each of the six models. Profile seeds: the flow
    # profile's grid, scan and test prompts, positions and candidates, on every seed's model, pretraining mixture.
    # Per model and seed, GD's and ridge's members are chosen for that seed's model as in the flow study and the
    # four flow numbers computed (GD's prediction difference over the nearest simple rule's, its sensitivity L2
    # difference over the smallest simple rule's, GD's mean cosine, the median-block ratio with the rule nearest
    # that seed's model over all prompts). A model's number is the mean over its seeds; value: the largest over
    # the models (the cosine: the smallest). Its 90 % interval: a two-level bootstrap (intervals.Draws with three
    # seeds): the seeds drawn with replacement, the 32 blocks of test prompts drawn once per resample for every
    # seed, candidate and model (paired), the model's number the mean over the drawn seeds. Gates, each 1 or 0:
    # ``control`` (mech-control-linear passed), ``flow`` (the flow gate met by every seed's model), ``seeds``
    # (three seeds measured for every model)
    "mech-seeds-nearest-gd": _all(("value", "<", 1), ("control", "gate", 1), ("flow", "gate", 1),
                                  ("seeds", "gate", 1)),
    "mech-seeds-sens-gd": _all(("value", "<", 1), ("control", "gate", 1), ("flow", "gate", 1), ("seeds", "gate", 1)),
    "mech-seeds-cosine-gd": _all(("value", ">=", 0.8), ("control", "gate", 1), ("flow", "gate", 1),
                                 ("seeds", "gate", 1)),
    "mech-seeds-median-gd": _all(("value", "<", 1), ("control", "gate", 1), ("flow", "gate", 1), ("seeds", "gate", 1)),
    # registered before the run of python -m icdl.gpt_icl.mechanism --profile longer (judge_longer): the largest
    # change over the models of that ratio from the main study's models to the four-times-longer-trained ones,
    # and the largest ratio of the longer-trained models
    "mech-longer-toward-gd": _all(("value", "<", 0)),
    "mech-longer-nearest-gd": _all(("value", "<", 1)),
    # registered before the first reference run of chapter gpt_scale (icdl.gpt_icl.scale.judge): the largest
    # change per doubling of the shortfall below the MLP and the largest upper end of its 90 % band; objective
    # 1's and 3's numbers on the longest-trained models; the smallest lead over 3-NN; the largest forecast.
    # The thresholds are as registered; the numbers they read were corrected after the run (issue 39), each
    # toward the claim's own words: "doubling of the training" counts steps on the target family (not the warm
    # phase), the band holds the snapshots' scatter besides the prompts', the forecast is of objective 1's own
    # number (the largest shortfall over the MLP's positions, not the training length's alone) extended to the
    # paper's steps, and each number carries the 90 % interval of its largest (smallest) over the models
    "scale-shortfall-falls": _all(("value", "<", 0), ("slope_hi", "<", 0)),
    "icdl-obj1-longer": _all(("value", "<=", 0.05)),
    "scale-beats-knn": _all(("value", ">", 0)),
    "scale-forecast": _all(("value", "<=", 500_000)),
    "icdl-obj3-longer": _all(("value", "<=", 0.1)),
    # registered before the run of python -m icdl.gpt_icl.scale --profile wide --workers 2 (scale.judge_wider):
    # the largest change of the shortfall below the MLP from width 64 to 128 at the main study's length and the
    # largest upper end of its 90 % band; the largest change from the narrow model at the snapshot of the
    # nearest training FLOPs; objective 1's and 3's numbers on the wider models
    "scale-wider-closer": _all(("value", "<", 0), ("delta_hi", "<", 0)),
    "scale-width-over-steps": _all(("value", "<", 0)),
    # registered before any run of their design (a scan of the learning rate at width 128): the wider claims
    # asked of wider models given their own learning rate -- the width-128 run of profile wide kept the width-64
    # rate and warm phase, and two of its softmax models were still on the plateau at step 4 596. value: the
    # largest change of the shortfall below the MLP from width 64 to 128 over the models (at the main study's
    # length; at the narrow model's snapshot of the nearest training FLOPs), each with its 90 % interval over
    # the test prompts, the largest over the models resample by resample. Gate ``tuned``: the wider models' rate
    # was chosen by a scan of at least three rates at their width (1 or 0); unmet, the claims are inconclusive
    "scale-wider-tuned-closer": _all(("value", "<", 0), ("tuned", "gate", 1)),
    "scale-width-tuned-over-steps": _all(("value", "<", 0), ("tuned", "gate", 1)),
    "icdl-obj1-wider": _all(("value", "<=", 0.05)),
    "icdl-obj3-wider": _all(("value", "<=", 0.1)),
    "icdl-lemma19": _all(("bounds_held", "==", 1), ("value", "<", 1), ("below_start", "==", 1)),
    "reb-dsm": _all(("spread_over_se", "<", 6), ("gap_over_se", "<", 6)),
    "reb-flops": _all(("value", "<", 0.25)),
    "reb-complexity": _all(("value", ">", 100), ("flops_slope", ">=", -2)),
    "reb-times": _all(("value", ">", 1)),
    "lsa-construction": _all(("value", ">=", -1.2), ("value", "<=", -0.8), ("error_at_1000", "<", 0.005)),
    "lsa-appendix-a": _all(HELD),
    "lsa-appendix-b": _all(("value", "<", 2e-3), ("closed_form_vs_gd", "<", 1e-12)),
    # the paper's median test error of Table 1 is 0.000985: ours within a factor 3 of it
    "lsa-table1-error": _all(("value", ">=", 0.000985 / 3), ("value", "<=", 3 * 0.000985)),
    "lsa-table1-corr": _all(("value", ">=", 0.3)),
    "lsa-conclusion": _all(("value", ">", 0.9)),
    "lsa-table2": _all(("value", ">", 0.95)),
    # the query token's largest output weight against its second largest (the paper's "extremely large
    # compared to the other values"), where the median of all weights stood before (issue 40)
    "lsa-fig2": _all(("query_ratio", ">=", 10)),
    "lsa-fig3": _all(("value", ">", 0.9)),
    # registered before any run of the ℓ1 scan (python -m icdl.lsa --profile l1e-4 and --profile l1e-3: the
    # reference protocol with 5 runs at a stronger ℓ1): the best over the two strengths of the analysed run's
    # ratio of the largest to the second query-token output weight, and of min(corr(z, f), |corr(z, LS)|)
    "lsa-l1-dominance": _all(("value", ">=", 10)),
    "lsa-l1-table2": _all(("value", ">", 0.95)),
}


def criterion_verdict(claim: str, values: dict) -> bool | None:
    """The registered criterion of ``claim`` on the recorded numbers ``values``: None (inconclusive) if a gate
    of its design is not met; else False if any condition fails, else None if any is undecided by its interval
    (:meth:`Condition.verdict`), else True."""
    if claim not in CRITERIA:
        raise KeyError(f"claim {claim!r} has no registered criterion in icdl.repro.claims.CRITERIA")
    if any(c.op == "gate" and c.verdict(values) is None for c in CRITERIA[claim]):
        return None  # a gate not met: the design cannot decide this claim
    verdicts = [c.verdict(values) for c in CRITERIA[claim]]
    return False if False in verdicts else None if None in verdicts else True


#: a gate's key as the reader reads it (:func:`unmet_gates`)
GATE_WORDS = {"control": "the positive control passes",
              "fair": "every chosen GD and ridge member lies inside its grid",
              "flow": "every chosen GD member lies inside its grid in flow time ηL, its η's edge flat",
              "tuned": "the wider models' learning rate was chosen by a scan at their width",
              "seeds": "every model is measured on three seeds"}


def unmet_gates(claim: str, values: dict) -> list[str]:
    """The gates of ``claim``'s criterion that ``values`` do not meet, in words (:data:`GATE_WORDS`)."""
    return [GATE_WORDS.get(c.key, c.key) for c in CRITERIA.get(claim, ())
            if c.op == "gate" and c.verdict(values) is None]


def criterion_holds(claim: str, values: dict) -> bool:
    """Whether the recorded numbers ``values`` meet the registered criterion of ``claim`` (decidedly: an
    inconclusive verdict does not hold)."""
    return criterion_verdict(claim, values) is True


# ---- mismatches registered in advance --------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    """A failed criterion we expect and can explain, registered before the run that judges it: the record
    is shown as ``mismatch`` only if it fails its criterion *and* its value (``quantity``) lies in ``band``;
    a failure outside the band, or of a claim not registered here, is ``fail`` and turns CI red.
    ``registered`` is the commit that registered this band (``git show`` it), ``judges`` the run it is
    about."""
    claim: str
    quantity: str
    band: tuple[float, float]
    reason: str
    registered: str = ""
    judges: str = ""

    def contains(self, value: float | None) -> bool:
        return value is not None and self.band[0] <= float(value) <= self.band[1]


MISMATCHES: dict[str, Mismatch] = {m.claim: m for m in (
    Mismatch("lsa-fig3", "corr(output through the dominant cell alone, LS line)", (-1.0, -0.9),
             "panel (a), the full output, can be reproduced while panel (b) is not: where the dominant cell's "
             "output weight has the opposite sign, the curve through that cell alone falls where the "
             "least-squares line rises and the other cells carry the rest of the output",
             "e12d524", "the reference run of python -m icdl.lsa --profile reference"),
    Mismatch("icdl-obj4", "smallest R² gain from the shallowest to the deepest model", (-0.10, 0.0),
             "every depth gets the main study's 6 500-step budget at d = 5, where a 4-layer model already sits near "
             "least squares; deeper models may not use their extra layers in that budget (a hypothesis)",
             "b4ca889", "the reference run of python -m icdl.gpt_icl --profile reference --part depth"),
)}


#: bands that were registered and withdrawn, with the reason: a band registered after a run of its design had
#: been seen (or one so wide that it contains almost any failure) says little about the run it judges. Their
#: claims are judged by the criterion alone (pass, fail or inconclusive); the report lists them.
WITHDRAWN: dict[str, str] = {
    "icdl-obj1": "the band (0.05, 0.20) was widened to (0.02, 0.20) at f47b8f5 after runs of "
                 "the same design had been seen; and the design changed (three seeds, paired prompts, intervals)",
    "icdl-obj2-shift": "the band (0, 0.99) on the share of models (e12d524) contained almost any "
                       "failure; the claim is now judged on the smallest fall between mixtures, with its interval",
    "icdl-obj2-length": "the band (−0.10, 0) was widened to (−0.25, 0) at f47b8f5 to contain "
                        "a failing run; and the comparison changed (the ReLU model against its softmax twin)",
    "icdl-obj3": "the band (0.10, 1.0) was about the absolute fall of R² (now this book's absolute form of "
                 "objective 3); ICDL's claim is now judged against the MLP on the shifted prompts, a design without "
                 "a band",
}

#: the commit that registered each claim's criterion as it stands (``git show <commit>:…/claims.py``): a test
#: (``tests/test_registered.py``) reads every one and fails where a threshold, comparison or band differs today
#: from what was registered, or where a committed result the claim is judged on was made before it
REGISTERED: dict[str, str] = {"icdl-obj4": "b4ca889", "icdl-obj1": "bf39a6e", "icdl-obj2-shift": "bf39a6e",
                              "icdl-obj2-length": "bf39a6e", "icdl-obj3": "bf39a6e", "gpt-obj3-drop": "bf39a6e",
                              "lsa-fig2": "eac7c3b", "gpt-task-linear": "142ad4c", "gpt-task-n01": "142ad4c",
                              "lsa-l1-dominance": "a904e6b", "lsa-l1-table2": "a904e6b",
                              "gpt-n01-beats-ls": "21aab27", "gpt-n01-obj1": "21aab27", "gpt-n01-depth-gap": "21aab27",
                              "mech-control-linear": "cb77cf4", "mech-fair-nearest-gd": "5bc3e86",
                              "mech-fair-sens-gd": "5bc3e86", "mech-fair-cosine-gd": "5bc3e86",
                              **{c: "13f868d" for c in ("mech-flow-nearest-gd", "mech-flow-sens-gd",
                                                        "mech-flow-cosine-gd", "mech-flow-median-gd")},
                              "scale-wider-tuned-closer": "638b4ca", "scale-width-tuned-over-steps": "638b4ca",
                              **{c: "c27bba6" for c in ("mech-seeds-nearest-gd", "mech-seeds-sens-gd",
                                                        "mech-seeds-cosine-gd", "mech-seeds-median-gd")}}


# ---- deviations: claims judged under a changed setting of the paper --------------------------------------

#: the GPT-2 experiments' setting here against ICDL sec. 5 and Appendix F
_SEC5 = ("models trained at d = 5 with 3 layers × 2 heads × width 64, the softmax model with a tanh warm phase and "
         "the ReLU-attention model started from its weights; ICDL: d = 20, 12 × 8 × 256, 500 k steps, each from "
         "scratch on ReLU targets")

#: Claims whose check runs under a stated change of the paper's setting, registered with the change: a record
#: that meets its criterion is ``pass (deviation)``, never a plain ``pass``, and its report entry names the change.
DEVIATIONS: dict[str, str] = {
    "icdl-lemma19": "a sigmoid network with the targets mapped into (0, 1) and a random start, where the paper "
                    "reduces score matching to in-context GD on a ReLU network (outside Theorem 1: see the errata)",
    "icdl-obj1": _SEC5, "icdl-obj2-shift": _SEC5, "icdl-obj2-length": _SEC5, "icdl-obj3": _SEC5,
    "gpt-obj3-drop": _SEC5,
    **{c: _SEC5 + "; here with x ~ N(0, I) in training and test, where ICDL trains on N(−2, I)"
       for c in ("gpt-n01-beats-ls", "gpt-n01-obj1", "gpt-n01-depth-gap")},
    "icdl-obj4": _SEC5.replace("models trained", "models of 4–10 layers trained").replace(
        " with 3 layers × 2 heads × width 64", " with 2 heads × width 64"),
    "icdl-obj1-longer": _SEC5.replace("models trained", "models trained four times the main study's steps"),
    "icdl-obj3-longer": _SEC5.replace("models trained", "models trained four times the main study's steps"),
    "icdl-obj1-wider": _SEC5.replace("3 layers × 2 heads × width 64", "3 layers × 4 heads × width 128"),
    "icdl-obj3-wider": _SEC5.replace("3 layers × 2 heads × width 64", "3 layers × 4 heads × width 128"),
}


# ---- failures we show as failures ---------------------------------------------------------------------

#: Claims whose criterion fails outside any band registered before the run. They stay ``fail`` -- in the
#: ledger, the report and the chapters -- and are listed here with what was seen, so that CI does not block
#: on a failure that is already known and shown; a listed claim that stops failing turns CI red until it is
#: removed from this list (``tests/test_ledger.py``). A failure that is not listed turns CI red.
KNOWN_FAILURES: dict[str, str] = {
    "lsa-fig2": "in the analysed run 8 of the reference (10 runs × 20 000 epochs) the query token's read-out is split "
                "between two embeddings of almost equal output weight, (1, 51) and (3, 51): the largest is 1.12× "
                "the second (though 65× the median of all output weights)",
    # objectives 1 and 3 on three seeds, paired prompts and 90 % intervals, judged on python -m icdl.gpt_icl
    # --profile reference --part main --part shift (commit bf39a6e, each model trained by --part main --depths D
    # --seeds S at the same commit)
    "icdl-obj1": "on the MLP's own prompts the largest shortfall below the MLP up to the training length is 0.086 "
                 "(90 % interval 0.060 to 0.118, over seeds and prompts), from the target-depth-6 ReLU models (R² "
                 "0.945, 0.923 and 0.900 at the training length for the three seeds); the depth-3 and depth-4 "
                 "models fall short by 0.030 to 0.035",
    "icdl-obj3": "on targets with μ = ±0.5 the per-prompt MLP keeps R² of at least 0.98 and least squares of at least "
                 "0.92, while the transformers fall short of the MLP by up to 0.61 (target depth 6, ReLU attention; "
                 "interval 0.51 to 0.93) and by 0.10 to 0.14 at target depths 3 and 4",
    "gpt-obj3-drop": "R² at the training length falls by up to 0.62 (target depth 6, ReLU attention; interval 0.51 to "
                     "0.73) when μ moves to ±0.5, and by 0.05 to 0.10 at target depths 3 and 4",
    "lsa-table2": "in the reference run (10 runs × 20 000 epochs) the analysed run 8 uses the "
                  "LayerNorm division (Table 1 correlation 0.946), but over the 1000 test prompts the value of its "
                  "dominant query cell (1, 51) correlates with the least-squares estimate at −0.43 (paper −0.994), "
                  "though eq. 57's regression still explains it at 0.93",
    # the scale study (chapter gpt_scale), judged on python -m icdl.gpt_icl.scale --profile reference --workers 2
    # (commit f33e965, the main study's models trained four times longer)
    "scale-shortfall-falls": "per doubling of the steps on the target family, five of the six models' shortfall "
                             "below the MLP falls at its point value (−0.0121 to −0.0044), but the depth-3 "
                             "ReLU-attention model's does not: +0.0008 (90 % band over the prompts and the "
                             "snapshots' scatter −0.0052 to +0.0064), 0.027 at its main length and at the end; with "
                             "the snapshots' scatter in them, 3 of the 6 bands reach above 0",
    "icdl-obj3-longer": "after four times the training the target-depth-6 models still lose 0.44 (ReLU) and 0.39 "
                        "(softmax) of R² at the training length when μ moves to ±0.5; at target depths 3 and 4 "
                        "the largest fall is 0.07",
    # the wider models (chapter gpt_scale), judged on python -m icdl.gpt_icl.scale --profile wide --workers 2
    # (commit c411f4e: the main study's schedule and learning rate at width 128, 4 heads)
    "scale-wider-closer": "at the main study's steps the width-128 models are farther from the MLP than the width-64 "
                          "ones for five of the six models (shortfall +0.016 to +0.089 higher, every band above 0) and "
                          "level for the depth-3 softmax model (−0.0001, band −0.006 to +0.007)",
    "scale-width-over-steps": "at equal training FLOPs the width-64 softmax models trained 26 000 steps are closer to "
                              "the MLP than the width-128 ones at 6 500: the wider models' shortfall is +0.020, +0.063 "
                              "and +0.116 higher at target depths 3, 4 and 6, every band above 0",
    "icdl-obj1-wider": "the width-128 models' largest shortfall below the MLP up to the training length is 0.119 "
                       "(target depth 6), against the tolerance of 0.05",
    "icdl-obj3-wider": "the width-128 models lose 0.57 (softmax) and 0.54 (ReLU) of R² at target depth 6 and 0.15 / "
                       "0.14 at depth 4 when μ moves to ±0.5; at depth 3 the largest fall is 0.06",
    # this book's hypotheses about the trained models (chapter gpt_mechanism), all three refuted by the
    # reference run of python -m icdl.gpt_icl.mechanism --profile reference (commit f8538bf)
    "mech-nearest-gd": "at the training length ridge is the nearest candidate to all six models (prediction "
                       "difference 0.021–0.040 of the label spread); GD on the network is 1.3–5.5 times farther",
    "mech-sensitivity-gd": "the mean cosine of $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ between model "
                           "and GD is 0.50–0.75 at the training "
                           "length, against 0.74–0.86 for ridge and least squares",
    # hypotheses 4 and 1 on the scale study's longest-trained models, refuted by python -m icdl.gpt_icl.mechanism
    # --profile longer (commit f2f14e8)
    "mech-longer-toward-gd": "after four times the training GD's ratio to the nearest simple rule rises for five of "
                             "the six models (1.30 → 1.84 to 5.54 → 15.04) and falls only for the depth-4 ReLU model "
                             "(1.81 → 1.75); GD's own difference falls for two of them (depth-3 softmax 0.037 → "
                             "0.026, depth-4 ReLU 0.064 → 0.040) while ridge's falls for five: the models come "
                             "nearer ridge faster than GD, not away from GD in every case",
    "mech-longer-nearest-gd": "after four times the training GD on the network is 1.43–15.04 times farther from the "
                              "models than the nearest simple rule; the nearest candidate is ridge for three models "
                              "and the Adam-trained MLP for the other three",
    "mech-shift-gd": "on inputs from (.5, .5) the context mean is the nearest candidate to all six models at the "
                     "training length; GD is 1.3–1.9 times farther than it",
    # the hypotheses with GD read in gradient-flow time (python -m icdl.gpt_icl.mechanism --profile flow at
    # 806d906): every model's chosen member inside its grid in flow time (ηL = 102.4 for all six), the positive
    # control passed, so the gates are met and the verdicts decide
    "mech-flow-nearest-gd": "GD's prediction difference is 5.595 times the nearest simple rule's at worst (target "
                            "depth 6, ReLU attention; 90 % interval of the largest 1.446 to 6.913), and above 1 on "
                            "the whole interval for five of the six models",
    "mech-flow-sens-gd": "GD's sensitivity L2 difference is 1.618 times the smallest simple rule's at worst (target "
                         "depth 4, ReLU attention; 90 % interval of the largest 1.399 to 1.874)",
    "mech-flow-cosine-gd": "the smallest mean cosine with GD's sensitivity is 0.499 (target depth 6, ReLU attention; "
                           "90 % interval 0.473 to 0.525), the largest 0.754",
    "mech-flow-median-gd": "on the median block of test prompts GD's prediction difference is 1.537 times the "
                           "nearest simple rule's at worst (target depth 3, softmax attention, where GD's own R² "
                           "is above the model's; 90 % interval of the largest 1.355 to 2.087)",
    # ICDL's questions asked again at x ~ N(0, I) (python -m icdl.gpt_icl --profile n01 --part main --part shift
    # at 0569757, three seeds): with the main study's schedule, not tuned for this task, the models stay far
    # from both yardsticks
    "gpt-n01-beats-ls": "at x ~ N(0, I) every transformer predicts worse than least squares on the same prompts: "
                        "its error relative to least squares runs from −0.270 to −1.645 over the six models, below 0 "
                        "on the whole 90 % interval for five of them (the smallest, −1.645: −3.394 to −1.206)",
    "gpt-n01-obj1": "at x ~ N(0, I) the largest shortfall below the MLP is 0.490 (90 % interval 0.455 to 0.564), "
                    "ten times objective 1's tolerance",
}
