"""``python -m hope.testing`` as users run it, in its own process (issue #35): SIGINT and SIGTERM
stop it promptly with its statistics, even when started as a shell's background job (SIGINT
ignored, stdin /dev/null); a parent's stdin pipe closing stops it too."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request

import pytest


def start(stdin: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hope.testing", "--latency", "0"],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # What a non-interactive shell does to a background job: SIGINT ignored, and Python then
        # installs no KeyboardInterrupt handler of its own.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    return proc, json.loads(proc.stdout.readline())["base_url"]


def chat(base_url: str) -> str:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(
        f"{base_url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]


def stopped(proc: subprocess.Popen) -> tuple[int, float, dict, str]:
    """Exit status, seconds to exit, the statistics line and stderr, stdin left as it was."""
    began = time.monotonic()
    try:
        code = proc.wait(60)  # generous: a loaded CI machine; the old server never stopped
    finally:
        proc.kill()  # a no-op when it has exited; otherwise the test fails without a stray server
    took = time.monotonic() - began
    stats = json.loads(proc.stdout.readline())
    err = proc.stderr.read()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return code, took, stats, err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_it_with_its_statistics_while_stdin_is_open(signum):
    proc, base_url = start(subprocess.PIPE)
    assert chat(base_url) == "OK" and chat(base_url) == "OK"
    proc.send_signal(signum)
    code, took, stats, err = stopped(proc)
    assert code == 0, err
    assert took < 30
    assert stats == {"requests": 2, "preflights": 0, "faulted": 0, "max_in_flight": 1}
    assert f"stopped ({signum.name})" in err and "Traceback" not in err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_as_soon_as_the_url_is_printed_still_gives_the_statistics(signum):
    """The client may signal the moment it has read the URL: the server must be past starting
    its stdin watcher by then (it used to start it after printing, and a signal during the start
    ended it without statistics)."""
    for _ in range(5):
        proc, _ = start(subprocess.PIPE)
        proc.send_signal(signum)
        code, _, stats, err = stopped(proc)
        assert code == 0 and stats["requests"] == 0, err
        assert f"stopped ({signum.name})" in err


def test_a_background_job_with_stdin_at_end_of_file_serves_until_signalled():
    proc, base_url = start(subprocess.DEVNULL)
    time.sleep(0.3)  # /dev/null is at its end from the start: it must not read as "stop"
    assert proc.poll() is None
    assert chat(base_url) == "OK"
    proc.send_signal(signal.SIGTERM)
    code, _, stats, err = stopped(proc)
    assert code == 0 and stats["requests"] == 1 and "stopped (SIGTERM)" in err


def test_closing_a_stdin_pipe_still_stops_it():
    proc, base_url = start(subprocess.PIPE)
    assert chat(base_url) == "OK"
    proc.stdin.close()
    code, _, stats, err = stopped(proc)
    assert code == 0 and stats["requests"] == 1 and "stopped (stdin closed)" in err
