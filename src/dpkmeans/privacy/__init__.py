"""The privacy core: the ledger, noise calibration, exact samplers, mechanisms, sensitivity,
identifiability and privacy loss (docs/design.md, "Architecture"). Every privacy noise draw
goes through :func:`dpkmeans.privacy.mechanisms.release`, which charges the ledger first.
"""
