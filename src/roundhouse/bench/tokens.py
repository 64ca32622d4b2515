"""Counting tokens as GPT-4o counts them (tiktoken's o200k_base), without the network.

tiktoken downloads its encoding files at first use, from a host these machines cannot reach.
The PyPI package bpe-openai ships o200k_base as a gzipped .tiktoken file: it is decompressed
into tiktoken's cache folder under the name tiktoken looks for (the sha1 of the encoding's
URL), after checking it against the sha256 tiktoken pins, so that tiktoken loads it as if it
had downloaded it. Both packages are the `bench` extra (`make venv` installs it).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Protocol

# tiktoken_ext/openai_public.py: where tiktoken fetches o200k_base, and the hash it pins.
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


class TokensUnavailable(RuntimeError):
    """tiktoken or the encoding file is missing; the message says what to install."""


class Encoding(Protocol):
    def encode(self, text: str, *, disallowed_special: tuple[str, ...] = ()) -> list[int]: ...


def cache_dir() -> Path:
    """$TIKTOKEN_CACHE_DIR where set; else a folder of ours, set as $TIKTOKEN_CACHE_DIR for
    this process so that tiktoken looks there too (an empty value would turn its cache off,
    and with it the only way to load the encoding offline)."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return Path(os.environ["TIKTOKEN_CACHE_DIR"])
    folder = Path.home() / ".cache" / "roundhouse" / "tiktoken"
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    return folder


def install_o200k(folder: Path) -> Path:
    """Put o200k_base where tiktoken looks for it (once; a file that fails the hash is
    replaced). Its name is the sha1 of the URL tiktoken would download it from."""
    target = folder / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == O200K_SHA256:
        return target
    try:
        packed = resources.files("bpe_openai.data").joinpath("o200k_base.tiktoken.gz")
        data = gzip.decompress(packed.read_bytes())
    except (ModuleNotFoundError, FileNotFoundError) as error:
        raise TokensUnavailable(
            f"o200k_base is not here ({error}): pip install -e '.[bench]' (bpe-openai ships it)"
        ) from None
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise TokensUnavailable("bpe-openai's o200k_base differs from the one tiktoken pins")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, delete=False) as partial:
        partial.write(data)
    os.replace(partial.name, target)  # whole or not at all: tiktoken may read it at once
    return target


def o200k() -> Encoding:
    try:
        import tiktoken
    except ModuleNotFoundError:
        raise TokensUnavailable("tiktoken is not installed: pip install -e '.[bench]'") from None
    install_o200k(cache_dir())
    encoding: Encoding = tiktoken.get_encoding("o200k_base")
    return encoding


def count_tokens(encoding: Encoding, text: str) -> int:
    # Special-token text in a window's labels is counted as plain text, not refused.
    return len(encoding.encode(text, disallowed_special=()))
