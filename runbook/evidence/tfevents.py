"""Scalars from a TensorBoard event file (`events.out.tfevents.*`), read without TensorBoard.

Lightning's default logger is the TensorBoard one whenever `tensorboard` is installed, so a job
with DeviceStatsMonitor writes its memory series there rather than to a metrics.csv. The file is
a TFRecord stream: each record an 8-byte little-endian length, a 4-byte CRC of it, the data, a
4-byte CRC of the data; the data an `Event` protocol buffer whose `summary` holds `(tag, value)`
pairs. Only what a scalar needs is decoded (wire format by hand: Event.step = 2, Event.summary =
5, Summary.value = 1, Value.tag = 1, Value.simple_value = 2, Value.tensor = 8 with TensorProto's
float_val = 5 and double_val = 6 for writers that log scalars as tensors).

The bytes are the job's: untrusted. Nothing here raises on them; a record cut by a killed job,
a length past the end or a malformed message ends the reading or skips the record. CRCs are not
checked (no CRC-32C in the standard library): a record that does not decode is skipped, and the
lengths are bounded by what was read. The pure part works on bytes; `read` walks a file, reading
small records only (scalar events are ~100 bytes; images and graphs are skipped by their length).
"""

from __future__ import annotations

import io
import os
import stat
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

NAME_PREFIX = "events.out.tfevents."
MAX_RECORD = 64 << 10  # a scalar event is ~100 bytes; bigger records (images, graphs) are skipped
MAX_RECORDS = 2_000_000  # records looked at in one file
MAX_READ = 64 << 20  # bytes of record data decoded in one file

Scalar = tuple[int, str, float]  # (step, tag, value)


def _varint(b: bytes, i: int) -> tuple[int, int]:
    """The varint at b[i:], and where the next field starts; IndexError/ValueError if cut."""
    shift = result = 0
    while True:
        byte = b[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _fields(b: bytes) -> Iterator[tuple[int, int, object]]:
    """(field number, wire type, value) of a protobuf message: ints for varints, bytes for
    length-delimited and fixed fields. Stops (ValueError) at anything malformed."""
    i, n = 0, len(b)
    while i < n:
        key, i = _varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(b, i)
            yield field, wire, value
        elif wire == 1:
            if i + 8 > n:
                raise ValueError("cut fixed64")
            yield field, wire, b[i : i + 8]
            i += 8
        elif wire == 2:
            size, i = _varint(b, i)
            if i + size > n:
                raise ValueError("cut length-delimited field")
            yield field, wire, b[i : i + size]
            i += size
        elif wire == 5:
            if i + 4 > n:
                raise ValueError("cut fixed32")
            yield field, wire, b[i : i + 4]
            i += 4
        else:
            raise ValueError(f"wire type {wire}")


def _tensor_scalar(b: bytes) -> float | None:
    """A TensorProto's single float or double (tensor-style scalars)."""
    for field, wire, v in _fields(b):
        if not isinstance(v, bytes):
            continue
        if field == 5 and wire == 5:
            return struct.unpack("<f", v)[0]
        if field == 5 and wire == 2 and len(v) >= 4:  # packed floats
            return struct.unpack("<f", v[:4])[0]
        if field == 6 and wire == 1:
            return struct.unpack("<d", v)[0]
        if field == 6 and wire == 2 and len(v) >= 8:  # packed doubles
            return struct.unpack("<d", v[:8])[0]
        if field == 4 and wire == 2 and len(v) == 4:  # tensor_content of one float
            return struct.unpack("<f", v)[0]
    return None


def event_scalars(data: bytes, want: Callable[[str], bool]) -> list[Scalar]:
    """The scalars of one Event record whose tag `want` accepts; [] for anything else."""
    step = 0
    values: list[tuple[str, float]] = []
    try:
        for field, wire, v in _fields(data):
            if field == 2 and wire == 0 and isinstance(v, int):
                step = v - (1 << 64) if v >= 1 << 63 else v
            elif field == 5 and wire == 2 and isinstance(v, bytes):
                for f2, w2, value in _fields(v):
                    if f2 == 1 and w2 == 2 and isinstance(value, bytes):
                        got = _value(value, want)
                        if got is not None:
                            values.append(got)
    except (ValueError, IndexError, struct.error):
        return []
    return [(step, tag, x) for tag, x in values]


def _value(b: bytes, want: Callable[[str], bool]) -> tuple[str, float] | None:
    tag, number = None, None
    for field, wire, v in _fields(b):
        if field == 1 and wire == 2 and isinstance(v, bytes):
            tag = v.decode("utf-8", "replace")
            if not want(tag):
                return None
        elif field == 2 and wire == 5 and isinstance(v, bytes):
            number = struct.unpack("<f", v)[0]
        elif field == 8 and wire == 2 and isinstance(v, bytes):
            number = _tensor_scalar(v)
    return (tag, number) if tag is not None and number is not None else None


def _records(f: BinaryIO) -> Iterator[bytes]:
    """The data of each record small enough to be a scalar event, from a binary stream, within
    MAX_RECORDS records and MAX_READ bytes; larger records are skipped by their length. A record
    cut at the end (a killed job) ends it; the records before it are kept."""
    read_bytes = 0
    try:
        for _ in range(MAX_RECORDS):
            head = f.read(12)
            if len(head) < 12:
                return
            (length,) = struct.unpack("<Q", head[:8])
            if length > MAX_RECORD:
                f.seek(length + 4, os.SEEK_CUR)
                continue
            body = f.read(length + 4)
            if len(body) < length + 4 or read_bytes > MAX_READ:
                return
            read_bytes += length
            yield body[:length]
    except (OSError, OverflowError, ValueError):
        return


def scalars(data: bytes, want: Callable[[str], bool]) -> list[Scalar]:
    """Every wanted scalar of an event file's bytes, in file order."""
    return [s for body in _records(io.BytesIO(data)) for s in event_scalars(body, want)]


def read(path: str | Path, want: Callable[[str], bool]) -> list[Scalar]:
    """`scalars` of a file, reading only the records small enough to be scalars. A link or
    anything but a regular file reads as empty; so does a file that cannot be read."""
    from runbook.jobfiles import owner_read  # here: the parser itself stays free of runbook

    try:
        fd = owner_read.open_checked(path)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as f:
        try:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return []
        except OSError:
            return []
        return [s for body in _records(f) for s in event_scalars(body, want)]
