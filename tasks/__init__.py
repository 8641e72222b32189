"""The pipeline's work, one subpackage per stage, each importing only the stages before it
(`tests/test_contracts.py` holds the order: progress, embed, scale, ingest, index, starter, mine, executor, plan,
evaluate, publish). The flows in `flows/` only call them in order.

A corpus document to a chunk row: `flows.stages.index_stage` -> `index.stage.build_index` (`index.corpus` reads
and chunks it, `index.enrich` adds facet values and version markers, `index.store` embeds and writes the LanceDB
table) -> `index.stage.export_parquet` (chunks.parquet).

A log row to a cache entry: `flows.stages.mine_logs` -> `ingest.stage.ingest` (the row in the DuckDB view
`rows`, or in `quarantine`) -> `mine.stage.mine` (its skeleton, value set and shape; questions.parquet,
shapes.parquet) -> `flows.stages.plan_stage` -> `plan.stage.plan_shapes` (its shape's template, checked, routed:
templates.parquet, and the cache entries of its shape's value sets: cache.parquet) -> `publish.run.Run.finish`
(the quality gate, then the pointer switches).

`starter` makes the config `planbake init` writes, from a sample of the corpus (`index.corpus`) and a survey of
the logs (`ingest.survey`).

`executor` runs a plan against the index (the plan stage's route measure and `evaluate` use it); `evaluate`
scores plans on a labeled set (`planbake eval`, the quality gate).
"""
