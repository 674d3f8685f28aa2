"""A payload that does nothing but answer: what the doctor runs when it is given no payload of its own, to see
which layers a sandboxed process gets here."""
WATCHED_MODULES = ()


def prepare():
    return {}


def start(state):
    pass


def run(state, job, guard, progress):
    progress("echo")
    return {"status": "ok", "job": sorted(job)}
