_base_ = ["../_base_/datasets/images_bs48.py", "../_base_/schedules/sgd_90e.py"]

model = dict(type="ImageClassifier", backbone=dict(type="ResNet", depth=50))
train_dataloader = dict(num_workers=8)
