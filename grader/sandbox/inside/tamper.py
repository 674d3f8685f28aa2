"""Monkeypatching: learner code shares the payload's interpreter, so it could replace a function the payload
relies on (``jax.make_jaxpr``, ``json.dumps``, a builtin) to change what the payload reports. The guard keeps
the functions and classes of the modules the payload names as they were before learner code ran, and says
when any was replaced. Standard library only.
"""
import sys

ALWAYS_WATCHED = ("json", "builtins", "traceback", "linecache", "struct")
"""Watched whatever the payload names: the modules that carry every answer."""


def _watched_items(watched):
    """``(mapping, key, value, label)`` for everything watched: each module in ``sys.modules`` under a
    watched package, each function, class or module in its namespace, each function-like member of its own
    classes. The mappings are the live namespaces, so a check is one lookup per item (about 26,000 here)."""
    import types
    kinds = (types.FunctionType, types.BuiltinFunctionType, type, types.MethodType, types.ModuleType)
    members = (types.FunctionType, classmethod, staticmethod, property, types.BuiltinFunctionType)
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or name.split(".", 1)[0] not in watched:
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
    """A snapshot of what the payload relies on, taken before learner code runs.

    ``trusted``: the payload's own references (a dict), watched as well; ``modules``: top-level module names
    to watch besides ``ALWAYS_WATCHED``; ``settings()``: ``{name: repr}`` of settings that must not change
    (``jax.config`` options); ``message``: what the report says, with ``%s`` for the names replaced."""

    def __init__(self, trusted=None, modules=(), settings=None, message=None):
        trusted = trusted if isinstance(trusted, dict) else {}
        self.watched = tuple(ALWAYS_WATCHED) + tuple(modules)
        self.settings = settings or dict
        self.message = message or ("Your code replaced or changed part of Python that the grader relies on "
                                   "(%s).")
        self.saved = list(_watched_items(self.watched))
        # the payload's own references, kept before learner code
        self.saved += [(trusted, key, value, ("grader", key)) for key, value in list(trusted.items())]
        self.config = self._config()

    def extend(self):
        """Watch modules imported since the snapshot too (a forked worker's backend start imports a few)."""
        watched = {label[1] for mapping, key, value, label in self.saved if label[0] == "sys.modules"}
        names = {name for name in list(sys.modules) if name not in watched}
        self.saved += [item for item in _watched_items(self.watched)
                       if item[3][0] in names or (item[3][0] == "sys.modules" and item[3][1] in names)]

    def _config(self):
        try:
            return dict(self.settings())
        except Exception:  # noqa: BLE001 - a setting that cannot be read counts as changed
            return {}

    def changes(self):
        changed = ["%s.%s" % label for mapping, key, value, label in self.saved
                   if mapping.get(key, _MISSING) is not value]
        config = self._config()
        changed += [k for k in self.config if config.get(k) != self.config[k]]
        return changed

    def changed(self):
        self.last = self.changes()
        return bool(self.last)

    def report(self):
        names = ", ".join(self.last[:5]) + (" and %d more" % (len(self.last) - 5) if len(self.last) > 5 else "")
        return {"status": "tampered", "message": self.message % names}

    def verify(self, result):
        """The result to send: the child's own, unless something was replaced by the time it is sent."""
        return self.report() if self.changed() else result
