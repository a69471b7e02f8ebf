"""20 tablets on the event stream plus a burst of changes, on loopback against the daemon process
(bench/load.py records the figures and runs the soak)."""

import pytest

from tests.reliability.loadlab import (close_streams, open_streams, over_the_cap, run_round, start_daemon,
                                       wait_for_free_slot)

pytestmark = pytest.mark.slow
TABLETS = 20


def test_twenty_tablets_see_every_event_in_order_and_state_stays_fast(tmp_path):
    daemon = start_daemon(tmp_path, max_streams=TABLETS)
    try:
        check_the_load(daemon)
        # the tablets hung up: their slots come free, so a new tablet gets in
        assert wait_for_free_slot(daemon.port)
    finally:
        code = daemon.stop()     # also when a check failed: no daemon left behind
    assert code == 0


def check_the_load(daemon) -> None:
    clients = []
    try:
        clients = open_streams(daemon.port, TABLETS)
        assert [c.log.status for c in clients] == [200] * TABLETS
        assert all(c.log.ids for c in clients), [c.log.error for c in clients if not c.log.ids]

        status, retry_after, _, took = over_the_cap(daemon.port)
        assert status == 503 and retry_after and int(retry_after) > 0 and took < 3.0

        rnd = run_round(daemon, clients, changes=50)
        assert rnd.gaps == [] and rnd.complete == TABLETS
        assert rnd.last_seq - rnd.first_seq == 50
        assert rnd.poll_errors == []
        figures = rnd.figures()
        assert figures["state_latency_ms"]["samples"] >= 20
        assert figures["state_latency_ms"]["p95"] < 100, figures
    finally:
        close_streams(clients)
