"""Tests of dpkmeans.privacy: the ledger, the mechanisms, exact samplers, calibration, sensitivity, identifiability, colored noise."""
