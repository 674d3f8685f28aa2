"""A helper for ``tests/test_helper_pool.py``: answers ``{"spin": s}`` after ``s`` seconds of its own CPU."""
import json
import sys
import time


def serve() -> None:
    out = sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    for line in sys.stdin.buffer:
        seconds = json.loads(line)["spin"]
        start = time.process_time()
        while time.process_time() - start < seconds:
            pass
        out.write(json.dumps({"spun": seconds}).encode() + b"\n")
        out.flush()
