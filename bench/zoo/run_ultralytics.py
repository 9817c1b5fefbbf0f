"""Ultralytics' YOLO trainer on a tiny detection set (CPU): a YOLOv8n built from its yaml (no
weights downloaded), 2 epochs of 4 batches, its own validation after each. `--resume` resumes
the last run's last.pt."""

import os
import sys

import oomshot

oomshot.arm()

from ultralytics import YOLO  # noqa: E402

if "--resume" in sys.argv:
    YOLO("runs/detect/train/weights/last.pt").train(resume=True, device="cpu", workers=0)
else:
    # ZOO_VARIANT=cls: the classifier (its own bars: "loss", then "classes top1_acc top5_acc").
    cls = os.environ.get("ZOO_VARIANT") == "cls"
    YOLO("yolov8n-cls.yaml" if cls else "yolov8n.yaml").train(
        data=sys.argv[2] if cls else sys.argv[1],
        epochs=2,
        imgsz=64,
        batch=4,
        device="cpu",
        workers=0,
        plots=False,
        amp=False,
        seed=0,
        optimizer="AdamW",
        lr0=1e-3,
        exist_ok=True,
    )
