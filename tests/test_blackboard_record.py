from __future__ import annotations

from roundhouse.core.blackboard import Blackboard
from roundhouse.core.record import Attachment, Post, RecordState, RoundRecord


def test_blackboard_round_trips_through_json_and_renders_for_the_prompt() -> None:
    board = Blackboard()
    assert board.render() == ""
    board.add_requests({"request_0": "list /tmp"})
    board.add_question("Which folder?", "/tmp")
    board.add_question("Overwrite?", None)
    board.add_trajectory({"round": 0, "step": 1, "action": "run_shell"})
    board.add_screenshot("action_round_0_final.png")
    again = Blackboard.from_json(board.to_json())
    assert again == board
    text = again.render()
    assert "request_0: list /tmp" in text
    assert "Q: Which folder? A: /tmp" in text
    assert "Q: Overwrite? A: (no answer)" in text
    assert '"action": "run_shell"' in text
    assert "action_round_0_final.png" in text


def test_render_keeps_only_recent_trajectories() -> None:
    board = Blackboard()
    for step in range(30):
        board.add_trajectory({"step": step})
    text = board.render(max_trajectories=5)
    assert '{"step": 29}' in text and '{"step": 25}' in text
    assert '{"step": 24}' not in text


def test_round_record_board_and_posts_in_taskweavers_shape() -> None:
    record = RoundRecord(id=3, user_query="copy a line")
    assert record.state is RecordState.CREATED
    record.write_board("host", "request: copy a line\nplan: 1. open editor")
    record.write_board("app:mousepad", "typing")
    assert record.read_board("host").startswith("request: copy a line")
    assert record.read_board("nobody") == ""
    everything = record.read_board()
    assert "[host]" in everything and "[app:mousepad]" in everything
    record.add_post(
        Post(
            send_from="host",
            send_to="app:mousepad",
            message="type it",
            attachments=[Attachment(type="plan", content="1. type")],
        )
    )
    dumped = record.model_dump(mode="json")
    assert set(dumped) == {"id", "user_query", "state", "post_list", "board"}
    post = dumped["post_list"][0]
    assert {"id", "send_from", "send_to", "message", "attachments"} <= set(post)
    assert post["attachments"][0]["type"] == "plan"
    assert RoundRecord.model_validate(dumped) == record
