"""StorageView: a thread's checkpoints as the saver actually stored them.

The other viewers read the public API; this one looks underneath (duck-typed): InMemorySaver's
``storage`` / ``writes`` / ``blobs`` dicts, SqliteSaver's ``checkpoints`` and ``writes`` tables
(every value inside each checkpoint row), PostgresSaver's ``checkpoints`` / ``checkpoint_blobs`` /
``checkpoint_writes`` (a channel value is stored once per version and shared by every checkpoint
that still points at that version). It counts bytes per checkpoint, blobs shared. Next: deltas.py
"""

from __future__ import annotations

import html
import json
from typing import Any, NamedTuple

from lgcheckpoint.viz.grid import Grid, grid_png
from lgcheckpoint.viz.history import VIEW_LIMIT, History, load_history, short, version_number
from lgcheckpoint.viz.palette import CELL_CSS, HEAD_CSS, INK, PAPER, TABLE_CSS, WHITE

TEXT_CSS = f"color:{INK};background:{PAPER};font-size:14px;padding:2px"
MAX_ROWS = 60

SQL_TABLES = {"sqlite": ["checkpoints", "writes"],  # what sql_rows reads, in display order
              "postgres": ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]}


class CheckpointBytes(NamedTuple):
    """What one checkpoint costs in storage."""

    key: str
    step: int
    checkpoint: int  # the checkpoint row (with its metadata)
    writes: int  # its pending writes
    blobs_new: int  # channel values stored for the first time by this checkpoint
    blobs_shared: int  # channel values it points to that an earlier checkpoint stored
    blob_bytes: int  # bytes of the new blobs


def saver_kind(saver: Any) -> str:
    """memory / sqlite / postgres, from what the saver holds."""
    conn = getattr(saver, "conn", None)
    if conn is not None:
        module = type(conn).__module__
        if module.startswith("sqlite3"):
            return "sqlite"
        if module.startswith("psycopg"):
            return "postgres"
        raise TypeError(f"StorageView reads sync savers only; got a {type(conn).__name__} "
                        "connection (use SqliteSaver / PostgresSaver, not the aio ones)")
    if all(hasattr(saver, a) for a in ("storage", "writes", "blobs")):
        return "memory"
    raise TypeError(f"StorageView does not know how {type(saver).__name__} stores checkpoints")


def size(value: Any) -> int:
    """Bytes of a stored value (JSONB columns: the length of their JSON text)."""
    if value is None:
        return 0
    if isinstance(value, (bytes, bytearray, memoryview)):
        return len(value)
    if isinstance(value, str):
        return len(value.encode())
    return len(json.dumps(value, default=str).encode())


def memory_rows(saver: Any, thread_id: str) -> dict[str, list[dict]]:
    """The three dicts of an in-memory saver, as rows (typed values are (type tag, bytes))."""
    rows: dict[str, list[dict]] = {"storage": [], "writes": [], "blobs": []}
    for ns, by_id in saver.storage.get(thread_id, {}).items():
        for cid, stored in by_id.items():
            (ctype, cbytes), (_, mbytes), parent = stored[0], stored[1], stored[2]
            rows["storage"].append({"checkpoint_ns": ns, "checkpoint_id": cid,
                                    "parent_checkpoint_id": parent, "type": ctype,
                                    "checkpoint": cbytes, "metadata": mbytes})
    for (thread, ns, cid), writes in saver.writes.items():
        if thread == thread_id:
            for (task_id, idx), w in writes.items():
                rows["writes"].append({"checkpoint_ns": ns, "checkpoint_id": cid,
                                       "task_id": task_id, "idx": idx, "channel": w[1],
                                       "type": w[2][0], "value": w[2][1]})
    for key, typed in saver.blobs.items():
        if key[0] == thread_id:
            rows["blobs"].append({"checkpoint_ns": key[1], "channel": key[2],
                                  "version": key[3], "type": typed[0], "blob": typed[1]})
    return rows


def sql_rows(saver: Any, kind: str, thread_id: str) -> dict[str, list[dict]]:
    """Every row of the thread in each table, as dicts."""
    conn, mark = saver.conn, ("?" if kind == "sqlite" else "%s")
    rows = {}
    pooled = "Pool" in type(conn).__name__  # psycopg_pool: borrow a connection
    with (conn.connection() if pooled else _same(conn)) as c:
        for table in SQL_TABLES[kind]:
            cur = c.cursor()
            cur.execute(f"SELECT * FROM {table} WHERE thread_id = {mark}", (thread_id,))
            names = [d[0] for d in cur.description]
            rows[table] = [r if isinstance(r, dict) else dict(zip(names, r))
                           for r in cur.fetchall()]
    return rows


class _same:
    """A context manager that yields the connection it was given."""

    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        return self.conn

    def __exit__(self, *exc):
        return False


TABLE_NAMES = {  # kind -> (checkpoint rows, write rows, blob rows or None)
    "memory": ("storage", "writes", "blobs"),
    "sqlite": ("checkpoints", "writes", None),
    "postgres": ("checkpoints", "checkpoint_writes", "checkpoint_blobs"),
}
SUMMARY_COLUMNS = ("checkpoint", "step", "checkpoint bytes", "writes bytes", "blobs new",
                   "blobs shared", "blob bytes")


class StorageView:
    """Rows as stored, bytes per checkpoint, and blobs shared instead of stored again."""

    def __init__(self, saver: Any, config: dict):
        saver = getattr(saver, "checkpointer", saver)
        self.kind = saver_kind(saver)
        self.history: History = load_history(saver, config, limit=VIEW_LIMIT)
        tid = self.history.thread_id
        self.tables = (memory_rows(saver, tid) if self.kind == "memory"
                       else sql_rows(saver, self.kind, tid))
        self.per_checkpoint = self.count_bytes()

    def count_bytes(self) -> list[CheckpointBytes]:
        """Walk checkpoints oldest first; a blob is new the first time a checkpoint points at it."""
        ns, (ckpt_table, writes_table, blob_table) = self.history.ns, TABLE_NAMES[self.kind]
        rows = {r["checkpoint_id"]: r for r in self.tables[ckpt_table] if r["checkpoint_ns"] == ns}
        blobs = {(b["channel"], version_number(b["version"])): size(b["blob"])
                 for b in self.tables.get(blob_table, []) if b["checkpoint_ns"] == ns}
        writes: dict[str, int] = {}  # checkpoint id -> bytes of its pending writes
        for w in self.tables[writes_table]:
            if w["checkpoint_ns"] == ns:
                value = w["value"] if "value" in w else w["blob"]
                writes[w["checkpoint_id"]] = writes.get(w["checkpoint_id"], 0) + size(value)
        stored_before: set[tuple[str, int]] = set()
        out = []
        for step in self.history.steps:
            row = rows.get(step.checkpoint_id, {})
            refs = {k for k in step.channel_versions.items() if k in blobs}
            new = refs - stored_before
            stored_before |= refs
            out.append(CheckpointBytes(
                step.key, step.step, size(row.get("checkpoint")) + size(row.get("metadata")),
                writes.get(step.checkpoint_id, 0), len(new), len(refs - new),
                sum(blobs[k] for k in new)))
        return out

    @property
    def blobs_shared(self) -> int:
        return sum(c.blobs_shared for c in self.per_checkpoint)

    def __repr__(self) -> str:
        total = sum(c.checkpoint + c.writes + c.blob_bytes for c in self.per_checkpoint)
        counts = ", ".join(f"{t}={len(r)}" for t, r in self.tables.items())
        return (f"StorageView({self.kind}: {counts}; {total} bytes; "
                f"{self.blobs_shared} blob references shared)")

    def note(self) -> str:
        if self.kind == "sqlite":
            return "SQLite keeps every channel value inside each checkpoint row: nothing is shared."
        return f"{self.blobs_shared} blob references point at values an earlier checkpoint stored."

    def summary_rows(self) -> list[CheckpointBytes]:
        """The newest MAX_ROWS checkpoints: a static view stays small on a huge thread."""
        return self.per_checkpoint[-MAX_ROWS:]

    def summary_html(self) -> str:
        head = "".join(f'<th style="{HEAD_CSS}">{h}</th>' for h in SUMMARY_COLUMNS)
        body = "".join("<tr>" + "".join(f'<td style="{CELL_CSS}">{html.escape(str(v))}</td>'
                                        for v in c) + "</tr>" for c in self.summary_rows())
        hidden = len(self.per_checkpoint) - len(self.summary_rows())
        more = f"<br>{hidden} older checkpoints not shown" if hidden else ""
        return (f'<table class="lgc-storage" style="{TABLE_CSS}"><tr>{head}</tr>{body}</table>'
                f'<p style="{TEXT_CSS}">{html.escape(self.note())}{more}</p>')

    def table_html(self, table: str, limit: int = 50) -> str:
        """One table's rows as stored (ids labelled with their cN, bytes as sizes)."""
        keys = {s.checkpoint_id: s.key for s in self.history.steps}
        rows, total = self.tables[table][:limit], len(self.tables[table])
        name = html.escape(table)
        if not rows:
            return f'<p style="{TEXT_CSS}">{name}: no rows</p>'
        cols = list(rows[0])
        body = "".join("<tr>" + "".join(
            f'<td style="{CELL_CSS}">{html.escape(cell_text(r[c], keys))}</td>' for c in cols)
            + "</tr>" for r in rows)
        more = f'<p style="{TEXT_CSS}">… {total - limit} more rows</p>' if total > limit else ""
        return (f'<p style="{TEXT_CSS}"><b>{name}</b> ({total} rows)</p>'
                f'<div style="overflow-x:auto"><table style="{TABLE_CSS}"><tr>'
                + "".join(f'<th style="{HEAD_CSS}">{html.escape(str(c))}</th>' for c in cols)
                + f"</tr>{body}</table></div>{more}")

    def _repr_html_(self) -> str:
        return (f"<div class='lgc-storage-view' style='{TEXT_CSS}'><b>{self.kind} saver</b>"
                f"{self.summary_html()}" + "".join(self.table_html(t) for t in self.tables)
                + "</div>")

    def png(self) -> bytes:
        """Bytes per checkpoint as a picture (the rows themselves stay in the HTML)."""
        rows = self.summary_rows()
        hidden = len(self.per_checkpoint) - len(rows)
        notes = [self.note()] + ([f"{hidden} older checkpoints not shown"] if hidden else [])
        counts = ", ".join(f"{t}: {len(r)} rows" for t, r in self.tables.items())
        return grid_png(Grid(
            title=f"{self.kind} saver, bytes per checkpoint ({counts})",
            columns=list(SUMMARY_COLUMNS[1:]), rows=[c.key for c in rows],
            cells=[[str(v) for v in c[1:]] for c in rows],
            fills=[[WHITE] * (len(SUMMARY_COLUMNS) - 1) for _ in rows], legend=[], notes=notes))

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self._repr_html_(), "image/png": self.png(),
                "text/plain": repr(self)}

    def widget(self):
        """Pick the summary or one table."""
        import ipywidgets as w

        from lgcheckpoint.viz.widgets import viewer_box

        pick = w.Dropdown(options=["bytes per checkpoint", *self.tables])
        out = w.HTML(self.summary_html())

        def show(change):
            name = change["new"]
            out.value = self.table_html(name) if name in self.tables else self.summary_html()

        pick.observe(show, names="value")
        return viewer_box("StorageView", [pick, out], static=self.png)


def cell_text(value: Any, keys: dict[str, str]) -> str:
    """Checkpoint ids get their cN name beside them; bytes show their size, not their content;
    long text is cut before it is dumped (a value may be 100 MB)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, str) and value in keys:
        return f"{keys[value]} ({value[:8]}…)"
    if isinstance(value, str):
        text = value[:81]
    elif isinstance(value, (dict, list)):  # JSONB columns: may be deeply nested
        return short(value, 80)
    else:
        text = str(value)[:81]
    return text if len(text) <= 80 else text[:79] + "…"
