"""EMPO² training host: the Python side of EMPO² Studio.

Memory-augmented exploration plus hybrid on- and off-policy optimisation for LLM agents
(EMPO², arXiv 2602.23008). The algorithm's specification is ../shared/EMPO2.md; the
modules here follow it and list their deviations in their own docstrings.
"""

__version__ = "0.1.0"
