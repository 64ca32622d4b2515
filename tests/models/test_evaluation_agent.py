"""The EvaluationAgent through the real client and the fake server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PIL import Image

from roundhouse.agents.evaluation import EvaluationAgent, choose_images, render_round
from roundhouse.config import OpenAISettings, Price
from roundhouse.core.commands import Result, ResultStatus
from roundhouse.core.events import EventBus, PromptSent
from roundhouse.core.limits import Limits
from roundhouse.core.record import RoundRecord
from roundhouse.core.states import AgentKind, RoundState, Status
from roundhouse.core.trajectory import ActionRecord, StepRecord
from roundhouse.core.usage import NOTHING_SPENT
from roundhouse.models.fake_openai import FakeOpenAI, Reply
from roundhouse.models.openai_client import OpenAIModel
from roundhouse.models.priced import PricedModel
from roundhouse.models.pricing import PriceTable
from tests.models.fakes import Sleeps

PRICES = PriceTable({"judge": Price(input_per_mtok=2.0, output_per_mtok=8.0)})
VALID = json.dumps(
    {
        "reason": "list.txt holds the list, the editor shows it saved",
        "sub_scores": [{"name": "file saved", "evaluation": "yes"}],
        "complete": "yes",
    }
)


@pytest.fixture
async def judge(fake: FakeOpenAI, sleeps: Sleeps) -> AsyncIterator[EvaluationAgent]:
    settings = OpenAISettings(base_url=fake.base_url, api_key="k", image_max_side=640)
    model = OpenAIModel("judge", settings, sleep=sleeps)
    # Priced as the model pool prices every model: the judge asks through the same path.
    priced = PricedModel(model, PRICES, Limits(), lambda: NOTHING_SPENT)
    yield EvaluationAgent(priced, EventBus(), max_images=3, retries=2)
    await model.aclose()


def screenshot(folder: Path, name: str) -> str:
    Image.new("RGB", (64, 48), "white").save(folder / name)
    return name


def step(
    n: int, status: Status = Status.CONTINUE, screenshots: list[str] | None = None
) -> StepRecord:
    return StepRecord(
        session_step=n,
        round_id=1,
        round_step=n,
        agent=AgentKind.APP,
        agent_name="gedit",
        status=status,
        thought=f"thought {n}",
        actions=[
            ActionRecord(
                function="type_text",
                arguments={"text": f"line {n}"},
                result=Result(status=ResultStatus.SUCCESS, result=f"typed line {n}"),
            )
        ],
        screenshots=screenshots or [],
    )


@pytest.fixture
def trajectory(tmp_path: Path) -> RoundRecord:
    steps = [
        step(
            n,
            screenshots=[
                screenshot(tmp_path, f"action_step{n}.png"),
                screenshot(tmp_path, f"action_step{n}_annotated.png"),
            ],
        )
        for n in (1, 2, 3)
    ]
    return RoundRecord(
        id=1,
        user_query="write a shopping list and save it as list.txt",
        state=RoundState.FINISH,
        result="saved",
        steps=steps,
        final_screenshots=[screenshot(tmp_path, "action_round_1_final.png"), "missing.png"],
    )


async def test_a_valid_answer_becomes_the_evaluation(
    fake: FakeOpenAI, judge: EvaluationAgent, trajectory: RoundRecord, tmp_path: Path
) -> None:
    fake.push(Reply.completion(VALID, prompt_tokens=1000, completion_tokens=100))

    evaluation = await judge.evaluate_round(trajectory, tmp_path)

    assert evaluation.round_id == 1
    assert evaluation.complete == "yes"
    assert evaluation.sub_scores[0].name == "file saved"
    assert evaluation.evaluator == "openai:judge"
    assert evaluation.usage.requests == 1
    assert evaluation.usage.cost == pytest.approx((1000 * 2 + 100 * 8) / 1e6)
    sent = fake.requests[0]
    system, user = sent.body["messages"]
    assert "FINISH" in system["content"] and "not proof" in system["content"]
    assert len(sent.image_urls()) == 3  # capped: two latest annotated steps + the final one
    text = user["content"][0]["text"]
    assert "write a shopping list" in text
    assert "action: type_text" in text and "typed line 3" in text
    assert "step 3: action_step3_annotated.png" in text
    assert "round 1 final: action_round_1_final.png" in text
    assert sent.body["response_format"]["type"] == "json_schema"


async def test_an_invalid_answer_goes_back_with_the_error_then_valid(
    fake: FakeOpenAI, judge: EvaluationAgent, trajectory: RoundRecord, tmp_path: Path
) -> None:
    fake.push(
        Reply.completion('{"reason": "looks done", "complete": "probably"}', 500, 20),
        Reply.completion(f"Here you go:\n```json\n{VALID}\n```", 600, 30),
    )

    evaluation = await judge.evaluate_round(trajectory, tmp_path)

    assert evaluation.complete == "yes"
    retry = fake.requests[1].body["messages"]
    assert retry[2] == {
        "role": "assistant",
        "content": '{"reason": "looks done", "complete": "probably"}',
    }
    assert retry[3]["content"].startswith("That answer is invalid: complete:")
    assert (evaluation.usage.requests, evaluation.usage.input_tokens) == (2, 1100)
    assert evaluation.usage.cost == pytest.approx((1100 * 2 + 50 * 8) / 1e6)


async def test_no_valid_answer_after_the_retries_is_unsure_with_the_reason(
    fake: FakeOpenAI, judge: EvaluationAgent, trajectory: RoundRecord, tmp_path: Path
) -> None:
    fake.push(*[Reply.completion("I think it worked.")] * 3)

    evaluation = await judge.evaluate_round(trajectory, tmp_path)

    assert evaluation.complete == "unsure"
    assert evaluation.reason.startswith("evaluator: the model gave no valid answer in 3 attempts")
    assert evaluation.usage.requests == 3


async def test_an_unreachable_judge_is_unsure_not_a_crash(
    fake: FakeOpenAI, judge: EvaluationAgent, trajectory: RoundRecord, tmp_path: Path
) -> None:
    fake.push(Reply.error(401, "bad key"))

    evaluation = await judge.evaluate_round(trajectory, tmp_path)

    assert evaluation.complete == "unsure"
    assert "evaluator could not be asked" in evaluation.reason and "401" in evaluation.reason
    assert evaluation.usage.requests == 1 and evaluation.usage.cost == 0


async def test_a_round_without_any_step_is_judged(
    fake: FakeOpenAI, judge: EvaluationAgent, tmp_path: Path
) -> None:
    empty = RoundRecord(
        id=2, user_query="what time is it?", state=RoundState.FINISH, result="It is noon."
    )
    fake.push(Reply.completion('{"reason": "no evidence", "sub_scores": [], "complete": "Unsure"}'))

    evaluation = await judge.evaluate_round(empty, tmp_path)

    assert evaluation.complete == "unsure"
    text = fake.requests[0].body["messages"][1]["content"]
    assert "(no steps" in text and "Screenshots attached, in order:\n(none)" in text


async def test_a_session_is_judged_from_all_its_rounds(
    fake: FakeOpenAI, judge: EvaluationAgent, trajectory: RoundRecord, tmp_path: Path
) -> None:
    second = trajectory.model_copy(update={"id": 2, "user_query": "now print it"})
    fake.push(Reply.completion(VALID))

    evaluation = await judge.evaluate_session([trajectory, second], tmp_path)

    assert evaluation.round_id is None and evaluation.complete == "yes"
    text = fake.requests[0].body["messages"][1]["content"][0]["text"]
    assert "Request: write a shopping list" in text and "Request: now print it" in text
    assert "step 3" not in text.split("Screenshots attached")[1]  # finals only


async def test_a_session_without_rounds_needs_no_model(judge: EvaluationAgent) -> None:
    evaluation = await judge.evaluate_session([], Path())
    assert evaluation.complete == "unsure" and evaluation.usage.requests == 0


def test_images_prefer_the_final_screen_then_the_latest_annotated_steps(
    trajectory: RoundRecord, tmp_path: Path
) -> None:
    labels = [label for label, _ in choose_images([trajectory], tmp_path, max_images=2)]
    assert labels == [
        "round 1 step 3: action_step3_annotated.png",
        "round 1 final: action_round_1_final.png",
    ]
    assert choose_images([trajectory], tmp_path, max_images=0) == []


def test_long_results_are_clipped_for_the_judge(trajectory: RoundRecord) -> None:
    [typed] = step(4).actions
    said = typed.model_copy(
        update={"result": Result(status=ResultStatus.SUCCESS, result="x" * 5000)}
    )
    long = step(4).model_copy(update={"actions": [said]})
    text = render_round(trajectory.model_copy(update={"steps": [long]}))
    assert "[4000 more characters]" in text


def test_a_generous_cap_shows_every_chosen_screenshot(
    trajectory: RoundRecord, tmp_path: Path
) -> None:
    # Three annotated steps and one final screenshot on disk (missing.png is left out).
    assert len(choose_images([trajectory], tmp_path, max_images=10)) == 4
    assert len(choose_images([trajectory], tmp_path, max_images=5)) == 4


async def test_the_judge_asks_as_the_agents_do_its_prompts_are_sent_as_events(
    fake: FakeOpenAI, sleeps: Sleeps, trajectory: RoundRecord, tmp_path: Path
) -> None:
    """Through agents/asking.py: each attempt is a PromptSent (request.log has it), named
    after the judge and the round judged."""
    settings = OpenAISettings(base_url=fake.base_url, api_key="k")
    model = OpenAIModel("judge", settings, sleep=sleeps)
    events = EventBus()
    sent: list[PromptSent] = []
    events.subscribe(lambda event: sent.append(event) if isinstance(event, PromptSent) else None)
    priced = PricedModel(model, PRICES, Limits(), lambda: NOTHING_SPENT)
    fake.push(Reply.completion("not json"), Reply.completion(VALID))
    evaluation = await EvaluationAgent(priced, events, retries=1).evaluate_round(
        trajectory, tmp_path
    )
    await model.aclose()
    assert evaluation.complete == "yes"
    assert [(e.round_id, e.agent, e.attempt) for e in sent] == [(1, "eval", 1), (1, "eval", 2)]
