import hydra


@hydra.main(config_path="conf", config_name="train", version_base=None)
def main(cfg):
    print(cfg.model.micro_batch_size)


if __name__ == "__main__":
    main()
