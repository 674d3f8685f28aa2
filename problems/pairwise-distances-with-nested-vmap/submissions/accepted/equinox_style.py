"""Accepted, in Equinox's style: a module that is a pytree (its field is mapped with in_axes given as a
pytree), called inside two vmaps; equinox is not installed, so `jax.tree_util` registers the class.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import tree_util


@tree_util.register_pytree_node_class
class Point:
    def __init__(self, coords):
        self.coords = coords

    def tree_flatten(self):
        return (self.coords,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def distance_to(self, other):
        return jnp.sqrt(jnp.sum((self.coords - other.coords) ** 2))


def pairwise_distances(x, y):
    one_to_all = jax.vmap(Point.distance_to, in_axes=(None, Point(0)))
    all_to_all = jax.vmap(one_to_all, in_axes=(Point(0), None))
    return all_to_all(Point(x), Point(y))
