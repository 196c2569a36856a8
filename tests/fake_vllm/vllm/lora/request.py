"""Fake ``vllm.lora.request.LoRARequest``."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass
class LoRARequest:
    lora_name: str
    lora_int_id: int
    lora_path: str = ""

    def __post_init__(self):
        if self.lora_int_id < 1:
            raise ValueError(f"id must be > 0, got {self.lora_int_id}")
