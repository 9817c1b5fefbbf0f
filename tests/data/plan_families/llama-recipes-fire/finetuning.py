# The shape of llama-recipes' recipes/quickstart/finetuning/finetuning.py: fire hands every
# --option to main(**kwargs), which updates the train_config dataclass.
import fire
from llama_recipes.finetuning import main

if __name__ == "__main__":
    fire.Fire(main)
