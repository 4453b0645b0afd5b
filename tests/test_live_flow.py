"""inspector/web/live_flow.py: when a tab may get its next live frame (pure, on a clock the test turns)."""

from __future__ import annotations

import pytest

from inspector.web.live_flow import FrameFlow


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def sent_frame(flow: FrameFlow) -> None:
    flow.sending()
    flow.written()


def test_one_frame_in_flight_until_the_page_acknowledges_it():
    flow = FrameFlow(0.15, Clock())
    assert not flow.in_flight()
    sent_frame(flow)
    assert flow.in_flight()
    assert flow.acknowledge() and not flow.in_flight()


def test_an_acknowledgement_with_no_frame_waiting_is_ignored():
    flow = FrameFlow(0.15, Clock())
    assert not flow.acknowledge()
    sent_frame(flow)
    sent_frame(flow)  # a re-sync the user asked for goes out without waiting
    assert flow.acknowledge() and flow.in_flight()
    assert flow.acknowledge() and not flow.in_flight()
    assert not flow.acknowledge() and (flow.sent, flow.acknowledged) == (2, 2)


def test_an_acknowledgement_that_overtakes_the_end_of_the_write_counts():
    clock = Clock()
    flow = FrameFlow(0.15, clock)
    flow.sending()
    assert flow.acknowledge()  # the page painted it before the writing thread returned
    flow.written()
    clock.now += 60
    assert not flow.in_flight() and flow.unacknowledged_for() == 0, "nothing is owed"


def test_frames_are_paced_from_the_end_of_the_last_write():
    clock = Clock()
    flow = FrameFlow(0.15, clock)
    assert flow.until_next() == 0, "the first frame goes at once"
    flow.sending()
    clock.now += 5  # a long write to a slow socket
    flow.written()
    assert flow.until_next() == pytest.approx(0.15)
    clock.now += 0.1
    assert flow.until_next() == pytest.approx(0.05)
    clock.now += 0.1
    assert flow.until_next() == 0


def test_how_long_the_tab_has_owed_an_acknowledgement():
    clock = Clock()
    flow = FrameFlow(0.15, clock)
    sent_frame(flow)
    clock.now += 3
    sent_frame(flow)
    clock.now += 4
    assert flow.unacknowledged_for() == 7
    flow.acknowledge()
    assert flow.unacknowledged_for() == 7, "the tab has owed one without a break since the first frame"
    flow.acknowledge()
    assert flow.unacknowledged_for() == 0
