"""Mine: from the rows ingest read to shapes. Scrub and skeletonise each distinct question (in DuckDB SQL where
that gives the same answer, else in Python), merge near-identical skeletons by their vectors, keep the shapes
several users asked, classify them, and resolve follow-ups against the same user's previous question.

Reads: ingest's tables (`tasks.ingest.tables`), the index (`tasks.index.store.Index`: facet values, plain words,
titles, best scores), last night's merge (`merge.npz` of the live publication) and the memos under `<root>/vectors`.
Writes: shapes.parquet, questions.parquet, quarantine.parquet, merge.npz, plain_words.json and names.json into the
run's staging folder, and the memos for the next night. Its DuckDB tables are declared in `tables`.
Entry point: `stage.mine`.
"""
