"""How many tokens, and what they cost: reports over many prompts, and views of one text.

The Python side of ``bytepair report`` and ``bytepair show``.

>>> import bytepair
>>> from bytepair.report import token_report, default_prices
>>> enc = bytepair.train("the cat sat on the mat " * 50, vocab_size=300, pattern="gpt2",
...                      show_progress=False, name="toy")
>>> report = token_report(["the cat", "the mat sat on the cat"], enc)
>>> report["toy"].counts
(2, 6)
>>> report.to_dict()["totals"]
{'toy': 8}

With real vocabularies (found like :func:`bytepair.get_encoding`)::

    report = token_report(load_prompts(["evals.jsonl"]), ["o200k_base", "cl100k_base"],
                          prices=default_prices(), output_tokens=200)
    print(report.to_table())
    report.to_dataframe()           # pandas, with the ``report`` extra
    report.plot("lengths.png")      # matplotlib, with the ``report`` extra

    show("How many r's are in strawberry?", bytepair.get_encoding("cl100k_base"))
"""

from __future__ import annotations

from bytepair.report.chat import ChatCount as ChatCount
from bytepair.report.chat import count_chat as count_chat
from bytepair.report.page import html_page as html_page
from bytepair.report.prices import ModelPrice as ModelPrice
from bytepair.report.prices import PricesError as PricesError
from bytepair.report.prices import PriceTable as PriceTable
from bytepair.report.prices import default_prices as default_prices
from bytepair.report.prices import load_prices as load_prices
from bytepair.report.prices import parse_prices as parse_prices
from bytepair.report.prompts import Prompt as Prompt
from bytepair.report.prompts import PromptError as PromptError
from bytepair.report.prompts import load_prompts as load_prompts
from bytepair.report.render import MissingExtraError as MissingExtraError
from bytepair.report.show import TokenPiece as TokenPiece
from bytepair.report.show import render_tokens as render_tokens
from bytepair.report.show import show as show
from bytepair.report.show import token_pieces as token_pieces
from bytepair.report.stats import Cost as Cost
from bytepair.report.stats import Report as Report
from bytepair.report.stats import Tokenizer as Tokenizer
from bytepair.report.stats import TokenizerStats as TokenizerStats
from bytepair.report.stats import resolve_tokenizer as resolve_tokenizer
from bytepair.report.stats import token_report as token_report

__all__ = [
    "ChatCount",
    "Cost",
    "MissingExtraError",
    "ModelPrice",
    "PriceTable",
    "PricesError",
    "Prompt",
    "PromptError",
    "Report",
    "TokenPiece",
    "Tokenizer",
    "TokenizerStats",
    "count_chat",
    "default_prices",
    "html_page",
    "load_prices",
    "load_prompts",
    "parse_prices",
    "render_tokens",
    "resolve_tokenizer",
    "show",
    "token_pieces",
    "token_report",
]
