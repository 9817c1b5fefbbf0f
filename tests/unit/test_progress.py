"""The one progress reader (runbook.evidence.progress), data in, data out: the steps a plain
loop prints in its own words, read from real log excerpts of public threads (each names its
source; the lines are as pasted there), and lines that rise without being steps."""

from __future__ import annotations

import pytest

from runbook.evidence.phase import phase_of
from runbook.evidence.progress import rising_counts

# nerfstudio's table under tetra-nerf (https://github.com/jkulhanek/tetra-nerf/issues/12):
# the step is the line's first number, every other figure has a unit or is a float.
NERFSTUDIO = """\
Step (% Done)       Train Iter (time)    ETA (time)           Train Rays / Sec     Test Rays / Sec
--------------------------------------------------------------------------------------------------------
3710 (1.24%)        30.652 ms            2 h, 31 m, 21 s      1.05 K
3720 (1.24%)        31.427 ms            2 h, 35 m, 11 s      1.02 K
3730 (1.24%)        31.215 ms            2 h, 34 m, 7 s       1.03 K
3740 (1.25%)        31.523 ms            2 h, 35 m, 39 s      1.02 K
3750 (1.25%)        31.349 ms            2 h, 34 m, 47 s      1.02 K
3760 (1.25%)        30.495 ms            2 h, 30 m, 33 s      1.05 K
3770 (1.26%)        30.634 ms            2 h, 31 m, 14 s      1.05 K
3780 (1.26%)        31.124 ms            2 h, 33 m, 39 s      1.03 K
3790 (1.26%)        31.544 ms            2 h, 35 m, 43 s      1.02 K
3800 (1.27%)        31.634 ms            2 h, 36 m, 9 s       1.01 K"""

# BasicSR-style lines (https://github.com/Maclory/SPSR/issues/38): a date and a clock, the epoch
# and the iteration rising together, the iteration with a thousands separator.
SPSR = """\
21-05-24 02:11:29.657 - INFO: <epoch: 30, iter:   2,800, lr:1.000e-04> l_g_pix: 3.2022e-03 l_g_fea: 1.7363e+00 l_g_gan: 6.1157e-02
21-05-24 02:14:41.966 - INFO: <epoch: 31, iter:   2,900, lr:1.000e-04> l_g_pix: 2.0775e-03 l_g_fea: 1.6452e+00 l_g_gan: 7.1554e-02
21-05-24 02:17:53.561 - INFO: <epoch: 32, iter:   3,000, lr:1.000e-04> l_g_pix: 1.7321e-03 l_g_fea: 1.6710e+00 l_g_gan: 9.1385e-02
21-05-24 02:21:04.942 - INFO: <epoch: 33, iter:   3,100, lr:1.000e-04> l_g_pix: 2.5524e-03 l_g_fea: 1.6122e+00 l_g_gan: 1.7510e-01"""

# MXNet's Speedometer (https://github.com/TuSimple/mx-maskrcnn/issues/98): each entry wraps
# onto a second line of metrics; "RCNNL1Loss" holds a digit that is no number.
MXNET = """\
INFO:root:Epoch[0] Batch [2160] Speed: 0.33 samples/sec Train-RCNNAcc=0.793918, RCNNLogLoss=0.644269,   RCNNL1Loss=1.508526,
MaskACC=0.913339,       MaskLogLoss=0.151808,
INFO:root:Epoch[0] Batch [2180] Speed: 0.40 samples/sec Train-RCNNAcc=0.794174, RCNNLogLoss=0.643368,   RCNNL1Loss=1.506285,
MaskACC=0.913591,       MaskLogLoss=0.151536,
INFO:root:Epoch[0] Batch [2200] Speed: 0.25 samples/sec Train-RCNNAcc=0.794447, RCNNLogLoss=0.642423,   RCNNL1Loss=1.503376,
MaskACC=0.913819,       MaskLogLoss=0.151283,
INFO:root:Epoch[0] Batch [2220] Speed: 0.33 samples/sec Train-RCNNAcc=0.794536, RCNNLogLoss=0.641529,   RCNNL1Loss=1.500887,
MaskACC=0.914024,       MaskLogLoss=0.151052,"""

# A DETR-style loop, then its traceback (https://github.com/gaopengcuhk/Stable-Pix2Seq/issues/14;
# the paste is cut inside torch's frames, before the message).
PIX2SEQ = """\
Epoch: [0]  [1310/3696]  eta: 0:31:54  lr: 0.000100  loss: 5.1232 (5.4863)  at: 5.1232 (5.4863)  at_unscaled: 5.1232 (5.4863)  time: 0.8117  data: 0.0343  max mem: 29528
Epoch: [0]  [1320/3696]  eta: 0:31:45  lr: 0.000100  loss: 5.1016 (5.4832)  at: 5.1016 (5.4832)  at_unscaled: 5.1016 (5.4832)  time: 0.8161  data: 0.0341  max mem: 29528
Epoch: [0]  [1330/3696]  eta: 0:31:38  lr: 0.000100  loss: 5.0905 (5.4805)  at: 5.0905 (5.4805)  at_unscaled: 5.0905 (5.4805)  time: 0.8149  data: 0.0343  max mem: 29528
Traceback (most recent call last):
  File "main.py", line 257, in <module>
    main(args)
  File "main.py", line 207, in main
    args.clip_max_norm, learning_rate_schedule)
  File "/opt/tiger/intro/Stable-Pix2Seq/engine.py", line 98, in train_one_epoch
    losses.backward()"""


@pytest.mark.parametrize(
    ("text", "last"),
    [(NERFSTUDIO, 3800), (SPSR, 3100), (MXNET, 2220)],
    ids=["nerfstudio-table", "basicsr-iter-with-commas", "mxnet-speedometer"],
)
def test_a_plain_loop_s_own_lines_are_its_steps(text, last):
    steps = rising_counts(text.splitlines())
    assert steps and steps[max(steps)] == last


@pytest.mark.parametrize(
    ("text", "step"),
    [(NERFSTUDIO, 3800), (SPSR, 3100), (MXNET, 2220), (PIX2SEQ, 1330)],
    ids=["nerfstudio-table", "basicsr-iter-with-commas", "mxnet-speedometer", "detr-loop"],
)
def test_an_oom_after_a_plain_loop_s_steps_is_mid_run(text, step):
    lines = [*text.splitlines(), "torch.OutOfMemoryError: CUDA out of memory."]
    p = phase_of(lines, len(lines) - 1)
    assert (p.when, p.step) == ("mid_run", step)


@pytest.mark.parametrize(
    "lines",
    [
        # a clock and a date rise; nothing else does
        [f"2024-05-01 12:00:{s:02d} INFO heartbeat ok" for s in (1, 5, 9, 13)],
        # memory with a unit rises in a leak: it is not a step
        [f"rank 0 allocated {m} MB reserved 81000 MB" for m in (70100, 70900, 71700)],
        # loading and evaluation counts are not the training's
        [f"Loading checkpoint shards {n} of 8" for n in (1, 2, 3, 4)],
        [f"Evaluating batch {n} acc 0.5" for n in (1, 2, 3, 4)],
        # a code listing's line numbers (IPython), and a traceback's frames
        ["    112 ", "    115 ", "    638 "],
        [f'  File "train.py", line {n}, in step' for n in (10, 20, 30)],
        # two lines are not a trend; a count that went down was reset (a new run)
        ["Train loss 4397 0.52", "Train loss 4398 0.51"],
        ["it 7 loss 0.5", "it 8 loss 0.5", "it 9 loss 0.5", "it 1 loss 0.9"],
        # Slurm's own step ids
        [f"slurmstepd: error: *** STEP 20.{n} ON gpu-01 CANCELLED AT x ***" for n in (1, 2, 3)],
    ],
    ids=[
        "clock",
        "memory-unit",
        "loading",
        "eval",
        "code-listing",
        "frames",
        "two",
        "reset",
        "slurm",
    ],
)
def test_lines_that_rise_without_being_steps_are_not_steps(lines):
    assert rising_counts(lines) == {}


def test_a_resumed_count_is_read_from_the_resume_on():
    lines = ["it 7 loss 0.5", "it 8 loss 0.5", "it 3 loss 0.9", "it 4 loss 0.8", "it 5 loss 0.8"]
    assert rising_counts(lines) == {2: 3, 3: 4, 4: 5}


def test_each_rank_s_own_start_up_line_is_no_count():
    """The cluster's four ranks each print their rank once into one log (order by chance:
    2, 0, 1, 3): under srun's labels and without them, that is nobody's step."""
    ranks = [2, 0, 1, 3]
    lines = [f"RUNBOOK_INSTRUMENT start rank={r} torch=2.13.0+cpu" for r in ranks]
    assert rising_counts(lines) == {}
    # Read apart by the rank srun's label named (phase strips the label first).
    bare = [f"RUNBOOK_INSTRUMENT start seq={r} torch=2.13.0+cpu" for r in ranks]
    assert rising_counts(bare, ranks) == {}
    pids = [f"worker pid {p} ready" for p in (4100, 4101, 4102)]
    assert rising_counts(pids) == {}


# The shapes frameworks print for an evaluation's own progress, written here in their shapes
# (issue 55): mmcv's ProgressBar (mmdetection's and mmsegmentation's single_gpu_test), and a
# YOLO validation table's tqdm bar after a finished epoch. Neither count is a training step,
# and an OOM under them is the evaluation's.
MMCV_EVAL = [
    "2023-04-02 10:11:12,345 - mmdet - INFO - Epoch [1][50/1200]\tlr: 2.000e-02, loss: 1.20",
    "2023-04-02 10:12:40,001 - mmdet - INFO - Epoch [1][100/1200]\tlr: 2.000e-02, loss: 1.10",
    *(
        f"[{'>' * k}{' ' * (40 - k)}] {n}/600, 11.{k} task/s, elapsed: {n // 10}s, ETA:    80s"
        for k, n in ((2, 30), (4, 60), (6, 90), (8, 120), (10, 150))
    ),
]
YOLO_VAL = [
    "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
    "       3/50      7.21G      1.118      1.355      1.201         41        640: 100%|"
    "██████████| 291/291 [02:10<00:00,  2.23it/s]",
    *(
        f"                 Class     Images  Instances      Box(P          R      mAP50  "
        f"mAP50-95):  {p}%|█         | {n}/157 [00:0{n // 10}<00:40,  3.1it/s]"
        for p, n in ((6, 10), (13, 20), (19, 31))
    ),
]


@pytest.mark.parametrize(
    ("lines", "step"), [(MMCV_EVAL, 100), (YOLO_VAL, 291)], ids=["mmcv-bar", "yolo-val-tqdm"]
)
def test_an_evaluation_s_own_bar_is_no_step_and_names_the_evaluation(lines, step):
    text = [*lines, "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"]
    p = phase_of(text, len(text) - 1)
    assert (p.where, p.when, p.step) == ("eval", "eval_start", step)
