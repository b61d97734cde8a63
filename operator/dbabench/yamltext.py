"""YAML as dbabench reads it: safe, and through libyaml where PyYAML was built with it (ten
times the pure-Python loader's speed, which every process pays for the vocabulary at import)."""

from __future__ import annotations

from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
