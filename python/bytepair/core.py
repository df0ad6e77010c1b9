"""``tiktoken.core`` for code that imports it: the :class:`Encoding` class.

>>> from bytepair.core import Encoding
>>> import bytepair
>>> Encoding is bytepair.Encoding
True
"""

from __future__ import annotations

from bytepair.encoding import Encoding as Encoding

__all__ = ["Encoding"]
