"""Chat messages in a checkpoint, shown as a conversation: who said what, the tool calls, the ids,
and which messages the next step removes or replaces.

A message channel is a channel whose value is a list of langchain-core messages. They arrive
either built (a graph's own saver, the ``[messages]`` extra installed) or, when ``inspect`` reads
a database without building its types, as an inert ``Opaque`` record of module, class and
fields; both become the same ``Turn``. Nothing here imports langchain-core. Every viewer (the
lineage's details, the studio, ``lgcheckpoint inspect`` in the terminal and in ``--html``) draws
messages through this module; its HTML escapes every stored string, so markup stays text.
Next: ``hitl.py``.
"""

from __future__ import annotations

import html
import io
import json
from typing import Any, NamedTuple

from lgcheckpoint.checkpoint.serde.types import Opaque
from lgcheckpoint.viz.history import VIEW_LIMIT, History, Step, load_history, short
from lgcheckpoint.viz.palette import GREY, INK, LINE, PAPER, STRONG_BLUE, STRONG_ORANGE, STRONG_RED

MESSAGE_MODULE = "langchain_core.messages"  # every chat message class is defined below it
REMOVE, REMOVE_ALL = "remove", "__remove_all__"  # RemoveMessage's type; its id that clears all
ROLE_COLOURS = {"human": STRONG_BLUE, "ai": LINE, "tool": STRONG_ORANGE}  # left border; else GREY
MAX_TURNS = 200  # turns drawn per transcript; a longer one says how many it left out
CONTENT_WIDTH = 2000  # characters of one message's content shown


class Turn(NamedTuple):
    """One message as the viewers show it."""

    role: str  # the message's type: human, ai, system, tool, function, chat, remove
    content: str
    id: str | None
    tool_calls: list[tuple[str, Any, str | None]]  # (tool name, arguments, call id)
    tool_call_id: str | None  # a tool's answer names the call it answers
    mark: str = ""  # "", "removed", "replaced" (in the next checkpoint), "pending" (not applied)
    note: str = ""  # why it is marked: who removed it, where it is gone


def message_fields(value: Any) -> dict | None:
    """The stored fields of a chat message, built or inert; None for anything else."""
    if isinstance(value, Opaque):
        stored = value.module.startswith(MESSAGE_MODULE) and isinstance(value.data, dict)
        return value.data if stored else None
    if any(c.__module__.startswith(MESSAGE_MODULE) for c in type(value).__mro__) \
            and isinstance(getattr(value, "type", None), str):
        return {**vars(value), "type": value.type}
    return None


def as_turn(value: Any) -> Turn | None:
    """A message as a Turn (its content as text, its tool calls as triples)."""
    fields = message_fields(value)
    if fields is None:
        return None
    calls = [(bounded(c.get("name")), c.get("args"), bounded(c.get("id")))
             for c in fields.get("tool_calls") or [] if isinstance(c, dict)]
    return Turn(bounded(fields.get("type")), content_text(fields.get("content")),
                bounded(fields.get("id")), calls, bounded(fields.get("tool_call_id")))


def bounded(value: Any, width: int = 80) -> str | None:
    """A stored name or id as short text (a foreign database may hold anything there)."""
    return None if value is None else short(value, width) if not isinstance(value, str) \
        else value if len(value) <= width else value[:width - 1] + "…"


def content_text(content: Any) -> str:
    """A message's content as text: a string, or its text blocks (other blocks named)."""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(b if isinstance(b, str) else str(b.get("text", f"[{b.get('type')}]"))
                         if isinstance(b, dict) else short(b) for b in content)
    else:
        text = short(content)
    return text if len(text) <= CONTENT_WIDTH else text[:CONTENT_WIDTH - 1] + "…"


def message_channels(values: dict[str, Any]) -> list[str]:
    """Channels that hold a non-empty list of chat messages."""
    return [c for c, v in values.items() if isinstance(v, list) and v
            and all(message_fields(m) is not None for m in v)]


def written_messages(step: Step, channel: str) -> list[tuple[str, Turn]]:
    """(task name, turn) for each message the step's tasks wrote to ``channel``."""
    out = []
    for tw in step.tasks:
        for c, value in tw.regular:
            if c == channel:
                for m in value if isinstance(value, list) else [value]:
                    if (turn := as_turn(m)) is not None:
                        out.append((tw.name, turn))
    return out


def held(step: Step, channel: str) -> list[Turn]:
    """The messages a checkpoint holds in ``channel``, as Turns."""
    return [t for t in map(as_turn, step.values.get(channel) or []) if t is not None]


def transcript(step: Step, channel: str = "messages", history: History | None = None
               ) -> list[Turn]:
    """The messages a checkpoint holds, each marked when a RemoveMessage in its pending writes
    or its next checkpoint (``history`` given) drops or replaces it; writes not yet applied
    (no next checkpoint) follow as "pending"."""
    turns = held(step, channel)
    written = written_messages(step, channel)
    removed = {t.id: "RemoveMessage in a pending write" + ("" if name.startswith(("task ", "("))
                                                          else f" of {name}")
               for name, t in written if t.role == REMOVE}  # an unnamed task: update_state
    children = [history[k] for k in step.children] if history is not None else []
    later = {c.key: {t.id: t for t in held(c, channel)} for c in children}
    marked = []
    for t in turns:
        gone = [k for k, ids in later.items() if t.id not in ids]
        changed = [k for k, ids in later.items() if t.id in ids and ids[t.id][:5] != t[:5]]
        if t.id in removed or REMOVE_ALL in removed:
            t = t._replace(mark="removed", note=removed.get(t.id) or removed[REMOVE_ALL])
        elif gone:
            t = t._replace(mark="removed", note="gone from " + ", ".join(gone))
        elif changed:
            t = t._replace(mark="replaced", note="same id, new message in " + ", ".join(changed))
        marked.append(t)
    if not step.children:  # written by this step's tasks, in no checkpoint yet
        marked += [t._replace(mark="pending", note=f"written by {name}, not applied yet")
                   for name, t in written if t.role != REMOVE]
    return marked


def changes(step: Step, parent: Step | None, channel: str = "messages") -> list[tuple[str, Turn]]:
    """What a checkpoint changed in the conversation: ("+", new), ("~", same id, new message),
    ("-", gone) against its parent; the first checkpoint adds all it holds."""
    now = transcript(step, channel)
    before = {t.id: t for t in held(parent, channel)} if parent else {}
    ids = {t.id for t in now}
    out = [("+", t) if t.id not in before else ("~", t) for t in now
           if t.id not in before or before[t.id][:5] != t[:5]]
    return out + [("-", t._replace(mark="removed", note="not in this checkpoint"))
                  for t in before.values() if t.id not in ids]


# --- text -------------------------------------------------------------------------------------
def terminal_safe(text: str) -> str:
    """Stored text on one line: control characters (newlines, escapes) shown, not obeyed."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def turn_text(turn: Turn, width: int = 100) -> str:
    """One line: role, content, tool calls, id, and the mark with its reason."""
    content = turn.content if len(turn.content) <= width else turn.content[:width - 1] + "…"
    parts = [f"{turn.role:<6}", json.dumps(content, ensure_ascii=False)]
    parts += [f"calls {name}({short(args, 60)}) [{call_id}]" for name, args, call_id
              in turn.tool_calls]
    if turn.tool_call_id:
        parts.append(f"answers [{turn.tool_call_id}]")
    parts.append(f"id={turn.id}")
    if turn.mark:
        parts.append(f"({turn.mark}: {turn.note})")
    return terminal_safe("  ".join(parts))


def transcript_text(turns: list[Turn]) -> str:
    lines = [turn_text(t) for t in turns[:MAX_TURNS]]
    if len(turns) > MAX_TURNS:
        lines.append(f"… {len(turns) - MAX_TURNS} more messages")
    return "\n".join(lines) or "(no messages)"


# --- HTML -------------------------------------------------------------------------------------
# explicit ink on paper, as every picture here: the same in JupyterLab's light and Dark themes
CHAT_CSS = (f"background:{PAPER};color:{INK};border:1px solid {LINE};border-radius:6px;"
            "padding:6px 8px;font-size:14px;max-width:760px;"
            "font-family:var(--jp-ui-font-family, sans-serif)")
META_CSS = f"color:{INK};font-size:13px;opacity:0.8"


def turn_html(turn: Turn) -> str:
    """One message as a card; every stored string is escaped."""
    colour = STRONG_RED if turn.mark == "removed" else ROLE_COLOURS.get(turn.role, GREY)
    style = (f"border-left:4px {'dashed' if turn.mark == 'pending' else 'solid'} {colour};"
             f"background:{PAPER};color:{INK};margin:4px 0;padding:3px 8px")
    body = ("text-decoration:line-through;" if turn.mark == "removed" else "") \
        + f"white-space:pre-wrap;color:{INK};margin:2px 0"
    meta = [f"<b>{html.escape(turn.role)}</b>", f"id {html.escape(str(turn.id))}"]
    if turn.tool_call_id:
        meta.append(f"answers {html.escape(str(turn.tool_call_id))}")
    if turn.mark:
        meta.append(f"<b style='color:{colour}'>{html.escape(turn.mark)}</b>: "
                    f"{html.escape(turn.note)}")
    calls = "".join(
        f"<div style='{META_CSS}'>calls <code style='color:{INK};background:{GREY}'>"
        f"{html.escape(name)}({html.escape(short(args, 120))})</code> "
        f"{html.escape(str(call_id))}</div>" for name, args, call_id in turn.tool_calls)
    return (f"<div class='lgc-turn lgc-{html.escape(turn.role)}"
            f"{' lgc-' + turn.mark if turn.mark else ''}' style='{style}'>"
            f"<div style='{META_CSS}'>{' · '.join(meta)}</div>"
            f"<div class='lgc-content' style='{body}'>{html.escape(turn.content)}</div>"
            f"{calls}</div>")


def transcript_html(turns: list[Turn], title: str = "") -> str:
    cards = "".join(turn_html(t) for t in turns[:MAX_TURNS])
    if len(turns) > MAX_TURNS:
        cards += f"<div>… {len(turns) - MAX_TURNS} more messages</div>"
    head = f"<div style='{META_CSS}'>{html.escape(title)}</div>" if title else ""
    return f"<div class='lgc-chat' style='{CHAT_CSS}'>{head}{cards or '(no messages)'}</div>"


def step_html(step: Step | None, history: History | None = None) -> str:
    """Every message channel of a checkpoint as a transcript; "" when it holds none."""
    if step is None:
        return ""
    return "".join(transcript_html(transcript(step, c, history), f"{c} at {step.key}")
                   for c in message_channels(step.values))


def step_lines(step: Step, history: History | None = None) -> list[str]:
    """The same as text lines (a checkpoint's details)."""
    out = []
    for c in message_channels(step.values):
        out.append(f"{c}:")
        out += ["  " + turn_text(t, 60) for t in transcript(step, c, history)[:MAX_TURNS]]
    return out


def change_lines(step: Step, parent: Step | None) -> list[str]:
    """A checkpoint's changes to every message channel, one line each (``inspect``)."""
    channels = message_channels(step.values)
    channels += [c for c in message_channels(parent.values if parent else {}) if c not in channels]
    return [f"{c + ' ' if c != 'messages' else ''}{sign} {turn_text(t)}"
            for c in channels for sign, t in changes(step, parent, c)]


REPORT_STEPS = 60  # newest checkpoints whose conversation a report shows


def report_html(history: History) -> str:
    """Each checkpoint's conversation, the head's open ("" for a thread without messages)."""
    shown = [s for s in history.steps if message_channels(s.values)][-REPORT_STEPS:]
    return "".join(f"<details{' open' * s.is_head}><summary>{html.escape(s.label)}</summary>"
                   f"{step_html(s, history)}</details>" for s in shown)


class Conversation:
    """A thread's conversation at one checkpoint (default: the head); ``.widget()`` picks one."""

    def __init__(self, source: Any, config: dict | None = None, graph: Any = None,
                 key: str | None = None, channel: str | None = None):
        self.history = source if isinstance(source, History) else load_history(
            source, config or {}, graph, limit=VIEW_LIMIT)  # the newest ones, as every viewer
        self.key = key
        if self.step is None:
            raise ValueError("the thread has no checkpoints yet: run the graph first")
        found = message_channels(self.step.values) or ["messages"]
        self.channel = channel or found[0]

    @property
    def step(self) -> Step | None:
        return self.history[self.key] if self.key else self.history.head

    @property
    def turns(self) -> list[Turn]:
        return transcript(self.step, self.channel, self.history)

    def text(self) -> str:
        return transcript_text(self.turns)

    def __repr__(self) -> str:
        return (f"Conversation({self.channel} at {self.step.key}: {len(self.turns)} messages)\n"
                + self.text())

    def _repr_html_(self) -> str:
        return transcript_html(self.turns, f"{self.channel} at {self.step.key}")

    def png(self) -> bytes:
        """The transcript as text on white paper (untrusted notebooks, GitHub)."""
        import textwrap

        from matplotlib.figure import Figure

        lines = [w for line in self.text().splitlines()
                 for w in textwrap.wrap(line, 100, subsequent_indent="        ") or [""]]
        title = f"{self.channel} at {self.step.key}"
        fig = Figure(figsize=(10, 0.25 * len(lines) + 0.6), facecolor=PAPER)
        fig.text(0.01, 0.99, "\n".join([title, *lines]), family="monospace", fontsize=10,
                 va="top", color=INK)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
        return buf.getvalue()

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self._repr_html_(), "image/png": self.png(),
                "text/plain": repr(self)}

    def widget(self):
        """A checkpoint picker above the transcript."""
        import ipywidgets as w

        from lgcheckpoint.viz.widgets import viewer_box

        pick = w.Dropdown(description="checkpoint", value=self.step.key,
                          options=[(f"{s.key} · step {s.step} · {s.source}", s.key)
                                   for s in self.history.steps])
        view = w.HTML(self._repr_html_())
        view.add_class("lgc-conversation")

        def show(change):
            self.key = change["new"]
            view.value = self._repr_html_()

        pick.observe(show, names="value")
        return viewer_box("Conversation", [pick, view], static=self.png)
