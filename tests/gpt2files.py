"""GPT-2's original vocabulary files (encoder.json + vocab.bpe), made from tiktoken ranks."""

from __future__ import annotations

import json
from pathlib import Path


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map: bytes that are printable in Latin-1
    (and not space) stand for themselves; the rest are given code points 256, 257, ... in byte
    order."""
    keep = [
        b for b in range(256) if (0x21 <= b <= 0x7E) or (0xA1 <= b <= 0xAC) or (0xAE <= b <= 0xFF)
    ]
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


def last_merge(token: bytes, rank: int, ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """BPE-encode `token` with only the ranks below `rank`: what is left is the pair whose merge
    creates the token."""
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best, best_rank = None, rank
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < best_rank:
                best, best_rank = i, r
        if best is None:
            break
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
    assert len(parts) == 2, (token, rank, parts)
    return parts[0], parts[1]


def merges_of(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge that creates each multi-byte token, in rank order."""
    return [
        last_merge(tok, rank, ranks)
        for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1])
        if len(tok) > 1
    ]


def write_gpt2_files(ranks: dict[bytes, int], d: Path) -> tuple[Path, Path]:
    b2u = bytes_to_unicode()

    def uni(b: bytes) -> str:
        return "".join(b2u[x] for x in b)

    encoder = {uni(tok): rank for tok, rank in ranks.items()}
    encoder["<|endoftext|>"] = max(ranks.values()) + 1
    (d / "encoder.json").write_text(json.dumps(encoder, ensure_ascii=False), encoding="utf-8")
    lines = ["#version: 0.2"] + [f"{uni(a)} {uni(b)}" for a, b in merges_of(ranks)]
    (d / "vocab.bpe").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return d / "encoder.json", d / "vocab.bpe"
