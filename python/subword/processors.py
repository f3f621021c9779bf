"""``subword.processors``: HF ``tokenizers.processors`` names; the WordPiece tokenizer runs
the pipeline, whose post-processors these are (``subword.tokenizers.processors``)."""

from .tokenizers.processors import BertProcessing, TemplateProcessing

__all__ = ["BertProcessing", "TemplateProcessing"]
