"""Canonical JSON and the digests that say what an approval covers (docs/design.md §3).

Canonical JSON is UTF-8, keys sorted, no insignificant whitespace, and no floats: a float would
make the same mapping hash differently on two machines, so one is an error here.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

from agent.data.schema import Mapping, Role

DIGEST_PREFIX = "sha256:"


def _no_floats(value: Any) -> None:
    if isinstance(value, float):
        raise TypeError("canonical JSON holds no floats; write amounts as strings or integers")
    if isinstance(value, dict):
        for item in value.values():
            _no_floats(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _no_floats(item)


def canonical_json(value: Any) -> bytes:
    """The canonical bytes of a JSON-ready value: sorted keys, compact, UTF-8, no floats."""
    _no_floats(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(value: Any) -> str:
    """`sha256:` and the hex digest of the canonical JSON of `value`."""
    return DIGEST_PREFIX + hashlib.sha256(canonical_json(value)).hexdigest()


def input_identity(file_digests: dict[Role, str]) -> str:
    """The identity of a case's inputs: which bytes play which role."""
    return digest({role.value: file_digests[role] for role in Role})


def mapping_digest(mapping: Mapping) -> str:
    """The digest of a mapping: columns per role and the reading options that change results."""
    return digest(mapping.canonical())


def policy_change_identity(
    *,
    pause_id: str,
    investigation_id: str,
    channel: str,
    policy_version: str,
    proposed_version: str,
) -> str:
    """The identity a policy change's approval is issued for: putting `proposed_version` in
    force in `channel` in place of `policy_version`, through this request."""
    return digest(
        {
            "pause_id": pause_id,
            "investigation_id": investigation_id,
            "operation": "policy_change",
            "channel": channel,
            "policy_version": policy_version,
            "proposed_version": proposed_version,
        }
    )


def authorization_identity(
    *,
    pause_id: str,
    investigation_id: str,
    revision: int,
    input_identity: str,
    mapping_digest: str | None,
    policy_version: str,
) -> str:
    """The identity an approval is issued for: the operation on exactly these inputs and rules."""
    return digest(
        {
            "pause_id": pause_id,
            "investigation_id": investigation_id,
            "revision": revision,
            "operation": "reconcile",
            "input_identity": input_identity,
            "mapping_digest": mapping_digest,
            "policy_version": policy_version,
        }
    )


def new_id(prefix: str) -> str:
    """A short random id people can type: `INV-3F9A2C1B7E`."""
    return f"{prefix}-{secrets.token_hex(5).upper()}"
