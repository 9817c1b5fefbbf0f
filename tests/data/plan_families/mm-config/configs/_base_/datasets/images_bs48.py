dataset_type = "ImageFolder"
train_dataloader = dict(
    batch_size=48,
    num_workers=6,
    dataset=dict(type=dataset_type, data_root="data/train"),
    sampler=dict(type="DefaultSampler", shuffle=True),
)
val_dataloader = dict(
    batch_size=96,
    num_workers=6,
    dataset=dict(type=dataset_type, data_root="data/val"),
)
