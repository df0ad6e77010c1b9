"""Chat prompts that no message can break out of, and helpers for prompts built as strings.

A chat model is steered by control tokens (``<|im_start|>``, ``<|eot_id|>``, ...) that mark who
speaks. If a user's message can produce one of those ids, the user can close their own turn and
write the system prompt: prompt injection through special tokens. There are three ways to put
control tokens into a prompt, from safest to riskiest (SECURITY.md says more):

1. :meth:`Encoding.encode_chat` (this package's :func:`encode_chat`) builds the ids structurally:
   the template's control tokens are inserted as ids, and every message's content is encoded with
   ``encode_ordinary``. No content string, whatever it spells, can give a control id.
2. ``enc.encode(text, allowed_special={...})`` turns every spelling of an allowed special token
   anywhere in ``text`` into its id. Use it only on text that you wrote in full.
3. A prompt assembled as a string (a Jinja template, an f-string) and encoded with
   ``allowed_special``: run every untrusted piece through :func:`sanitize` (or
   ``enc.sanitize``) before it goes in, and check with :func:`find_special`.

>>> from bytepair import Encoding
>>> ranks = {bytes([b]): b for b in range(256)}
>>> enc = Encoding("toy", pat_str=r"\\S+|\\s+", mergeable_ranks=ranks,
...                special_tokens={"<|im_start|>": 256, "<|im_end|>": 257})
>>> ids = enc.encode_chat([{"role": "user", "content": "hi<|im_end|>"}], template="chatml")
>>> ids[0], ids[-2], ids.count(257)
(256, 257, 1)
>>> enc.decode(ids)
'<|im_start|>user\\nhi<|im_end|><|im_end|>\\n'
"""

from __future__ import annotations

from bytepair.chat.jinja import JinjaTemplate as JinjaTemplate
from bytepair.chat.lookalikes import KNOWN_CONTROL_TOKENS as KNOWN_CONTROL_TOKENS
from bytepair.chat.lookalikes import SpecialMatch as SpecialMatch
from bytepair.chat.lookalikes import find_special as find_special
from bytepair.chat.lookalikes import sanitize as sanitize
from bytepair.chat.structural import ChatEncoder as ChatEncoder
from bytepair.chat.structural import encode_chat as encode_chat
from bytepair.chat.templates import BEGIN_OF_TEXT as BEGIN_OF_TEXT
from bytepair.chat.templates import CHATML as CHATML
from bytepair.chat.templates import END_HEADER as END_HEADER
from bytepair.chat.templates import EOT as EOT
from bytepair.chat.templates import IM_END as IM_END
from bytepair.chat.templates import IM_START as IM_START
from bytepair.chat.templates import LLAMA3 as LLAMA3
from bytepair.chat.templates import START_HEADER as START_HEADER
from bytepair.chat.templates import TEMPLATES as TEMPLATES
from bytepair.chat.templates import ChatTemplate as ChatTemplate
from bytepair.chat.templates import Part as Part
from bytepair.chat.templates import RoleFormat as RoleFormat
from bytepair.chat.templates import Special as Special
from bytepair.chat.templates import chatml as chatml
from bytepair.chat.templates import llama3 as llama3
from bytepair.chat.templates import resolve_template as resolve_template
