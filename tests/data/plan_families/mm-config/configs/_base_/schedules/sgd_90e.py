optim_wrapper = dict(optimizer=dict(type="SGD", lr=0.2, momentum=0.9, weight_decay=1e-4))
train_cfg = dict(by_epoch=True, max_epochs=90, val_interval=5)
auto_scale_lr = dict(base_batch_size=384)
