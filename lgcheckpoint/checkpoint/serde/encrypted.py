"""EncryptedSerializer: another serializer's bytes, encrypted; stored the way LangGraph stores them.

The stored pair is ``(f"{inner tag}+{cipher name}", ciphertext)``, e.g. ``("msgpack+aes", ...)``.
A tag without ``+`` was written unencrypted and is read by the inner serializer as is, so a
database can be switched to encryption without rewriting it. The AES cipher
(``from_pycryptodome_aes``) lays out its bytes as ``nonce (16) | tag (16) | ciphertext`` in EAX
mode, so LangGraph and lgcheckpoint read each other's encrypted checkpoints.
Next: jsonplus.py (the usual inner serializer).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from lgcheckpoint.checkpoint.serde.base import CipherProtocol, SerializerProtocol, Typed
from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer

# the same variable as LangGraph, so one deployment config serves both
AES_KEY_ENV = "LANGGRAPH_AES_KEY"
AES_NONCE, AES_TAG = 16, 16  # bytes before the ciphertext: EAX nonce, then authentication tag


class EncryptedSerializer(SerializerProtocol):
    """Encrypt what ``serde`` produces; decrypt before ``serde`` reads."""

    def __init__(self, cipher: CipherProtocol, serde: SerializerProtocol | None = None) -> None:
        self.cipher = cipher
        self.serde = serde if serde is not None else JsonPlusSerializer()

    def dumps_typed(self, obj: Any) -> Typed:
        """Serialize with the inner serializer, encrypt, and name the cipher in the tag."""
        tag, data = self.serde.dumps_typed(obj)
        cipher_name, ciphertext = self.cipher.encrypt(data)
        return f"{tag}+{cipher_name}", ciphertext

    def loads_typed(self, data: Typed) -> Any:
        """Decrypt if the tag names a cipher; a plain tag was stored unencrypted."""
        tag, payload = data
        if "+" not in tag:
            return self.serde.loads_typed(data)
        inner_tag, cipher_name = tag.split("+", 1)
        return self.serde.loads_typed((inner_tag, self.cipher.decrypt(cipher_name, payload)))

    def with_msgpack_allowlist(self, extra: Iterable[Any]) -> EncryptedSerializer:
        """Same cipher around an inner serializer that may also build ``extra``."""
        allow = getattr(self.serde, "with_msgpack_allowlist", None)
        inner = allow(extra) if allow else self.serde
        return self if inner is self.serde else EncryptedSerializer(self.cipher, inner)

    @classmethod
    def from_pycryptodome_aes(
        cls, serde: SerializerProtocol | None = None, **kwargs: Any
    ) -> EncryptedSerializer:
        """AES (EAX by default) with ``key=`` bytes or the LANGGRAPH_AES_KEY variable."""
        return cls(AesCipher(kwargs.pop("key", None), **kwargs), serde)


class AesCipher(CipherProtocol):
    """AES through pycryptodome; ``options`` go to ``AES.new`` (``mode`` defaults to EAX)."""

    name = "aes"

    def __init__(self, key: bytes | None = None, **options: Any) -> None:
        try:
            from Crypto.Cipher import AES
        except ImportError:
            raise ImportError("EncryptedSerializer needs pycryptodome: "
                              "pip install 'lgcheckpoint[encrypted]'") from None
        if key is None:
            key = _key_from_env()
        if options.get("mode") is None:
            options["mode"] = AES.MODE_EAX
        self._new, self._key, self._options = AES.new, key, options

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        cipher = self._new(self._key, **self._options)
        ciphertext, tag = cipher.encrypt_and_digest(plaintext)
        return self.name, cipher.nonce + tag + ciphertext

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername != self.name:
            raise ValueError(f"cannot decrypt {ciphername!r} data with the {self.name!r} cipher; "
                             "open this database with the serializer that wrote it")
        nonce, tag = ciphertext[:AES_NONCE], ciphertext[AES_NONCE:AES_NONCE + AES_TAG]
        cipher = self._new(self._key, nonce=nonce, **self._options)
        return cipher.decrypt_and_verify(ciphertext[AES_NONCE + AES_TAG:], tag)


def _key_from_env() -> bytes:
    """The AES key from LANGGRAPH_AES_KEY; it must be 16, 24 or 32 bytes."""
    text = os.environ.get(AES_KEY_ENV)
    if text is None:
        raise ValueError(f"{AES_KEY_ENV} environment variable is not set; "
                         "pass key=b'...' (16, 24 or 32 bytes) or set the variable")
    key = text.encode()
    if len(key) not in (16, 24, 32):
        raise ValueError(f"{AES_KEY_ENV} must be 16, 24, or 32 bytes long (got {len(key)})")
    return key
