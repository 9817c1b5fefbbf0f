"""Real traceback excerpts that stop before the OOM message (a search excerpt, a paste cut
short), with where / when written by hand from what the excerpt shows and the thread says.

Each `text` is verbatim from its `source_url`; the phase is read as if the message came on the
next line (evidence.phase.phase_of at the end of the text). These test the frame formats (rich
boxes, wrapped headers, IPython 7/8, [rankN]: prefixes) and the progress and marker lines, not the
message. They were scored before the phase code was changed for them: 7 of 13 where and 10 of 13
when right; the changes are the class (a header wrapped inside its path, a subscripted optimizer,
a state_dict gathered for a save, HF's notebook bar, `Iteration->` progress, a marker after a
sentence), not the record.
"""

FRAME_RECORDS = [
    {
        "id": "frames-001",
        "source_url": "https://github.com/bmaltais/kohya_ss/issues/1048",
        "text": "│   320 │                                                                                          │\n│ ❱ 321 │   func(                                                                                  │\n│   322 │   │   params,                                                                            │\n│   323 │   │   grads,                                                                             │\n│   324 │   │   exp_avgs,                                                                          │\n│                                                                                                  │\n│ C:\\kohya_ss\\venv\\lib\\site-packages\\torch\\optim\\adamw.py:566 in _multi_tensor_adamw               │\n│                                                                                                  │\n│   563 │   │   │   else:                                                                          │\n│   564 │   │   │   │   exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)                  │\n│   565 │   │   │   │   torch._foreach_div_(exp_avg_sq_sqrt, bias_correction2_sqrt)                │\n│ ❱ 566 │   │   │   │   denom = torch._foreach_add(exp_avg_sq_sqrt, eps)                           │\n│   567 │   │   │                                                                                  │\n╰──────────────────────────────────────────────────────────────────────────────────────────────────╯",
        "answer": {"where": "optimizer_step", "when": "unknown"},
        "note": "rich's boxed traceback (Windows paths), AdamW's multi-tensor step",
    },
    {
        "id": "frames-002",
        "source_url": "https://github.com/facebookresearch/fairseq2/issues/976",
        "text": '                                 _, scale_result = self._loss_scaler.run_optimizer_step(step_nr)                        \n                                                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^                        \n                               File                                                                                     \n                             "/home/sortm/miniconda3/envs/fairseq2/lib/python3.12/site-packages/fairseq2/optim/_dynamic_\n                             loss_scaler.py", line 170, in run_optimizer_step                                           \n                                 loss = self._grad_scaler.step(self._optimizer, closure)                                \n                                        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^                                \n                               File                                                                                     \n                             "/home/sortm/miniconda3/envs/fairseq2/lib/python3.12/site-packages/torch/amp/grad_scaler.py\n                             ", line 457, in step                                                                       \n                                 retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)',
        "answer": {"where": "optimizer_step", "when": "unknown"},
        "note": "a log handler's narrow column wrapped each frame header, inside the path",
    },
    {
        "id": "frames-003",
        "source_url": "https://github.com/flairNLP/flair/issues/3487",
        "text": 'File /pyzr/active_venv/lib/python3.10/site-packages/flair/trainers/trainer.py:624, in ModelTrainer.train_custom(self, base_path, learning_rate)\n    622     gradient_norm = None\n    623 scale_before = scaler.get_scale()\n--> 624 scaler.step(self.optimizer)\n    625 scaler.update()\n    626 scale_after = scaler.get_scale()\n\nFile /pyzr/active_venv/lib/python3.10/site-packages/torch/cuda/amp/grad_scaler.py:370, in GradScaler.step(self, optimizer, *args, **kwargs)\n    366     self.unscale_(optimizer)\n    368 assert len(optimizer_state["found_inf_per_device"]) > 0, "No inf checks were recorded for this optimizer."\n--> 370 retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)\n    372 optimizer_state["stage"] = OptState.STEPPED\n    374 return retval\n',
        "answer": {"where": "optimizer_step", "when": "unknown"},
        "note": "IPython 8 frames: the AMP grad scaler's step",
    },
    {
        "id": "frames-004",
        "source_url": "https://github.com/ContextualAI/gritlm/issues/65",
        "text": '[rank0]:   File "/home/hongjizhang/gritlm/gritlm/training/run.py", line 438, in <module>\n[rank0]:     main()\n[rank0]:   File "/home/hongjizhang/gritlm/gritlm/training/run.py", line 419, in main\n[rank0]:     trainer.train()\n[rank0]:   File "/home/hongjizhang/.conda/envs/gritlm/lib/python3.10/site-packages/transformers/trainer.py", line 1539, in train\n[rank0]:     return inner_training_loop(\n[rank0]:   File "/home/hongjizhang/gritlm/gritlm/training/gradcache_trainer.py", line 766, in _inner_training_loop\n[rank0]:     self.optimizer.step()\n[rank0]:   File "/home/hongjizhang/.conda/envs/gritlm/lib/python3.10/site-packages/accelerate/optimizer.py", line 145, in step\n[rank0]:     self.optimizer.step(closure)\n[rank0]:   File "/home/hongjizhang/.conda/envs/gritlm/lib/python3.10/site-packages/torch/optim/lr_scheduler.py", line 137, in wrapper\n[rank0]:     return func.__get__(opt, opt.__class__)(*args, **kwargs)\n[rank0]:   File "/home/hongjizhang/.conda/envs/gritlm/lib/python3.10/site-packages/torch/optim/optimizer.py", line 487, in wrapper\n[rank0]:     out = func(*args, **kwargs)\n[rank0]:   File "/home/hongjizhang/.conda/envs/gritlm/lib/python3.10/site-packages/torch/optim/optimizer.py", line 91, in _use_grad\n[rank0]:     ret = func(self, *args, **kwargs)',
        "answer": {"where": "optimizer_step", "when": "unknown"},
        "note": "[rank0]: frames through accelerate's optimizer wrapper",
    },
    {
        "id": "frames-005",
        "source_url": "https://github.com/mlcommons/algorithmic-efficiency/issues/425",
        "text": 'Traceback (most recent call last):\n  File "submission_runner.py", line 644, in <module>\n    app.run(main)\n  File "/usr/local/lib/python3.8/dist-packages/absl/app.py", line 308, in run\n    _run_main(main, argv)\n  File "/usr/local/lib/python3.8/dist-packages/absl/app.py", line 254, in _run_main\n    sys.exit(main(argv))\n  File "submission_runner.py", line 615, in main\n    score = score_submission_on_workload(\n  File "submission_runner.py", line 538, in score_submission_on_workload\n    timing, metrics = train_once(workload, global_batch_size,\n  File "submission_runner.py", line 300, in train_once\n    optimizer_state, model_params, model_state = update_params(\n  File "/algorithmic-efficiency/baselines/adamw/pytorch/submission.py", line 115, in update_params\n    optimizer_state[\'optimizer\'].step()',
        "answer": {"where": "optimizer_step", "when": "unknown"},
        "note": "optimizer_state['optimizer'].step(): the optimizer behind a subscript",
    },
    {
        "id": "frames-006",
        "source_url": "https://github.com/huggingface/transformers/issues/17089",
        "text": '  File "question-answering/run_seq2seq_qa.py", line 740, in <module>\n    main()\n  File "question-answering/run_seq2seq_qa.py", line 699, in main\n    metrics = trainer.evaluate(max_length=max_length, num_beams=num_beams, metric_key_prefix="eval")\n  File "/question-answering/trainer_seq2seq_qa.py", line 65, in evaluate\n    ignore_keys=ignore_keys,\n  File "/venv/lib/python3.7/site-packages/transformers/trainer.py", line 2515, in evaluation_loop\n    preds_host = logits if preds_host is None else nested_concat(preds_host, logits, padding_index=-100)\n  File "/venv/lib/python3.7/site-packages/transformers/trainer_pt_utils.py", line 97, in nested_concat\n    return type(tensors)(nested_concat(t, n, padding_index=padding_index) for t, n in zip(tensors, new_tensors))',
        "answer": {"where": "eval", "when": "unknown"},
        "note": "HF Trainer's evaluation_loop concatenating the predictions",
    },
    {
        "id": "frames-007",
        "source_url": "https://github.com/deepakn97/relationPrediction/issues/25",
        "text": 'Iteration-> 674  , Iteration_time-> 0.1287 , Iteration_loss 0.0011\nIteration-> 675  , Iteration_time-> 0.1287 , Iteration_loss 0.0010\nIteration-> 676  , Iteration_time-> 0.1297 , Iteration_loss 0.0009\nIteration-> 677  , Iteration_time-> 0.1297 , Iteration_loss 0.0009\nIteration-> 678  , Iteration_time-> 0.0578 , Iteration_loss 0.0013\nEpoch 199 , average loss 0.0010276363643238785 , epoch_time 88.21463370323181\nSaving Model\nDone saving Model\nSampled indices\ntest set length  3134\n0\nTraceback (most recent call last):\n  File "main.py", line 369, in <module>\n    evaluate_conv(args, Corpus_.unique_entities_train)\n  File "main.py", line 363, in evaluate_conv\n    Corpus_.get_validation_pred(args, model_conv, unique_entities)\n  File "C:\\Users\\a\\Documents\\GitHub\\relationPrediction\\create_batch.py", line 423, in get_validation_pred\n    new_x_batch_head[:num_triples_each_shot, :]).cuda())\n  File "C:\\Users\\a\\Documents\\GitHub\\relationPrediction\\models.py", line 208, in batch_test\n    out_conv = self.convKB(conv_input)\n  File "D:\\anaconda3\\envs\\python37-pytorch10.2\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 550, in __call__\n    result = self.forward(*input, **kwargs)\n  File "C:\\Users\\a\\Documents\\GitHub\\relationPrediction\\layers.py", line 35, in forward\n    self.non_linearity(self.conv_layer(conv_input)))',
        "answer": {"where": "eval", "when": "eval_start"},
        "note": "'Iteration-> 678' progress, a save, then the evaluation's first batch",
    },
    {
        "id": "frames-008",
        "source_url": "https://github.com/rpryzant/delete_retrieve_generate/issues/10",
        "text": '2019-08-13 16:22:39,949 - INFO - EPOCH: 1 ITER: 600.0/692.2578125 WPS: 1307.13 LOSS: 3.9828 METRIC: 5.7959\n2019-08-13 16:22:57,935 - INFO - EPOCH 1 COMPLETE. EVALUATING...\n0/500...Traceback (most recent call last):\n  File "/home/chenzhanghui/.pycharm_helpers/pydev/pydevd.py", line 1741, in <module>\n    main()\n  File "/home/chenzhanghui/.pycharm_helpers/pydev/pydevd.py", line 1735, in main',
        "answer": {"where": "eval", "when": "eval_start"},
        "note": "'EPOCH 1 COMPLETE. EVALUATING...' then '0/500...Traceback': the frames shown are the debugger's",
    },
    {
        "id": "frames-009",
        "source_url": "https://github.com/NVIDIA/apex/issues/589",
        "text": 'File "/usr/local/python3/lib/python3.6/site-packages/torch/nn/modules/module.py", line 695, in state_dict\n    module.state_dict(destination, prefix + name + \'.\', keep_vars=keep_vars)\n  File "/usr/local/python3/lib/python3.6/site-packages/torch/nn/modules/module.py", line 695, in state_dict\n    module.state_dict(destination, prefix + name + \'.\', keep_vars=keep_vars)\n  [Previous line repeated 2 more times]\n  File "/usr/local/python3/lib/python3.6/site-packages/torch/nn/modules/module.py", line 697, in state_dict\n    hook_result = hook(self, destination, prefix, local_metadata)',
        "answer": {"where": "checkpoint_save", "when": "unknown"},
        "note": "model.module.state_dict() before torch.save (the reporter's words)",
    },
    {
        "id": "frames-010",
        "source_url": "https://github.com/rmihaylov/falcontune/issues/19",
        "text": 'File "/opt/conda/lib/python3.9/site-packages/bitsandbytes/nn/modules.py", line 336, in _save_to_state_dict\nself.weight.data = undo_layout(self.state.CxB, self.state.tile_indices)\nFile "/opt/conda/lib/python3.9/site-packages/bitsandbytes/autograd/_functions.py", line 96, in undo_layout\noutputs = torch.empty_like(tensor) # note: not using .index_copy because it was slower on cuda',
        "answer": {"where": "checkpoint_save", "when": "unknown"},
        "note": "bitsandbytes' _save_to_state_dict while saving a checkpoint; the paste lost its indentation",
    },
    {
        "id": "frames-011",
        "source_url": "https://github.com/lm-sys/FastChat/issues/693",
        "text": "│   1817 │   │   │   if module is not None:                                                        │\n│ ❱ 1818 │   │   │   │   module.state_dict(destination=destination, prefix=prefix + name + '.', k  │\n│   1819 │   │   for hook in self._state_dict_hooks.values():                                      │\n│   1820 │   │   │   hook_result = hook(self, destination, prefix, local_metadata)                 │\n│   1821 │   │   │   if hook_result is not None:                                                   │\n│                                                                                                  │\n│ /ihepbatch/cc/zdzhang/anaconda3/envs/haist/lib/python3.10/site-packages/torch/nn/modules/module. │\n│ py:1818 in state_dict                                                                            │\n│                                                                                                  │\n│   1815 │   │   self._save_to_state_dict(destination, prefix, keep_vars)                          │\n│   1816 │   │   for name, module in self._modules.items():                                        │\n│   1817 │   │   │   if module is not None:                                                        │\n│ ❱ 1818 │   │   │   │   module.state_dict(destination=destination, prefix=prefix + name + '.', k  │",
        "answer": {"where": "checkpoint_save", "when": "unknown"},
        "note": "rich's box cut the frame's path inside 'module.' / 'py:1818'",
    },
    {
        "id": "frames-012",
        "source_url": "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/340",
        "text": ' [ 501/1500 06:35 < 13:11, 1.26 it/s, Epoch 1/3]\nStep\tTraining Loss\n---------------------------------------------------------------------------\nOutOfMemoryError                          Traceback (most recent call last)\nCell In[9], line 22\n      1 training_args = TrainingArguments(\n      2     "output",\n      3     fp16 =True,\n   (...)\n     12     group_by_length=False,\n     13 )\n     16 trainer = ModifiedTrainer(\n     17     model=model,\n     18     train_dataset=mini_train_dataset,\n     19     args=training_args,\n     20     data_collator=data_collator,\n     21 )\n---> 22 trainer.train()\n\nFile ~/miniconda3/envs/textgen/lib/python3.10/site-packages/transformers/trainer.py:1633, in Trainer.train(self, resume_from_checkpoint, trial, ignore_keys_for_eval, **kwargs)\n   1628     self.model_wrapped = self.model\n   1630 inner_training_loop = find_executable_batch_size(\n   1631     self._inner_training_loop, self._train_batch_size, args.auto_find_batch_size\n   1632 )\n-> 1633 return inner_training_loop(\n   1634     args=args,\n   1635     resume_from_checkpoint=resume_from_checkpoint,\n   1636     trial=trial,\n   1637     ignore_keys_for_eval=ignore_keys_for_eval,\n   1638 )',
        "answer": {"where": "unknown", "when": "mid_run"},
        "note": "HF's notebook bar at 501/1500; the frames shown stop at Trainer.train",
    },
    {
        "id": "frames-013",
        "source_url": "https://github.com/leeesangwon/PyTorch-Image-Retrieval/issues/19",
        "text": "---> 73         self.training_type_plugin.start_training(trainer)\n     74 \n     75     def start_testing(self, trainer):\n\n/usr/local/lib/python3.7/dist-packages/pytorch_lightning/plugins/training_type/training_type_plugin.py in start_training(self, trainer)\n    112     def start_training(self, trainer: 'Trainer') -> None:\n    113         # double dispatch to initiate the training loop\n--> 114         self._results = trainer.run_train()\n    115 \n    116     def start_testing(self, trainer: 'Trainer') -> None:\n\n/usr/local/lib/python3.7/dist-packages/pytorch_lightning/trainer/trainer.py in run_train(self)\n    635                 with self.profiler.profile(\"run_training_epoch\"):\n    636                     # run train epoch\n--> 637                     self.train_loop.run_training_epoch()\n    638 \n    639                 if self.max_steps and self.max_steps <= self.global_step:\n\n/usr/local/lib/python3.7/dist-packages/pytorch_lightning/trainer/training_loop.py in run_training_epoch(self)\n    490             # ------------------------------------\n    491             with self.trainer.profiler.profile(\"run_training_batch\"):\n--> 492                 batch_output = self.run_training_batch(batch, batch_i",
        "answer": {"where": "unknown", "when": "unknown"},
        "note": "IPython 7 frames of Lightning's loop, cut before the step: nothing says where",
    },
    {
        "id": "frames-014",
        "source_url": "https://github.com/claws-lab/jodie/issues/6",
        "text": 'Traceback (most recent call last):\n  File "jodie.py", line 219, in <module>\n    save_model(model, optimizer, args, ep, user_embeddings_dystat, item_embeddings_dystat, train_end_idx, user_embeddings_timeseries, item_embeddings_timeseries)\n  File "/home/jianfeng/dl/jodie_dip/library_models.py", line 163, in save_model\n    torch.save(state, filename)\n  File "/home/jianfeng/.conda/envs/jodie/lib/python2.7/site-packages/torch/serialization.py", line 260, in save\n    return _with_file_like(f, "wb", lambda f: _save(obj, f, pickle_module, pickle_protocol))\n  File "/home/jianfeng/.conda/envs/jodie/lib/python2.7/site-packages/torch/serialization.py", line 185, in _with_file_like\n    return body(f)\n  File "/home/jianfeng/.conda/envs/jodie/lib/python2.7/site-packages/torch/serialization.py", line 260, in <lambda>\n    return _with_file_like(f, "wb", lambda f: _save(obj, f, pickle_module, pickle_protocol))',
        "answer": {"where": "checkpoint_save", "when": "unknown"},
        "note": "save_model -> torch.save at the end of an epoch (the thread's first problem; cut inside torch's frames)",
    },
    {
        "id": "frames-015",
        "source_url": "https://github.com/Facico/Chinese-Vicuna/issues/147",
        "text": "│ /data/jiangzhisheng/anaconda3/envs/llama/lib/python3.9/site-packages/torch/nn/modules/module.py: │\n│ 1448 in state_dict                                                                               │\n│                                                                                                  │\n│   1445 │   │   self._save_to_state_dict(destination, prefix, keep_vars)                          │\n│   1446 │   │   for name, module in self._modules.items():                                        │\n│   1447 │   │   │   if module is not None:                                                        │\n│ ❱ 1448 │   │   │   │   module.state_dict(destination=destination, prefix=prefix + name + '.', k  │\n│   1449 │   │   for hook in self._state_dict_hooks.values():                                      │\n│   1450 │   │   │   hook_result = hook(self, destination, prefix, local_metadata)                 │\n│   1451 │   │   │   if hook_result is not None:                                                   │\n│                                                                                                  │\n│ /data/jiangzhisheng/anaconda3/envs/llama/lib/python3.9/site-packages/torch/nn/modules/module.py: │\n│ 1448 in state_dict                                                                               │",
        "answer": {"where": "checkpoint_save", "when": "unknown"},
        "note": "'cuda out of memory in saving steps': rich's box, module.py's path cut before its line number",
    },
]
