"""The serializer contract: a value becomes a (type tag, bytes) pair and back.

Savers store the pair as two columns and never look inside; the tag says how to decode.
"""

from typing import Any, Protocol, runtime_checkable

Typed = tuple[str, bytes]  # (type tag, payload)


@runtime_checkable
class SerializerProtocol(Protocol):
    """What a saver needs from a serializer."""

    def dumps_typed(self, obj: Any) -> Typed: ...

    def loads_typed(self, data: Typed) -> Any: ...


@runtime_checkable
class CipherProtocol(Protocol):
    """What EncryptedSerializer needs from a cipher: bytes in, (cipher name, bytes) out."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]: ...

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes: ...
