"""A Hydra app whose job already overrides the batch on its command line: the override is
replaced (Hydra refuses a key given twice)."""

import hydra


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg):
    print(f"RUNS micro={cfg.batch_size} accum={cfg.grad_accum}", flush=True)


if __name__ == "__main__":
    main()
