"""The sharding track (issue 45) on Home: after the JAX track's topics and before the Pallas track, its
problems in the order they build on each other."""
from __future__ import annotations

import problems


def test_the_sharding_track_comes_after_the_jax_track_and_before_pallas():
    topics = list(problems.by_topic())
    assert topics[-2:] == ["Sharding", "Pallas"], topics
    track = problems.by_topic()["Sharding"]
    assert [p.track_order for p in track] == list(range(1, len(track) + 1)), [(p.slug, p.track_order) for p in track]
    assert track[0].slug == "data-parallel-train-step"
