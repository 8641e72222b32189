"""Publish: a run's staging folder becomes the live publication whole or not at all. `run.Run` stages the
outputs of the stages that ran, carries the others over from the live publication, runs the quality gate
(`gate`), writes the report (`report`) and switches the pointer (`root`); `root` also holds the publish lock,
retention (prune) and rollback.

Reads: the staging folder, the live publication (its manifest, gate figures, chunks, templates and cache), the
labeled sets of the config.
Writes: `runs/<run id>/` (the files of `schemas.publication`), the pointer `CURRENT`, `rejected/` for a run the
gate stopped.
"""
