"""Monkeypatching: learner code shares the payload's interpreter, so it could replace a function the payload
relies on (``jax.make_jaxpr``, ``json.dumps``, a builtin) to change what the payload reports. The guard keeps
the functions and classes of the modules the payload names as they were before learner code ran, and says
when any was replaced. Standard library only.
"""
import operator
import sys
from itertools import repeat

ALWAYS_WATCHED = ("json", "builtins", "traceback", "linecache", "struct")
"""Watched whatever the payload names: the modules that carry every answer."""


def _watched_items(watched, skip=frozenset()):
    """``(mapping, key, value, label)`` for everything watched: each module in ``sys.modules`` under a
    watched package, each function, class or module in its namespace, each function-like member of its own
    classes. The mappings are the live namespaces, so a check is one lookup per item (about 26,000 here).
    Modules named in ``skip`` (watched already) are left out."""
    import types
    kinds = (types.FunctionType, types.BuiltinFunctionType, type, types.MethodType, types.ModuleType)
    members = (types.FunctionType, classmethod, staticmethod, property, types.BuiltinFunctionType)
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or name.split(".", 1)[0] not in watched or name in skip:
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
_VALUE = operator.attrgetter("value")


class _NoTag:
    """Stands for a version tag that cannot be read: its namespace is compared in full at every check."""

    value = None


_NO_TAG = _NoTag()


def _dict_of(mapping):
    """The dict behind a namespace: itself, or the one a class's ``mappingproxy`` shows."""
    if type(mapping) is dict:
        return mapping
    import gc
    inner = [r for r in gc.get_referents(mapping) if type(r) is dict]
    return inner[0] if len(inner) == 1 else None


def _version_reader():
    """``read(d)``: the version tag CPython 3.11 and 3.12 keep in every dict (PEP 509), which moves whenever
    that dict is modified in any way; None where it cannot be read or does not behave so (then every check
    compares everything). Read with ctypes, as the tag is not exposed to Python."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] not in ((3, 11), (3, 12)):
        return None
    try:
        import ctypes
        offset = 3 * ctypes.sizeof(ctypes.c_ssize_t)  # after ob_refcnt, ob_type and ma_used

        def read(d):  # a live view of the tag: ``.value`` reads it (the caller keeps ``d`` alive)
            return ctypes.c_uint64.from_address(id(d) + offset)

        probe = {"a": 1}
        tag = read(probe)
        seen = [tag.value, tag.value]
        probe["a"] = 2
        seen.append(tag.value)
        del probe["a"]
        seen.append(tag.value)
        probe.update(b=3)
        seen.append(tag.value)
        other = {"a": 1}
        other["c"] = 4
        if seen[0] == seen[1] != seen[2] != seen[3] != seen[4] and tag.value == seen[4] and seen[0] != 0:
            return read
    except Exception:  # noqa: BLE001 - then no shortcut
        pass
    return None


_READ_VERSION = _version_reader()


def _version_tag(d):
    """A live view of ``d``'s version tag (``.value``), or None (see ``_version_reader``)."""
    return None if d is None or _READ_VERSION is None else _READ_VERSION(d)


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
        self._groups, self._views, self._versions, self._index = [], [], [], {}
        self._group(self.saved)
        self._same()  # learns each namespace's version now, before learner code, so checks can skip them

    def extend(self):
        """Watch modules imported since the snapshot too (a forked worker's backend start imports a few)."""
        watched = frozenset(label[1] for mapping, key, value, label in self.saved if label[0] == "sys.modules")
        new = list(_watched_items(self.watched, skip=watched))  # only the new modules are walked
        self.saved += new
        self._group(new)
        self._same()

    def _group(self, items):
        """Add ``items`` to the saved items by namespace: [namespace, keys, values, dict, version view]. A check
        compares each namespace's values by identity at C speed (``map``), and skips a namespace whose dict has
        not changed at all since it was last found intact (its version tag, see ``_version_reader``); the
        version of a new namespace, or of one given new items, is unknown until a full check has found it
        intact. ``_versions[i]`` is the version group ``i`` was last found intact at (None: unknown)."""
        for mapping, key, value, _ in items:
            i = self._index.get(id(mapping))  # (the group keeps ``mapping`` alive: its id stays its own)
            if i is None:
                raw = _dict_of(mapping)
                # ``raw`` stays in the entry: the tag view reads its memory, so it must stay alive
                i = self._index[id(mapping)] = len(self._groups)
                self._groups.append([mapping, [], [], raw, _version_tag(raw) or _NO_TAG])
                self._views.append(self._groups[i][4])
                self._versions.append(None)
            else:
                self._versions[i] = None
            self._groups[i][1].append(key)
            self._groups[i][2].append(value)

    def _same(self):
        """Whether everything saved is still in place (the fast check; ``changes`` names what is not)."""
        now = list(map(_VALUE, self._views))  # read before any comparison: a change during it moves them again
        if now == self._versions and None not in now:
            return True  # no namespace modified in any way since each was last found intact
        versions = self._versions
        for i, (mapping, keys, values, _, _) in enumerate(self._groups):
            if now[i] is not None and now[i] == versions[i]:
                continue
            if not all(map(operator.is_, map(mapping.get, keys, repeat(_MISSING)), values)):
                return False
            versions[i] = now[i]
        return True

    def _config(self):
        try:
            return dict(self.settings())
        except Exception:  # noqa: BLE001 - a setting that cannot be read counts as changed
            return {}

    def changes(self):
        if self._same() and self._config() == self.config:
            return []
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
