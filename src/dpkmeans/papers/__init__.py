"""The papers of the book, one subpackage each.

A paper is a folder ``papers/<key>/`` whose ``__init__.py`` holds its record (``RECORD``, read
by :mod:`dpkmeans.papers.registry`, the one list of papers), with ``variants.py`` (its
as-published and corrected configurations of the one DP-Lloyd engine, and the catalogue's
builders the record names), ``study.py`` (its grids and paper-scale runs) and ``claims.py`` (its
claims ledger, judged by the shared rules of :mod:`dpkmeans.study.claims`). The record holds the
functions themselves. It reuses the core and never copies it; ``docs/design.md`` says how to
add one.
"""
