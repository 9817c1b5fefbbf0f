"""absl flags, run by absl's app.run."""

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("per_device_batch_size", 16, "Batch size per device.")
flags.DEFINE_integer("grad_accum_steps", 1, "Gradient accumulation steps.")
flags.DEFINE_string("workdir", "/tmp/run", "Where checkpoints go.")


def main(argv):
    print(f"RUNS micro={FLAGS.per_device_batch_size} accum={FLAGS.grad_accum_steps}", flush=True)


if __name__ == "__main__":
    app.run(main)
