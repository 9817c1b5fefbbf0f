"""Real OOM tracebacks from public threads, with where / when / cause as the thread shows them.

Each `text` is copied verbatim from its `source_url` (an excerpt: the part of the paste from the
traceback's first kept line to the message; `note` says what is cut). The answer key is written
by hand from the paste and the thread: `where` and `when` from what the paste shows (`unknown`
where it does not show it: a paste without progress lines does not say how far the run got);
`cause` only where the thread confirms it (the reporter's fix worked), else None.
"""

RECORDS = [
    {
        "id": "phase-001",
        "source_url": "https://github.com/ExplainableML/czsl/issues/7",
        "text": (
            '  File "train.py", line 228, in <module>\n'
            "    main()\n"
            '  File "train.py", line 108, in main\n'
            "    test(epoch, image_extractor, model, testloader, evaluator_val, writer, args, logpath)\n"
            '  File "train.py", line 193, in test\n'
            "    stats = evaluator.evaluate_predictions(results, all_attr_gt, all_obj_gt, all_pair_gt, all_pred_dict, topk=args.topk)\n"
            '  File "/nfs4/krissna/OWCZL/czsl-main/czsl-main/models/common.py", line 489, in evaluate_predictions\n'
            "    results = self.score_fast_model(scores, obj_truth, bias = bias, topk = topk)\n"
            '  File "/nfs4/krissna/OWCZL/czsl-main/czsl-main/models/common.py", line 363, in score_fast_model\n'
            "    scores[~mask] += bias # Add bias to test pairs\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 4.18 GiB (GPU 0; 10.92 GiB total capacity; 4.68 GiB already allocated; 2.44 GiB free; 7.85 GiB reserved in total by PyTorch)"
        ),
        "answer": {"where": "eval", "when": "unknown", "cause": None},
        "note": "the paste starts at the first frame (its Traceback line is not in the issue)",
    },
    {
        "id": "phase-002",
        "source_url": "https://github.com/huggingface/trl/pull/2776",
        "text": (
            '[rank0]:   File "/home/export/base/sc100010/sc100010/.conda/envs/torch/lib/python3.10/site-packages/torch/optim/optimizer.py", line 487, in wrapper\n'
            "[rank0]:     out = func(*args, **kwargs)\n"
            '[rank0]:   File "/home/export/base/sc100010/sc100010/.conda/envs/torch/lib/python3.10/site-packages/torch/optim/optimizer.py", line 91, in _use_grad\n'
            "[rank0]:     ret = func(self, *args, **kwargs)\n"
            '[rank0]:   File "/home/export/base/sc100010/sc100010/.conda/envs/torch/lib/python3.10/site-packages/torch/optim/adamw.py", line 220, in step\n'
            "[rank0]:     adamw(\n"
            '[rank0]:   File "/home/export/base/sc100010/sc100010/.conda/envs/torch/lib/python3.10/site-packages/torch/optim/optimizer.py", line 154, in maybe_fallback\n'
            "[rank0]:     return func(*args, **kwargs)\n"
            '[rank0]:   File "/home/export/base/sc100010/sc100010/.conda/envs/torch/lib/python3.10/site-packages/torch/optim/adamw.py", line 782, in adamw\n'
            "[rank0]:     func(\n"
            '[rank0]:   File "/home/export/base/sc100010/sc100010/.conda/envs/torch/lib/python3.10/site-packages/torch/optim/adamw.py", line 606, in _multi_tensor_adamw\n'
            "[rank0]:     exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)\n"
            "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 130.00 MiB. GPU 0 has a total capacity of 94.99 GiB of which 87.19 MiB is free. Including non-PyTorch memory,"
        ),
        "answer": {"where": "optimizer_step", "when": "unknown", "cause": None},
        "note": "a comment's paste from its middle frames; cut after 'Including non-PyTorch memory,'",
    },
    {
        "id": "phase-003",
        "source_url": "https://github.com/lopuhin/transformer-lm/issues/21",
        "text": (
            '  File "/home/ubuntu/efs/transformer-lm/lm/main.py", line 140, in main\n'
            "    load_model()\n"
            '  File "/home/ubuntu/efs/transformer-lm/lm/main.py", line 136, in load_model\n'
            "    optimizer.load_state_dict(torch.load(optimizer_path))\n"
            '  File "/home/ubuntu/anaconda3/envs/pytorch_p36/lib/python3.6/site-packages/torch/serialization.py", line 387, in load\n'
            "    return _load(f, map_location, pickle_module, **pickle_load_args)\n"
            '  File "/home/ubuntu/anaconda3/envs/pytorch_p36/lib/python3.6/site-packages/torch/serialization.py", line 574, in _load\n'
            "    result = unpickler.load()\n"
            '  File "/home/ubuntu/anaconda3/envs/pytorch_p36/lib/python3.6/site-packages/torch/serialization.py", line 537, in persistent_load\n'
            "    deserialized_objects[root_key] = restore_location(obj, location)\n"
            '  File "/home/ubuntu/anaconda3/envs/pytorch_p36/lib/python3.6/site-packages/torch/serialization.py", line 119, in default_restore_location\n'
            "    result = fn(storage, location)\n"
            '  File "/home/ubuntu/anaconda3/envs/pytorch_p36/lib/python3.6/site-packages/torch/serialization.py", line 99, in _cuda_deserialize\n'
            "    return storage_type(obj.size())\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.17 GiB total capacity; 962.69 MiB already allocated; 17.19 MiB f"
        ),
        "answer": {"where": "checkpoint_load", "when": "after_resume", "cause": None},
        "note": "'Fail to resume on multiple gpu' (8 GPUs, the optimizer state loaded without "
        "map_location); cut inside the message",
    },
    {
        "id": "phase-004",
        "source_url": "https://github.com/nkolot/SPIN/issues/76",
        "text": (
            "    return _load(f, map_location, pickle_module, **pickle_load_args)\n"
            '  File "/home/giuliamartinelli/SPIN/spin/lib/python3.6/site-packages/torch/serialization.py", line 613, in _load\n'
            "    result = unpickler.load()\n"
            '  File "/home/giuliamartinelli/SPIN/spin/lib/python3.6/site-packages/torch/serialization.py", line 576, in persistent_load\n'
            "    deserialized_objects[root_key] = restore_location(obj, location)\n"
            '  File "/home/giuliamartinelli/SPIN/spin/lib/python3.6/site-packages/torch/serialization.py", line 155, in default_restore_location\n'
            "    result = fn(storage, location)\n"
            '  File "/home/giuliamartinelli/SPIN/spin/lib/python3.6/site-packages/torch/serialization.py", line 135, in _cuda_deserialize\n'
            "    return storage_type(obj.size())\n"
            '  File "/home/giuliamartinelli/SPIN/spin/lib/python3.6/site-packages/torch/cuda/__init__.py", line 634, in _lazy_new\n'
            "    return super(_CudaBase, cls).__new__(cls, *args, **kwargs)\n"
            "RuntimeError: CUDA error: out of memory"
        ),
        "answer": {"where": "checkpoint_load", "when": "unknown", "cause": None},
        "note": "turn 6: the tail of a torch.load traceback (demo.py loading a checkpoint for "
        "inference); the repeat after it is left out",
    },
    {
        "id": "phase-005",
        "source_url": "https://github.com/nkolot/SPIN/issues/76",
        "text": (
            "Traceback (most recent call last):\n"
            '  File "demo.py", line 119, in <module>\n'
            "    model = hmr(config.SMPL_MEAN_PARAMS).to(device)\n"
            '  File "/home/giuliamartinelli/SPIN/spin/lib/python3.6/site-packages/torch/nn/modules/module.py", line 426, in to\n'
            "    return self._apply(convert)\n"
            '  File "/home/giuliamartinelli/SPIN/spin/lib/python3.6/site-packages/torch/nn/modules/module.py", line 202, in _apply\n'
            "    module._apply(fn)\n"
            '  File "/home/giuliamartinelli/SPIN/spin/lib/python3.6/site-packages/torch/nn/modules/module.py", line 224, in _apply\n'
            "    param_applied = fn(param)\n"
            '  File "/home/giuliamartinelli/SPIN/spin/lib/python3.6/site-packages/torch/nn/modules/module.py", line 424, in convert\n'
            "    return t.to(device, dtype if t.is_floating_point() else None, non_blocking)\n"
            "RuntimeError: CUDA error: out of memory"
        ),
        "answer": {"where": "model_init", "when": "first_step", "cause": None},
        "note": "turn 4: the second of two identical tracebacks",
    },
    {
        "id": "phase-006",
        "source_url": "https://github.com/catalyst-team/catalyst/issues/143",
        "text": (
            "0/10 * Epoch (train): 100% 32/32 [00:41<00:00,  2.39s/it, _fps=11.486, loss=0.898] \n"
            "0/10 * Epoch (valid):   3% 1/32 [00:01<00:46,  1.50s/it, _fps=21.531, loss=1.656]\n"
            "Traceback (most recent call last):\n"
            "....\n"
            "RuntimeError: CUDA error: out of memory"
        ),
        "answer": {"where": "eval", "when": "eval_start", "cause": None},
        "note": "the reporter elided the frames with '....'",
    },
    {
        "id": "phase-007",
        "source_url": "https://github.com/jiesutd/NCRFpp/issues/121",
        "text": (
            "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n"
            "Traceback (most recent call last):\n"
            '  File "main.py", line 445, in <module>\n'
            "    train(data)\n"
            '  File "main.py", line 357, in train\n'
            "    loss.backward()\n"
            '  File "/home/jhy/py2.7/local/lib/python2.7/site-packages/torch/autograd/variable.py", line 167, in backward\n'
            "    torch.autograd.backward(self, gradient, retain_graph, create_graph, retain_variables)\n"
            '  File "/home/jhy/py2.7/local/lib/python2.7/site-packages/torch/autograd/__init__.py", line 99, in backward\n'
            "    variables, grad_variables, retain_graph)\n"
            "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/torch/lib/THC/generic/THCStorage.cu:58"
        ),
        "answer": {"where": "backward", "when": "unknown", "cause": None},
        "note": "old PyTorch prints THC's line before the Python traceback",
    },
    {
        "id": "phase-008",
        "source_url": "https://github.com/pytorch/pytorch/issues/18313",
        "text": (
            "Traceback (most recent call last):\n"
            '  File "info.py", line 409, in <module>\n'
            "    loss.backward()\n"
            '  File "/home/xyz/anaconda3/envs/ml_torch/lib/python3.7/site-packages/torch/tensor.py", line 93, in backward\n'
            "    torch.autograd.backward(self, gradient, retain_graph, create_graph)\n"
            '  File "/home/xyz/anaconda3/envs/ml_torch/lib/python3.7/site-packages/torch/autograd/__init__.py", line 90, in backward\n'
            "    allow_unreachable=True)  # allow_unreachable flag\n"
            "RuntimeError: CUDA error: out of memory"
        ),
        "answer": {"where": "backward", "when": "unknown", "cause": "leak"},
        "note": "the reporter: 'occurring after some epochs ... I manually deleted them after each "
        "epoch and now the problem is resolved' (confirmed; the paste alone cannot show it)",
    },
    {
        "id": "phase-009",
        "source_url": "https://github.com/McGregorWwww/UCTransNet/issues/2",
        "text": (
            "   [Train] Epoch: [1][369/4899]  Loss:0.647 (Avg 0.5565) Dice:0.2340 (Avg 0.3144) LR 1.00e-03   (AvgTime 1.4)\n"
            "   [Train] Epoch: [1][370/4899]  Loss:0.660 (Avg 0.5568) Dice:0.2230 (Avg 0.3141) LR 1.00e-03   (AvgTime 1.4)\n"
            "   [Train] Epoch: [1][371/4899]  Loss:0.380 (Avg 0.5563) Dice:0.5196 (Avg 0.3147) LR 1.00e-03   (AvgTime 1.4)\n"
            "Traceback (most recent call last):\n"
            '  File ".\\train.py", line 189, in <module>\n'
            "\n"
            '  File ".\\train.py", line 135, in main_loop\n'
            "    train_one_epoch(train_loader, model, criterion, optimizer, writer, epoch, None, model_type, logger)\n"
            '  File "D:\\Projects\\Crack\\UCTransNet\\Train_one_epoch.py", line 76, in train_one_epoch\n'
            "    out_loss.backward()\n"
            '  File "C:\\Users\\techno v\\AppData\\Local\\Programs\\Python\\Python38\\lib\\site-packages\\torch\\_tensor.py", line 255, in backward\n'
            "    torch.autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)\n"
            '  File "C:\\Users\\techno v\\AppData\\Local\\Programs\\Python\\Python38\\lib\\site-packages\\torch\\autograd\\__init__.py", line 147, in backward\n'
            "    Variable._execution_engine.run_backward(\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 100.00 MiB (GPU 0; 12.00 GiB total"
        ),
        "answer": {"where": "backward", "when": "mid_run", "cause": None},
        "note": "the last three of the paste's progress lines kept; cut inside the message",
    },
    {
        "id": "phase-010",
        "source_url": "https://github.com/SJTU-ViSYS-team/VisFly/issues/9",
        "text": (
            "    loss.backward()\n"
            '  File "/home/ltx/anaconda3/envs/VisFly/lib/python3.9/site-packages/torch/_tensor.py", line 522, in backward\n'
            "    torch.autograd.backward(\n"
            '  File "/home/ltx/anaconda3/envs/VisFly/lib/python3.9/site-packages/torch/autograd/__init__.py", line 266, in backward\n'
            "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 244.00 MiB. GPU 0 has a total capacity of 7.73 GiB of which 228.50 MiB is free. Including non-PyTorch memory, this process has 6.59 GiB memory in use. Of the allocated memory 5.90 GiB is allocated by PyTorch, and 469.82 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)`"
        ),
        "answer": {"where": "backward", "when": "unknown", "cause": None},
        "note": "the paste's tail, from a code line",
    },
    {
        "id": "phase-011",
        "source_url": "https://github.com/pytorch/pytorch/issues/16417",
        "text": (
            "---------------------------------------------------------------------------\n"
            "RuntimeError                              Traceback (most recent call last)\n"
            "<ipython-input-116-11ebb3420695> in <module>\n"
            "     28         landmarks = landmarks.view(landmarks.size(0),-1).cuda()\n"
            "     29 \n"
            "---> 30         predictions = network(images)\n"
            "     31 \n"
            "     32         # clear all the gradients before calculating them\n"
            "\n"
            "~/anaconda3/lib/python3.7/site-packages/torch/nn/modules/module.py in _call_impl(self, *input, **kwargs)\n"
            "    720             result = self._slow_forward(*input, **kwargs)\n"
            "    721         else:\n"
            "--> 722             result = self.forward(*input, **kwargs)\n"
            "    723         for hook in itertools.chain(\n"
            "    724                 _global_forward_hooks.values(),\n"
            "\n"
            "<ipython-input-112-174da452c85d> in forward(self, x)\n"
            "     13         ##out = self.first_conv(x)\n"
            "     14         x = x.float()\n"
            "---> 15         out = self.model(x)\n"
            "     16         return out\n"
            "\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 12.50 MiB (GPU 0; 10.92 GiB total capacity; 8.57 MiB already allocated; 9.28 GiB free; 4.68 MiB cached)"
        ),
        "answer": {"where": "forward", "when": "unknown", "cause": None},
        "note": "a Jupyter traceback; the frames between the last one shown and the message are "
        "left out, the message is the issue's title",
    },
    {
        "id": "phase-012",
        "source_url": "https://github.com/cong-yi/DMM/issues/3",
        "text": (
            "Traceback (most recent call last):\n"
            '  File "/home/xxl/DMM/train_dmm.py", line 410, in <module>\n'
            "    main_function(args.experiment_directory, args.continue_from)\n"
            '  File "/home/xxl/DMM/train_dmm.py", line 336, in main_function\n'
            "    train_loss, losses_log = dmm_net(latent_vecs, sdf_data, is_on_surf, normal, centers_tensor, indices)\n"
            '  File "/home/xxl/anaconda3/envs/dmm/lib/python3.9/site-packages/torch/nn/modules/module.py", line 1130, in _call_impl\n'
            "    return forward_call(*input, **kwargs)\n"
            '  File "/home/xxl/DMM/networks/dmm_net.py", line 151, in forward\n'
            "    losses = component_sdf_normal_loss(component_sdf, coords, is_on_surf, normal,\n"
            '  File "/home/xxl/DMM/networks/loss.py", line 9, in component_sdf_normal_loss\n'
            "    gradient = compute_gradient(pred_sdf, xyz)\n"
            '  File "/home/xxl/DMM/utils/math.py", line 16, in compute_gradient\n'
            "    grad = torch.autograd.grad(y, [x], grad_outputs=grad_outputs, create_graph=True)[0]\n"
            '  File "/home/xxl/anaconda3/envs/dmm/lib/python3.9/site-packages/torch/autograd/__init__.py", line 276, in grad\n'
            "    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 24.00 MiB (GPU 0; 23.70 GiB total capacity; 22.67 GiB already allocated; 6.88 MiB free; 22.70 GiB reserved in tot"
        ),
        "answer": {"where": "backward", "when": "unknown", "cause": None},
        "note": "autograd.grad inside the loss (a gradient penalty): autograd's engine ran out; cut "
        "inside the message",
    },
    {
        "id": "phase-014",
        "source_url": "https://github.com/facebookarchive/loop/issues/57",
        "text": (
            "Valid (loss 53.34) epoch 1:   9%|██████▍                                                                | 1/11 [00:01<00:13,  1.33s/it]THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n"
            "Traceback (most recent call last):\n"
            '  File "train.py", line 211, in <module>\n'
            "    main()\n"
            '  File "train.py", line 200, in main\n'
            "    eval_loss = evaluate(model, criterion, epoch, eval_losses)\n"
            '  File "train.py", line 157, in evaluate\n'
            "    output, _"
        ),
        "answer": {"where": "eval", "when": "unknown", "cause": None},
        "note": "THC's line glued to an evaluation progress bar, the traceback after it; the "
        "excerpt is cut inside the last frame",
    },
    {
        "id": "phase-015",
        "source_url": "https://github.com/speedinghzl/pytorch-segmentation-toolbox/issues/54",
        "text": (
            "Traceback (most recent call last):\n"
            '  File "train.py", line 251, in <module>\n'
            "    main()\n"
            '  File "train.py", line 228, in main\n'
            "    loss.backward()\n"
            '  File "/home/tongxuedong/anaconda3/envs/pytorch-gpu/lib/python3.6/site-packages/torch/tensor.py", line 118, in backward\n'
            "    torch.autograd.backward(self, gradient, retain_graph, create_graph)\n"
            '  File "/home/tongxuedong/anaconda3/envs/pytorch-gpu/lib/python3.6/site-packages/torch/autograd/__init__.py", line 93, in backward\n'
            "    allow_unreachable=True)  # allow_unreachable flag\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 86.00 MiB (GPU 3; 11.75 GiB total capacity; 10.05 GiB already allocated; 85.81 MiB free; 588.65 MiB cached)"
        ),
        "answer": {"where": "backward", "when": "unknown", "cause": None},
        "note": "whole paste",
    },
    {
        "id": "phase-016",
        "source_url": "https://github.com/Pointcept/Pointcept/issues/101",
        "text": (
            "    return type(data)({k: pin_memory(sample, device) for k, sample in data.items()})  # type: ignore[call-arg]\n"
            '  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/_utils/pin_memory.py", line 60, in <dictcomp>\n'
            "    return type(data)({k: pin_memory(sample, device) for k, sample in data.items()})  # type: ignore[call-arg]\n"
            '  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/_utils/pin_memory.py", line 55, in pin_memory\n'
            "    return data.pin_memory(device)\n"
            "RuntimeError: CUDA error: out of memory\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."
        ),
        "answer": {"where": "data", "when": "unknown", "cause": None},
        "note": "the pin-memory thread's own traceback (the paste starts inside it); scored "
        "right before it was added",
    },
    {
        "id": "phase-017",
        "source_url": "https://github.com/deepspeedai/DeepSpeed/issues/237",
        "text": (
            "    self.optimizer = self._configure_zero_optimizer(basic_optimizer)\n"
            '  File "/opt/conda/envs/python3.6/lib/python3.6/site-packages/deepspeed/pt/deepspeed_light.py", line 591, in _configure_zero_optimizer\n'
            "    mpu=self.mpu)\n"
            '  File "/opt/conda/envs/python3.6/lib/python3.6/site-packages/deepspeed/pt/deepspeed_zero_optimizer.py", line 333, in __init__\n'
            "    self.initialize_optimizer_states()\n"
            '  File "/opt/conda/envs/python3.6/lib/python3.6/site-packages/deepspeed/pt/deepspeed_zero_optimizer.py", line 357, in initialize_optimizer_states\n'
            "    self.optimizer.step()\n"
            '  File "/opt/conda/envs/python3.6/lib/python3.6/site-packages/apex/optimizers/fused_adam.py", line 129, in step\n'
            "    state['exp_avg'] = torch.zeros_like(p.data)\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 8.52 GiB (GPU 0; 31.72 GiB total capacity; 25.59 GiB already allocated; 5.39 GiB free; 14.59 MiB cached)"
        ),
        "answer": {"where": "optimizer_step", "when": "first_step", "cause": None},
        "note": "the paste from its middle (deepspeed.initialize building ZeRO's optimizer, "
        "whose state is made by a step at set-up); when was unknown before the set-up frames "
        "were read",
    },
]
