"""A Hydra app whose trainer settings come from a config group."""

import hydra


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg):
    print(f"RUNS micro={cfg.trainer.batch_size} accum={cfg.trainer.accumulate}", flush=True)


if __name__ == "__main__":
    main()
