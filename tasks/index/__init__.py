"""Index: read a corpus, chunk it, enrich each chunk (facet values, effective dates, version markers), embed it,
and write the LanceDB table incrementally.

Reads: the corpus (JSONL, or a folder of Markdown with YAML front matter), the config's facets and chunking.
Writes: the LanceDB table at `index_uri` (a new version, tagged by the run that published it) and its export,
chunks.parquet. Later stages read the index only through `store.Index` (search, facet values, the values the
lexicon takes: less the ordinary words of `ordinary`, plain words).
Entry points: `stage.build_index`, `stage.export_parquet`.
"""
