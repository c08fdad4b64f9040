"""The papers of the book, one subpackage each (DESIGN.md section 2).

A paper is a folder ``papers/<name>/`` with ``variants.py`` (its as-published and corrected
configurations of the one DP-Lloyd engine), ``study.py`` (its grids and paper-scale runs) and
``claims.py`` (its claims ledger, judged by the shared rules of :mod:`dpkmeans.claims`). It
reuses the core and never copies it.

- :mod:`dpkmeans.papers.dpkccm`: DP-KCCM, cluster merging and an adaptive budget (seed 000).
"""
