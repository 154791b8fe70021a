# SPDX-License-Identifier: MIT
"""hetsched: scheduling policies for multi-tenant heterogeneous GPU clusters.

Thin package over the compiled extension ``hetsched._hetsched``: every name of the extension is
re-exported here. Inputs are plain dicts and lists; results are plain dicts and lists whose row
lists load into ``pandas.DataFrame`` directly. See docs/python.md.
"""

from ._hetsched import *  # noqa: F401,F403
from ._hetsched import __doc__ as _ext_doc, __version__  # noqa: F401

__all__ = [name for name in dir() if not name.startswith("_")]
