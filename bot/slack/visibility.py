"""Who may see an investigation in Slack: the people in its channel.

`/recon status`, `/recon list` and the App Home tab show a person only the investigations of
conversations they are a member of. Membership comes from Slack: `users.conversations` for
that person (every page), through the bot's client, kept a minute per person in a bounded
cache. One call answers for every channel at once (the home tab needs many), and its cost
grows with the person's channels, not with a channel's members as `conversations.members`
would. With a bot token Slack lists a person's private channels only where the bot is a
member too, which is where investigations live.

Anything else shows nothing: an investigation started in the terminal (no channel), a
channel Slack does not list for the person, and any failure to ask Slack (logged, never
cached, so the next request asks again). An investigation a person may not see reads exactly
as one that does not exist (`unknown_investigation`), so its existence is not given away.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable

from cachetools import TTLCache
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from agent.domain import Investigation
from agent.usecases.queries import Queries

logger = logging.getLogger(__name__)

MEMBERSHIP_CACHE_SECONDS = 60.0
MEMBERSHIP_CACHE_PEOPLE = 1024
CONVERSATION_TYPES = "public_channel,private_channel"
PAGE_SIZE = 200  # Slack recommends no more than 200 a page
MAX_PAGES = 50  # 10,000 conversations; past that, the first ones (a subset shows less, not more)
HOME_COUNT = 20
HOME_QUERIES = (100, 500, 2000)  # how many recent investigations to read, until 20 are visible


class ChannelVisibility:
    """The conversations each person is a member of, as Slack says, cached briefly."""

    def __init__(
        self,
        client: WebClient,
        *,
        ttl: float = MEMBERSHIP_CACHE_SECONDS,
        max_people: int = MEMBERSHIP_CACHE_PEOPLE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.ttl = ttl
        self.max_people = max_people
        self.clock = clock
        self._cache: TTLCache[str, frozenset[str]] = TTLCache(
            maxsize=max(max_people, 1), ttl=ttl, timer=clock
        )
        self._lock = threading.Lock()

    def channels_of(self, user: str) -> frozenset[str]:
        """The ids of the conversations `user` is in; empty when Slack cannot say."""
        if not user:
            return frozenset()
        with self._lock:
            cached = self._cache.get(user)
        if cached is not None:
            return cached
        channels = self._ask_slack(user)
        if channels is None:
            return frozenset()
        with self._lock:
            self._cache[user] = channels
        return channels

    def can_see(self, user: str, investigation: Investigation) -> bool:
        """Whether `user` is a member of the investigation's channel."""
        return bool(investigation.channel) and investigation.channel in self.channels_of(user)

    def visible(self, user: str, investigations: Iterable[Investigation]) -> list[Investigation]:
        """The investigations of `investigations` that `user` may see, in order."""
        listed = list(investigations)
        if not listed:
            return []
        channels = self.channels_of(user)
        return [inv for inv in listed if inv.channel and inv.channel in channels]

    def newest(self, queries: Queries, user: str, count: int = HOME_COUNT) -> list[Investigation]:
        """The `count` newest investigations `user` may see (for the home tab): reads more
        recent ones than it shows, since others' are left out."""
        if not self.channels_of(user):
            return []
        shown: list[Investigation] = []
        for limit in HOME_QUERIES:
            recent = queries.recent(limit=limit)
            shown = self.visible(user, recent)
            if len(shown) >= count or len(recent) < limit:
                break
        return shown[:count]

    def _ask_slack(self, user: str) -> frozenset[str] | None:
        """Every page of `users.conversations` for `user`; None if any call fails."""
        channels: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            try:
                page = self.client.users_conversations(
                    user=user, types=CONVERSATION_TYPES, limit=PAGE_SIZE, cursor=cursor
                )
            except SlackApiError as error:
                logger.warning(
                    "user=%s error=%s | channel membership unknown; showing nothing",
                    user,
                    error.response.get("error"),
                )
                return None
            except (SlackClientError, OSError) as error:
                logger.warning(
                    "user=%s error=%s | channel membership unknown; showing nothing",
                    user,
                    type(error).__name__,
                )
                return None
            channels.update(str(c["id"]) for c in page.get("channels") or [] if c.get("id"))
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if cursor is None:
                return frozenset(channels)
        logger.warning(
            "user=%s pages=%d | more conversations than read; showing those read", user, MAX_PAGES
        )
        return frozenset(channels)


_BY_CLIENT: weakref.WeakKeyDictionary[WebClient, ChannelVisibility] = weakref.WeakKeyDictionary()
_BY_CLIENT_LOCK = threading.Lock()


def visibility_for(client: WebClient) -> ChannelVisibility:
    """The one `ChannelVisibility` of a client, shared by the commands and the home tab (so
    they share its cache); it lives as long as the client does."""
    with _BY_CLIENT_LOCK:
        found = _BY_CLIENT.get(client)
        if found is None:
            found = _BY_CLIENT[client] = ChannelVisibility(client)
        return found
