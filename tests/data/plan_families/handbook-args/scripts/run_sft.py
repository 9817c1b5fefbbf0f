# The shape of alignment-handbook's scripts/run_sft.py: the recipe YAML is its one argument.

from alignment import DataArguments, H4ArgumentParser, ModelArguments, SFTConfig


def main():
    parser = H4ArgumentParser((ModelArguments, DataArguments, SFTConfig))
    model_args, data_args, training_args = parser.parse()
    return training_args


if __name__ == "__main__":
    main()
