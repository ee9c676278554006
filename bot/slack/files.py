"""Fetching a shared file from Slack: `files.info`, then `url_private_download` with the bot
token, only from the configured Slack host, refusing sign-in pages and oversized files.
"""

from __future__ import annotations

import io
import logging
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, BinaryIO

from slack_sdk import WebClient

from agent.errors import DownloadError, FileTooLargeError

logger = logging.getLogger(__name__)

DOWNLOAD_TIMEOUT_SECONDS = 60
SNIFF_BYTES = 512
CSV_TYPES = frozenset({"csv", "tsv"})
CSV_SUFFIXES = (".csv", ".tsv", ".txt")


@dataclass(frozen=True)
class SharedFile:
    """A file shared in a message, as the event describes it."""

    id: str
    name: str
    filetype: str

    @property
    def is_csv(self) -> bool:
        """Whether reconbot reads this file (a CSV or TSV export)."""
        return self.filetype in CSV_TYPES or self.name.lower().endswith(CSV_SUFFIXES)

    @classmethod
    def from_event(cls, item: dict[str, Any]) -> SharedFile:
        """The file of a `file_share` message event."""
        return cls(
            id=str(item.get("id", "")),
            name=str(item.get("name") or item.get("title") or item.get("id", "file")),
            filetype=str(item.get("filetype") or ""),
        )


def allowed_host(url: str, api_url: str) -> bool:
    """Whether `url` is on the configured Slack host (or one of its subdomains), same scheme.

    With the default `https://slack.com/api/`, `https://files.slack.com/...` is allowed and
    nothing else is; a local stand-in on `http://127.0.0.1:PORT/api/` allows that origin only.
    """
    target, base = urllib.parse.urlsplit(url), urllib.parse.urlsplit(api_url)
    if target.scheme not in ("http", "https"):
        return False
    if target.scheme != base.scheme or not target.hostname or not base.hostname:
        return False
    host, allowed = target.hostname.lower(), base.hostname.lower()
    if host != allowed and not host.endswith("." + allowed):
        return False
    return target.port == base.port


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the configured host, and never sends the token elsewhere."""

    def __init__(self, api_url: str, file_name: str) -> None:
        self.api_url = api_url
        self.file_name = file_name

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        if not allowed_host(newurl, self.api_url):
            raise DownloadError(
                "Slack redirected the download to another host; it was not followed",
                file_name=self.file_name,
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class SlackFiles:
    """Downloads shared files for an investigation, streaming, with the bot token."""

    def __init__(self, client: WebClient, *, token: str, api_url: str, max_bytes: int) -> None:
        self.client = client
        self.token = token
        self.api_url = api_url
        self.max_bytes = max_bytes

    def open(self, shared: SharedFile) -> BinaryIO:
        """A stream of the file's bytes; DownloadError or FileTooLargeError in words."""
        info = self.client.files_info(file=shared.id)["file"]
        name = str(info.get("name") or shared.name)
        size = int(info.get("size") or 0)
        if size > self.max_bytes:
            raise FileTooLargeError(
                f"the file is {size / (1 << 20):.1f} MB, over the upload limit of "
                f"{self.max_bytes / (1 << 20):g} MB",
                file_name=name,
            )
        url = str(info.get("url_private_download") or info.get("url_private") or "")
        if not allowed_host(url, self.api_url):
            logger.warning("file=%s | download URL is not on the Slack host; refused", shared.id)
            raise DownloadError(
                "Slack gave a download address outside the configured Slack host; "
                "the file was not fetched",
                file_name=name,
            )
        opener = urllib.request.build_opener(_SameHostRedirects(self.api_url, name))
        # allowed_host() admitted only the Slack API's own http(s) origin or its subdomains.
        request = urllib.request.Request(  # noqa: S310
            url, headers={"Authorization": f"Bearer {self.token}"}
        )
        try:
            response = opener.open(request, timeout=DOWNLOAD_TIMEOUT_SECONDS)
        except urllib.error.HTTPError as error:
            raise DownloadError(
                f"Slack answered HTTP {error.code} to the download", file_name=name
            ) from None
        except urllib.error.URLError as error:
            raise DownloadError(
                f"the download failed ({error.reason}); try again", file_name=name
            ) from None
        stream = io.BufferedReader(response, buffer_size=64 * 1024)
        content_type = response.headers.get_content_type()
        head = stream.peek(SNIFF_BYTES)[:SNIFF_BYTES].lstrip().lower()
        if content_type == "text/html" or head.startswith((b"<!doctype html", b"<html")):
            stream.close()
            raise DownloadError(
                "Slack sent a sign-in page instead of the file. The bot could not read it: "
                "check that the app has the files:read scope and is in this channel",
                file_name=name,
            )
        return stream
