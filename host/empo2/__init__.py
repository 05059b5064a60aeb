"""EMPO² training host: the Python side of EMPO² Studio.

Memory-augmented exploration plus hybrid on- and off-policy optimisation for LLM agents
(EMPO², arXiv 2602.23008). The algorithm's specification is docs/paper.md, the paper's algorithm
with its reference code's choices in numbered sections (cited as `docs/paper.md §N`); the
modules here follow it and list their deviations in their own docstrings.
"""

__version__ = "0.1.0"
