"""``subword.normalizers``: HF ``tokenizers.normalizers`` names, the same classes as
``subword.tokenizers.normalizers``."""

from __future__ import annotations

from .tokenizers.normalizers import *  # noqa: F403
from .tokenizers.normalizers import __all__  # noqa: F401
