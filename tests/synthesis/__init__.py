"""Tests of dpkmeans.synthesis: the leaderboard and the book-wide claims ledger."""
