# the small model's settings
batch_size = 8
gradient_accumulation_steps = 4 * 8
max_iters = 600000
