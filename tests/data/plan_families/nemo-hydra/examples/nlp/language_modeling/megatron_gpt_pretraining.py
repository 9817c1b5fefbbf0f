# The shape of NeMo's examples/nlp/language_modeling/megatron_gpt_pretraining.py: a Hydra main
# whose config (conf/megatron_gpt_config.yaml) the command line chooses and overrides.
from nemo.core.config import hydra_runner


@hydra_runner(config_path="conf", config_name="megatron_gpt_config")
def main(cfg) -> None:
    return cfg


if __name__ == "__main__":
    main()
