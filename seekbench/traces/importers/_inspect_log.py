"""Reading Inspect AI eval logs: with ``inspect_ai`` when installed, else from the documented file layout.

A ``.eval`` log is a zip archive holding ``header.json`` (the ``EvalLog`` without its
samples: ``version``, ``status``, ``eval`` {task, model, eval_id, scorers, ...},
``results``, ``stats``), one ``samples/<id>_epoch_<n>.json`` per sample and epoch, and
``summaries.json`` / ``_journal/`` bookkeeping. A ``.json`` log is the whole ``EvalLog``
as one JSON document with a ``samples`` list. Large message texts may be stored once in
a sample's ``attachments`` and referenced as ``attachment://<hash>``; the built-in reader
resolves them. Recent Inspect versions compress zip members with Zstandard (method 93),
which Python's ``zipfile`` reads only from 3.14; on older Pythons the ``zstandard``
package, a requirement of seekbench there, decodes them.
"""

from __future__ import annotations

import os
import sys
import zipfile
import zlib
from collections.abc import Iterator
from typing import Literal, cast

from ..._errors import UserInputError
from ..._io import NonFiniteNumber, loads, nonfinite_error, read_text
from ..._limits import DEFAULT_LIMITS, ReadLimits, limit_error
from ._base import starts_with_bytes

ZIP_MAGIC = b"PK\x03\x04"
_ZSTD = 93  # the zip compression method number of Zstandard
_ATTACHMENT = "attachment://"
#: Bytes decompressed at a time: a member is counted as it inflates, never inflated whole first.
_CHUNK = 1 << 20
#: Sample fields the importer never reads: the event transcript can be most of a log's size.
_SKIP_FIELDS = {"events", "events_data", "store"}
Reader = Literal["auto", "inspect", "builtin"]
#: What inflating a damaged member raises (a bad CRC, truncated or corrupt data, an unknown method).
_ZIP_ERRORS = (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError)


def has_inspect() -> bool:
    """True when the ``inspect_ai`` package can be imported."""
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        return False
    return True


def is_zip(path: str | os.PathLike) -> bool:
    return starts_with_bytes(path, ZIP_MAGIC)


def is_eval_zip(path: str | os.PathLike) -> bool:
    """True for a zip archive laid out as an Inspect ``.eval`` log."""
    if not is_zip(path):
        return False
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError):
        return False
    return "header.json" in names or "_journal/start.json" in names or any(n.startswith("samples/") for n in names)


def is_log_document(obj: object) -> bool:
    """True for a parsed ``.json`` Inspect log (an ``EvalLog`` with its ``eval`` spec)."""
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("eval"), dict)
        and "task" in obj["eval"]
        and "model" in obj["eval"]
        and ("samples" in obj or "status" in obj)
    )


def read_log(
    path: str | os.PathLike, *, reader: Reader = "auto", limits: ReadLimits | None = None
) -> tuple[dict, Iterator[tuple[str, object]]]:
    """``(header, samples)`` of an Inspect log; samples stream as ``(where, sample)`` plain JSON dicts.

    ``where`` names the sample inside the log (``samples/q1_epoch_1.json`` or ``$.samples[0]``).
    A zip member decompressing to more than ``limits.member_bytes``, or a ``.json`` log of more than
    ``limits.record_bytes``, is a user error (:mod:`seekbench._limits`); the sizes are checked before
    ``inspect_ai`` reads the log, since it inflates members whole.
    """
    limits = limits or DEFAULT_LIMITS
    if reader not in ("auto", "inspect", "builtin"):
        raise UserInputError(f"unknown Inspect log reader {reader!r}; choose auto, inspect or builtin")
    if reader == "inspect" or (reader == "auto" and has_inspect()):
        _check_sizes(path, limits)
        if not has_inspect():
            raise UserInputError(
                "reading with inspect_ai needs the inspect_ai package: pip install 'seekbench[inspect]'", file=str(path)
            )
        try:
            return _with_inspect(path)
        except UserInputError:
            if reader == "inspect":
                raise
            # inspect_ai refuses logs its models do not validate (older or newer versions, hand-written
            # files); the documented layout may still hold the samples, and says why when it does not
    return _builtin(path, limits)


def _check_sizes(path: str | os.PathLike, limits: ReadLimits) -> None:
    """Every member of a ``.eval`` log inflated and counted (nothing kept), or the size of a ``.json``
    log checked, before a reader that holds them whole."""
    if not is_zip(path):
        if os.path.getsize(path) > limits.record_bytes:
            raise limit_error("record_bytes", limits, file=str(path))
        return
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        return  # the reader words it
    with zf:
        for info in zf.infolist():
            try:
                for _ in _member_chunks(zf, info, str(path), limits):
                    pass
            except _ZIP_ERRORS as e:
                raise UserInputError(f"unreadable member {info.filename} ({_first_line(e)})", file=str(path)) from e


def _with_inspect(path: str | os.PathLike) -> tuple[dict, Iterator[tuple[str, object]]]:
    from inspect_ai.log import read_eval_log, read_eval_log_samples

    try:
        header = read_eval_log(str(path), header_only=True).model_dump(mode="json", exclude={"samples"})
    except Exception as e:  # inspect_ai raises ValueError, KeyError, pydantic errors, zip errors
        raise UserInputError(f"inspect_ai cannot read this log ({_first_line(e)})", file=str(path)) from e

    zipped = is_zip(path)

    def samples() -> Iterator[tuple[str, dict]]:
        it = read_eval_log_samples(
            str(path), all_samples_required=False, resolve_attachments=True, exclude_fields=_SKIP_FIELDS
        )
        i = 0
        while True:
            try:
                s = next(it, None)
            except Exception as e:  # pydantic validation, zip and JSON errors from inside inspect_ai
                raise UserInputError(
                    f"inspect_ai cannot read sample {i + 1} of this log ({_first_line(e)})", file=str(path)
                ) from e
            if s is None:
                return
            where = f"samples/{s.id}_epoch_{s.epoch}.json" if zipped else f"$.samples[{i}]"
            yield where, s.model_dump(mode="json", exclude=_SKIP_FIELDS | {"attachments"})
            i += 1

    return header, samples()


def _builtin(path: str | os.PathLike, limits: ReadLimits) -> tuple[dict, Iterator[tuple[str, object]]]:
    file = str(path)
    if not is_zip(path):
        text = read_text(path, max_bytes=limits.record_bytes)
        try:
            doc = loads(text)
        except NonFiniteNumber as e:
            raise nonfinite_error(e, text, file=file, line=None) from e
        except (ValueError, RecursionError) as e:
            raise UserInputError(f"malformed JSON in the Inspect log ({_first_line(e)})", file=file) from e
        if not is_log_document(doc):
            raise UserInputError("not an Inspect AI log: no 'eval' object with task and model", file=file)
        doc = cast(dict, doc)
        samples = doc.get("samples") or []
        if not isinstance(samples, list):
            raise UserInputError("samples must be an array", file=file, path="$.samples")
        header = {k: v for k, v in doc.items() if k != "samples"}
        return header, ((f"$.samples[{i}]", _resolved(s)) for i, s in enumerate(samples))
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise UserInputError(f"unreadable zip archive ({_first_line(e)}); is the .eval log complete?", file=file) from e
    names = zf.namelist()
    head_name = "header.json" if "header.json" in names else "_journal/start.json"
    if head_name not in names:
        zf.close()
        raise UserInputError("zip archive without header.json: not an Inspect AI .eval log", file=file)
    header = _member(zf, head_name, file, limits)
    if not is_log_document({**header, "status": header.get("status", "started")}):
        zf.close()
        raise UserInputError(f"{head_name} has no 'eval' object with task and model: not an Inspect AI log", file=file)

    def zip_samples() -> Iterator[tuple[str, object]]:
        with zf:
            for name in names:
                if name.startswith("samples/") and name.endswith(".json"):
                    yield name, _resolved(_member(zf, name, file, limits))

    return header, zip_samples()


def _member(zf: zipfile.ZipFile, name: str, file: str, limits: ReadLimits) -> dict:
    info = zf.getinfo(name)
    text = ""
    try:
        data = bytearray()
        for chunk in _member_chunks(zf, info, file, limits):
            data += chunk
        text = data.decode("utf-8")
        del data
        value = loads(text)
    except NonFiniteNumber as e:
        err = nonfinite_error(e, text, file=file, line=None)
        raise UserInputError(f"member {name}: {err.message}", file=file, path=err.path) from e
    except UserInputError:  # a size limit, already worded for the user (it is a ValueError too)
        raise
    except (*_ZIP_ERRORS, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise UserInputError(f"unreadable member {name} ({_first_line(e)})", file=file) from e
    if not isinstance(value, dict):
        raise UserInputError(f"{name} must hold a JSON object", file=file)
    return value


def _zipfile_has_zstd() -> bool:
    """True where the standard library's zipfile reads Zstandard members, a chunk at a time (3.14). Not
    where a package added the method to an older zipfile: inspect_ai's addition inflates a whole member
    in one read, which no count can stop."""
    return sys.version_info >= (3, 14) and getattr(zipfile, "ZIP_ZSTANDARD", None) == _ZSTD


def _member_chunks(zf: zipfile.ZipFile, info: zipfile.ZipInfo, file: str, limits: ReadLimits) -> Iterator[bytes]:
    """A member's bytes as they inflate, a chunk at a time, or the ``member_bytes`` limit's error as soon as
    they pass it (whatever size the archive's directory declares: a bomb may declare any)."""
    cap, total = limits.member_bytes, 0
    if info.compress_type == _ZSTD and not _zipfile_has_zstd():
        chunks = _zstd(zf, info, file)
    else:
        chunks = _zip_chunks(zf, info)
    for chunk in chunks:
        total += len(chunk)
        if total > cap:
            raise limit_error("member_bytes", limits, file=file, what=f"zip member {info.filename}")
        yield chunk


def _zip_chunks(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    with zf.open(info) as fh:
        while chunk := fh.read(_CHUNK):
            yield chunk


def _zstd(zf: zipfile.ZipFile, info: zipfile.ZipInfo, file: str) -> Iterator[bytes]:
    """A Zstandard-compressed member, decoded a chunk at a time with the ``zstandard`` package
    (Python < 3.14)."""
    try:
        import zstandard
    except ImportError as e:
        raise UserInputError(
            "this .eval log is a zip archive compressed with Zstandard, and the zstandard package "
            "seekbench requires is missing: pip install zstandard",
            file=file,
        ) from e
    # read_log opens every archive from a path (zipfile.ZipFile(path)), so its filename is set
    with open(cast(str, zf.filename), "rb") as fh:
        fh.seek(info.header_offset)
        local = fh.read(30)
        if local[:4] != ZIP_MAGIC:
            raise UserInputError(f"damaged zip entry {info.filename}", file=file)
        skip = int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
        fh.seek(info.header_offset + 30 + skip)
        raw = fh.read(info.compress_size)
    try:  # Inspect may split a member into several frames: read across them
        with zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as r:
            while chunk := r.read(_CHUNK):
                yield chunk
    except zstandard.ZstdError as e:
        raise UserInputError(f"damaged Zstandard data in {info.filename} ({e})", file=file) from e


def _resolved(sample: object) -> object:
    """The sample with ``attachment://`` references in its messages and output replaced by their text."""
    if not isinstance(sample, dict):
        return sample  # the importer reports the wrong type with its position
    store = sample.get("attachments")
    out = {k: v for k, v in sample.items() if k not in _SKIP_FIELDS and k != "attachments"}
    if not isinstance(store, dict) or not store:
        return out

    def walk(v: object) -> object:
        if isinstance(v, str) and v.startswith(_ATTACHMENT):
            return store.get(v[len(_ATTACHMENT) :], v)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v

    for key in ("messages", "input", "output"):
        if key in out:
            out[key] = walk(out[key])
    return out


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else type(e).__name__
