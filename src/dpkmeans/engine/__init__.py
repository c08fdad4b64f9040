"""The one DP-Lloyd loop every algorithm configures: its configuration, hooks, initialisers,
budget schedules and categorical modes (docs/design.md, "The loop").
"""
