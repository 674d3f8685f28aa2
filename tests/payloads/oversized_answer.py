"""A payload that ignores the grader's caps, as learner code sharing the child's interpreter could: its answer
carries the run's token but is as large as the job asks (``{"kind": "bytes" | "values" | "items"}``)."""
WATCHED_MODULES = ()


def prepare():
    return {}


def start(state):
    pass


def run(state, job, guard, progress):
    kind = job["kind"]
    if kind == "bytes":  # more bytes than the parent reads
        return {"status": "ok", "cases": [], "traces": [], "filler": "x" * (40 << 20)}
    if kind == "values":  # few bytes, more values than the parent parses
        return {"status": "ok", "cases": [], "traces": [], "filler": [0] * 1_500_000}
    if kind == "items":  # within the sandbox's bounds, past the grader's: 50,000 None keys in one output
        keys = {"k%d" % i: {"t": "none"} for i in range(50_000)}
        return {"status": "ok", "traces": [],
                "cases": [{"name": "Example 1", "status": "ok", "trace": 0, "output": {"t": "dict", "v": keys}}]}
    raise ValueError(kind)
