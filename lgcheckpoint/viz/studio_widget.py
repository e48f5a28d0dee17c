"""The Studio's widget: buttons and forms that call ``Studio``'s actions, and views that redraw.

Every button passes the head it was drawn with (``expected_head``), so a click on a view that is
out of date is refused by the studio, which says so in the status line and redraws. No callback
fails silently: ipywidgets would only log an exception, so each one goes through ``safely``,
which puts any error on the status line (and its traceback in the kernel's terminal).
Clicking a node of the topology toggles a breakpoint before it; clicking a checkpoint of the
lineage selects it.
Keys (when focus is inside the studio, or anywhere on the Voilà page): s step, r run,
n / p next / previous checkpoint. Drawings sit on light "paper" so they read in dark themes too.
Next: ``studio_app.py`` (the same widget as a web page).
"""

from __future__ import annotations

import html
import json
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets as w
import traitlets

from lgcheckpoint.viz.answers import Refused, parse_answer
from lgcheckpoint.viz.conversation import step_html
from lgcheckpoint.viz.history import channel_group, short
from lgcheckpoint.viz.widgets import SvgView, viewer_box

if TYPE_CHECKING:
    from lgcheckpoint.viz.studio import Studio

STYLE = """<style>
.lgc-studio { gap: 6px; }
.lgc-studio .lgc-paper { background: #ffffff; color: #1f2937; border-radius: 6px;
  padding: 6px; overflow: auto; }
.lgc-studio .lgc-paper pre { color: #1f2937; margin: 0; font-size: 12px; line-height: 1.35;
  white-space: pre-wrap; }
/* paper keeps dark ink in a Dark theme: labels, descriptions and code inherit the theme's
   light text colour otherwise (white on white) */
.lgc-studio .lgc-paper .widget-html-content, .lgc-studio .lgc-paper .widget-label,
.lgc-studio .lgc-paper .widget-label-basic, .lgc-studio .lgc-paper b { color: #1f2937; }
.lgc-studio .lgc-paper code { color: #1f2937; background: #f3f4f6; padding: 0 2px; }
.lgc-studio .lgc-paper input { color: #1f2937; background: #ffffff; border: 1px solid #6b7280; }
.lgc-studio .lgc-paper input::placeholder { color: #4b5563; opacity: 1; }
/* a wide table scrolls inside its paper (a visible bar), never cut at the left */
.lgc-studio .lgc-scroll { overflow-x: auto; max-width: 100%; }
.lgc-studio .lgc-scroll, .lgc-scroll { scrollbar-width: thin; scrollbar-color: #6b7280 #e5e7eb; }
.lgc-studio .widget-vbox, .lgc-studio .widget-hbox, .lgc-studio .widget-html,
.lgc-studio .widget-html-content { min-width: 0; }
.lgc-studio .lgc-table th { white-space: nowrap; }
.lgc-studio .lgc-table thead th { white-space: normal; min-width: 3em; }
.lgc-studio .lgc-svg svg { max-width: 100%; height: auto; }
.lgc-studio .lgc-table { border-collapse: collapse; font-size: 12px; color: #1f2937; }
.lgc-studio .lgc-table th, .lgc-studio .lgc-table td { border: 1px solid #d1d5db;
  padding: 2px 6px; text-align: left; }
.lgc-studio .lgc-table td.changed { background: #fde68a; }
.lgc-studio .lgc-table tr.shown th { background: #fde047; }
.lgc-studio .lgc-status { padding: 4px 8px; border-radius: 6px; background: #e0f2fe;
  color: #0c4a6e; }
.lgc-studio .lgc-status.refused { background: #fee2e2; color: #7f1d1d; }
.lgc-studio .lgc-status .widget-html-content { color: inherit; }
.lgc-studio .lgc-keys { color: var(--jp-ui-font-color2, #6b7280); font-size: 12px; }
</style>"""

KEYS_ESM = """
function render({ model, el }) {
  el.classList.add("lgc-keys-listener");
  const names = { s: "step", r: "run", n: "next", p: "previous" };
  const onKey = (event) => {
    const target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey || !names[event.key]) return;
    if (target && (["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)
                   || target.isContentEditable)) return;
    const studio = el.closest(".lgc-studio");
    const inside = studio && studio.contains(document.activeElement);
    if (!model.get("everywhere") && !inside) return;
    event.preventDefault(); event.stopPropagation();
    model.set("command", names[event.key] + ":" + Date.now());
    model.save_changes();
  };
  document.addEventListener("keydown", onKey, true);
  return () => document.removeEventListener("keydown", onKey, true);
}
export default { render };
"""


class KeyListener(anywidget.AnyWidget):
    """Sends ``step`` / ``run`` / ``next`` / ``previous`` when s / r / n / p is pressed."""

    _esm = KEYS_ESM
    command = traitlets.Unicode("").tag(sync=True)
    everywhere = traitlets.Bool(False).tag(sync=True)  # Voilà: the page is the studio

    def __repr__(self) -> str:
        return "KeyListener()"


def paper(child: w.Widget) -> w.Widget:
    child.add_class("lgc-paper")
    return child


def json_text(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def studio_widget(studio: Studio, keys_everywhere: bool = False) -> w.Widget:
    """Build the widget; every view is redrawn from ``studio`` after each action."""
    ui = StudioUI(studio, keys_everywhere)
    return ui.box


class StudioUI:
    """Holds the widgets and the page of the lineage being shown."""

    def __init__(self, studio: Studio, keys_everywhere: bool):
        self.studio, self.lineage_page = studio, 0
        self.drawn: str | None = None  # the head id the views show
        self.form_for: str | None = None  # the checkpoint the fork form was filled from
        s = studio
        self.status = w.HTML()
        self.status.add_class("lgc-status")
        self.input = w.Text(value=json_text(s.input) if s.input is not None else "",
                            description="input", placeholder="JSON input to start a run",
                            layout=w.Layout(width="340px"))
        self.step_button = w.Button(description="Step", icon="step-forward",
                                    tooltip="one super-step (key s)", button_style="primary")
        self.run_button = w.Button(description="Run", icon="play",
                                   tooltip="until a breakpoint, interrupt or the end (key r)")
        self.step_button.add_class("lgc-step")
        self.run_button.add_class("lgc-run")
        self.step_button.on_click(self.safely(
            lambda _: self.act(lambda h: s.step(self.start_input(), h))))
        self.run_button.on_click(self.safely(
            lambda _: self.act(lambda h: s.run(self.start_input(), h))))
        self.keys = KeyListener(everywhere=keys_everywhere)
        self.keys.observe(self.safely(self.on_key), names="command")
        hint = w.HTML("keys: <b>s</b> step · <b>r</b> run · <b>n</b>/<b>p</b> next/previous "
                      "checkpoint · click a node: breakpoint before it")
        hint.add_class("lgc-keys")

        self.breaks = w.HBox(layout=w.Layout(flex_flow="row wrap"))
        self.topology = SvgView()
        self.topology.add_class("lgc-topology")
        self.topology.observe(self.safely(self.on_node_click), names="selected")
        self.lineage = SvgView()
        self.lineage.add_class("lgc-lineage")
        self.lineage.observe(self.safely(self.on_checkpoint_click), names="selected")
        self.pick = w.Dropdown(description="checkpoint", layout=w.Layout(width="300px"))
        self.pick.observe(self.safely(self.on_pick), names="value")
        self.older = w.Button(description="older", icon="arrow-up", layout=w.Layout(width="90px"))
        self.newer = w.Button(description="newer", icon="arrow-down",
                              layout=w.Layout(width="90px"))
        self.older.on_click(self.safely(lambda _: self.turn(+1)))
        self.newer.on_click(self.safely(lambda _: self.turn(-1)))
        self.frame = paper(w.HTML())
        self.frame.add_class("lgc-frame")
        self.seen = paper(w.HTML())
        self.table = paper(w.HTML(layout=w.Layout(max_height="260px")))
        self.table.add_class("lgc-versions-box")

        self.replay_button = w.Button(description="replay from here", icon="repeat")
        self.replay_button.add_class("lgc-replay")
        self.replay_button.on_click(self.safely(
            lambda _: self.act(lambda h: s.replay(self.key(), False, h))))
        self.fork_values = w.Textarea(description="values", layout=w.Layout(width="420px",
                                                                            height="70px"))
        self.fork_as = w.Dropdown(description="as_node", options=[("(the last writer)", "")]
                                  + [(n, n) for n in s.nodes])
        # plain style: ipywidgets' "warning" orange puts white text at contrast 2.7
        self.fork_button = w.Button(description="fork here", icon="code-branch")
        self.fork_button.add_class("lgc-fork")
        self.fork_values.add_class("lgc-fork-values")
        self.fork_as.add_class("lgc-fork-as")
        self.fork_button.on_click(self.safely(lambda _: self.act(
            lambda h: s.fork(self.key(), parse_answer(self.fork_values.value),
                             self.fork_as.value or None, h))))
        self.travel = w.VBox([w.HBox([self.replay_button, self.fork_button]),
                              self.fork_values, self.fork_as])
        self.interrupts = w.VBox()
        self.interrupts.add_class("lgc-interrupts")

        left = w.VBox([paper(self.topology), self.breaks, self.frame, self.seen],
                      layout=w.Layout(width="50%"))
        right = w.VBox([w.HBox([self.pick, self.older, self.newer]), paper(self.lineage),
                        self.travel], layout=w.Layout(width="50%"))
        title = w.HTML(f"<b>lgcheckpoint studio</b> · thread "
                       f"<code>{html.escape(str(s.history.thread_id))}</code>")
        controls = w.HBox([title, self.input, self.step_button, self.run_button, self.keys, hint],
                          layout=w.Layout(flex_flow="row wrap", align_items="center"))
        self.box = viewer_box("Studio", [w.HTML(STYLE), controls, self.status, self.interrupts,
                                         w.HBox([left, right]), self.table])
        self.box.add_class("lgc-studio")
        self.box.static = studio.png  # the viewers' ViewerBox adds this PNG where widgets fail
        self.box.ui = self  # tests and the Voilà page reach the parts from the widget
        self.redraw()

    # --- actions ------------------------------------------------------------------------------
    def start_input(self) -> Any:
        """The input box, used only when the thread is empty or has ended."""
        text = self.input.value.strip()
        return parse_answer(text) if text else None

    def safely(self, callback: Callable[..., Any]) -> Callable[..., None]:
        """``callback`` as a widget handler: whatever it raises reaches the status line."""
        def handler(*args: Any) -> None:
            try:
                callback(*args)
            except Exception as error:  # noqa: BLE001 - shown, never swallowed by ipywidgets
                self.show_error(error)
        return handler

    def show_error(self, error: BaseException, before: str = "") -> None:
        """Put ``error`` on the status line; its traceback goes to the kernel's terminal."""
        traceback.print_exception(error, file=sys.__stderr__)
        self.status.add_class("refused")
        self.status.value = html.escape(f"{before}error: {type(error).__name__}: {error}")

    def act(self, action: Callable[[str | None], Any]) -> None:
        """Run an action with the head this view was drawn with; show what happened or why not."""
        refused = False
        try:
            action(self.drawn)
        except Refused:
            refused = True
        except Exception as error:  # noqa: BLE001 - the graph or the saver raised: show it
            traceback.print_exception(error, file=sys.__stderr__)
            self.studio.message = f"error: {type(error).__name__}: {error}"
            refused = True
            try:  # the thread may have moved before the error; a closed saver fails again here
                self.studio.reload()
            except Exception as again:  # noqa: BLE001
                traceback.print_exception(again, file=sys.__stderr__)
                self.studio.message += " (re-reading the thread failed too: " \
                    f"{type(again).__name__})"
        self.lineage_page = 0
        try:
            self.redraw(refused)
        except Exception as error:  # noqa: BLE001
            self.show_error(error, f"{self.studio.message}; redrawing: " if refused else "")

    def clear_status(self) -> None:
        """A new selection: the last action's message (a refusal) no longer applies to it."""
        self.studio.message = ""
        self.status.remove_class("refused")
        self.status.value = html.escape(self.studio.outcome())

    def key(self) -> str:
        shown = self.studio.shown
        if shown is None:
            raise Refused("refused: the thread has no checkpoint yet. Nothing was written.")
        return shown.key

    def on_key(self, change) -> None:
        command = change["new"].split(":", 1)[0]
        if command == "step":
            self.step_button.click()
        elif command == "run":
            self.run_button.click()
        elif command in ("next", "previous"):
            self.studio.move(+1 if command == "next" else -1)
            self.redraw_selection()
            self.clear_status()

    def on_node_click(self, change) -> None:
        node = change["new"]
        if node in self.studio.nodes:
            self.studio.toggle_breakpoint(node, "before")
            self.topology.selected = ""
            self.redraw_breaks()

    def on_checkpoint_click(self, change) -> None:
        key = change["new"]
        self.lineage.selected = ""
        if key in ("older", "newer"):
            self.turn(+1 if key == "older" else -1)
        elif key:
            self.studio.select(key)
            self.redraw_selection()
            self.clear_status()

    def on_pick(self, change) -> None:
        if change["new"] and (self.studio.shown is None or change["new"] != self.studio.shown.key):
            self.studio.select(change["new"])
            self.redraw_selection()
            self.clear_status()

    def turn(self, pages: int) -> None:
        self.lineage_page = min(max(self.lineage_page + pages, 0), self.studio.pages - 1)
        self.lineage.svg = self.studio.svg("lineage", self.lineage_page)
        self.table.value = self.studio.table_html(self.lineage_page)

    # --- drawing ------------------------------------------------------------------------------
    def redraw(self, refused: bool = False) -> None:
        """Everything, from the thread as last read."""
        s = self.studio
        self.drawn = s.drawn_head
        self.pick.options = [(f"{x.key} · step {x.step} · {x.source}", x.key)
                             for x in reversed(s.page(self.lineage_page))]
        self.redraw_interrupts()
        self.redraw_breaks()
        self.redraw_selection()
        (self.status.add_class if refused else self.status.remove_class)("refused")
        self.status.value = html.escape(s.message or s.outcome())  # last: the views are ready

    def redraw_selection(self) -> None:
        s = self.studio
        shown = s.shown
        if shown is not None and shown.key in dict(self.pick.options).values():
            self.pick.value = shown.key
        self.lineage.svg = s.svg("lineage", self.lineage_page)
        self.topology.svg = s.svg("topology")
        self.frame.value = f"<pre>{html.escape(s.frame_text())}</pre>" \
            + step_html(shown, s.history)  # its messages as a conversation
        self.seen.value = s.versions_html()
        self.table.value = s.table_html(self.lineage_page)
        if self.form_for != (shown and shown.checkpoint_id):  # keep an edit until another pick
            self.form_for = shown and shown.checkpoint_id
            state = {} if shown is None else {c: v for c, v in shown.values.items()
                                              if channel_group(c) == 0}
            self.fork_values.value = json_text(state)

    def redraw_breaks(self) -> None:
        s = self.studio
        toggles = []
        for node in s.nodes:
            for when, points in (("before", s.break_before), ("after", s.break_after)):
                t = w.ToggleButton(value=node in points, description=f"{when} {node}",
                                   tooltip=f"stop {when} {node}", icon="pause",
                                   layout=w.Layout(width="auto"))
                t.add_class(f"lgc-break-{when}")
                t.observe(self.safely(self.flip(node, when)), names="value")
                toggles.append(t)
        self.breaks.children = toggles
        self.topology.svg = s.svg("topology")

    def flip(self, node: str, when: str) -> Callable[[dict], None]:
        def changed(change):
            points = self.studio.break_before if when == "before" else self.studio.break_after
            if change["new"] != (node in points):
                self.studio.toggle_breakpoint(node, when)
            self.topology.svg = self.studio.svg("topology")
        return changed

    def redraw_interrupts(self) -> None:
        s = self.studio
        rows = []
        for interrupt in s.pending:
            iid = getattr(interrupt, "id", None)
            value = getattr(interrupt, "value", interrupt)
            # empty, not the question: sending the box unchanged must not answer with the question
            edit = w.Text(value="", description="edit",
                          placeholder="your own answer (JSON or text), then send edit",
                          layout=w.Layout(width="100%"), style={"description_width": "initial"})
            edit.add_class("lgc-edit")
            approve = w.Button(description="approve", button_style="success")
            reject = w.Button(description="reject", button_style="danger")
            send = w.Button(description="send edit")
            for button, name in ((approve, "approve"), (reject, "reject"), (send, "send")):
                button.add_class(f"lgc-{name}")
            approve.on_click(self.answer(lambda: s.approve_value, iid))
            reject.on_click(self.answer(lambda: s.reject_value, iid))
            send.on_click(self.answer(lambda e=edit: self.typed(e.value), iid))
            label = w.HTML(f"<b>interrupt</b> <code>{html.escape(str(iid))[:12]}</code>: "
                           f"<code>{html.escape(short(value, 200))}</code>")
            label.add_class("lgc-question")
            rows.append(paper(w.VBox([label, w.HBox([approve, reject, send]), edit])))
        self.interrupts.children = rows

    def typed(self, text: str) -> Any:
        """The edit box's answer; an empty box is refused, not sent."""
        if not text.strip():
            self.studio.message = "refused: type an answer in the edit box first. Nothing was " \
                "written."
            raise Refused(self.studio.message)
        return parse_answer(text)

    def answer(self, value: Callable[[], Any], interrupt_id: str | None) -> Callable[[Any], None]:
        """A button of the row drawn for head ``self.drawn``: a second click that arrives after
        the first one redrew the view (a double click) belongs to a row no longer shown."""
        drawn_with = self.drawn

        def clicked(_):
            if drawn_with != self.drawn:
                self.status.value += html.escape(" (a second click on an answered question "
                                                 "was ignored)")
                return
            self.act(lambda h: self.studio.answer(value(), interrupt_id, h))
        return self.safely(clicked)
