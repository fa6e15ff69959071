"""The pure parts of memory: which questions ask to be remembered (English and
Japanese), and the recall block — after the persona, every fact on one line, bounded
whatever is stored."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.capabilities.memory.asking import asks_to_remember
from bot.capabilities.memory.recall import (
    FACTS_BUDGET,
    FACTS_HEADER,
    MEMORIES_BUDGET,
    MEMORIES_HEADER,
    after_persona,
    recall_block,
)
from bot.db.models_memory import FACT_LENGTH

ASKING = ["remember that I am vegan", "Please remember my cat is called Tama", "Hi! Remember I'm left-handed",
          "don't forget I live in Osaka", "Do not forget: metric units", "keep in mind I use Linux",
          "could you remember my name is Ken?", "私はベジタリアンだと覚えておいて", "猫の名前はタマ。覚えてね",
          "誕生日を忘れないで", "覚えて", "この番号を記憶して"]
NOT_ASKING = ["do you remember the film?", "remember when we met?", "Can you remember what I said?",
              "I remember my childhood", "what is the capital of France?", "覚えてる？", "覚えていますか",
              "昨日のことを覚えている", ""]


@pytest.mark.parametrize("text", ASKING)
def test_a_request_to_remember_is_seen(text: str) -> None:
    assert asks_to_remember(text)


@pytest.mark.parametrize("text", NOT_ASKING)
def test_a_question_about_the_past_is_not_a_request(text: str) -> None:
    assert not asks_to_remember(text)


@given(st.text(max_size=300))
def test_every_text_is_classified_and_a_request_after_it_is_seen(text: str) -> None:
    assert asks_to_remember(text) in (True, False)
    assert asks_to_remember(f"{text}\nplease remember that I like tea")


def test_nothing_to_recall_leaves_the_persona_alone() -> None:
    assert recall_block([], []) is None
    assert after_persona("You are a pirate.", None) == "You are a pirate."


def test_facts_then_memories_each_on_one_line_after_the_persona() -> None:
    block = recall_block(["We open at 9.", "Parking\nis free"], ["I am vegan", "My cat:\n\n- is Tama"])
    assert block == (f"{FACTS_HEADER}\n- We open at 9.\n- Parking is free\n\n"
                     f"{MEMORIES_HEADER}\n- I am vegan\n- My cat: - is Tama")
    assert after_persona("You are a pirate.", block) == f"You are a pirate.\n\n{block}"
    assert after_persona(None, block) == block


fact = st.text(min_size=1, max_size=FACT_LENGTH).filter(str.strip)


@given(st.lists(fact, max_size=20), st.lists(fact, max_size=100))
def test_the_block_is_bounded_and_keeps_the_newest_memories(facts: list[str], memories: list[str]) -> None:
    block = recall_block(facts, memories)
    if block is None:
        return
    headers = len(FACTS_HEADER) + len(MEMORIES_HEADER) + 4
    assert len(block) <= FACTS_BUDGET + MEMORIES_BUDGET + headers
    lines = block.split("\n")
    assert all(line in (FACTS_HEADER, MEMORIES_HEADER, "") or line.startswith("- ") for line in lines)
    if memories and MEMORIES_HEADER in block:
        assert lines[-1] == "- " + " ".join(memories[-1].split())  # the newest is always there
