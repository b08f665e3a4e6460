"""The output side: Parquet exports with dataset cards, Hub publishing, the audit report and build diffs."""
