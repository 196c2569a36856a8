"""Fake ``vllm.lora``."""
