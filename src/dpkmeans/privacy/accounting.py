"""The privacy ledger: every noise draw is recorded and composed (book chapter 3).

A :class:`PrivacyLedger` holds a tree of composition scopes. Entries inside a sequential
scope add up (basic sequential composition); the parts of a parallel scope touch disjoint
subsets of the records, so a parallel scope costs the most expensive part (parallel
composition). Post-processing is recorded at zero cost, for the record.

Every entry also records what its release is (:class:`~dpkmeans.privacy.tight.Release`:
Laplace noise, Gaussian noise, or a mechanism known by its (epsilon, delta)), so the same tree
composes tightly (:meth:`PrivacyLedger.epsilon_at`: Gaussian DP, zCDP or privacy-loss
distributions; book chapter 3, "Tight composition"). A ledger opened with
``accounting="tight"`` and an (epsilon, delta) budget checks every draw against that tight
composition, before drawing.

A ledger shared across fits (an estimator's ``accountant``) also keeps a fingerprint of every
fit's seed material (:meth:`PrivacyLedger.check_seed`): composition assumes that the fits draw
their noise independently, and two fits with the same seed draw the same noise (book chapter
12, "One budget across fits").
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from copy import deepcopy
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from dpkmeans.errors import BudgetExceededError, InvalidParameterError, SeedReuseError
from dpkmeans.privacy import tight
from dpkmeans.privacy.tight import Release
from dpkmeans.validation import check_delta, check_epsilon, check_sensitivity

__all__ = [
    "ACCOUNTING_MODES",
    "TIGHT_RTOL",
    "NEIGHBOUR_RELATIONS",
    "SEED_REUSE_MODES",
    "PrivacyCost",
    "LedgerEntry",
    "PrivacyLedger",
]

#: The two neighbour relations of the book (chapter 1): add/remove one record (unbounded DP,
#: the default) and replace one record (bounded DP, used by differential identifiability).
NEIGHBOUR_RELATIONS = ("add/remove", "replace")

#: Relative slack allowed when comparing a composed total with the declared budget, so that
#: a budget split into floating-point shares (e.g. eps/3 three times) still fits.
BUDGET_RTOL = 1e-9

#: How a ledger checks its budget: "basic" adds epsilons and deltas; "tight" composes the
#: recorded releases tightly at the budget's delta (:func:`dpkmeans.privacy.tight.epsilon_at`).
ACCOUNTING_MODES = ("basic", "tight")

#: What a ledger does with a fit whose seed material repeats that of a fit it absorbed:
#: "refuse" raises :class:`~dpkmeans.errors.SeedReuseError` (the default); "record" lets it run
#: and records a leak, so :attr:`PrivacyLedger.is_private` becomes False (for demonstrations
#: and tests of the pitfall).
SEED_REUSE_MODES = ("refuse", "record")

#: Relative slack of a tight ledger's "fully spent" test (its budget check has none but
#: rounding's, :data:`BUDGET_RTOL`): a calibration to a tight budget lands this close below it
#: (the PLD accountant discretises the privacy loss,
#: :data:`dpkmeans.privacy.tight.PLD_DISCRETISATION`).
TIGHT_RTOL = 1e-3


@dataclass(frozen=True)
class PrivacyCost:
    """An (epsilon, delta) pair; delta = 0 means pure epsilon-DP.

    Parameters
    ----------
    epsilon : float
        Finite and >= 0.
    delta : float, default 0.0
        In [0, 1].

    Raises
    ------
    ValueError
        If ``epsilon`` is negative, infinite or NaN, or ``delta`` is outside [0, 1].

    Examples
    --------
    >>> from dpkmeans.privacy.accounting import PrivacyCost
    >>> cost = PrivacyCost(0.5, 1e-6).then(PrivacyCost(0.3))
    >>> cost
    PrivacyCost(epsilon=0.8, delta=1e-06)
    >>> print(cost)
    (epsilon=0.8, delta=1e-06)
    >>> cost.is_pure
    False
    """

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        if math.isnan(self.epsilon) or self.epsilon < 0 or math.isinf(self.epsilon):
            raise ValueError(f"epsilon must be finite and >= 0, got {self.epsilon}")
        if math.isnan(self.delta) or not 0.0 <= self.delta <= 1.0:
            raise ValueError(f"delta must lie in [0, 1], got {self.delta}")

    @property
    def is_pure(self) -> bool:
        """Whether delta is 0 (pure epsilon-DP)."""
        return self.delta == 0.0

    def then(self, other: PrivacyCost) -> PrivacyCost:
        """Sequential composition: epsilons and deltas add.

        Parameters
        ----------
        other : PrivacyCost
            The cost of the next release.

        Returns
        -------
        PrivacyCost
            (epsilon + other.epsilon, min(delta + other.delta, 1)).
        """
        return PrivacyCost(self.epsilon + other.epsilon, min(self.delta + other.delta, 1.0))

    def alongside(self, other: PrivacyCost) -> PrivacyCost:
        """Parallel composition over disjoint records: the worse of the two, per coordinate.

        Parameters
        ----------
        other : PrivacyCost
            The cost of a release on records disjoint from this one's.

        Returns
        -------
        PrivacyCost
            (max of the epsilons, max of the deltas).

        Examples
        --------
        >>> from dpkmeans.privacy.accounting import PrivacyCost
        >>> PrivacyCost(0.5, 1e-6).alongside(PrivacyCost(0.8))
        PrivacyCost(epsilon=0.8, delta=1e-06)
        """
        return PrivacyCost(max(self.epsilon, other.epsilon), max(self.delta, other.delta))

    def fits_within(self, budget: PrivacyCost) -> bool:
        """Whether this cost is within ``budget``, up to a relative slack of 1e-9 (so that a
        budget split into floating-point shares still fits).

        Parameters
        ----------
        budget : PrivacyCost
            The budget to compare with.

        Returns
        -------
        bool
            True when both epsilon and delta are within the budget's (with the slack).

        Examples
        --------
        >>> from dpkmeans.privacy.accounting import PrivacyCost
        >>> third = PrivacyCost(1 / 3)
        >>> third.then(third).then(third).fits_within(PrivacyCost(1.0))
        True
        """
        slack_eps = BUDGET_RTOL * max(budget.epsilon, 1.0)
        slack_delta = BUDGET_RTOL * max(budget.delta, 1e-300)
        return (
            self.epsilon <= budget.epsilon + slack_eps
            and self.delta <= budget.delta + slack_delta
        )

    def __str__(self) -> str:
        if self.is_pure:
            return f"epsilon={self.epsilon:.6g}"
        return f"(epsilon={self.epsilon:.6g}, delta={self.delta:.3g})"


ZERO = PrivacyCost(0.0, 0.0)


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded mechanism call (or a zero-cost post-processing note).

    Parameters
    ----------
    mechanism : str
        The mechanism's name (e.g. "Laplace (discrete)", "post-processing").
    epsilon, delta : float
        The entry's cost.
    sensitivity : float
        The sensitivity the noise was calibrated to (under the ledger's neighbour relation).
    scale : float
        The noise scale drawn (Laplace b, Gaussian sigma).
    scope : str
        The path of the composition scopes the entry was recorded in ("total" at the top).
    label : str, default ""
        What was released.
    details : mapping, default {}
        Anything else about the draw (the sampler's rounding, the notion, ...), read-only.
    release : Release or None, default None
        What the release is, for tight composition (:attr:`as_release`; None: known only by
        its (epsilon, delta)).

    Examples
    --------
    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> entry = PrivacyLedger().charge("Laplace", epsilon=0.5, sensitivity=2.0, scale=4.0,
    ...                                label="sums")
    >>> entry.scope, entry.label, entry.cost
    ('total', 'sums', PrivacyCost(epsilon=0.5, delta=0.0))
    """

    mechanism: str
    epsilon: float
    delta: float
    sensitivity: float
    scale: float
    scope: str
    label: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    release: Release | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", MappingProxyType(dict(self.details)))

    def __reduce__(self):  # a read-only mapping does not pickle; rebuild it from a dict
        return (self.__class__, (self.mechanism, self.epsilon, self.delta, self.sensitivity,
                                 self.scale, self.scope, self.label, dict(self.details),
                                 self.release))

    @property
    def as_release(self) -> Release | None:
        """What tight composition composes: the recorded release, else a pure epsilon-DP
        mechanism (delta 0) or an (epsilon, delta) one; None for a zero-cost note."""
        if self.release is not None:
            return self.release
        if self.epsilon == 0 and self.delta == 0:
            return None
        if self.delta == 0:
            return Release("pure", epsilon=self.epsilon)
        return Release("approx", epsilon=self.epsilon, delta=self.delta)

    @property
    def cost(self) -> PrivacyCost:
        """The entry's (epsilon, delta) as a :class:`PrivacyCost`."""
        return PrivacyCost(self.epsilon, self.delta)


class _Sequential:
    """Children compose sequentially. Only the last child can still change (the open scopes
    form a path), so the others are kept folded in ``settled``: recording costs O(1) here."""

    kind = "sequential"

    def __init__(self, name: str) -> None:
        self.name = name
        self.children: list[LedgerEntry | _Sequential | _Parallel] = []
        self.closed: list[Release] | None = None  # its releases, once the scope is closed
        self.settled = ZERO  # ZERO.then(c_1)...then(c_{n-1}): every child but the last
        self.cost = ZERO  # settled.then(c_n): the fold over every child, in order

    def combine(self, cost: PrivacyCost) -> PrivacyCost:
        """The cost of this scope if its last child cost ``cost``."""
        return self.settled.then(cost)

    def add(self, child: LedgerEntry | _Sequential | _Parallel) -> None:
        self.settled = self.cost  # the last child is settled: it can no longer change
        self.children.append(child)

    def refresh(self) -> None:
        """Fold every child again (the reference: the kept costs equal it, bit for bit)."""
        self.settled = self.cost = ZERO
        for child in self.children:
            self.settled, self.cost = self.cost, self.cost.then(child.cost)


class _Parallel:
    """Parts touch disjoint records: the cost is the most expensive part (kept folded as in
    :class:`_Sequential`)."""

    kind = "parallel"

    def __init__(self, name: str) -> None:
        self.name = name
        self.parts: list[_Sequential] = []
        self.first: list[Release] = []  # the releases of the first part, once closed
        self.alike = False  # whether every closed part has the first part's releases
        self.closed: list[Release] | None = None
        self.settled = ZERO  # ZERO.alongside(p_1)...alongside(p_{n-1})
        self.cost = ZERO

    def combine(self, cost: PrivacyCost) -> PrivacyCost:
        return self.settled.alongside(cost)

    def add(self, part: _Sequential) -> None:
        self.settled = self.cost
        if self.parts:  # the last part is closed: are the closed parts all alike?
            closed = _releases(self.parts[-1])
            if len(self.parts) == 1:
                self.first, self.alike = closed, True
            else:
                self.alike = self.alike and closed == self.first
        self.parts.append(part)

    def refresh(self) -> None:
        self.settled = self.cost = ZERO
        for part in self.parts:
            self.settled, self.cost = self.cost, self.cost.alongside(part.cost)


def _releases(node: LedgerEntry | _Sequential | _Parallel) -> list[Release]:
    """The releases a node composes in sequence: a sequential scope's in order; a parallel
    scope's most expensive part (one that dominates every other, release by release), or
    every part in sequence when none does (sound, looser)."""
    if isinstance(node, LedgerEntry):
        release = node.as_release
        return [] if release is None else [release]
    if node.closed is not None:  # a closed scope never changes
        return node.closed
    if isinstance(node, _Sequential):
        return [r for child in node.children for r in _releases(child)]
    parts = [_releases(part) for part in node.parts]
    parts = [p for p in parts if p]
    if not parts:
        return []
    for candidate in sorted(parts, key=len, reverse=True):
        if all(_dominates(candidate, other) for other in parts):
            return candidate
    return [r for part in parts for r in part]


def _strength(r: Release) -> tuple[float, float]:
    return (r.mu if r.kind == "gaussian" else r.epsilon), r.delta


def _dominates(big: list[Release], small: list[Release]) -> bool:
    """Whether every release of ``small`` can be matched to a release of ``big`` of the same
    kind that is at least as strong (larger epsilon or mu, and delta): then ``big``'s
    composition dominates ``small``'s (Laplace, Gaussian and (epsilon, delta) mechanisms are
    each ordered by their parameter)."""
    if big is small or big == small:
        return True
    for kind in {r.kind for r in small}:
        mine = sorted((_strength(r) for r in big if r.kind == kind
                       for _ in range(r.times)), reverse=True)
        theirs = sorted((_strength(r) for r in small if r.kind == kind
                         for _ in range(r.times)), reverse=True)
        if len(theirs) > len(mine):
            return False
        if any(t[0] > m[0] or t[1] > m[1] for t, m in zip(theirs, mine)):
            return False
    return True


def _uint32_words(value: Any) -> list[int]:
    """The 32-bit words numpy's SeedSequence makes of an int or a sequence of ints (least
    significant word first, 0 as one word; a sequence's words one element after another)."""
    if isinstance(value, numbers.Integral):
        n, words = int(value), []
        while True:
            words.append(n & 0xFFFFFFFF)
            n >>= 32
            if n <= 0:  # numpy refuses negative seed material; stop on it all the same
                return words
    return [w for v in value for w in _uint32_words(v)]


@dataclass(frozen=True)
class _Seed:
    """The fingerprint of one fit's seed material (``label`` names the fit): a digest of the
    words a SeedSequence mixes into its pool (entropy, then spawn key), and the digests of
    their prefixes of pool size or more, the seeds it descends from. Two seeds with the same
    words have the same state; a seed whose words extend another's is that seed's descendant
    (``SeedSequence(e, spawn_key=k)`` is ``SeedSequence(e, spawn_key=k[:1])`` spawned
    further), so their streams are not independent either. Digests, not the seed: a seed
    behind a published release must stay secret, and the ledger's reports must not show it."""

    label: str
    digest: bytes
    ancestors: frozenset[bytes]

    @classmethod
    def of(cls, seed: np.random.SeedSequence, label: str) -> _Seed:
        if not isinstance(seed, np.random.SeedSequence):
            raise InvalidParameterError("the seed material must be a numpy.random.SeedSequence, "
                                        f"got {type(seed).__name__}")
        pool = int(seed.pool_size)
        words = _uint32_words(seed.entropy)
        key = _uint32_words(seed.spawn_key)
        if key:  # numpy pads the entropy to the pool size before the spawn key
            words += [0] * (pool - len(words))
        words += key
        words += [0] * (pool - len(words))  # a shorter pool input is mixed as if zero-padded

        def digest(prefix: list[int]) -> bytes:
            data = np.asarray([pool, *prefix], dtype="<u4").tobytes()
            return hashlib.blake2b(data, digest_size=16).digest()

        return cls(label, digest(words),
                   frozenset(digest(words[:j]) for j in range(pool, len(words))))

    def related(self, other: _Seed) -> bool:
        """Whether the two seeds are the same material or one descends from the other."""
        return (self.digest == other.digest or self.digest in other.ancestors
                or other.digest in self.ancestors)


def _reuse_message(later: str, earlier: str) -> str:
    return (f"{later} repeats the seed material of {earlier}, already charged to this "
            "accountant: two fits with one seed draw the same noise, so on neighbouring data "
            "their difference reveals a record exactly, whatever their epsilons add up to. "
            "Pass a different random_state to each fit, None for fresh entropy, or one child "
            "of numpy.random.SeedSequence(seed).spawn(n) per fit")


class PrivacyLedger:
    """Records every noise draw and composes them; optionally enforces a declared budget.

    Parameters
    ----------
    budget : float, (epsilon, delta) pair, PrivacyCost or None, default None
        The declared total, as a number (pure epsilon), an ``(epsilon, delta)`` pair or a
        :class:`PrivacyCost`. ``None`` records without enforcing.
    neighbour : {"add/remove", "replace"}, default "add/remove"
        The neighbour relation every sensitivity in this ledger refers to.
    accounting : {"basic", "tight"}, default "basic"
        How the budget is checked and :meth:`total` composes: epsilons and deltas added, or
        the recorded releases composed tightly at the budget's delta
        (:meth:`epsilon_at`; "tight" needs a budget with delta > 0 to differ).
    seed_reuse : {"refuse", "record"}, default "refuse"
        What :meth:`check_seed` and :meth:`absorb` do with a fit whose seed material repeats
        that of a fit already absorbed (the same SeedSequence entropy and spawn key, or one
        spawned from the other): refuse it with :class:`~dpkmeans.errors.SeedReuseError`, or
        record a leak naming both fits (:attr:`is_private` becomes False). Composition holds
        for fits that draw their noise independently only. The ledger keeps digests of the
        seed material, never the seeds, and shows them in no report; a pickled ledger holds
        them (small integer seeds can be recovered from their digests by trying them all:
        keep a pickled accountant as private as the seeds).

    Attributes
    ----------
    budget : PrivacyCost or None
        The declared total.
    neighbour : str
        The neighbour relation.
    accounting : str
        "basic" or "tight".
    seed_reuse : str
        "refuse" or "record".

    Raises
    ------
    ValueError
        If ``neighbour`` is not a relation of the book, ``accounting`` or ``seed_reuse`` is
        not one of its choices, or the budget is invalid.

    Examples
    --------
    Three clusters noised in parallel cost the most expensive one:

    >>> from dpkmeans.privacy.accounting import PrivacyLedger
    >>> ledger = PrivacyLedger(budget=1.0)
    >>> with ledger.parallel("clusters"):
    ...     for j in range(3):
    ...         with ledger.part(f"cluster {j}"):
    ...             _ = ledger.charge("Laplace", epsilon=0.5, sensitivity=2.0, scale=4.0)
    >>> ledger.total()
    PrivacyCost(epsilon=0.5, delta=0.0)
    >>> ledger
    PrivacyLedger(neighbour='add/remove', entries=3, total=epsilon=0.5, budget=epsilon=1)
    """

    def __init__(
        self,
        budget: PrivacyCost | float | tuple[float, float] | None = None,
        *,
        neighbour: str = "add/remove",
        accounting: str = "basic",
        seed_reuse: str = "refuse",
    ) -> None:
        if neighbour not in NEIGHBOUR_RELATIONS:
            raise ValueError(f"neighbour must be one of {NEIGHBOUR_RELATIONS}, got {neighbour!r}")
        if accounting not in ACCOUNTING_MODES:
            raise ValueError(f"accounting must be one of {ACCOUNTING_MODES}, got {accounting!r}")
        if seed_reuse not in SEED_REUSE_MODES:
            raise ValueError(f"seed_reuse must be one of {SEED_REUSE_MODES}, got {seed_reuse!r}")
        self.neighbour = neighbour
        self.accounting = accounting
        self.seed_reuse = seed_reuse
        self._seeds: list[_Seed] = []  # the seed material of every fit absorbed, carried up
        self._absorbed = 0  # the ledgers absorbed so far (fits are named by their order)
        self.budget = _as_budget(budget)
        self._tight_total: PrivacyCost | None = None  # the tight total, until the next record
        self._expected: list[Release] | None = None  # a plan checked whole (:meth:`expect`)
        self._root = _Sequential("total")
        self._stack: list[_Sequential | _Parallel] = [self._root]
        self._entries: list[LedgerEntry] = []
        self._leaks: list[LedgerEntry] = []

    def __setstate__(self, state: dict[str, Any]) -> None:
        # an older pickle may lack the seed attributes: it then holds no seed material
        self.__dict__.update({"seed_reuse": "refuse", "_seeds": [], "_absorbed": 0, **state})

    # -- scopes ---------------------------------------------------------------------------
    @staticmethod
    def _close(node: _Sequential | _Parallel) -> None:
        """Keep a closed scope's releases (it can no longer change)."""
        node.closed = _releases(node)

    def _scope_path(self) -> str:
        names = []
        for node in self._stack[1:]:
            names.append(f"{node.name}[parallel]" if isinstance(node, _Parallel) else node.name)
        return " > ".join(names) if names else "total"

    def _current_sequential(self, action: str) -> _Sequential:
        node = self._stack[-1]
        if isinstance(node, _Parallel):
            raise RuntimeError(
                f"cannot {action} directly inside parallel scope {node.name!r}: "
                "open a `ledger.part(...)` for each disjoint subset first"
            )
        return node

    @contextmanager
    def sequential(self, name: str) -> Iterator[PrivacyLedger]:
        """A named scope whose contents compose sequentially (e.g. one iteration).

        Parameters
        ----------
        name : str
            The scope's name (in the entries' ``scope`` paths).

        Yields
        ------
        PrivacyLedger
            This ledger, recording inside the scope.

        Raises
        ------
        RuntimeError
            If opened directly inside a parallel scope (open a ``part`` first).

        Examples
        --------
        >>> from dpkmeans.privacy.accounting import PrivacyLedger
        >>> ledger = PrivacyLedger()
        >>> with ledger.sequential("iteration 1"):
        ...     entry = ledger.charge("Laplace", epsilon=0.25, sensitivity=1.0, scale=4.0)
        >>> entry.scope
        'iteration 1'
        """
        node = _Sequential(str(name))
        self._current_sequential("open a sequential scope")
        self._append(node)
        self._stack.append(node)
        try:
            yield self
        finally:
            self._close(self._stack.pop())

    @contextmanager
    def parallel(self, name: str) -> Iterator[PrivacyLedger]:
        """A scope over disjoint subsets of the records; open one ``part`` per subset.

        The caller asserts disjointness: under add/remove adjacency one record lies in at
        most one part, so the scope costs the maximum over parts (book ch. 3, parallel
        composition). Under replace adjacency one record can leave one part and join another,
        so parallel composition does not hold: this ledger then raises ``ValueError`` (use
        sequential scopes with the joint sensitivity).

        Parameters
        ----------
        name : str
            The scope's name (in the entries' ``scope`` paths).

        Yields
        ------
        PrivacyLedger
            This ledger; record only inside its ``part`` scopes.

        Raises
        ------
        ValueError
            Under replace adjacency.
        RuntimeError
            If opened directly inside another parallel scope.
        """
        if self.neighbour == "replace":
            raise ValueError("parallel composition needs add/remove adjacency: under replace "
                             "adjacency one record can touch two parts (a record that moves "
                             "leaves one and joins another); compose sequentially")
        node = _Parallel(str(name))
        self._current_sequential("open a parallel scope")
        self._append(node)
        self._stack.append(node)
        try:
            yield self
        finally:
            self._close(self._stack.pop())

    @contextmanager
    def part(self, name: str) -> Iterator[PrivacyLedger]:
        """One disjoint subset inside the innermost ``parallel`` scope.

        Parameters
        ----------
        name : str
            The scope's name (in the entries' ``scope`` paths).

        Yields
        ------
        PrivacyLedger
            This ledger, recording inside the part (sequentially).

        Raises
        ------
        RuntimeError
            If the innermost open scope is not a parallel one.
        """
        parent = self._stack[-1]
        if not isinstance(parent, _Parallel):
            raise RuntimeError("ledger.part(...) is only allowed directly inside ledger.parallel(...)")
        node = _Sequential(str(name))
        self._append(node)
        self._stack.append(node)
        try:
            yield self
        finally:
            self._close(self._stack.pop())

    # -- recording ------------------------------------------------------------------------
    def charge(
        self,
        mechanism: str,
        *,
        epsilon: float,
        delta: float = 0.0,
        sensitivity: float,
        scale: float,
        label: str = "",
        details: Mapping[str, Any] | None = None,
        release: Release | None = None,
    ) -> LedgerEntry:
        """Record a draw *before* it is made; refuse it if it would exceed the budget.

        Raises :class:`~dpkmeans.errors.BudgetExceededError` (nothing is recorded then).

        Parameters
        ----------
        mechanism : str
            The mechanism's name.
        epsilon : float
            The draw's epsilon (> 0).
        delta : float, default 0.0
            The draw's delta, in [0, 1).
        sensitivity : float
            The sensitivity the noise is calibrated to (>= 0).
        scale : float
            The noise scale.
        label : str, default ""
            What is released.
        details : mapping or None, default None
            Anything else to keep with the entry.
        release : Release or None, default None
            What the release is, for tight composition (None: a mechanism known only by its
            epsilon and delta).

        Returns
        -------
        LedgerEntry
            The recorded entry.

        Raises
        ------
        dpkmeans.errors.BudgetExceededError
            If the composed total would exceed the declared budget.
        ValueError
            If epsilon, delta or the sensitivity is out of range.
        RuntimeError
            If called directly inside a parallel scope.

        Examples
        --------
        >>> from dpkmeans.privacy.accounting import PrivacyLedger
        >>> ledger = PrivacyLedger(budget=1.0)
        >>> _ = ledger.charge("Laplace", epsilon=0.75, sensitivity=1.0, scale=4 / 3)
        >>> ledger.charge("Laplace", epsilon=0.5, sensitivity=1.0, scale=2.0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dpkmeans.errors.BudgetExceededError: Laplace draw with epsilon=0.5, delta=0 would raise ...
        >>> len(ledger.entries)
        1
        """
        eps = check_epsilon(epsilon)
        dlt = check_delta(delta, allow_zero=True)
        sens = check_sensitivity(sensitivity)
        entry = LedgerEntry(
            mechanism=str(mechanism),
            epsilon=eps,
            delta=dlt,
            sensitivity=sens,
            scale=float(scale),
            scope=self._scope_path(),
            label=str(label),
            details=dict(details or {}),
            release=release,
        )
        node = self._current_sequential("record a draw")
        costs = self._path_costs(entry.cost)
        if self.budget is not None:
            total = self._total_with(node, entry, costs[-1])
            if total is not None:
                raise BudgetExceededError(
                    f"{mechanism} draw{f' ({label})' if label else ''} with "
                    f"epsilon={eps:.6g}, delta={dlt:.3g} would raise the composed total "
                    f"to {total}, which exceeds the declared budget {self.budget}; "
                    f"already spent: {self.total()}"
                )
        self._append(entry, costs)
        self._entries.append(entry)
        return entry

    def _fit_label(self, name: str) -> str:
        """How the next absorbed ledger is named in seed records: its order and name."""
        return f"fit {self._absorbed + 1} ({name})"

    def check_seed(self, seed_sequence: np.random.SeedSequence, name: str) -> str | None:
        """Check, before a fit draws anything, that its seed material is new to this ledger.

        The composition of the fits a ledger absorbs assumes that they draw their noise
        independently; two fits with the same seed material (the same SeedSequence entropy and
        spawn key, or one spawned from the other) draw the same noise, and on neighbouring
        data their difference reveals a record exactly. Fresh entropy (``SeedSequence()``,
        what ``random_state=None`` gives) never repeats; the children of one
        ``SeedSequence(seed).spawn(n)`` are distinct material. Nothing is recorded: the seed is
        kept when the fit's ledger is absorbed (:meth:`absorb` with ``seed``).

        Parameters
        ----------
        seed_sequence : numpy.random.SeedSequence
            The fit's seed (the root of every draw it makes).
        name : str
            The fit's name, for the message.

        Returns
        -------
        str or None
            None when the material is new; with ``seed_reuse="record"``, the earlier fit it
            repeats (its order and name), whose leak :meth:`absorb` will record.

        Raises
        ------
        dpkmeans.errors.SeedReuseError
            If the material repeats that of an absorbed fit and ``seed_reuse="refuse"``.
        TypeError
            If ``seed_sequence`` is not a numpy SeedSequence.

        Examples
        --------
        >>> import numpy as np
        >>> from dpkmeans.privacy.accounting import PrivacyLedger
        >>> accountant, fit = PrivacyLedger(), PrivacyLedger()
        >>> accountant.absorb(fit, "first fit", seed=np.random.SeedSequence(7))
        >>> accountant.check_seed(np.random.SeedSequence(8), "second fit") is None
        True
        >>> accountant.check_seed(np.random.SeedSequence(7), "second fit")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dpkmeans.errors.SeedReuseError: fit 2 (second fit) repeats the seed material of fit 1 ...
        """
        seed = _Seed.of(seed_sequence, self._fit_label(name))
        earlier = next((known.label for known in self._seeds if known.related(seed)), None)
        if earlier is not None and self.seed_reuse == "refuse":
            raise SeedReuseError(_reuse_message(seed.label, earlier))
        return earlier

    def _reused(self, own: list[_Seed], carried: list[_Seed]) -> list[tuple[str, str]]:
        """(later, earlier) for the absorbed fit's ``own`` seed and each seed ``carried`` up
        from the absorbed ledger, when related to one this ledger holds or to the own one
        (the carried seeds among themselves were the absorbed ledger's to judge; its leaks
        come along)."""
        pairs = []
        for seed in own + carried:
            known = self._seeds + [s for s in own if s is not seed]
            earlier = next((k.label for k in known if k.related(seed)), None)
            if earlier is not None:
                pairs.append((seed.label, earlier))
        return pairs

    def absorb(self, other: PrivacyLedger, name: str, *,
               seed: np.random.SeedSequence | None = None) -> None:
        """Record everything ``other`` recorded (e.g. one fit's ledger) as one sequential part
        named ``name``: its composed cost adds to this total, its entries and leaks are kept
        (their scopes prefixed with ``name``), and so is the seed material of the fits it
        absorbed, with ``seed``, the seed of the fit it records (:meth:`check_seed`). Refused,
        with nothing recorded, when the neighbour relations differ, the budget would be
        exceeded or, with ``seed_reuse="refuse"``, seed material repeats; with
        ``seed_reuse="record"`` a repeat is recorded as a leak in the part.

        Parameters
        ----------
        other : PrivacyLedger
            The ledger to record (under the same neighbour relation); later draws in it stay
            out.
        name : str
            The name of the sequential part it becomes.
        seed : numpy.random.SeedSequence or None, default None
            The seed of every draw recorded in ``other`` (None: not known, nothing kept).

        Raises
        ------
        ValueError
            If ``other`` is this ledger or is under another neighbour relation.
        dpkmeans.errors.BudgetExceededError
            If its cost would take this ledger past its budget.
        dpkmeans.errors.SeedReuseError
            If ``seed``, or the seed material ``other`` holds, repeats this ledger's and
            ``seed_reuse="refuse"``.
        TypeError
            If ``seed`` is neither None nor a numpy SeedSequence.

        Examples
        --------
        >>> import numpy as np
        >>> from dpkmeans.privacy.accounting import PrivacyLedger
        >>> accountant, fit = PrivacyLedger(budget=3.0), PrivacyLedger()
        >>> _ = fit.charge("Laplace", epsilon=1.0, sensitivity=1.0, scale=1.0)
        >>> accountant.absorb(fit, "fit 1")
        >>> print(accountant.remaining())
        epsilon=2
        >>> accountant.entries[0].scope
        'fit 1'

        With ``seed_reuse="record"``, a second fit with the first one's seed is a leak:

        >>> shared = PrivacyLedger(seed_reuse="record")
        >>> shared.absorb(fit, "A", seed=np.random.SeedSequence(7))
        >>> shared.absorb(fit, "B", seed=np.random.SeedSequence(7))
        >>> shared.is_private
        False
        >>> shared.entries[-1].label  # doctest: +ELLIPSIS
        'fit 2 (B) reuses the seed material of fit 1 (A): ...'
        """
        if other is self:
            raise ValueError("a ledger cannot absorb itself")
        if other.neighbour != self.neighbour:
            raise ValueError(f"cannot absorb a ledger under {other.neighbour} adjacency into one "
                             f"under {self.neighbour}")
        label = self._fit_label(name)
        own = [] if seed is None else [_Seed.of(seed, label)]
        carried = [replace(s, label=f"{label} > {s.label}") for s in other._seeds]
        node = _Sequential(str(name))
        copy = deepcopy(other._root)  # later draws in `other` stay out
        if other._tight():  # its (epsilon, delta) is its tight total, not the basic sum
            copy.cost = other.total()
        node.add(copy)
        node.refresh()
        self._close(node.children[0])
        scope = self._current_sequential("absorb a ledger")
        costs = self._path_costs(node.cost)
        if self.budget is not None and self._total_with(scope, node, costs[-1]) is not None:
            raise BudgetExceededError(
                f"{name} costs {node.cost}, which would raise the composed total past the "
                f"declared budget {self.budget}; already spent: {self.total()}")
        reused = self._reused(own, carried)
        if reused and self.seed_reuse == "refuse":
            raise SeedReuseError(_reuse_message(*reused[0]))
        prefix = self._scope_path()
        prefix = name if prefix == "total" else f"{prefix} > {name}"
        leaks = [LedgerEntry(mechanism="LEAK (not private)", epsilon=0.0, delta=0.0,
                             sensitivity=0.0, scale=0.0, scope=prefix,
                             label=f"{later} reuses the seed material of {earlier}: the two draw "
                                   "the same noise, and no epsilon covers them together")
                 for later, earlier in reused]
        for leak in leaks:
            node.add(leak)
        self._close(node)
        self._append(node, costs)

        def rescoped(entry: LedgerEntry) -> LedgerEntry:
            scope = prefix if entry.scope == "total" else f"{prefix} > {entry.scope}"
            return replace(entry, scope=scope)

        self._entries.extend(rescoped(e) for e in other._entries)
        self._entries.extend(leaks)
        self._leaks.extend(rescoped(e) for e in other._leaks)
        self._leaks.extend(leaks)
        self._seeds.extend(own + carried)
        self._absorbed += 1

    def _total_with(self, scope: _Sequential, child: LedgerEntry | _Sequential,
                    basic: PrivacyCost) -> PrivacyCost | None:
        """None when the budget still holds with ``child`` added to ``scope`` (the innermost
        open one), else the total it would reach. Basic composition first (valid at any delta
        at least its own); a tight ledger then composes the releases tightly."""
        if basic.fits_within(self.budget):
            return None
        if not self._tight():
            return basic
        if self._repeats_a_part(scope, child):
            return None
        scope.children.append(child)  # composed as if recorded, then taken back
        try:
            releases = _releases(self._root)
            if self._expected is not None and _dominates(self._expected, releases):
                return None  # within a plan that was checked whole
            eps = tight.epsilon_at(releases, self.budget.delta)[0]
        finally:
            scope.children.pop()
        if eps <= self.budget.epsilon * (1.0 + BUDGET_RTOL):
            return None
        return PrivacyCost(eps, self.budget.delta)

    def _repeats_a_part(self, scope: _Sequential, child: LedgerEntry | _Sequential) -> bool:
        """Whether ``scope`` is a part of a parallel scope whose closed parts all release
        the same, and with ``child`` it still releases a prefix of that: the parallel scope's
        most expensive part, hence the tight total, is then unchanged (the usual case: one
        cluster after another at the same noise)."""
        parent = self._stack[-2] if len(self._stack) >= 2 else None
        if not isinstance(parent, _Parallel) or len(parent.parts) < 2 or not parent.alike:
            return False
        mine = _releases(scope) + _releases(child)
        return parent.first[:len(mine)] == mine

    def _tight(self) -> bool:
        return (self.accounting == "tight" and self.budget is not None
                and self.budget.delta > 0)

    def _tight_epsilon(self) -> float:
        return tight.epsilon_at(_releases(self._root), self.budget.delta)[0]

    def _path_costs(self, cost: PrivacyCost) -> list[PrivacyCost]:
        """The costs the open scopes would have, innermost first (the last is the composed
        total), if a child costing ``cost`` joined the innermost one; nothing is recorded.
        O(depth), not O(entries): each open scope is the last child of the one around it."""
        top = self._stack[-1]
        cost = top.cost.then(cost) if top.kind == "sequential" else top.cost.alongside(cost)
        costs = [cost]
        for node in reversed(self._stack[:-1]):
            cost = node.combine(cost)
            costs.append(cost)
        return costs

    def _append(self, child: LedgerEntry | _Sequential | _Parallel,
                costs: list[PrivacyCost] | None = None) -> None:
        """Add ``child`` to the innermost open scope; ``costs`` from :meth:`_path_costs`, or
        None for a child that costs nothing (a new scope, a note), which changes no total:
        x.then(0) and x.alongside(0) are x, bit for bit. Closed scopes never change."""
        self._stack[-1].add(child)
        self._tight_total = None
        if costs is not None:
            for node, cost in zip(reversed(self._stack), costs):
                node.cost = cost

    def post_process(self, description: str) -> LedgerEntry:
        """Record a post-processing step (costs nothing; kept so the ledger tells the whole story).

        Parameters
        ----------
        description : str
            What was done (the entry's label).

        Returns
        -------
        LedgerEntry
            The zero-cost entry.
        """
        return self._note("post-processing", description)

    def leak(self, description: str) -> LedgerEntry:
        """Record a release that no epsilon covers (an as-published flaw, audited in the book).

        The composed total then understates the true cost: :attr:`is_private` becomes False.

        Parameters
        ----------
        description : str
            What leaked (the entry's label).

        Returns
        -------
        LedgerEntry
            The zero-cost entry that records it.

        Examples
        --------
        >>> from dpkmeans.privacy.accounting import PrivacyLedger
        >>> ledger = PrivacyLedger()
        >>> _ = ledger.leak("bounds read off the data")
        >>> ledger.is_private
        False
        """
        entry = self._note("LEAK (not private)", description)
        self._leaks.append(entry)
        return entry

    def _note(self, mechanism: str, description: str) -> LedgerEntry:
        entry = LedgerEntry(mechanism=mechanism, epsilon=0.0, delta=0.0, sensitivity=0.0,
                            scale=0.0, scope=self._scope_path(), label=str(description))
        self._current_sequential(f"record {mechanism}")
        self._append(entry)
        self._entries.append(entry)
        return entry

    # -- reporting ------------------------------------------------------------------------
    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """All entries in the order they were recorded."""
        return tuple(self._entries)

    @property
    def is_private(self) -> bool:
        """False once a leak has been recorded: then no epsilon describes the release."""
        return not self._leaks

    def total(self) -> PrivacyCost:
        """The composed cost of everything recorded so far.

        Returns
        -------
        PrivacyCost
            Sequential scopes added up, parallel scopes at their most expensive part. A tight
            ledger with an (epsilon, delta) budget gives the tight epsilon at the budget's
            delta instead (:meth:`epsilon_at`), when it is smaller.
        """
        basic = self._root.cost
        if not self._tight():
            return basic
        if self._tight_total is None:
            self._tight_total = PrivacyCost(self._tight_epsilon(), self.budget.delta)
        if basic.delta <= self.budget.delta and basic.epsilon <= self._tight_total.epsilon:
            return basic
        return self._tight_total

    def expect(self, releases: list[Release]) -> float | None:
        """Check a plan of releases whole, against the budget by tight composition: a later
        draw whose releases, with everything recorded, stay within the plan (each matched to
        a planned release at least as strong) is then accepted without composing again. A
        draw outside the plan is composed and checked as usual.

        Parameters
        ----------
        releases : list of Release
            Everything a run will record, in sequence (e.g.
            :func:`dpkmeans.engine.equal_privacy.plan_releases`), on top of what is recorded.

        Returns
        -------
        float or None
            The plan's epsilon at the budget's delta (None for a ledger that is not tight).

        Raises
        ------
        dpkmeans.errors.BudgetExceededError
            If the plan exceeds the budget.
        """
        if not self._tight():
            return None
        plan = _releases(self._root) + list(releases)
        eps = tight.epsilon_at(plan, self.budget.delta)[0]
        if eps > self.budget.epsilon * (1.0 + BUDGET_RTOL):
            raise BudgetExceededError(f"the planned releases cost epsilon={eps:.6g} at delta="
                                      f"{self.budget.delta:.3g}, more than the budget "
                                      f"{self.budget}")
        self._expected = plan
        return eps

    def releases(self) -> list[Release]:
        """What composes in sequence: every recorded release in order, a parallel scope by its
        most expensive part (the one that dominates the others; all parts when none does).

        Returns
        -------
        list of Release

        Examples
        --------
        >>> from dpkmeans.privacy.accounting import PrivacyLedger
        >>> from dpkmeans.privacy.tight import Release
        >>> ledger = PrivacyLedger()
        >>> with ledger.parallel("clusters"):
        ...     for j in range(3):
        ...         with ledger.part(f"cluster {j}"):
        ...             _ = ledger.charge("Laplace", epsilon=0.5, sensitivity=1.0, scale=2.0,
        ...                               release=Release("laplace", epsilon=0.5))
        >>> ledger.releases()
        [Release(kind='laplace', epsilon=0.5, delta=0.0, mu=0.0, times=1)]
        """
        return _releases(self._root)

    def epsilon_at(self, delta: float, accounting: str | None = None) -> float:
        """The epsilon of everything recorded, at ``delta``: the smallest that basic
        composition, Gaussian DP, zCDP or the PLD accountant proves (``accounting=None``), or
        one of them (``"basic"``, ``"gdp"``, ``"zcdp"``, ``"pld"``; ``inf`` where it does not
        apply). Book chapter 3, "Tight composition".

        Parameters
        ----------
        delta : float
            In [0, 1).
        accounting : str or None, default None
            One accounting of :data:`dpkmeans.privacy.tight.ACCOUNTINGS`, or None for the best.

        Returns
        -------
        float

        Examples
        --------
        >>> from dpkmeans.privacy.accounting import PrivacyLedger
        >>> from dpkmeans.privacy.tight import Release, gdp_mu
        >>> mu = gdp_mu(0.5, 1e-7)  # Gaussian noise that is (0.5, 1e-7)-DP, seven times
        >>> ledger = PrivacyLedger()
        >>> for t in range(7):
        ...     _ = ledger.charge("Gaussian", epsilon=0.5, delta=1e-7, sensitivity=1.0,
        ...                       scale=1 / mu, release=Release("gaussian", 0.5, 1e-7, mu=mu))
        >>> print(ledger.total())  # basic composition
        (epsilon=3.5, delta=7e-07)
        >>> round(ledger.epsilon_at(1e-6), 4), round(ledger.epsilon_at(1e-6, "zcdp"), 4)
        (1.2643, 1.361)
        """
        releases = self.releases()
        if accounting is None:
            return tight.epsilon_at(releases, delta)[0]
        eps = tight.epsilon_by(accounting, releases, delta)
        return math.inf if eps is None else eps

    def pure_epsilon(self) -> float | None:
        """The pure epsilon of everything recorded (basic and parallel composition), or None
        when a release has none (Gaussian noise, an (epsilon, delta) mechanism).

        Returns
        -------
        float or None
        """
        releases = self.releases()
        if any(r.pure_epsilon == math.inf for r in releases):
            return None
        return self._root.cost.epsilon

    def rho(self) -> float | None:
        """The zCDP rho of everything recorded (mu^2 / 2 per Gaussian release, epsilon^2 / 2
        per pure one), or None when a release is only (epsilon, delta).

        Returns
        -------
        float or None
        """
        return tight.zcdp_rho_of(self.releases())

    def mu(self) -> float | None:
        """The Gaussian-DP mu of everything recorded (sqrt(sum mu_i^2)) when every release is
        Gaussian noise, else None.

        Returns
        -------
        float or None
        """
        return tight.gdp_mu_of(self.releases())

    def privacy_report(self, delta: float) -> dict[str, float | None]:
        """Every accounting of the ledger side by side: the pure epsilon, epsilon at
        ``delta`` by basic composition, zCDP, Gaussian DP and PLD (None where one does not
        apply), rho and mu.

        Parameters
        ----------
        delta : float
            In (0, 1).

        Returns
        -------
        dict
            Keys ``pure_epsilon``, ``basic``, ``zcdp``, ``gdp``, ``pld``, ``best``, ``rho``,
            ``mu``.
        """
        releases = self.releases()
        out: dict[str, float | None] = {"pure_epsilon": self.pure_epsilon()}
        for accounting in tight.ACCOUNTINGS:
            out[accounting] = tight.epsilon_by(accounting, releases, delta)
        out["best"] = tight.epsilon_at(releases, delta)[0]
        out["rho"], out["mu"] = self.rho(), self.mu()
        return out

    def admits(self, cost: PrivacyCost) -> bool:
        """Whether a mechanism known only by its (epsilon, delta) ``cost`` would still fit the
        budget (always True without one): basic composition, or, for a tight ledger, the
        tight composition of everything recorded with a release of that cost.

        Parameters
        ----------
        cost : PrivacyCost
            The cost of what would be recorded next (e.g. a whole fit).

        Returns
        -------
        bool

        Examples
        --------
        >>> from dpkmeans.privacy.accounting import PrivacyCost, PrivacyLedger
        >>> basic = PrivacyLedger(budget=(2.5, 1e-5))
        >>> tight = PrivacyLedger(budget=(2.5, 1e-5), accounting="tight")
        >>> for ledger in (basic, tight):
        ...     for fit in range(30):
        ...         if ledger.admits(PrivacyCost(0.1)):
        ...             _ = ledger.charge("Laplace", epsilon=0.1, sensitivity=1.0, scale=10.0)
        >>> len(basic.entries), len(tight.entries)
        (25, 30)
        """
        if self.budget is None:
            return True
        remaining = self.remaining()
        if cost.fits_within(remaining):
            return True
        if not self._tight():
            return False
        kind = "pure" if cost.is_pure else "approx"
        extra = Release(kind, epsilon=cost.epsilon, delta=cost.delta)
        if cost.delta > self.budget.delta:
            return False
        eps = tight.epsilon_at([*_releases(self._root), extra], self.budget.delta)[0]
        return eps <= self.budget.epsilon * (1.0 + BUDGET_RTOL)

    def remaining(self) -> PrivacyCost | None:
        """What is left of the declared budget (``None`` without a budget).

        Returns
        -------
        PrivacyCost or None
            The budget less the total, each coordinate at least 0.
        """
        if self.budget is None:
            return None
        spent = self.total()
        return PrivacyCost(
            max(self.budget.epsilon - spent.epsilon, 0.0), max(self.budget.delta - spent.delta, 0.0)
        )

    def is_fully_spent(self) -> bool:
        """True when the composed total equals the declared budget (within rounding).

        Returns
        -------
        bool

        Raises
        ------
        ValueError
            If the ledger has no declared budget.
        """
        if self.budget is None:
            raise ValueError("this ledger has no declared budget")
        spent = self.total()
        if self._tight():  # the epsilon at the budget's delta, to the accountant's precision
            return abs(spent.epsilon - self.budget.epsilon) <= TIGHT_RTOL * self.budget.epsilon
        return spent.fits_within(self.budget) and self.budget.fits_within(spent)

    def to_frame(self):  # -> pandas.DataFrame
        """The entries as a table (one row per draw or post-processing note).

        Returns
        -------
        pandas.DataFrame
            Columns scope, mechanism, label, epsilon, delta, sensitivity and scale, then one
            ``details.<key>`` column per detail.

        Examples
        --------
        >>> from dpkmeans.privacy.accounting import PrivacyLedger
        >>> ledger = PrivacyLedger()
        >>> _ = ledger.charge("Laplace", epsilon=0.5, sensitivity=2.0, scale=4.0, label="sums")
        >>> _ = ledger.post_process("add the midpoint back")
        >>> ledger.to_frame()[["mechanism", "label", "epsilon"]]
                 mechanism                  label  epsilon
        0          Laplace                   sums      0.5
        1  post-processing  add the midpoint back      0.0
        """
        import pandas as pd

        rows = [
            {
                "scope": e.scope,
                "mechanism": e.mechanism,
                "label": e.label,
                "epsilon": e.epsilon,
                "delta": e.delta,
                "sensitivity": e.sensitivity,
                "scale": e.scale,
                **{f"details.{k}": v for k, v in e.details.items()},
            }
            for e in self._entries
        ]
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        budget = "none" if self.budget is None else str(self.budget)
        leaks = f", LEAKS={len(self._leaks)}" if self._leaks else ""
        how = ", accounting='tight'" if self.accounting == "tight" else ""
        return (
            f"PrivacyLedger(neighbour={self.neighbour!r}{how}, entries={len(self._entries)}, "
            f"total={self.total()}, budget={budget}{leaks})"
        )


def _as_budget(budget: PrivacyCost | float | tuple[float, float] | None) -> PrivacyCost | None:
    if budget is None or isinstance(budget, PrivacyCost):
        return budget
    if isinstance(budget, tuple):
        if len(budget) != 2:
            raise ValueError("budget must be epsilon or an (epsilon, delta) pair")
        return PrivacyCost(check_epsilon(budget[0], "budget epsilon"),
                           check_delta(budget[1], "budget delta", allow_zero=True))
    return PrivacyCost(check_epsilon(budget, "budget"))
