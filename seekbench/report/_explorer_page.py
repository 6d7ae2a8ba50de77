"""Write the trace explorer: explorer.html (inline JS and CSS) and its data as sidecar scripts.

Browsers block ``fetch()`` of local files under ``file://`` (Chromium does), so the data is
not JSON fetched by the page: each sidecar file is a script that hands its data to the page
(``SEEKBENCH_DATA(kind, key, data)``), and the page loads them by adding ``<script>`` tags,
the index at once and each chunk of trace details only when a trace in it is opened or a
text search scans it. The page itself states this.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..analysis import ExplorerData
from ..traces import write_text

#: Trace details per sidecar chunk: about 1.5 MB for SeekBench-sized traces.
DEFAULT_CHUNK_SIZE = 200
DATA_DIR = "explorer-data"
PAGE = "explorer.html"


@dataclass
class ExplorerFiles:
    """What :func:`write_explorer` wrote."""

    html: Path
    data_dir: Path
    n_traces: int
    n_chunks: int

    @property
    def paths(self) -> list[Path]:
        """Every file written: the page, the index script and each chunk script."""
        return [self.html, self.data_dir / "index.js", *(chunk_path(self.data_dir, k) for k in range(self.n_chunks))]


def chunk_path(data_dir: Path, k: int) -> Path:
    """The sidecar script of chunk ``k``."""
    return data_dir / f"chunk-{k:05d}.js"


def _asset(name: str) -> str:
    return resources.files("seekbench.report").joinpath("assets", name).read_text(encoding="utf-8")


def _js_call(kind: str, key: int, data) -> str:
    body = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return f"SEEKBENCH_DATA({json.dumps(kind)},{key},{body});\n"


def render_explorer_page(title: str = "seekbench trace explorer") -> str:
    """The page shell with the explorer's CSS and JS inline (the data comes from the sidecar scripts)."""
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{_asset('explorer.css')}</style></head>"
        f"<body data-dir='{DATA_DIR}'><noscript>The trace explorer needs JavaScript.</noscript>"
        f"<div id='app'><p>Loading {DATA_DIR}/index.js ...</p></div>"
        f"<script>{_asset('explorer.js')}</script></body></html>\n"
    )


def write_explorer(
    data: ExplorerData,
    out_dir: str | os.PathLike,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    title: str = "seekbench trace explorer",
    labels: Mapping[str, str] | None = None,
) -> ExplorerFiles:
    """Write ``out_dir/explorer.html`` and ``out_dir/explorer-data/{index,chunk-NNNNN}.js`` (each atomically).

    Chunk files left from an earlier, larger explorer in the same folder are removed, so the
    folder never mixes two corpora. ``labels`` (``{full agent name: label}``) shows agents under
    their report labels, the full name on hover and in the agent filter.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    out = Path(out_dir)
    ddir = out / DATA_DIR
    n = len(data)
    n_chunks = (n + chunk_size - 1) // chunk_size
    meta = {**data.meta, "chunk_size": chunk_size, "n_chunks": n_chunks, "data_dir": DATA_DIR}
    if labels:
        meta["agent_labels"] = [labels.get(a, a) for a in meta.get("agents", [])]
    write_text(ddir / "index.js", _js_call("index", 0, {"meta": meta, "index": data.index}))
    chunk: list[dict] = []
    k = 0
    for detail in data.details():
        chunk.append(detail)
        if len(chunk) == chunk_size:
            write_text(chunk_path(ddir, k), _js_call("chunk", k, chunk))
            chunk, k = [], k + 1
    if chunk:
        write_text(chunk_path(ddir, k), _js_call("chunk", k, chunk))
        k += 1
    for stale in ddir.glob("chunk-*.js"):
        if stale.stem[6:].isdigit() and int(stale.stem[6:]) >= k:
            stale.unlink()
    page = out / PAGE
    write_text(page, render_explorer_page(title))
    return ExplorerFiles(page, ddir, n, k)
