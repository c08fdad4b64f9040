"""The one DP-Lloyd loop every algorithm configures (docs/design.md, "One loop, many papers"):
its configuration (``config``) and strategies (``strategies``), the release planning
(``planning``), the loop (``loop``), and its initialisers, budget schedules, categorical modes
and flaw records.
"""
