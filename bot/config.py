"""Configuration: one pydantic-settings class reads the environment of docs/design.md §9, once.

Nothing reads the environment anywhere else. `Settings()` is built by the entry points (the
CLI, the server) and handed to the composition root.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal

from platformdirs import user_data_path
from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from agent.errors import ConfigurationError

_DURATION = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_duration(value: str | int | float | timedelta) -> timedelta:
    """`90s`, `15m`, `24h`, `7d` (or seconds as a number) as a timedelta."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, int | float):
        return timedelta(seconds=value)
    match = _DURATION.match(value)
    if match is None:
        raise ValueError(f"{value!r} is not a duration; write e.g. 90s, 15m, 24h or 7d")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


_SECRET = re.compile(r"pass|secret|token|key", re.IGNORECASE)
"""Query parameters of a database URL that are never shown (`?password=…`, `sslkey=…`)."""


def _database_url(value: str) -> URL:
    """`RECONBOT_DATABASE_URL` parsed; one sentence when it is not a database URL."""
    try:
        return make_url(value)
    except ArgumentError:
        raise ConfigurationError(
            "RECONBOT_DATABASE_URL is not a database URL; use e.g. "
            "sqlite:////path/to/reconbot.db or postgresql://user@host/db"
        ) from None


class Settings(BaseSettings):
    """Every setting of reconbot, from the environment (names as in docs/configuration.md)."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", populate_by_name=True)

    slack_bot_token: str | None = Field(default=None, alias="SLACK_BOT_TOKEN", repr=False)
    slack_signing_secret: str | None = Field(default=None, alias="SLACK_SIGNING_SECRET", repr=False)
    slack_app_token: str | None = Field(default=None, alias="SLACK_APP_TOKEN", repr=False)
    slack_api_url: str = Field(default="https://slack.com/api/", alias="SLACK_API_URL")
    reconbot_home: Path | None = Field(default=None, alias="RECONBOT_HOME")
    database_url: str = Field(default="", alias="RECONBOT_DATABASE_URL")
    blob_url: str = Field(default="", alias="RECONBOT_BLOB_URL")
    s3_endpoint_url: str | None = Field(default=None, alias="RECONBOT_S3_ENDPOINT_URL")
    model: Literal["offline", "bedrock"] = Field(default="offline", alias="RECONBOT_MODEL")
    bedrock_model_id: str = Field(
        default="us.amazon.nova-2-lite-v1:0", alias="RECONBOT_BEDROCK_MODEL_ID"
    )
    bedrock_endpoint_url: str | None = Field(default=None, alias="RECONBOT_BEDROCK_ENDPOINT_URL")
    bedrock_api_key: str | None = Field(default=None, alias="AWS_BEARER_TOKEN_BEDROCK", repr=False)
    bedrock_timeout: timedelta = Field(
        default=timedelta(seconds=120), alias="RECONBOT_BEDROCK_TIMEOUT"
    )
    bedrock_max_attempts: int = Field(default=4, alias="RECONBOT_BEDROCK_MAX_ATTEMPTS", ge=1, le=10)
    bedrock_streaming: bool = Field(default=True, alias="RECONBOT_BEDROCK_STREAMING")
    bedrock_check: bool = Field(default=True, alias="RECONBOT_BEDROCK_CHECK")
    aws_region: str = Field(default="us-east-1", alias="AWS_REGION")
    approvers: Annotated[tuple[str, ...], NoDecode] = Field(default=(), alias="RECONBOT_APPROVERS")
    self_approval: bool = Field(default=True, alias="RECONBOT_SELF_APPROVAL")
    approval_ttl: timedelta = Field(default=timedelta(hours=24), alias="RECONBOT_APPROVAL_TTL")
    claim_lease: timedelta = Field(default=timedelta(minutes=15), alias="RECONBOT_CLAIM_LEASE")
    expiry_sweep: timedelta = Field(default=timedelta(seconds=30), alias="RECONBOT_EXPIRY_SWEEP")
    max_upload_mb: int = Field(default=200, alias="RECONBOT_MAX_UPLOAD_MB", gt=0)
    work_dir: Path = Field(default=Path(), alias="RECONBOT_WORK_DIR")
    cache_max_mb: int = Field(default=4096, alias="RECONBOT_CACHE_MAX_MB", gt=0)
    cache_max_age: timedelta = Field(default=timedelta(days=2), alias="RECONBOT_CACHE_MAX_AGE")
    seal_while_waiting: bool = Field(default=True, alias="RECONBOT_SEAL_WHILE_WAITING")
    policy_path: Path | None = Field(default=None, alias="RECONBOT_POLICY")
    port: int = Field(default=3000, alias="PORT")
    queue: Literal["auto", "postgres", "in-process"] = Field(default="auto", alias="RECONBOT_QUEUE")
    worker_concurrency: int = Field(default=2, alias="RECONBOT_WORKER_CONCURRENCY", ge=1, le=64)
    worker_heartbeat: timedelta = Field(
        default=timedelta(seconds=10), alias="RECONBOT_WORKER_HEARTBEAT"
    )
    worker_stalled_after: timedelta = Field(
        default=timedelta(seconds=30), alias="RECONBOT_WORKER_STALLED_AFTER"
    )

    @model_validator(mode="after")
    def _state_in_home(self) -> Settings:
        """The database, the files and the work directory default to one absolute place, the
        state home, so that every shell and every process finds the same cases."""
        home = self.state_home
        if home.exists() and not home.is_dir():
            raise ValueError(f"RECONBOT_HOME {home} is a file; name a folder to keep cases in")
        if not self.database_url.strip():
            self.database_url = f"sqlite:///{home / 'reconbot.db'}"
        if not self.blob_url.strip():
            self.blob_url = f"file://{home / 'blobs'}"
        if self.work_dir == Path():
            self.work_dir = home / "work"
        return self

    @property
    def state_home(self) -> Path:
        """Where state lives by default: `RECONBOT_HOME`, else the platform's user data folder
        (`~/.local/share/reconbot` on Linux), always absolute."""
        home = self.reconbot_home or user_data_path("reconbot")
        return home.expanduser().resolve()

    def describe_state(self) -> str:
        """Where this configuration keeps its cases, in one line for a person (no password)."""
        files = self.blob_url
        if files.startswith("file://"):
            files = str(Path(files.removeprefix("file://")).expanduser().resolve())
        return f"cases kept in {self.database_display}, files in {files}"

    @property
    def database_display(self) -> str:
        """The database URL as it may be shown: a SQLite file as its path, a password hidden."""
        path = self.sqlite_path
        if path is not None:
            return str(path)
        url = _database_url(self.database_url)
        hidden = {key: "***" for key in url.query if _SECRET.search(key)}
        return url.update_query_dict(hidden).render_as_string(hide_password=True)

    def state_paths(self) -> list[Path]:
        """What reconbot keeps and must never be written over by an export: the state home,
        the SQLite file with its journal files, the local file store and the work folder."""
        paths = [self.state_home, self.work_dir]
        if self.sqlite_path is not None:
            paths += [Path(f"{self.sqlite_path}{end}") for end in ("", "-wal", "-shm", "-journal")]
        if self.blob_url.startswith("file://"):
            paths.append(Path(self.blob_url.removeprefix("file://")))
        return paths

    @property
    def sqlite_path(self) -> Path | None:
        """The SQLite database file (absolute), or None for another database or `:memory:`."""
        url = _database_url(self.database_url)
        if not url.drivername.startswith("sqlite") or url.database in (None, "", ":memory:"):
            return None
        return Path(url.database).expanduser().resolve()

    @field_validator("approvers", mode="before")
    @classmethod
    def _split_approvers(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(item.strip() for item in value.split(",") if item.strip())
        return value

    @field_validator("policy_path", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        """`RECONBOT_POLICY=` (empty) means no policy file: the built-in defaults."""
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator(
        "approval_ttl",
        "cache_max_age",
        "claim_lease",
        "expiry_sweep",
        "bedrock_timeout",
        "worker_heartbeat",
        "worker_stalled_after",
        mode="before",
    )
    @classmethod
    def _duration(cls, value: object) -> object:
        if isinstance(value, str | int | float):
            return parse_duration(value)
        return value

    def missing_for_slack(self, *, socket_mode: bool) -> list[str]:
        """The settings the bot still needs for the given mode, each with what it is."""
        missing = []
        if not self.slack_bot_token:
            missing.append("SLACK_BOT_TOKEN (the bot token, xoxb-…, from OAuth & Permissions)")
        if socket_mode and not self.slack_app_token:
            missing.append(
                "SLACK_APP_TOKEN (an app-level token, xapp-…, with connections:write, "
                "from Basic Information)"
            )
        if not socket_mode and not self.slack_signing_secret:
            missing.append("SLACK_SIGNING_SECRET (from Basic Information > App Credentials)")
        return missing

    @property
    def uses_job_queue(self) -> bool:
        """Whether work goes through the PostgreSQL job queue (web processes enqueue, workers
        run): `RECONBOT_QUEUE=postgres`, or `auto` on a PostgreSQL database."""
        if self.queue == "auto":
            return self.database_url.startswith("postgres")
        return self.queue == "postgres"

    @property
    def max_upload_bytes(self) -> int:
        """The upload limit in bytes."""
        return self.max_upload_mb << 20
