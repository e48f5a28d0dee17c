"""PLACEHOLDER, being written: JsonPlusSerializer (msgpack with extension types, safe allow-list)."""

import ormsgpack


class JsonPlusSerializer:
    def __init__(self, *, pickle_fallback: bool = False, allowed_msgpack_modules=None, **kw):
        self.pickle_fallback = pickle_fallback

    def dumps_typed(self, obj):
        if obj is None:
            return "null", b""
        return "msgpack", ormsgpack.packb(obj, option=ormsgpack.OPT_NON_STR_KEYS)

    def loads_typed(self, data):
        tag, payload = data
        if tag == "null":
            return None
        return ormsgpack.unpackb(payload, option=ormsgpack.OPT_NON_STR_KEYS)

    def with_msgpack_allowlist(self, extra):
        return self
