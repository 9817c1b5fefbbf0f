"""ConfigArgParse: a config file the job names, the command line over it."""

import configargparse

p = configargparse.ArgParser()
p.add_argument("-c", "--config", is_config_file=True)
p.add_argument("--batch-size", type=int, default=8)
p.add_argument("--accumulate-grad-batches", type=int, default=1)
a = p.parse_args()
print(f"RUNS micro={a.batch_size} accum={a.accumulate_grad_batches}", flush=True)
