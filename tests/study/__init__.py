"""Tests of dpkmeans.study: sweeps, audits, reading tables, committed files, results samples."""
