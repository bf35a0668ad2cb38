"""Debugging aids that read the graph: anomaly mode, creation sites, step explanations.

Nothing in the core imports this module; it plugs into `function.observers`.
"""

from __future__ import annotations


class AnomalyError(RuntimeError):
    """A NaN or Inf appeared in a forward result or a backward gradient under detect_anomaly()."""


class detect_anomaly:  # placeholder until issue 5 (stepping through autodiff)
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def explain_step(step) -> str:
    return repr(step)
