"""Naive reference trainers for WordPiece and classic (``</w>``) BPE, written from the spec.

Both recount every symbol and every adjacent pair of every word from scratch at every step and
compare scores exactly (``fractions.Fraction``): slow and obviously right. subword's trainers must
learn the same merges, in the same order, with the same tie-breaks.

WordPiece (likelihood scoring, as in the spec):
  * words: BERT-normalized, BertPreTokenizer-split, counted, in order of first appearance
    (``bert_words`` gets them from HF ``tokenizers``, the oracle for normalization);
  * alphabet: every char, or the ``limit_alphabet`` most frequent (ties: lower code point); a
    dropped char splits its word into parts trained separately;
  * symbols: the char at position 0 of a word is "c", every other char "##c";
  * score(a, b) = count(ab) / (count(a) * count(b)); then count(ab); then the tie-break;
  * vocab: specials, alphabet "c" (code point order), alphabet "##c", new tokens in merge order.

Classic BPE (Sennrich):
  * word -> its chars + "</w>"; score = pair count; then the tie-break;
  * vocab: unk, alphabet chars (code point order), "</w>", new tokens in merge order.

Tie-breaks: "lexicographic" takes the greatest (a, b) as a tuple of str; "first" takes the pair
whose first occurrence is earliest: word order of first appearance, then the position (in the
original word) of the char where the pair's left symbol starts.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Iterable

END = "</w>"
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TIE_BREAKS = ("lexicographic", "first")


def _items(word_counts) -> list[tuple[str, int]]:
    """(word, count) in order of first appearance; repeated words are summed."""
    items = word_counts.items() if isinstance(word_counts, dict) else word_counts
    out: dict[str, int] = {}
    for w, c in items:
        out[w] = out.get(w, 0) + c
    return list(out.items())


BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def bert_words(
    texts: Iterable[str], special_tokens: Iterable[str] | None = None, **normalizer_kwargs
) -> dict[str, int]:
    """{word: count} in order of first appearance, as HF's BertNormalizer(**normalizer_kwargs)
    followed by BertPreTokenizer cuts `texts` (each its own document), after cutting out the
    trainer's special tokens (leftmost, longest first; the BERT five when None): a special
    token is never part of a learned word."""
    import re

    from tokenizers import normalizers, pre_tokenizers

    specials = BERT_SPECIAL_TOKENS if special_tokens is None else tuple(special_tokens)
    cut = re.compile("|".join(re.escape(t) for t in sorted(specials, key=len, reverse=True)))
    norm = normalizers.BertNormalizer(**normalizer_kwargs)
    pre = pre_tokenizers.BertPreTokenizer()
    counts: dict[str, int] = {}
    for text in texts:
        for part in cut.split(text) if specials else [text]:
            for word, _ in pre.pre_tokenize_str(norm.normalize_str(part)):
                counts[word] = counts.get(word, 0) + 1
    return counts


def _merge_seq(syms: list[str], poss: list[int], a: str, b: str, merged: str):
    """Replace every non-overlapping (a, b) in `syms` (with start positions `poss`), left to
    right. Returns the new (syms, poss)."""
    if a not in syms:
        return syms, poss
    out, out_pos = [], []
    i = 0
    while i < len(syms):
        out_pos.append(poss[i])
        if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
            out.append(merged)
            i += 2
        else:
            out.append(syms[i])
            i += 1
    return out, out_pos


def _count(seqs, skip=None):
    """(symbol counts, pair counts, first occurrence (word index, position) of every pair) of
    `seqs`, a list of (word index, count, symbols, positions); pairs holding `skip` are left out."""
    sym: dict[str, int] = {}
    pairs: dict[tuple[str, str], int] = {}
    first: dict[tuple[str, str], tuple[int, int]] = {}
    for wi, c, syms, poss in seqs:
        for s in syms:
            sym[s] = sym.get(s, 0) + c
        for k in range(len(syms) - 1):
            p = (syms[k], syms[k + 1])
            if skip is not None and skip in p:
                continue
            pairs[p] = pairs.get(p, 0) + c
            where = (wi, poss[k])
            if p not in first or where < first[p]:
                first[p] = where
    return sym, pairs, first


def _pick(candidates, key, first_pos, tie_break):
    """The max of `candidates` by `key`, ties broken by `tie_break`."""
    keys = {p: key(p) for p in candidates}
    top = max(keys.values())
    tied = [p for p, k in keys.items() if k == top]
    if tie_break == "lexicographic":
        return max(tied)
    return min(tied, key=first_pos.__getitem__)


# --------------------------------------------------------------------------------------------
# WordPiece


def wordpiece_alphabet(word_counts, limit_alphabet: int | None = None) -> list[str]:
    """The alphabet chars, in code point order."""
    chars: Counter = Counter()
    for w, c in _items(word_counts):
        for ch in w:
            chars[ch] += c
    if limit_alphabet is not None and limit_alphabet < len(chars):
        kept = sorted(chars, key=lambda ch: (-chars[ch], ord(ch)))[:limit_alphabet]
    else:
        kept = list(chars)
    return sorted(kept)


def naive_wordpiece(
    word_counts,
    vocab_size: int,
    min_frequency: int = 0,
    limit_alphabet: int | None = None,
    special_tokens=tuple(BERT_SPECIALS),
    tie_break: str = "lexicographic",
    prefix: str = "##",
):
    """Returns (vocab as a list of tokens by id, merges as a list of (left, right) str pairs)."""
    if tie_break not in TIE_BREAKS:
        raise ValueError(tie_break)
    words = _items(word_counts)
    alphabet = wordpiece_alphabet(words, limit_alphabet)
    keep = set(alphabet)
    specials = list(special_tokens)
    if vocab_size < len(specials) + 2 * len(alphabet):
        raise ValueError("vocab_size too small")

    # sequences: (word index, count, symbols, start position of each symbol in the word)
    seqs = []
    for wi, (w, c) in enumerate(words):
        syms: list[str] = []
        poss: list[int] = []
        for pos, ch in enumerate(w):
            if ch in keep:
                syms.append(ch if pos == 0 else prefix + ch)
                poss.append(pos)
            elif syms:  # a dropped char ends the part
                seqs.append((wi, c, syms, poss))
                syms, poss = [], []
        if syms:
            seqs.append((wi, c, syms, poss))

    vocab = specials + alphabet + [prefix + ch for ch in alphabet]
    known = set(vocab)
    merges: list[tuple[str, str]] = []
    floor = max(min_frequency, 1)
    while len(vocab) < vocab_size:
        sym, pairs, first = _count(seqs)
        eligible = [p for p, n in pairs.items() if n >= floor]
        if not eligible:
            break

        def score(p, pairs=pairs, sym=sym):
            # exact: count(ab) / (count(a) * count(b)), then count(ab)
            return Fraction(pairs[p], sym[p[0]] * sym[p[1]]), pairs[p]

        a, b = best = _pick(eligible, score, first, tie_break)
        assert b.startswith(prefix)
        merged = a + b[len(prefix) :]
        merges.append(best)
        if merged not in known:
            known.add(merged)
            vocab.append(merged)
        seqs = [(wi, c, *_merge_seq(syms, poss, a, b, merged)) for wi, c, syms, poss in seqs]
    return vocab, merges


# --------------------------------------------------------------------------------------------
# BPE over characters with HF's trainer options (subword.tokenizers.trainers.BpeTrainer)


def char_bpe_alphabet(word_counts, limit_alphabet=None, initial_alphabet=()) -> list[str]:
    """The most frequent chars (the initial alphabet counting as most frequent of all; ties:
    lower code point), in code point order."""
    chars: Counter = Counter()
    for w, c in _items(word_counts):
        for ch in w:
            chars[ch] += c
    forced = set(initial_alphabet)
    every = set(chars) | forced
    if limit_alphabet is not None and limit_alphabet < len(every):
        rank = lambda ch: (ch not in forced, -chars[ch], ord(ch))  # noqa: E731
        every = set(sorted(every, key=rank)[:limit_alphabet])
    return sorted(every)


def naive_char_bpe(
    word_counts,
    vocab_size: int,
    min_frequency: int = 0,
    special_tokens=(),
    limit_alphabet=None,
    initial_alphabet=(),
    continuing_subword_prefix: str | None = None,
    end_of_word_suffix: str | None = None,
    max_token_length=None,
):
    """HF-style BPE over characters, ties to the greatest (a, b): the prefix on every char of a
    word but the first, the suffix joined to its last; a char outside the alphabet splits its
    word (the neighbours keep their marks); pairs under `min_frequency` or spelling more than
    `max_token_length` chars are never merged. Vocab: specials, the alphabet (code point
    order), the marked forms in order of first appearance, new tokens in merge order. Returns
    (vocab as a list of tokens by id, merges)."""
    prefix, suffix = continuing_subword_prefix or "", end_of_word_suffix or ""
    words = _items(word_counts)
    alphabet = char_bpe_alphabet(words, limit_alphabet, initial_alphabet)
    keep = set(alphabet)
    tokens = list(alphabet)  # symbols, then the learned tokens, each once
    seqs = []
    for wi, (w, c) in enumerate(words):
        syms, poss = [], []
        for pos, ch in enumerate(w):
            if ch not in keep:
                if syms:
                    seqs.append((wi, c, syms, poss))
                    syms, poss = [], []
                continue
            form = (prefix if pos > 0 else "") + ch + (suffix if pos == len(w) - 1 else "")
            if form not in tokens:
                tokens.append(form)
            syms.append(form)
            poss.append(pos)
        if syms:
            seqs.append((wi, c, syms, poss))
    target = len(tokens) + max(0, vocab_size - len(special_tokens) - len(tokens))

    def spell(a, b):
        return a + (b[len(prefix) :] if prefix and b.startswith(prefix) else b)

    merges: list[tuple[str, str]] = []
    while len(tokens) < target:
        _, pairs, first = _count(seqs)
        eligible = [
            p
            for p, n in pairs.items()
            if n >= max(min_frequency, 1)
            and (max_token_length is None or len(spell(*p)) <= max_token_length)
        ]
        if not eligible:
            break
        a, b = best = _pick(eligible, lambda p, pairs=pairs: pairs[p], first, "lexicographic")
        merged = spell(a, b)
        merges.append(best)
        if merged not in tokens:
            tokens.append(merged)
        seqs = [(wi, c, *_merge_seq(syms, poss, a, b, merged)) for wi, c, syms, poss in seqs]
    vocab = list(special_tokens) + [t for t in tokens if t not in special_tokens]
    return vocab, merges


# --------------------------------------------------------------------------------------------
# classic BPE with "</w>"


def classic_alphabet(word_counts) -> list[str]:
    return sorted({ch for w, _ in _items(word_counts) for ch in w})


def naive_classic_bpe(
    word_counts,
    vocab_size: int,
    min_frequency: int = 0,
    merge_end_of_word: bool = True,
    tie_break: str = "lexicographic",
    unk_token: str = "<unk>",
):
    """Returns (vocab as a list of tokens by id, merges as a list of (left, right) str pairs)."""
    if tie_break not in TIE_BREAKS:
        raise ValueError(tie_break)
    words = _items(word_counts)
    vocab = [unk_token] + classic_alphabet(words) + [END]
    known = set(vocab)
    seqs = [(wi, c, list(w) + [END], list(range(len(w) + 1))) for wi, (w, c) in enumerate(words)]
    merges: list[tuple[str, str]] = []
    floor = max(min_frequency, 1)
    while len(vocab) < vocab_size:
        _, pairs, first = _count(seqs, skip=None if merge_end_of_word else END)
        eligible = [p for p, n in pairs.items() if n >= floor]
        if not eligible:
            break
        a, b = best = _pick(eligible, pairs.__getitem__, first, tie_break)
        merged = a + b
        merges.append(best)
        if merged not in known:
            known.add(merged)
            vocab.append(merged)
        seqs = [(wi, c, *_merge_seq(syms, poss, a, b, merged)) for wi, c, syms, poss in seqs]
    return vocab, merges


def naive_classic_tokenize(vocab: list[str], merges, text: str, unk_token: str = "<unk>"):
    """Tokens of `text`: text.split(); each word -> chars (unknown ones -> unk_token) + "</w>";
    then, repeatedly, merge the adjacent pair of lowest rank (the leftmost among equal)."""
    rank: dict[tuple[str, str], int] = {}
    for i, m in enumerate(merges):
        rank.setdefault(tuple(m), i)
    known = set(vocab)
    out: list[str] = []
    for word in text.split():
        syms = [ch if ch in known else unk_token for ch in word] + [END]
        while True:
            found = [
                (rank[(a, b)], i) for i, (a, b) in enumerate(zip(syms, syms[1:])) if (a, b) in rank
            ]
            if not found:
                break
            _, i = min(found)
            syms[i : i + 2] = [syms[i] + syms[i + 1]]
        out.extend(syms)
    return out


def naive_classic_encode(vocab: list[str], merges, text: str, unk_token: str = "<unk>"):
    ids = {}
    for i, t in enumerate(vocab):
        ids.setdefault(t, i)
    return [ids[t] for t in naive_classic_tokenize(vocab, merges, text, unk_token)]


def naive_classic_decode(tokens: list[str]) -> str:
    text = "".join(tokens).replace(END, " ")
    return text[:-1] if text.endswith(" ") else text
