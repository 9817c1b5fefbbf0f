from dataclasses import dataclass


@dataclass
class train_config:
    model_name: str = "PATH/to/Model"
    enable_fsdp: bool = False
    run_validation: bool = True
    batch_size_training: int = 4
    batching_strategy: str = "packing"
    context_length: int = 4096
    gradient_accumulation_steps: int = 1
    num_epochs: int = 3
    lr: float = 1e-4
    val_batch_size: int = 1
    use_peft: bool = False
