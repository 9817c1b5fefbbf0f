"""A LightningCLI entry: the model and the data named by the config's class_path entries."""

from lightning.pytorch.cli import LightningCLI

if __name__ == "__main__":
    LightningCLI(save_config_kwargs={"overwrite": True})
