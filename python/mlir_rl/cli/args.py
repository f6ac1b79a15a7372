"""Command-line options generated from dataclass configs.

Each command of ``mlir-rl`` is a dataclass whose fields are its options:
the field's type gives the option's type (``bool`` is a flag,
``Optional[T]`` a T that may be absent, ``list[str]`` a repeatable or
positional list), ``metadata["help"]`` its help, ``metadata["flags"]`` its
spelling (e.g. ``("-o", "--output")``; a positional argument when the name
has no dashes).
"""
from __future__ import annotations

import argparse
import dataclasses
import typing
from typing import Any


def _base_type(tp: Any) -> tuple[Any, bool]:
    """(T, is_list) for T, Optional[T], list[T]."""
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _base_type(args[0])
    if origin in (list, tuple):
        return typing.get_args(tp)[0], True
    return tp, False


def add_dataclass_arguments(parser: argparse.ArgumentParser, cls) -> None:
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp, is_list = _base_type(hints[f.name])
        flags = f.metadata.get("flags", (f"--{f.name.replace('_', '-')}",))
        default = (f.default if f.default is not dataclasses.MISSING
                   else f.default_factory() if f.default_factory is not dataclasses.MISSING
                   else None)
        help_text = f.metadata.get("help", "")
        kwargs: dict[str, Any] = {"help": help_text, "dest": f.name}
        positional = not flags[0].startswith("-")
        if positional:
            kwargs.pop("dest")
            flags = (f.name,)
        if tp is bool and not is_list:
            kwargs.update(action="store_true", default=default)
        else:
            kwargs["type"] = tp
            if is_list:
                kwargs["nargs"] = "*"
                if not positional:
                    kwargs["action"] = "append"
                    kwargs["nargs"] = None
            if positional:
                optional = (f.default is not dataclasses.MISSING
                            or f.default_factory is not dataclasses.MISSING)
                if optional:
                    kwargs.setdefault("nargs", "?")
                    kwargs["default"] = default
            else:
                kwargs["default"] = default
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    kwargs["required"] = True
            if default not in (None, "", [], False):
                kwargs["help"] = f"{help_text} (default: {default!r})"
        parser.add_argument(*flags, **kwargs)


def dataclass_from_args(cls, args: argparse.Namespace):
    return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls)})


def option(default: Any = dataclasses.MISSING, help: str = "", flags: tuple = (),
           **kw) -> Any:
    """A config field with its help text and, optionally, its flags."""
    metadata = {"help": help}
    if flags:
        metadata["flags"] = flags
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata=metadata, **kw)
    return dataclasses.field(default=default, metadata=metadata, **kw)
