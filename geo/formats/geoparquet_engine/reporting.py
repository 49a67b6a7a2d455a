"""What the engine tells engine.ts besides its answer: refusals the user can act on, and progress."""


class UserError(Exception):
    """Something about the input or the request that the user can fix."""


_last_percent = [-1]


def progress(done, total):
    """A "progress N" line when the percentage changes (engine.ts reads them)."""
    if total:
        percent = min(100, int(done * 100 / total))
        if percent != _last_percent[0]:
            _last_percent[0] = percent
            print(f"progress {percent}", flush=True)
