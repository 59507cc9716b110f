"""A/B of the system prompt on direct generation (one greedy attempt per task) with an embedded model.

Usage: PYCAPSULE_MODEL_THREADS=1 python3 docs/results/system-prompt-ab/prompt_ab.py VARIANT SIZE
(VARIANT: current or qwen-default; SIZE: 0.5b or 1.5b). Results go beside this file, in VARIANT-SIZE/.
An experiment, not a setting: it swaps the programmer's system prompt in this process only. The run hash
covers the rendered prompts, so each variant gets its own results file; finished tasks are kept.
"""

import sys
from pathlib import Path

import pycapsule.programmer as programmer

VARIANTS = {
    "current": programmer.SYSTEM_PROMPT,
    "qwen-default": "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
}
variant, size = sys.argv[1], sys.argv[2]
programmer.SYSTEM_PROMPT = VARIANTS[variant]
from pycapsule.__main__ import main  # noqa: E402  (after the swap: nothing may have copied the prompt)

out = Path(__file__).resolve().parent / f"{variant}-{size}"
sys.exit(main(["bench", "humaneval", "--mode", "direct", "--model", size, "--workers", "1",
               "--out", str(out)]))
