"""What every batch API client does, and the values it answers with.

A batch client never raises for a failure on the wire or a refusal by the provider: each
call returns a `BatchFailure` (one line, scrubbed of keys) the caller decides on. A sample's
request goes in under a `custom_id` made from its id (a digest: providers accept only short
ids of letters, digits, `-` and `_`), so answers find their samples in any order.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import urllib.parse
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from visioneval.core.idset import IdValues
from visioneval.core.records import Request, Response
from visioneval.core.store import WriteError

if TYPE_CHECKING:
    from visioneval.backends.http import HttpBackend

BATCH_DISCOUNT = Decimal("0.5")
"""What a batch request costs against the same request sent alone: half, at OpenAI (Batch
API guide: "50% cost discount") and Anthropic (Message Batches: "reducing costs by 50%")."""


@dataclass(frozen=True)
class BatchFailure:
    """A call that did not work. `transient`: asking again later may work (a dropped
    connection, HTTP 429 or 5xx); else it will not (a refused key, no batch API there)."""

    message: str
    transient: bool = False


@dataclass(frozen=True)
class BatchLimits:
    """How much one batch may hold: requests and bytes (the provider's published limits)."""

    max_requests: int
    max_bytes: int


@dataclass(frozen=True)
class BatchState:
    """A batch as its provider describes it when polled. `ended`: no answer will change any
    more (finished, failed, expired or cancelled); `status` is the provider's own word."""

    batch_id: str
    status: str
    ended: bool
    total: int | None = None
    answered: int | None = None
    failed: int | None = None
    detail: str | None = None
    files: tuple[str, ...] = field(default=())


class BatchAnswers:
    """What an ended batch answered: each custom_id's Response (an error Response for a
    request the provider answered with an error, or that expired, or whose line could not
    be read). A batch holds up to 100,000 answers: each is written to a file as it is read
    (one JSON line, in `folder`: the run's own, not a memory-backed /tmp) and found again
    through a sorted index of 16-byte digests of the custom ids and the lines' offsets, 24
    bytes an answer in memory. The file has no name (it goes with the process, or
    `close`). A custom_id answered more than once (a success in the output file and an
    error in the error file) has one answer: its first success, else its first answer; the
    requests whose answers disagreed are counted in `conflicts`, for the caller to say."""

    def __init__(self, folder: Path | None = None):
        self._folder = folder
        try:
            self._file = tempfile.TemporaryFile(dir=folder)  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise WriteError(folder or Path(tempfile.gettempdir()), exc) from None
        self._offsets = IdValues("q")  # each custom_id's line in the file
        self._size = 0
        self.conflicts = 0  # requests looked up whose answers disagreed

    def add(self, custom: str, response: Response) -> None:
        line = response.model_dump_json().encode() + b"\n"
        try:
            self._file.write(line)
        except OSError as exc:
            raise WriteError(self._folder or Path(tempfile.gettempdir()), exc) from None
        self._offsets.add(custom, self._size)
        self._size += len(line)

    def __len__(self) -> int:
        return len(self._offsets)

    def get(self, custom: str) -> Response | None:
        """The request's answer: its first success, else its first answer; None without
        one. Answers that disagree (a success and an error, two different texts) are
        counted in `conflicts`."""
        offsets = self._offsets.get_all(custom)
        if not offsets:
            return None
        found = [self._read(int(offset)) for offset in offsets]
        if len({(r.text, r.error) for r in found}) > 1:
            self.conflicts += 1
        return next((r for r in found if r.ok), found[0])

    def _read(self, offset: int) -> Response:
        self._file.seek(offset)
        line = self._file.readline()
        self._file.seek(0, os.SEEK_END)  # where the next answer goes
        return Response.model_validate_json(line)

    def close(self) -> None:
        self._file.close()


def custom_id(batch_key: str, sample_id: str) -> str:
    """The id a sample's request carries in a batch: the batch's own key (run.json's
    entry) and a digest of the sample id, 51 characters of [a-z0-9-] (Anthropic allows
    64). An answer is taken only under its own batch's key, so a batch of someone else's
    taken up by mistake gives no answer to this run."""
    return f"{batch_key}-v{hashlib.blake2b(sample_id.encode(), digest_size=16).hexdigest()}"


B = TypeVar("B", bound="HttpBackend")


class BatchClient(ABC, Generic[B]):
    """One provider's batch API on the server, key and limits of `backend` (that
    provider's own backend). `provider` names its protocol in run.json; `home` is the
    provider's own host, where lines name the provider."""

    provider: str = "batch"
    provider_name: str = "the provider"
    home: str = ""
    limits: BatchLimits

    def __init__(self, backend: B):
        self.backend = backend

    @property
    def base_url(self) -> str:
        """The server the batches go to."""
        return self.backend.base_url or ""

    @property
    def destination(self) -> str:
        """Where the batches go, as lines say it: the provider (OpenAI, Anthropic) on its
        own host, else the server's host and port (a server of one's own that speaks the
        provider's batch API is not the provider)."""
        parts = urllib.parse.urlsplit(self.base_url)
        host = (parts.hostname or "").lower()
        if self.home and (host == self.home or host.endswith("." + self.home)):
            return self.provider_name
        return parts.netloc.rpartition("@")[2] or self.base_url

    @abstractmethod
    def encode(self, custom: str, request: Request) -> bytes:
        """One request as the batch holds it (a JSONL line, or an element of a list)."""

    @abstractmethod
    async def submit(self, lines: list[bytes], tag: str) -> str | BatchFailure:
        """Create a batch of `lines`; its id. `tag` marks it so `find` can tell it again."""

    @abstractmethod
    async def find(self, tag: str, requests: int, after: float) -> str | None | BatchFailure:
        """The id of a batch created with `tag` (holding `requests`, created after the Unix
        time `after`), if the provider has one: what a resume asks about a batch whose
        creation was not recorded (the process ended in between)."""

    @abstractmethod
    async def poll(self, batch_id: str) -> BatchState | BatchFailure:
        """The batch's state now."""

    @abstractmethod
    async def results(self, state: BatchState, folder: Path | None = None
                      ) -> BatchAnswers | BatchFailure:
        """The answers of an ended batch, read line by line into a `BatchAnswers` kept in
        `folder` (None: the system's temporary folder)."""


PROVIDER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.=-]{0,199}")
"""What a batch or file id from a provider may be: OpenAI's are `batch_` and `file-` and an
alphanumeric tail, Anthropic's `msgbatch_` and one ("the format and length of IDs may
change over time", its API reference says), and OpenAI-compatible servers choose their own.
So the check is the alphabet, not the prefix: letters and digits first, then also `_`, `-`,
`.` and `=`; never `/`, `%`, a space or a lone `..`, so an id is one path segment of the
endpoint it names and never reaches another."""


def checked_id(value: object, what: str) -> str | BatchFailure:
    """`value` if it is a provider id (`PROVIDER_ID`), else a failure of one line that
    will not pass by asking again."""
    if isinstance(value, str) and PROVIDER_ID.fullmatch(value):
        return value
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return BatchFailure(f"the server gave {shown} as a {what} id, which is not one (letters, "
                        "digits, '_', '-', '.', '='): it is used in no URL")


def segment(provider_id: str) -> str:
    """A provider id as one path segment of a URL (escaped, though checked already)."""
    return urllib.parse.quote(provider_id, safe="")


def error_answer(message: str) -> Response:
    return Response(error=message)
