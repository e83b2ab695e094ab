"""Many named filters matched against each message in one pass
(``filtex.Subscriptions``): gates indexed across subscriptions, so a message
costs a few lookups and the evaluation of the subscriptions it may match."""
from .set import Subscriptions

__all__ = ["Subscriptions"]
