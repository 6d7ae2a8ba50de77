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

import json
import os
import zipfile
from collections.abc import Iterator
from typing import Literal, cast

from ..._errors import UserInputError
from ..._io import read_text
from ._base import starts_with_bytes

ZIP_MAGIC = b"PK\x03\x04"
_ZSTD = 93  # the zip compression method number of Zstandard
_ATTACHMENT = "attachment://"
#: Sample fields the importer never reads: the event transcript can be most of a log's size.
_SKIP_FIELDS = {"events", "events_data", "store"}
Reader = Literal["auto", "inspect", "builtin"]


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


def read_log(path: str | os.PathLike, *, reader: Reader = "auto") -> tuple[dict, Iterator[tuple[str, object]]]:
    """``(header, samples)`` of an Inspect log; samples stream as ``(where, sample)`` plain JSON dicts.

    ``where`` names the sample inside the log (``samples/q1_epoch_1.json`` or ``$.samples[0]``).
    """
    if reader not in ("auto", "inspect", "builtin"):
        raise UserInputError(f"unknown Inspect log reader {reader!r}; choose auto, inspect or builtin")
    if reader == "inspect" or (reader == "auto" and has_inspect()):
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
    return _builtin(path)


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


def _builtin(path: str | os.PathLike) -> tuple[dict, Iterator[tuple[str, object]]]:
    file = str(path)
    if not is_zip(path):
        try:
            doc = json.loads(read_text(path))
        except (ValueError, RecursionError) as e:
            raise UserInputError(f"malformed JSON in the Inspect log ({_first_line(e)})", file=file) from e
        if not is_log_document(doc):
            raise UserInputError("not an Inspect AI log: no 'eval' object with task and model", file=file)
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
    header = _member(zf, head_name, file)
    if not is_log_document({**header, "status": header.get("status", "started")}):
        zf.close()
        raise UserInputError(f"{head_name} has no 'eval' object with task and model: not an Inspect AI log", file=file)

    def zip_samples() -> Iterator[tuple[str, object]]:
        with zf:
            for name in names:
                if name.startswith("samples/") and name.endswith(".json"):
                    yield name, _resolved(_member(zf, name, file))

    return header, zip_samples()


def _member(zf: zipfile.ZipFile, name: str, file: str) -> dict:
    info = zf.getinfo(name)
    try:
        if info.compress_type == _ZSTD and not _zipfile_has_zstd():
            data = _zstd(zf, info, file)
        else:
            data = zf.read(name)
        value = json.loads(data.decode("utf-8"))
    except (zipfile.BadZipFile, OSError, EOFError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise UserInputError(f"unreadable member {name} ({_first_line(e)})", file=file) from e
    if not isinstance(value, dict):
        raise UserInputError(f"{name} must hold a JSON object", file=file)
    return value


def _zipfile_has_zstd() -> bool:
    return getattr(zipfile, "ZIP_ZSTANDARD", None) == _ZSTD


def _zstd(zf: zipfile.ZipFile, info: zipfile.ZipInfo, file: str) -> bytes:
    """A Zstandard-compressed member, decoded with the ``zstandard`` package (Python < 3.14)."""
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
            return r.read()
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
