"""A small GPT's training loop (a fixture written here in the shape of nanoGPT's train.py: its
settings are module globals that a config file and --key=value arguments override)."""

out_dir = "out"
eval_interval = 2000
gradient_accumulation_steps = 8  # steps of accumulation before each optimizer step
batch_size = 16  # with accumulation, this is the micro-batch size of each step
block_size = 1024
learning_rate = 6e-4
config_keys = [k for k, v in globals().items() if not k.startswith("_")]
exec(open("configurator.py").read())  # noqa: SIM115 (the shape read: overrides)

print(batch_size, gradient_accumulation_steps)
