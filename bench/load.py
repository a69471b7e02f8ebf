"""Load figures: tablets held on the event stream, event latency, /api/state latency, memory, CPU.

Run: .venv/bin/python bench/load.py [--clients 20] [--burst 50] [--paced 100] [--rate 4] [--minutes 10]
                                    [--cpu-minutes 5] [--json FILE]
Against the daemon as a process on loopback ([web] max_streams = --clients), started with the systemd
unit's malloc settings (GLIBC_TUNABLES from systemd/companion.service; set GLIBC_TUNABLES to try others,
an empty value for glibc's defaults):
  1. --clients event-stream clients connect; one more must get 503 with Retry-After at once;
  2. a burst of --burst changes as fast as the API takes them, then --paced changes at --rate per second,
     while a poller reads /api/state: every client must see every event id, in order; latencies are from
     the POST being sent to the event arriving at each client;
  3. --minutes of soak (0 to skip): first --warmup changes as fast as the API takes them, so that what the
     daemon keeps up to a fixed bound is full (the last 500 events, for pages resuming their stream);
     then the clients stay, a change every second, two clients reconnect with Last-Event-ID every 30 s;
     resident memory sampled every 5 s (start, end, peak, trend);
     The flight recorder's window is set to one minute ([recorder] minutes), so that it is full by then too;
     its size is reported, and what its default 20 minutes would hold of this table's samples;
  4. --cpu-minutes (0 to skip) at table pace with one tablet: a turn (a roll and a move) every 20 s,
     the sensor loop running as always; CPU seconds from /proc/PID/stat, scaled to an hour of play.
Exit code 1 if a client missed an event, /api/state p95 >= 100 ms, the over-cap client was not refused, or
memory grew during the soak's second half by more than FLAT_KB_PER_MIN a minute (least-squares trend).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _common import Figures  # first: it also puts the repository on sys.path

from companion.table.host import RECENT_EVENTS
from tests.reliability.harness import StreamClient, percentile
from tests.reliability.loadlab import (RECORDER_MINUTES, Mover, close_streams, open_streams, over_the_cap, run_round,
                                       start_daemon, wait_for_free_slot)

TABLE_TURN_S = 20.0          # a turn of Balance Duels at the table: a roll and a move
RECONNECT_EVERY_S = 30.0
RECONNECT_TRY_S = 15.0
FLAT_KB_PER_MIN = 100.0      # "flat": under 6 MB an hour, a tenth of what a tablet's stream buffers used to take


def ms(values: list[float]) -> dict:
    return {"median": round(percentile(values, 50) * 1000, 1), "p95": round(percentile(values, 95) * 1000, 1),
            "max": round(max(values) * 1000, 1), "n": len(values)} if values else {}


def trend_kb_per_min(samples: list[tuple[float, int]]) -> float:
    """Least-squares slope of RSS over time, kB per minute."""
    if len(samples) < 3:
        return 0.0
    n = len(samples)
    mt = sum(t for t, _ in samples) / n
    mv = sum(v for _, v in samples) / n
    den = sum((t - mt) ** 2 for t, _ in samples)
    return 60 * sum((t - mt) * (v - mv) for t, v in samples) / den if den else 0.0


def reconnect(port: int, old: StreamClient, timeout_s: float) -> tuple[StreamClient | None, int]:
    """A tablet that hung up comes back with Last-Event-ID; (its new stream or None, 503 answers it waited out).

    The server frees the old stream's slot when its next write finds the socket closed, so at the cap the
    first try may get the documented 503 + Retry-After."""
    last = old.log.ids[-1] if old.log.ids else None
    waited = 0
    deadline = time.monotonic() + RECONNECT_TRY_S
    while time.monotonic() < deadline:
        fresh = StreamClient(port, last_event_id=last, timeout=timeout_s, name=old.name)
        fresh.start()
        fresh.connected.wait(10)
        if fresh.log.status == 200:
            # an old client's ids before this one continue the sequence: keep them for the final check
            fresh.log.ids[:0] = old.log.ids
            fresh.log.arrivals[:0] = old.log.arrivals
            return fresh, waited
        fresh.join(timeout=5)
        waited += 1
        time.sleep(0.25)
    return None, waited


def soak(fig: Figures, daemon, clients: list[StreamClient], minutes: float) -> dict:
    client = daemon.client(timeout=10)
    mover = Mover(client)
    start = time.monotonic()
    end = start + minutes * 60
    samples: list[tuple[float, int]] = []
    next_sample = next_reconnect = start
    reconnects = gaps = waits = failed_reconnects = 0
    checked: list[str] = []
    i = 0
    try:
        while time.monotonic() < end:
            now = time.monotonic()
            mover.change()
            if now >= next_sample:
                samples.append((now - start, daemon.memory_kb()["VmRSS"]))
                next_sample += 5
            if now >= next_reconnect and now > start:
                for k in range(2):
                    j = (i + k) % len(clients)
                    old = clients[j]
                    old.stop()
                    old.join(timeout=10)
                    if old.log.ids and old.log.ids != list(range(old.log.ids[0], old.log.ids[-1] + 1)):
                        gaps += 1
                        checked.append(f"{old.name}: ids not consecutive before it hung up")
                    fresh, waited = reconnect(daemon.port, old, minutes * 60 + 120)
                    waits += waited
                    if fresh is None:
                        failed_reconnects += 1
                        checked.append(f"{old.name}: no stream slot within {RECONNECT_TRY_S} s of hanging up")
                        fresh = old
                    clients[j] = fresh
                    reconnects += 1
                i += 2
                next_reconnect += RECONNECT_EVERY_S
                fig.say(f"soak {(now - start) / 60:.1f} min: seq {mover.state['seq']}, RSS {samples[-1][1]} kB, "
                        f"{reconnects} reconnects")
            time.sleep(max(0.0, 1.0 - (time.monotonic() - now)))
        final = mover.state["seq"]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(c.log.ids and c.log.ids[-1] >= final for c in clients):
            time.sleep(0.05)
        for c in clients:
            ids = c.log.ids
            # a resumed client's first id is the one after its Last-Event-ID; every id up to the end, in order
            if not ids or ids != list(range(ids[0], final + 1)):
                gaps += 1
                checked.append(f"{c.name}: {len(ids)} ids, last {ids[-1] if ids else None} of {final}, "
                               f"error {c.log.error}")
    finally:
        client.close()
    half = [s for s in samples if s[0] >= samples[-1][0] / 2] if samples else []
    mem = daemon.memory_kb()
    client = daemon.client(timeout=10)
    try:
        recorder = client.get("/api/state")["live"].get("recorder") or {}
    finally:
        client.close()
    if recorder.get("seconds"):
        per_s = recorder["kb"] / recorder["seconds"]
        fig.say(f"flight recorder: {recorder['kb']} kB for {recorder['seconds']} s of table time "
                f"(window {RECORDER_MINUTES} min here); 20 minutes would hold {per_s * 1200 / 1024:.1f} MB")
    return {"minutes": minutes, "changes": len(mover.sent_at), "reconnects": reconnects,
            "reconnect_503_waits": waits, "failed_reconnects": failed_reconnects,
            "clients_with_gaps": gaps, "gap_details": checked[:5],
            "rss_kb": {"first": samples[0][1] if samples else None, "last": samples[-1][1] if samples else None,
                       "max": max(v for _, v in samples) if samples else None, "peak_VmHWM": mem["VmHWM"]},
            "rss_trend_kb_per_min": {"whole": round(trend_kb_per_min(samples), 1),
                                     "second_half": round(trend_kb_per_min(half), 1)},
            "flight_recorder": recorder}


def cpu_at_table_pace(fig: Figures, daemon, minutes: float) -> dict:
    tablet = StreamClient(daemon.port, timeout=minutes * 60 + 60, name="one tablet")
    tablet.start()
    tablet.connected.wait(10)
    client = daemon.client(timeout=10)
    mover = Mover(client)
    time.sleep(2)
    cpu0, t0 = daemon.cpu_seconds(), time.monotonic()
    end = t0 + minutes * 60
    next_change = t0
    try:
        while time.monotonic() < end:
            if time.monotonic() >= next_change:
                mover.change()
                mover.change()               # a turn: the roll and the move
                next_change += TABLE_TURN_S
            time.sleep(0.2)
    finally:
        client.close()
        tablet.stop()
    cpu, elapsed = daemon.cpu_seconds() - cpu0, time.monotonic() - t0
    per_hour = cpu / elapsed * 3600
    fig.say(f"CPU at table pace: {cpu:.1f} s over {elapsed:.0f} s with {len(mover.sent_at)} changes")
    return {"minutes": round(elapsed / 60, 2), "changes": len(mover.sent_at), "cpu_s": round(cpu, 2),
            "cpu_s_per_hour_of_play": round(per_hour, 1), "share_of_one_core": f"{100 * cpu / elapsed:.1f} %"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--burst", type=int, default=50)
    p.add_argument("--paced", type=int, default=100)
    p.add_argument("--rate", type=float, default=4.0, help="paced changes per second")
    p.add_argument("--minutes", type=float, default=10.0, help="soak minutes (0: no soak)")
    p.add_argument("--warmup", type=int, default=RECENT_EVENTS + 100, help="changes before the soak")
    p.add_argument("--cpu-minutes", type=float, default=5.0, help="minutes at table pace for the CPU figure")
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    fig = Figures("load", args.json)
    ok = True
    with tempfile.TemporaryDirectory(prefix="companion-load-") as tmp:
        daemon = start_daemon(Path(tmp), max_streams=args.clients)
        clients: list[StreamClient] = []
        try:
            fig.put("idle_rss_kb", daemon.memory_kb())
            clients = open_streams(daemon.port, args.clients, timeout_s=args.minutes * 60 + 600)
            held = sum(1 for c in clients if c.log.status == 200 and c.log.ids)
            status, retry_after, error, took = over_the_cap(daemon.port)
            fig.say(f"{held} / {args.clients} clients held; one more: {status} Retry-After {retry_after} "
                    f"in {took:.2f} s")
            fig.put("clients_held", held)
            fig.put("over_cap", {"status": status, "retry_after": retry_after, "answered_in_s": round(took, 3)})
            ok &= held == args.clients and status == 503 and bool(retry_after)
            burst = run_round(daemon, clients, args.burst)
            fig.say(f"burst of {args.burst}: {burst.complete} / {len(clients)} clients complete; "
                    f"events {ms(burst.latencies_s)}; /api/state {ms(burst.state_latencies_s)}")
            paced = run_round(daemon, clients, args.paced, pace_s=1.0 / args.rate)
            fig.say(f"{args.paced} paced at {args.rate}/s: {paced.complete} / {len(clients)} complete; "
                    f"events {ms(paced.latencies_s)}; /api/state {ms(paced.state_latencies_s)}")
            for name, rnd in (("burst", burst), ("paced", paced)):
                fig.put(name, {"changes": rnd.changes, "complete_clients": rnd.complete, "gaps": rnd.gaps[:5],
                               "event_latency_ms": ms(rnd.latencies_s),
                               "state_latency_ms": ms(rnd.state_latencies_s), "poll_errors": rnd.poll_errors[:5]})
                ok &= rnd.complete == len(clients) and not rnd.poll_errors
                ok &= bool(rnd.state_latencies_s) and percentile(rnd.state_latencies_s, 95) < 0.1
            fig.put("after_rounds_kb", daemon.memory_kb())
            if args.minutes > 0:
                if args.warmup > 0:
                    warm = run_round(daemon, clients, args.warmup, poll=False)
                    fig.say(f"warm-up of {args.warmup} changes: {warm.complete} / {len(clients)} clients complete")
                    fig.put("warmup", {"changes": warm.changes, "complete_clients": warm.complete,
                                       "gaps": warm.gaps[:5], "rss_kb": daemon.memory_kb()})
                    ok &= warm.complete == len(clients)
                result = soak(fig, daemon, clients, args.minutes)
                result["flat"] = result["rss_trend_kb_per_min"]["second_half"] <= FLAT_KB_PER_MIN
                fig.put("soak", result)
                ok &= result["clients_with_gaps"] == 0 and result["failed_reconnects"] == 0 and result["flat"]
            close_streams(clients)
            clients = []
            fig.put("slot_freed_after_hangup", wait_for_free_slot(daemon.port))
            if args.cpu_minutes > 0:
                fig.put("cpu", cpu_at_table_pace(fig, daemon, args.cpu_minutes))
            fig.put("peak_rss_kb", daemon.memory_kb()["VmHWM"])
        finally:
            close_streams(clients)
            code = daemon.stop()
        fig.put("clean_stop_exit_code", code)
        ok &= code == 0
    burst_lat = fig.data.get("paced", {}).get("event_latency_ms", {})
    soaked = fig.data.get("soak", {})
    memory = (f"; soak RSS {soaked['rss_kb']['first']} -> {soaked['rss_kb']['last']} kB, second-half trend "
              f"{soaked['rss_trend_kb_per_min']['second_half']} kB/min" if soaked.get("rss_kb", {}).get("first") else "")
    fig.put("figure", f"{fig.data.get('clients_held')} clients held; event latency median {burst_lat.get('median')} ms, "
                      f"p95 {burst_lat.get('p95')} ms (paced); peak RSS {fig.data.get('peak_rss_kb')} kB{memory}")
    return fig.finish(ok)


if __name__ == "__main__":
    sys.exit(main())
