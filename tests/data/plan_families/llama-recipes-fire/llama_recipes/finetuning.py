from llama_recipes.configs import train_config as TRAIN_CONFIG
from llama_recipes.utils.config_utils import update_config


def main(**kwargs):
    train_config = TRAIN_CONFIG()
    update_config(train_config, **kwargs)
    return train_config
