train_dataloader = dict(batch_size=16, num_workers=2)
val_dataloader = dict(batch_size=32)
optim_wrapper = dict(type="AmpOptimWrapper", accumulative_counts=1)
