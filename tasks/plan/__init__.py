"""Plan: write a template plan for each recurring shape (the rule writer, or a model writer: vLLM or an
OpenAI-compatible endpoint), validate and check it, measure it against the index and decide its route (one
search, split, split plus the original), and build the constraint-keyed cache.

Reads: shapes.parquet and questions.parquet (this run's, or the live publication's for a plan run alone), the
index (`tasks.index.store.Index`), last night's templates (re-evaluated only where their signature changed).
Writes: templates.parquet, cache.parquet, config.json, lexicon.json and vocabulary.json into the staging folder.
Entry point: `stage.plan_shapes`.
"""
