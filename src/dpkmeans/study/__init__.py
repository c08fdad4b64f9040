"""The kit every paper's study shares: sweeps, claim verdicts, audits, plots, committed files
and reading tables (docs/design.md).
"""
