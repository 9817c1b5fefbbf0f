"""Real public threads where a training (or translation) run ran out of GPU memory at a known
batch size and the thread then says which smaller batch sizes ran or still ran out (issue 30:
"Real OOM messages from the corpus with a confirmed working batch size in their thread").

Each record: the OOM message as the thread printed it (verbatim, `text`); the batch it ran out
at (`micro_batch`) and where that number comes from (`micro_batch_from`: the thread's own words,
or the repository default the reporter's command left unchanged, with its file); the
accumulation where the run has one (`grad_accum`); the batch sizes the thread says ran (`works`)
and still ran out (`fails`), with the words that say so (`said`). Nothing is inferred beyond
what `said` and `micro_batch_from` quote: a thread that does not say is left out. `no_fit`:
why runbook is expected to fit nothing from that message.

tests/unit/test_fit_threads.py replays each through `runbook diagnose --log F --micro-batch N`:
runbook must never say a batch fits that its thread saw fail, and never pick below half of a
batch its thread saw run. bench/fit_threads.py prints the table.
"""

THREADS = [
    {
        "id": "fit-okery-yolov5-5",
        "url": "https://github.com/Okery/YOLOv5-PyTorch/issues/5",
        "text": "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 8.00 GiB total capacity; 4.78 GiB already allocated; 0 bytes free; 6.10 GiB reserved in total by PyTorch)",
        "micro_batch": 12,
        "micro_batch_from": "reporter: 'If I try to use any bigger batch, es: 12 ...it will generate the following error'",
        "works": [8],
        "fails": [],
        "said": "reporter: 'I'm trying with an GTX1070 but the training is very slow using a --batch=8'",
    },
    {
        "id": "fit-textsum-4",
        "url": "https://github.com/xiaoyu2018/TextSum/issues/4",
        "text": "CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 11.91 GiB total capacity; 10.84 GiB already allocated; 205.62 MiB free; 10.87 GiB reserved in total by PyTorch)",
        "micro_batch": 8,
        "micro_batch_from": "the issue title: 'batch_size=8，仍有这个问题' (still the problem at batch_size=8)",
        "works": [1],
        "fails": [],
        "said": "reporter, after the maintainer's 'try batch size 1': 'batchsize设成1是可以的' (batch size 1 works)",
    },
    {
        "id": "fit-diffusers-1774",
        "url": "https://github.com/huggingface/diffusers/issues/1774",
        "text": "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0; 47.54 GiB total capacity; 43.42 GiB already allocated; 1.50 GiB free; 44.20 GiB reserved \nin total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CON",
        "micro_batch": 3,
        "micro_batch_from": "reporter's settings: 'batch_size: 3' (DreamBooth on an A6000)",
        "works": [1],
        "fails": [],
        "said": "reporter: 'Reducing the batch size to 1 worked.'",
    },
    {
        "id": "fit-yolov5-2510",
        "url": "https://github.com/ultralytics/yolov5/issues/2510",
        "text": "RuntimeError: CUDA out of memory. Tried to allocate 16.00 MiB (GPU 0; 7.79 GiB total capacity; 6.12 GiB already allocated; 12.31 MiB free; 6.17 GiB reserved in total by PyTorch)",
        "micro_batch": 16,
        "micro_batch_from": "reporter's command line: 'python3 train.py --img 512 --batch-size 16 ...'",
        "works": [4],
        "fails": [],
        "said": "reporter: 'I only train with batch-size = 4 but too slow.'",
    },
    {
        "id": "fit-epipolarpose-6",
        "url": "https://github.com/mkocabas/EpipolarPose/issues/6",
        "text": "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 7.93 GiB total capacity; 6.19 GiB already allocated; 340.00 MiB free; 551.04 MiB cached)",
        "micro_batch": 32,
        "micro_batch_from": "reporter ran 'python scripts/train.py --cfg experiments/mpii/train.yaml'; that file's TRAIN: BATCH_SIZE: 32 (https://github.com/mkocabas/EpipolarPose/blob/master/experiments/mpii/train.yaml)",
        "works": [16],
        "fails": [],
        "said": "reporter: 'I just reduce BATCH_SIZE =16, it is ok.'",
    },
    {
        "id": "fit-fpgm-20",
        "url": "https://github.com/he-y/filter-pruning-geometric-median/issues/20",
        "text": "RuntimeError: CUDA out of memory. Tried to allocate 392.00 MiB (GPU 0; 11.90 GiB total capacity; 11.34 GiB already allocated; 18.94 MiB free; 579.50 KiB cached)",
        "micro_batch": 256,
        "micro_batch_from": "reporter's command 'python original_train.py -a resnet50 ...' sets no -b; original_train.py's '-b', '--batch-size', default=256",
        "works": [128],
        "fails": [],
        "said": "reporter: 'After setting the batch size to 128 or lower The program can run regularly'",
    },
    {
        "id": "fit-gtad-30",
        "url": "https://github.com/frostinassiky/gtad/issues/30",
        "text": "CUDA out of memory. Tried to allocate 4.00 GiB (GPU 0; 10.73 GiB total capacity; 4.41 GiB already allocated; 1.75 GiB free; 3.78 GiB cached)",
        "micro_batch": 8,
        "micro_batch_from": "the repository's opts.py: '--batch_size', type=int, default=8 (the reporter names no other)",
        "works": [4],
        "fails": [],
        "said": "reporter: 'With batch_size / 2 is solved'",
    },
    {
        "id": "fit-resume-ner-4",
        "url": "https://github.com/singhsourabh/Resume-NER/issues/4",
        "text": "RuntimeError: CUDA out of memory. Tried to allocate 92.00 MiB (GPU 0; 1.96 GiB total capacity; 1.46 GiB already allocated; 16.38 MiB free; 1.51 GiB reserved in total by PyTorch",
        "micro_batch": 8,
        "micro_batch_from": "reporter: 'changing the batch size from 8 to 4'",
        "works": [],
        "fails": [4],
        "said": "reporter: 'I tried every possible way like changing the batch size from 8 to 4 and clearing the cache of CUDA Memory.' (it still ran out)",
    },
    {
        "id": "fit-nanogpt-61",
        "url": "https://github.com/karpathy/nanoGPT/issues/61",
        "text": "RuntimeError: CUDA out of memory. Tried to allocate 786.00 MiB (GPU 0; 15.78 GiB total capacity; 14.28 GiB already allocated; 620.69 MiB free; 14.32 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
        "micro_batch": 12,
        "grad_accum": 40,
        "micro_batch_from": "nanoGPT's train.py defaults: 'gradient_accumulation_steps = 5 * 8', 'batch_size = 12 # if gradient_accumulation_steps > 1, this is the micro-batch size'",
        "works": [],
        "fails": [2, 1],
        "said": "reporter: 'Not even working for batch size = 1 or 2.'",
    },
    {
        "id": "fit-opennmt-1473",
        "url": "https://github.com/OpenNMT/OpenNMT-py/issues/1473",
        "text": "RuntimeError: CUDA out of memory. Tried to allocate 8.76 GiB (GPU 0; 11.91 GiB total capacity; 10.59 GiB already allocated; 505.06 MiB free; 234.02 MiB cached)",
        "micro_batch": 30,
        "micro_batch_from": "reporter's command 'python translate.py -model ... -gpu 0' sets no batch size; maintainer: 'set a lower than default batch_size'; onmt/opts.py translate: '-batch_size', type=int, default=30",
        "works": [10],
        "fails": [],
        "said": "reporter: 'I set a batch size of 10 and it works.'",
    },
    {
        "id": "fit-mockingbird-27",
        "url": "https://github.com/babysor/MockingBird/issues/27",
        "text": "`Variable._execution_engine.run_backward(RuntimeError: CUDA out of memory. Tried to allocate 88.00 MiB (GPU 0; 4.00 GiB totalcapacity; 2.68 GiB already allocated; 0 bytes free; 2.85 GiB reserved in total by PyTorch)`",
        "micro_batch": 12,
        "micro_batch_from": "reporter: '默认参数正常训练时经常爆掉显存' (training with the default parameters); synthesizer/hparams.py's tts_schedule batch size, 12 (quoted as the value before the change in babysor/MockingBird#669, printed in #869)",
        "works": [6],
        "fails": [],
        "said": "reporter: '我试着通过修改部分文件将batch_size调到6，跑的很稳定' (batch_size 6 runs stably)",
    },
    {
        "id": "fit-nanochat-443",
        "url": "https://github.com/karpathy/nanochat/issues/443",
        "text": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. \nGPU has 79.19 GiB total, 6.68 GiB free, 72.48 GiB in use by this process.",
        "micro_batch": 32,
        "micro_batch_from": "reporter: 'The buffer size is batch_size(32) x seq_len(2048)' (speedrun.sh's default device batch on an H100)",
        "works": [16],
        "fails": [],
        "said": "reporter's workaround: 'Add --device-batch-size=16 to line 84 of speedrun.sh'",
        "no_fit": "the reporter re-worded PyTorch's figures ('GPU has 79.19 GiB total, 6.68 GiB "
        "free, ...'): no card numbers runbook can read, so no fit and no claim",
    },
]
