"""Real SentencePiece ``precompiled_charsmap`` blobs for the Precompiled normalizer's tests:
SentencePiece itself compiles its named normalization rules into a model it trains here on a
few lines, and the blob is read from that model's ``normalizer_spec``."""

from __future__ import annotations

import functools
import io

RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf")


@functools.cache
def charsmap(rule: str) -> bytes:
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    lines = [f"Hello world {i} ﬁ①ｶ Å 你好 テスト" for i in range(200)]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=30,
        hard_vocab_limit=False,
        normalization_rule_name=rule,
        minloglevel=3,
    )
    proto = model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    blob = proto.normalizer_spec.precompiled_charsmap
    assert len(blob) > 100_000, f"SentencePiece gave no charsmap for {rule}"
    return blob
