"""A read-only walk over pglast's syntax tree: pglast's own visitor, at a fraction of its cost.

pglast's ``Visitor`` rebuilds its table of ``visit_*`` methods with ``inspect.getmembers`` on
every call, and looks at every member of every node, strings and flags included. The gate walks
each statement several times per call, so that was most of what one ``execute_sql`` cost above
the query itself. ``Walk`` builds the table once per class and, for each node class, knows which
members can hold a node or a list of them (from the types pglast declares for its slots). It
visits the same nodes in the same breadth-first order, with the same ``Ancestor`` chains, and
honours ``Skip``; it never changes the tree, so a ``visit_*`` method returns None or ``Skip``.
``walk`` takes several walkers through a tree in one pass.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any, ClassVar

from pglast import ast
from pglast.visitors import Ancestor, Skip

__all__ = ["Ancestor", "Skip", "Walk", "walk"]

Method = Callable[[Any, Ancestor, Any], Any]


@cache
def _branches(cls: type[ast.Node]) -> tuple[str, ...]:
    """The members of ``cls`` whose declared type can hold a node or a tuple of them."""
    def holds_nodes(info: Any) -> bool:
        kinds = info.py_type if isinstance(info.py_type, tuple) else (info.py_type,)
        return any(kind is tuple or (isinstance(kind, type) and issubclass(kind, ast.Node))
                   for kind in kinds)
    slots = cls.__slots__
    return tuple(name for name, info in slots.items() if holds_nodes(info)) \
        if isinstance(slots, dict) else tuple(slots)


class Walk:
    """A visitor: ``visit_XYZ(ancestors, node)`` methods for the node classes it looks at,
    ``visit`` for the others; calling it walks a tree."""

    _methods: ClassVar[dict[type, Method]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._methods = {getattr(ast, name[6:]): getattr(cls, name) for name in dir(cls)
                        if name.startswith("visit_") and hasattr(ast, name[6:])}

    visit: Method | None = None
    """Called for a node no ``visit_*`` method names; None: nothing."""

    def __call__(self, root: ast.Node) -> None:
        walk(root, self)


Todo = deque[tuple[Ancestor, Any, tuple[Walk, ...]]]


def walk(root: ast.Node, *walkers: Walk) -> None:
    """One pass over ``root`` for several walkers: each meets the nodes, in the order, that
    a walk of its own would, and its ``Skip`` prunes the subtree for it alone."""
    todo: Todo = deque([(Ancestor(), root, walkers)])
    while todo:
        ancestors, value, active = todo.popleft()
        if not isinstance(value, tuple):
            _visit(ancestors, value, active, todo)
            continue
        for index, item in enumerate(value):
            here = Ancestor(ancestors, value, index)
            if isinstance(item, ast.Node):
                _visit(here, item, active, todo)
            elif isinstance(item, tuple):
                todo.extend((Ancestor(here, item, i), sub, active) for i, sub in enumerate(item)
                            if isinstance(sub, (tuple, ast.Node)))


def _visit(ancestors: Ancestor, node: ast.Node, active: tuple[Walk, ...], todo: Todo) -> None:
    cls = node.__class__
    going = []
    for walker in active:
        method = walker._methods.get(cls, type(walker).visit)
        action = None if method is None else method(walker, ancestors, node)
        if action is None:
            going.append(walker)
        elif action is not Skip:
            raise TypeError(f"{type(walker).__name__} returned {action!r}: a walk changes"
                            " nothing")
    if not going:
        return
    onward = active if len(going) == len(active) else tuple(going)
    for member in _branches(cls):
        child = getattr(node, member)
        if isinstance(child, (tuple, ast.Node)):
            todo.append((Ancestor(ancestors, node, member), child, onward))


def base_name(names: Iterable[ast.Node] | None) -> str:
    """The unqualified, lower-cased name of a qualified one (a function's, a type's)."""
    parts = [n.sval or "" for n in names or () if isinstance(n, ast.String)]
    return parts[-1].lower() if parts else ""


def enclosing(ancestors: Ancestor | None, kinds: type | tuple[type, ...]) -> Any:
    """The nearest node above (``ancestors``) of one of ``kinds``, else None."""
    while ancestors is not None:
        if isinstance(ancestors.node, kinds):
            return ancestors.node
        ancestors = ancestors.parent
    return None
