# SPDX-License-Identifier: MIT
"""hetsched: scheduling policies for multi-tenant heterogeneous GPU clusters.

Thin package over the compiled extension ``hetsched._hetsched``: every public name of the
extension is re-exported here. Inputs are plain dicts and lists; results are plain dicts and lists
whose row lists load into ``pandas.DataFrame`` directly. Errors raise ``hetsched.Error``
subclasses. See docs/python.md and ``help(hetsched._hetsched)``.
"""

from . import _hetsched
from ._hetsched import *  # noqa: F401,F403

__version__ = _hetsched.__version__
__all__ = [name for name in dir(_hetsched) if not name.startswith("_")]
