"""The `planbake` command line: the contract scripts and schedulers rely on."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from datetime import date
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from schemas.config import ConfigError, load_config
from schemas.publication import NoPublication, current_manifest

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Precompute query-decomposition plans for RAG, offline, in batch.")
console = Console(stderr=True)
out_console = Console(width=max(Console().width, 140))

# Exit codes: what failed.
EXIT_INPUT, EXIT_BUSY, EXIT_NOT_PUBLISHED, EXIT_GATE, EXIT_INTERNAL = 2, 3, 4, 5, 1

ConfigOpt = Annotated[str | None, typer.Option("--config", help="Config YAML (default: data/configs/demo.yaml).")]
OutOpt = Annotated[Path, typer.Option("--out", help="Publication root.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
F = TypeVar("F", bound=Callable[..., Any])


def _emit(as_json: bool, doc: Any, human: Callable[[], None]) -> None:
    if as_json:
        sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")
    else:
        human()


def _errors(fn: F) -> F:
    """Turn known failures into one clear line and an exit code; never a traceback for bad input."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from tasks.corpus import CorpusError
        from tasks.publish import PublishBusy

        try:
            return fn(*args, **kwargs)
        except (ConfigError, CorpusError, ValueError) as exc:
            console.print(f"error: {exc}", markup=False)
            raise typer.Exit(EXIT_INPUT) from None
        except PublishBusy as exc:
            console.print(f"busy: {exc}", markup=False)
            raise typer.Exit(EXIT_BUSY) from None
        except (NoPublication, FileNotFoundError) as exc:
            console.print(f"error: {exc}", markup=False)
            raise typer.Exit(EXIT_NOT_PUBLISHED) from None

    return wrapper  # type: ignore[return-value]


def _quiet_libraries() -> None:
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    for name in ("sentence_transformers", "transformers", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except Exception:  # noqa: BLE001 - optional cosmetics
        pass


@app.command()
@_errors
def index(
    corpus: Annotated[str | None, typer.Option("--corpus", help="JSONL file or Markdown folder.")] = None,
    config: ConfigOpt = None,
    out: OutOpt = Path("data/out"),
    run_date: Annotated[str | None, typer.Option("--run-date", help="Date deciding current versions.")] = None,
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for a running publisher.")] = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Build or update the index and publish it.

    Example: planbake index --corpus data/demo/corpus.jsonl
    """
    _quiet_libraries()
    load_config(config)
    from flows.index import index_flow

    res = index_flow(corpus=corpus, config=config, out=str(out),
                     run_date=date.fromisoformat(run_date) if run_date else None, wait_s=wait, quiet=as_json)
    doc = {k: res[k] for k in ("chunks", "embedded", "updated", "deleted", "version", "run_id", "publication")}
    _emit(as_json, doc, lambda: out_console.print(
        f"indexed {doc['chunks']} chunks: {doc['embedded']} embedded, {doc['updated']} updated, "
        f"{doc['deleted']} deleted; table version {doc['version']}\npublished {doc['publication']}"))


def _parse_filters(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"--filter {item!r}: expected FACET=VALUE, e.g. --filter office=Berlin")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


@app.command()
@_errors
def search(
    question: Annotated[str, typer.Argument(help="The search text.")],
    k: Annotated[int, typer.Option("-k", help="Number of hits.")] = 5,
    filter_: Annotated[list[str] | None, typer.Option("--filter", help="FACET=VALUE exact filter.")] = None,
    all_versions: Annotated[bool, typer.Option("--all-versions", help="Include superseded versions.")] = False,
    config: ConfigOpt = None,
    out: OutOpt = Path("data/out"),
    as_json: JsonOpt = False,
) -> None:
    """Search the published index by cosine similarity, with exact facet prefilters.

    Example: planbake search "parental leave for the second parent, Amsterdam office" --filter office=Amsterdam
    """
    _quiet_libraries()
    cfg = load_config(config)
    filters = _parse_filters(filter_ or [])
    unknown = set(filters) - set(cfg.facet_names)
    if unknown:
        raise ValueError(f"--filter: unknown facet {sorted(unknown)}; facets are {cfg.facet_names}")
    from tasks.store import Index

    idx = current_manifest(out)["index"]
    hits = Index(idx["uri"], cfg, idx["version"]).search(question, k, filters, all_versions)
    doc = {"question": question, "filters": filters, "hits": [h.to_json() for h in hits]}

    def human() -> None:
        table = Table("rank", "id", "score", *cfg.facet_names, "current", "text")
        table.columns[-1].no_wrap = True
        for n, h in enumerate(hits, 1):
            table.add_row(str(n), h.id, f"{h.score:.3f}", *[str(h.facets[f]) for f in cfg.facet_names],
                          "yes" if h.is_current else "no", h.text[:60] + ("…" if len(h.text) > 60 else ""))
        out_console.print(table)

    _emit(as_json, doc, human)


def main() -> None:
    app()
