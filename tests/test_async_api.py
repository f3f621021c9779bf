"""``subword.tokenizers.Tokenizer``'s async methods (HF's ``async_encode``,
``async_encode_batch``, ``async_encode_batch_fast``, ``async_decode_batch``): awaited together
from one event loop, each gives what HF's synchronous call gives on the same file, and the
loop keeps running while they encode."""

from __future__ import annotations

import asyncio

import subword.tokenizers as ours
import test_bpe_model

LINES = test_bpe_model.CORPUS[:80]
PAIRS = list(zip(LINES, LINES[1:]))


def _view(e):
    return test_bpe_model._full_view(e)


def test_awaited_together_they_equal_hf():
    theirs = test_bpe_model._byte_level_shaped("roberta")
    mine = ours.Tokenizer.from_str(theirs.to_str())
    ids = [e.ids for e in theirs.encode_batch(LINES)]

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        t = asyncio.create_task(ticker())
        out = await asyncio.gather(
            mine.async_encode(LINES[0]),
            mine.async_encode(LINES[1], LINES[2]),
            mine.async_encode(LINES[3].split(), is_pretokenized=True),
            mine.async_encode_batch(LINES),
            mine.async_encode_batch(PAIRS, add_special_tokens=False),
            mine.async_encode_batch_fast(LINES),
            mine.async_decode_batch(ids),
            mine.async_decode_batch(ids, skip_special_tokens=False),
        )
        t.cancel()
        return out, ticks

    (one, two, words, batch, pairs, fast, dec, dec_all), ticks = asyncio.run(main())
    assert _view(one) == _view(theirs.encode(LINES[0]))
    assert _view(two) == _view(theirs.encode(LINES[1], LINES[2]))
    assert _view(words) == _view(theirs.encode(LINES[3].split(), is_pretokenized=True))
    assert [_view(e) for e in batch] == [_view(e) for e in theirs.encode_batch(LINES)]
    want = theirs.encode_batch(PAIRS, add_special_tokens=False)
    assert [_view(e) for e in pairs] == [_view(e) for e in want]
    # HF's fast batch leaves tokens empty and offsets zero; subword's has them (as
    # encode_batch's), and the same ids.
    assert [e.ids for e in fast] == [e.ids for e in theirs.encode_batch_fast(LINES)]
    assert [_view(e) for e in fast] == [_view(e) for e in theirs.encode_batch(LINES)]
    assert dec == theirs.decode_batch(ids)
    assert dec_all == theirs.decode_batch(ids, skip_special_tokens=False)
    assert ticks > 0


def test_errors_come_out_of_the_await():
    mine = ours.Tokenizer.from_str(test_bpe_model._byte_level_shaped("roberta").to_str())

    async def main():
        return await mine.async_encode_batch("not a list")

    try:
        asyncio.run(main())
    except TypeError as e:
        assert "list" in str(e)
    else:
        raise AssertionError("a str batch was accepted")
