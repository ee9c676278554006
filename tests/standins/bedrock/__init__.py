"""A stand-in for the Amazon Bedrock Converse API, served over real HTTP on 127.0.0.1.

`BedrockStandIn` answers `converse` and `converse-stream` (AWS event-stream framing) from a
script of replies set per test, records every request exactly as Bedrock would receive it, and
can throttle, stall or fail on demand. Point `BedrockModel` at it with `endpoint_url`.
"""

from tests.standins.bedrock.server import (
    BedrockStandIn,
    Fault,
    Reply,
    Stall,
    text,
    tool_call,
)

__all__ = ["BedrockStandIn", "Fault", "Reply", "Stall", "text", "tool_call"]
