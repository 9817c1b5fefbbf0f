"""The CUDA runtime's error string where an allocation failed, without the allocator's numbers:
`CUDA error: out of memory` (a kernel launch, cuBLAS, NCCL's init), and the C++ libraries and
driver-API wrappers that print it in their own words."""

from __future__ import annotations

import re

from runbook.evidence.oom_families import Family, anchor


def fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    return {"device": "CUDA", "format": "cuda_runtime"}


FAMILY = Family(
    name="cuda_error",
    anchors=(
        anchor(r"CUDA\s*error\s*:\s*out\s*of\s*memory", "CUDA", "error"),
        # C++ libraries that report the CUDA runtime's error string: CTranslate2 (faster-whisper,
        # WhisperX) "CUDA failed with error out of memory", spconv's tensorview "cuda failed with
        # error 2 out of memory", Marian's "CUDA error 2 'out of memory' - ...: cudaMalloc(...)".
        anchor(
            r"CUDA\s*(?:failed\s*with\s*error\s*(?:\d{1,4}\s*)?|error\s*\d{1,4}\s*'?)out\s*of\s*memory",
            "error",
            "memory",
            flags=re.IGNORECASE,
        ),
        # C++ code that prints the failed runtime call, then where, then the error string:
        # kmcuda's "cudaMalloc(&__ptr, __size)" / "src/kmcuda.cc:456 -> out of memory".
        anchor(
            r"\bcudaMalloc\w{0,20}\s*\([^()\n]{0,200}\)\s*\S{1,300}?\s*->\s*out\s*of\s*memory",
            "cudaMalloc",
            "memory",
        ),
        # The driver API's allocation failing with the runtime's error string (PyCUDA's
        # "pycuda._driver.MemoryError: cuMemAlloc failed: out of memory"), and CuPy's memory
        # pool ("cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 80384 bytes
        # (total N bytes)").
        anchor(r"\bcuMem\w{0,20}\s*failed\s*:\s*out\s*of\s*memory", "cuMem", "memory"),
        anchor(
            r"OutOfMemoryError\s*:\s*out\s*of\s*memory\s*to\s*allocate\s*\d",
            "OutOfMemoryError",
            "allocate",
        ),
    ),
    fields=fields,
    order=60,
    merge_within=0,
)
