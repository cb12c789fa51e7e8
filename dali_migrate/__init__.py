"""dali-migrate: convert NVIDIA DALI pipeline-mode code to dynamic mode (ndd)."""

__version__ = "0.1.0"
