"""Python values as `--set dotted.key=value` overrides, the way the command line takes them."""

import math
import numbers


def to_override(key, value):
    """`key=value` for one entry of `set={...}`. Booleans, numbers and strings are written as
    the command line would take them; lists and tuples become TOML arrays. Anything else is a
    TypeError naming the key."""
    if not isinstance(key, str) or not key:
        raise TypeError(f"set: keys are dotted scenario keys as strings, found {key!r}")
    return f"{key}={_literal(key, value, top=True)}"


def _literal(key, value, top=False):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(value, str):
        # At the top a bare string is taken as it is (`tunnel.cc=bbr`, `keys=SHORT+NEAR`);
        # inside an array it must be a TOML string.
        return value if top else _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(key, v) for v in value) + "]"
    raise TypeError(
        f"set[{key!r}]: expected a bool, number, string or list of them, found {type(value).__name__}"
    )


def _toml_string(s):
    escaped = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def overrides(set=None, seed=None):
    """The override strings of `set` (a dict, or an iterable of `key=value` strings) and
    `seed`, in order."""
    out = []
    if set is not None:
        if isinstance(set, dict):
            out.extend(to_override(k, v) for k, v in set.items())
        elif isinstance(set, str):
            raise TypeError("set: expected a dict or a list of 'key=value' strings, found a string")
        else:
            for item in set:
                if not isinstance(item, str):
                    raise TypeError(f"set: expected 'key=value' strings, found {item!r}")
                out.append(item)
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"seed: expected an integer >= 0, found {seed!r}")
        out.append(f"seed={int(seed)}")
    return out
