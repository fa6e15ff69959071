"""An answer's buttons: Stop while it streams; Regenerate, Continue and Reasoning after.

Each button's custom id carries the answer (`ans:<action>:<asker_id>:<question_id>`), so
a press needs no state in this process: ONE dynamic item (`AnswerButton`) is registered
at start-up (`bot.add_dynamic_items(AnswerButton)`) and presses keep working after a
restart. A press is handed to the bot as an event, `answer_control` (a cog listens with
`on_answer_control(interaction, press)` and must answer the interaction within 3 s);
this module knows nothing of what a press does.

The views an answer's messages carry are built once per answer (`AnswerControls`) and
are never stored by discord.py: a dispatchable view passed to a send or an edit would be
kept per message id (`ConnectionState.store_view`), a map growing with every answer,
while presses reach the registered dynamic item anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, cast

import discord

from providers.i18n import t
from stream.sink import Ending
from stream.sources import SHOWN

Action = Literal["stop", "regen", "cont", "why", "src"]
ACTIONS: tuple[Action, ...] = ("stop", "regen", "cont", "why", "src")
EVENT = "answer_control"  # client.dispatch name: a listener is `on_answer_control`
CUSTOM_ID_MAX = 100  # Discord's limit for a component's custom id
TEMPLATE = r"ans:(?P<action>stop|regen|cont|why|src):(?P<asker>[0-9]{1,20}):(?P<question>[0-9]{1,20})"

# action -> (label key, style)
_BUTTONS: dict[Action, tuple[str, discord.ButtonStyle]] = {
    "stop": ("chat.controls.stop", discord.ButtonStyle.danger),
    "regen": ("chat.controls.regenerate", discord.ButtonStyle.secondary),
    "cont": ("chat.controls.continue", discord.ButtonStyle.primary),
    "why": ("chat.controls.reasoning", discord.ButtonStyle.secondary),
    "src": ("chat.controls.sources", discord.ButtonStyle.secondary),
}


@dataclass(frozen=True, slots=True)
class Press:
    """A pressed answer button: what to do, whose question, which question."""

    action: Action
    asker_id: int
    question_id: int

    @property
    def custom_id(self) -> str:
        return f"ans:{self.action}:{self.asker_id}:{self.question_id}"


def _press(match: re.Match[str]) -> Press:
    return Press(cast(Action, match["action"]), int(match["asker"]), int(match["question"]))


class AnswerButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TEMPLATE):
    """Every answer button; registered once, it turns a press into the `answer_control` event."""

    def __init__(self, press: Press, *, label: str,
                 style: discord.ButtonStyle = discord.ButtonStyle.secondary) -> None:
        super().__init__(discord.ui.Button(label=label, style=style, custom_id=press.custom_id))
        self.press = press

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> AnswerButton:
        button = cast(discord.ui.Button[Any], item)
        return cls(_press(match), label=button.label or "", style=button.style)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        # The handler is the bot's business (a cog's `on_answer_control`), not this item's.
        interaction.client.dispatch(EVENT, interaction, self.press)


class SentView(discord.ui.View):
    """Buttons for a message, to be sent, never stored.

    `is_dispatchable()` is False on purpose: discord.py stores a dispatchable view per
    message id on every send or edit that carries it (`ConnectionState.store_view`) and
    would keep one for each answer ever sent; presses are dispatched by the registered
    `AnswerButton` from the custom id alone. The component payload is built once
    (`to_components`), so an edit that carries the view costs no rendering."""

    def __init__(self, *buttons: AnswerButton) -> None:
        super().__init__(timeout=None)
        for button in buttons:
            self.add_item(button)
        self._components = super().to_components()

    def is_dispatchable(self) -> bool:
        return False  # see the class docstring: never kept in discord.py's view store

    def to_components(self) -> list[dict[str, Any]]:
        return self._components


class AnswerControls:
    """The views of one answer's messages, labelled in the reader's language, built once."""

    def __init__(self, asker_id: int, question_id: int, locale: str | None) -> None:
        self.asker_id = asker_id
        self.question_id = question_id
        self.locale = locale
        self.stop = SentView(self._button("stop"))
        self._final: dict[tuple[bool, bool, bool], SentView] = {}

    def _button(self, action: Action) -> AnswerButton:
        key, style = _BUTTONS[action]
        press = Press(action, self.asker_id, self.question_id)
        return AnswerButton(press, label=t(key, self.locale), style=style)

    def final(self, ending: Ending) -> SentView | None:
        """The ended answer's last message: Regenerate, Continue when the output cap cut it
        (`length`), Reasoning when reasoning was captured, Sources when the answer has more
        sources than its sources line shows; None when no button applies."""
        shape = (ending.finish_reason == "length", ending.reasoning, ending.sources > SHOWN)
        view = self._final.get(shape)
        if view is None:
            actions: list[Action] = ["regen"]
            if shape[0]:
                actions.append("cont")
            if shape[1]:
                actions.append("why")
            if shape[2]:
                actions.append("src")
            view = self._final[shape] = SentView(*(self._button(a) for a in actions))
        return view if view.children else None
