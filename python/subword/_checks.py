"""Argument checks shared by every entry point that takes the same argument."""

from __future__ import annotations


def special_tokens(tokens, what: str = "special_tokens") -> list[str]:
    """``tokens`` as a list of non-empty strings (``AddedToken``-like objects give their
    ``content``). A single str is refused: iterating it would make each character a token."""
    if isinstance(tokens, (str, bytes)):
        raise TypeError(
            f"{what} must be a list of strings, not a single {type(tokens).__name__}: "
            f"pass [{tokens!r}] for one token"
        )
    try:
        items = list(tokens)
    except TypeError:
        raise TypeError(f"{what} must be a list of strings, not {type(tokens).__name__}") from None
    out = []
    for k, token in enumerate(items):
        token = getattr(token, "content", token)
        if not isinstance(token, str):
            raise TypeError(f"{what}[{k}] must be a str, not {type(token).__name__} ({token!r})")
        if not token:
            raise ValueError(
                f"{what}[{k}] is an empty string: a token needs at least one character"
            )
        out.append(token)
    return out


def non_empty_token(value, what: str, none_means: str | None = None):
    """``value`` itself if it is a non-empty str; None too when ``none_means`` says what it
    means."""
    if value is None and none_means is not None:
        return None
    alternative = f" (None means {none_means})" if none_means is not None else ""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str{alternative}, not {type(value).__name__}")
    if not value:
        raise ValueError(f"{what} cannot be an empty string{alternative}")
    return value
