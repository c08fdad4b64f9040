"""The synthesis chapter (book chapter 12): :mod:`.leaderboard` (every corrected algorithm on
every numeric dataset of the papers), :mod:`.ranking` (ranks with ties and the advice by
regime) and :mod:`.ledger` (the claims ledger of the whole book)."""
