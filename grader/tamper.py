"""Monkeypatching: learner code shares the child's interpreter, so it could replace ``jax.make_jaxpr``, a
JAX internal, ``json.dumps`` or a builtin to change what the grader sees. The guard keeps the functions
and classes of those modules as they were before learner code ran and says when any was replaced.

Loaded by ``child.py`` from its own folder, like ``lockdown.py``; standard library only.
"""
import sys

WATCHED = ("jax", "jaxlib", "numpy", "ml_dtypes", "json", "builtins", "traceback", "linecache", "struct")
WATCHED_CONFIG = ("jax_enable_x64", "jax_disable_jit", "jax_default_matmul_precision", "jax_dynamic_shapes",
                  "jax_numpy_rank_promotion", "jax_default_prng_impl")


def _watched_items():
    """``(mapping, key, value, label)`` for everything watched: each module in ``sys.modules`` under a
    watched package, each function, class or module in its namespace, each function-like member of its own
    classes. The mappings are the live namespaces, so a check is one lookup per item (about 26,000 here)."""
    import types
    kinds = (types.FunctionType, types.BuiltinFunctionType, type, types.MethodType, types.ModuleType)
    members = (types.FunctionType, classmethod, staticmethod, property, types.BuiltinFunctionType)
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or name.split(".", 1)[0] not in WATCHED:
            continue
        yield sys.modules, name, module, ("sys.modules", name)
        namespace = vars(module)
        for key, value in list(namespace.items()):
            if not isinstance(value, kinds):
                continue
            yield namespace, key, value, (name, key)
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                cls_namespace = vars(value)  # a live view of the class's own attributes
                for attr, member in list(cls_namespace.items()):
                    if isinstance(member, members):
                        yield cls_namespace, attr, member, (name, key + "." + attr)


_MISSING = object()


class TamperGuard:
    """A snapshot of what the grader relies on, taken before learner code runs."""

    def __init__(self, trusted=None):
        trusted = trusted if trusted is not None else {}
        self.saved = list(_watched_items())
        # the child's own references, kept before learner code
        self.saved += [(trusted, key, value, ("grader", key)) for key, value in list(trusted.items())]
        self.config = self._config()

    def extend(self):
        """Watch modules imported since the snapshot too (a forked worker's backend start imports a few)."""
        watched = {label[1] for mapping, key, value, label in self.saved if label[0] == "sys.modules"}
        names = {name for name in list(sys.modules) if name not in watched}
        self.saved += [item for item in _watched_items()
                       if item[3][0] in names or (item[3][0] == "sys.modules" and item[3][1] in names)]

    @staticmethod
    def _config():
        jax = sys.modules.get("jax")
        out = {}
        for name in WATCHED_CONFIG:
            try:
                out[name] = repr(getattr(jax.config, name))
            except Exception:  # noqa: BLE001 - an option this JAX version lacks
                pass
        return out

    def changes(self):
        changed = ["%s.%s" % label for mapping, key, value, label in self.saved
                   if mapping.get(key, _MISSING) is not value]
        config = self._config()
        changed += ["jax.config.%s" % k for k in self.config if config.get(k) != self.config[k]]
        return changed

    def changed(self):
        self.last = self.changes()
        return bool(self.last)

    def report(self):
        names = ", ".join(self.last[:5]) + (" and %d more" % (len(self.last) - 5) if len(self.last) > 5 else "")
        return {"status": "tampered",
                "message": "Your code replaced or changed part of JAX, NumPy or Python that the grader relies "
                           "on (%s). Solve the problem with ordinary JAX calls instead." % names}

    def verify(self, result):
        """The result to send: the child's own, unless something was replaced by the time it is sent."""
        return self.report() if self.changed() else result
