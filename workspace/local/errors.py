"""What the page is told when something it asked cannot be done."""

from __future__ import annotations


class PageError(Exception):
    """A request of the page that cannot be done, in words for the person, with an HTTP status."""

    def __init__(self, words: str, status: int = 400) -> None:
        super().__init__(words)
        self.words = words
        self.status = status
