from llama_recipes.configs.training import train_config

__all__ = ["train_config"]
