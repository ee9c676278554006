"""The one error tree of reconbot.

Every error a person can cause or meet is a `ReconbotError`; its `str()` is a message written for
people (it names the file and, where it helps, the row) and never contains cell values beyond
what the uploader already sees in their own file. Code that shows errors to users catches
`ReconbotError`; anything else is a bug and is logged, not shown.

    ReconbotError
    ├── InputFileError            an uploaded file cannot be read as a CSV export
    │   ├── FileTooLargeError       over the upload limit
    │   ├── EmptyFileError          no bytes, or only blank lines
    │   ├── NotCsvError             binary content, or no delimiter-separated structure
    │   ├── EncodingError           bytes that no supported encoding decodes
    │   ├── HeaderOnlyError         a header and no data rows
    │   ├── MissingHeaderError      the first row holds data, not column names
    │   ├── DuplicateHeaderError    two columns with the same name
    │   ├── RaggedRowsError         a row with more or fewer cells than the header
    │   ├── UnclosedQuoteError      a quote opened in a row and never closed
    │   ├── CellTooLargeError       a single cell over the size limit
    │   └── DownloadError           the chat service would not hand over the file's bytes
    ├── MappingError              a mapping that cannot be used as given
    │   └── UnknownColumnError      the mapping names a column the file does not have
    ├── ApprovalRefusedError           a decision that the guard refuses; carries a reason code
    ├── WorkflowError             a request the investigation cannot take in its state
    │   ├── UnknownInvestigationError    no investigation has that id
    │   └── InputChangedError       a blob's bytes differ from the digest they were stored under
    ├── MalformedRequestError     a click or form that does not carry what reconbot issued
    ├── LedgerError               the rows read do not add up to the records of a file: an
    │                             internal failure; nothing is reported rather than a wrong result
    ├── ModelError                the language model could not take its turn; nothing was lost
    │   ├── ModelBusyError          throttled, still after retries with backoff
    │   └── ModelUnavailableError   a timeout, no route, or a refusal of the request
    ├── StorageError              the file store (disk or S3) could not be reached or refused a
    │                             read or write; says so in words with a log reference
    ├── DatabaseError             the state database cannot be used as configured
    │   ├── DatabaseUnavailableError  it could not be reached (a server down, a wrong address)
    │   └── NoDatabaseError           a command that reads cases found no database where they
    │                                 are kept (it never creates an empty one)
    ├── CommandLineError          a path named on the command line: a file that is not there,
    │                             an output that would overwrite something
    └── ConfigurationError        settings that cannot work (a bad URL, a missing secret)
        └── PolicyError             the policy file (RECONBOT_POLICY) cannot be used; names the
                                    file and, where the problem is one key's, the key
"""

from __future__ import annotations

from typing import Any


class ReconbotError(Exception):
    """Base of every error reconbot reports to a person; `str()` is the user-facing message."""


class InputFileError(ReconbotError):
    """An uploaded file cannot be read; carries the file's name and, where known, a data row."""

    def __init__(self, message: str, *, file_name: str, row: int | None = None) -> None:
        self.file_name = file_name
        self.row = row
        where = f"{file_name}" if row is None else f"{file_name}, row {row}"
        super().__init__(f"{where}: {message}")


class FileTooLargeError(InputFileError):
    """The file is bigger than the configured upload limit."""


class EmptyFileError(InputFileError):
    """The file has no content at all, or only blank lines."""


class NotCsvError(InputFileError):
    """The file is binary (a spreadsheet, an image, a PDF) or has no CSV structure."""


class EncodingError(InputFileError):
    """The file's bytes are not text in any encoding reconbot reads."""


class HeaderOnlyError(InputFileError):
    """The file has a header row but no data rows."""


class MissingHeaderError(InputFileError):
    """The first row looks like data (numbers, dates) rather than column names."""


class UnclosedQuoteError(InputFileError):
    """A quoted cell starts in some row and its closing quote never comes."""


class DuplicateHeaderError(InputFileError):
    """Two columns share a name, so a mapping to that name would be ambiguous."""


class RaggedRowsError(InputFileError):
    """A data row has a different number of cells than the header."""


class CellTooLargeError(InputFileError):
    """One cell is larger than the limit; usually a broken quote swallowing the file."""


class DownloadError(InputFileError):
    """The file could not be fetched: a sign-in page instead of the file, a foreign host."""


class MalformedRequestError(ReconbotError):
    """A button value or form that does not parse as one reconbot issued (tampered or stale)."""


class LedgerError(ReconbotError):
    """The rows of a file do not add up: every data record must end in exactly one ledger bucket.

    Raised instead of reporting when the engine's rows differ from the records the ingest
    reader counted, or when a row falls in no bucket. It is an internal error (exit 1): the
    input may be fine, but reconbot will not present a result it cannot account for.
    """


class ModelError(ReconbotError):
    """The model could not take its turn; the investigation stays where it was, resumable."""


class ModelBusyError(ModelError):
    """The model service throttled the request, even after retries with backoff."""


class ModelUnavailableError(ModelError):
    """The model service timed out, could not be reached, or refused the request."""


class StorageError(ReconbotError):
    """The file store could not be reached, or refused to store or hand back a file.

    `str()` says what failed in words and gives a reference to the log line that holds the
    details (the store's error, bucket and key); never an endpoint, a bucket or a key itself.
    What was saved before stays saved: trying again later is safe.
    """


class StorageUnavailableError(StorageError):
    """The file store could not be reached or was busy (a timeout, a dropped connection, a 5xx
    or a throttle), even after its own retries: a passing condition, so the work that met it
    is retried later by the job queue instead of asking the person to upload again."""


class DatabaseError(ReconbotError):
    """The state database cannot be used as configured; `str()` says where it was looked for."""


class DatabaseUnavailableError(DatabaseError):
    """The database server could not be reached or refused the connection."""


class NoDatabaseError(DatabaseError):
    """No database exists where the cases are kept; reading commands never create one."""


class CommandLineError(ReconbotError):
    """A path named on the command line cannot be used: missing, a folder, or in the way."""


class MappingError(ReconbotError):
    """A mapping that cannot be applied as given."""


class UnknownColumnError(MappingError):
    """The mapping names a column that the file does not have."""


class ApprovalRefusedError(ReconbotError):
    """The guard refused a decision; `reason` is a stable code (`RefusalReason`), `str()` says why.

    Refusals are expected outcomes, not failures: they are recorded in the audit log and shown
    to the person who clicked, in words.
    """

    def __init__(self, reason: str, message: str, *, state: Any = None) -> None:
        self.reason = reason
        self.state = state
        """The pause as the guard saw it (a `PauseState`), or None for an unknown one: lets a
        caller show the refusal without reading the pause again."""
        super().__init__(message)


class WorkflowError(ReconbotError):
    """A request that the investigation cannot take in its present state."""


class UnknownInvestigationError(WorkflowError):
    """No investigation has the given id."""


class InputChangedError(WorkflowError):
    """Stored bytes no longer match the digest they were approved under."""


class PolicyProposalError(ReconbotError):
    """A proposed change to a channel's policy that cannot be made: an unknown rule, a value
    that does not read, rules a policy could not hold, or a change that changes nothing.

    Carries the rule (`key`) when the problem is one rule's; `str()` reads `KEY: what is
    wrong`."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        self.key = key
        super().__init__(message if key is None else f"{key}: {message}")


class PolicyConflictError(WorkflowError):
    """A version put in force in a channel whose policy another decision changed meanwhile
    (two changes approved at once): the later one is refused, never both applied."""


class ConfigurationError(ReconbotError):
    """A setting that cannot work; the message names the setting and what it expects."""


class PolicyError(ConfigurationError):
    """A policy file that cannot be used: unreadable, not TOML, an unknown key, a wrong value.

    Carries the file (`source`) and, when the problem is one key's, that `key`; `str()` reads
    `policy file FILE: KEY: what is wrong`.
    """

    def __init__(self, message: str, *, source: str, key: str | None = None) -> None:
        self.source = source
        self.key = key
        where = f"policy file {source}" if key is None else f"policy file {source}: {key}"
        super().__init__(f"{where}: {message}")
