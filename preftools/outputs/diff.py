"""What changed between two builds of the warehouse: every table and view, row by row, down to
the training pairs that appeared, vanished, flipped or moved between splits.

    python -m preftools.diff OLD NEW --out DIR [--no-progress]   (or `preftools diff`, `make diff OLD=... NEW=...`)

OLD and NEW are two warehouse files (two builds of two raw revisions, of two seeds, before and
after a change of a rule or a registry entry). Both are ATTACHed read-only to one in-memory DuckDB
(a notebook may hold either open meanwhile); DuckDB does the joins, on hashes. Written:

``DIR/diff.duckdb``, four tables:

- ``relations``: every table and view of the schemas ``main`` and ``audits`` in either file, one
  row each: ``relation`` (``schema.name``), ``in_old``, ``in_new``, ``key_columns`` (from the
  build's ``meta.relation_keys``, NEW's else OLD's: the key its ``checks`` test declares; NULL
  for none), ``n_old``, ``n_new``, ``n_identical``, ``n_moved``, ``n_added``, ``n_removed``,
  ``n_modified``, and ``columns_added`` / ``columns_dropped`` (in NEW only / in OLD only). Rows
  are compared on the columns both files have, except the provenance columns
  (:data:`PROVENANCE_COLUMNS`):

  - ``n_identical``: rows equal in every compared column, as multisets (a row present twice in
    OLD and once in NEW counts once); ``n_moved``: of those, rows whose provenance differs
    (upstream moved them to another file or row);
  - with a key, the other rows pair up by key: an OLD and a NEW row with the same key are one
    modified row, the rest are removed (OLD) or added (NEW). A key value that occurs more than
    once in OLD or in NEW (a key that is not unique: audit_helper's ``nonunique_pk``) cannot say
    which row became which: its rows that are not identical count as removed and added, never
    modified. Without a key (a view whose test declares none, or a key column missing from
    either file) every such row is removed or added and ``n_modified`` is 0;
  - so ``n_identical + n_removed + n_modified = n_old`` and
    ``n_identical + n_added + n_modified = n_new`` on every relation (a relation in one file only
    has 0 rows in the other).

- ``column_changes``: ``relation``, ``column_name``, ``n_changed``: among the modified rows, how
  many differ in that column (NULL-safe: NULL and a value differ, two NULLs do not); columns
  that never differ are not listed.
- ``row_changes``: ``relation``, ``key`` (the key's values as a JSON object, e.g.
  ``{"pair_id":"..."}``), ``status`` (added / removed / modified), ``changed_columns`` (for a
  modified row). Relations with a key only (the others' rows are an ``EXCEPT ALL`` away); one
  row per added or removed row.
- ``pair_changes``: the pairs of ``main.preference_pairs``, matched across the files by
  (``dataset``, ``prompt``, the unordered two responses), not by ``pair_id`` (an id may change
  with a rule while the pair stays); the same pair repeated in a file is matched occurrence by
  occurrence. ``change`` is added, removed, flipped (chosen and rejected swapped),
  split_changed (between the training and the ``<dataset>_flagged`` split) or margin_changed,
  one row per pair and change, with ``prompt``, ``chosen``, ``rejected`` (NEW's orientation;
  OLD's for a removed pair), ``old_split``, ``new_split``, ``old_margin``, ``new_margin``,
  ``old_flags``, ``new_flags``, ``old_pair_id``, ``new_pair_id``.

``DIR/diff.md``: the summary a reviewer reads in a pull request (also printed): per dataset the
pairs added, removed, flipped and moved between splits, and the relations with most changes.
``preftools export --card-note DIR/diff.md`` puts it into the dataset cards of an export of NEW.

Values are compared as text (DuckDB's cast to VARCHAR), whole rows and texts by their md5, so
a column whose type changed (INTEGER to BIGINT) compares by value. ``DUCKDB_MEMORY_LIMIT``
and ``DUCKDB_THREADS`` apply as for dbt (else DuckDB's defaults); DuckDB spills to ``DIR``.

Errors are one line on stderr (which file, what to do) and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
from tqdm.auto import tqdm

from preftools import warehouse
from preftools.cli import EXIT_ERROR, os_error_message, run
from preftools.outputs.export import DBT_WORK_RELATION

SCHEMAS = ("main", "audits")
# Where a row came from, not what it says: a row that differs only here is identical (and moved).
PROVENANCE_COLUMNS = ("source_file", "source_row", "published_source_file", "published_source_row")
KEYS_TABLE = "meta.relation_keys"
BUILD_INFO_TABLE = "meta.warehouse_build_info"
PAIRS = ("main", "preference_pairs")
PAIR_CHANGES = ("added", "removed", "flipped", "split_changed", "margin_changed")
DIFF_DB, DIFF_MD = "diff.duckdb", "diff.md"
TOP_RELATIONS = 5
THEN = "run the diff again"
POINT = "give the .duckdb file of a build"

OUTPUT_SCHEMA = """
create table out.relations (
    relation varchar, in_old boolean, in_new boolean, key_columns varchar[],
    n_old bigint, n_new bigint, n_identical bigint, n_moved bigint,
    n_added bigint, n_removed bigint, n_modified bigint,
    columns_added varchar[], columns_dropped varchar[]);
create table out.column_changes (relation varchar, column_name varchar, n_changed bigint);
create table out.row_changes (relation varchar, key varchar, status varchar, changed_columns varchar[]);
"""


class DiffError(Exception):
    """A problem to report as one line."""


def q(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def sql_list(names: list[str]) -> str:
    return "[" + ", ".join("'" + n.replace("'", "''") + "'" for n in names) + "]::varchar[]"


@dataclass
class Relation:
    schema: str
    name: str
    old_columns: list[str]  # empty when not in OLD
    new_columns: list[str]

    @property
    def label(self) -> str:
        return f"{self.schema}.{self.name}"

    def source(self, side: str) -> str:
        return f"{side}.{q(self.schema)}.{q(self.name)}"


def row_hash(columns: list[str], alias: str = "") -> str:
    """md5 of the columns' values as text (NULL-safe: a struct's text spells NULL apart from 'NULL')."""
    if not columns:
        return "''"
    return "md5(cast(struct_pack(" + ", ".join(f"{q(c)} := {alias}{q(c)}" for c in columns) + ") as varchar))"


def key_json(key: list[str] | None) -> str:
    """The key's values as JSON text, each value as text (as every value is compared), so a key
    column whose type changed (INTEGER to BIGINT, to VARCHAR) still matches its rows."""
    if key is None:
        return "cast(null as varchar)"
    if not key:
        return "'{}'"  # a one-row relation: its one row is its key
    return "to_json(struct_pack(" + ", ".join(f"{q(c)} := cast({q(c)} as varchar)" for c in key) + "))::varchar"


# --------------------------------------------------------------------------------------------
# reading the two files


def list_relations(con) -> dict[str, Relation]:
    """The tables and views of SCHEMAS in either file (dbt's leftovers of a killed build aside)."""
    found: dict[str, Relation] = {}
    rows = con.execute(
        "select database_name, schema_name, table_name, column_name from duckdb_columns() "
        "where database_name in ('old', 'new') and schema_name in (select unnest(?)) and not internal "
        "order by schema_name, table_name, database_name, column_index",
        [list(SCHEMAS)],
    ).fetchall()
    for side, schema, name, column in rows:
        if DBT_WORK_RELATION.fullmatch(name):
            continue
        relation = found.setdefault(f"{schema}.{name}", Relation(schema, name, [], []))
        (relation.old_columns if side == "old" else relation.new_columns).append(column)
    return found


def has_table(con, side: str, qualified: str) -> bool:
    schema, name = qualified.split(".")
    return bool(con.execute(
        "select count(*) from duckdb_tables() where database_name = ? and schema_name = ? and table_name = ?",
        [side, schema, name],
    ).fetchone()[0])


def read_keys(con) -> dict[str, list[str]]:
    """relation -> key columns, from meta.relation_keys: NEW's entry, else OLD's."""
    keys: dict[str, list[str]] = {}
    for side in ("old", "new"):
        if has_table(con, side, KEYS_TABLE):
            for relation, columns in con.execute(f"select relation, key_columns from {side}.{KEYS_TABLE}").fetchall():
                keys[relation] = json.loads(columns)
    return keys


def revision(con, side: str) -> str:
    """What the build says of its raw data (meta.warehouse_build_info.raw_revisions), else "unknown"."""
    if not has_table(con, side, BUILD_INFO_TABLE):
        return "unknown"
    row = con.execute(f"select raw_revisions from {side}.{BUILD_INFO_TABLE} limit 1").fetchone()
    return str(row[0]) if row and row[0] else "unknown"


# --------------------------------------------------------------------------------------------
# one relation


def diff_relation(con, rel: Relation, key: list[str] | None) -> None:
    """Insert the relation's row of ``relations`` and its rows of ``row_changes`` and ``column_changes``."""
    # the columns compared: those of both files; a relation in one file only, or with no column in
    # common (every row then removed and added), each side its own
    shared = [c for c in rel.new_columns if c in rel.old_columns] if rel.old_columns and rel.new_columns \
        else rel.new_columns or rel.old_columns
    compared = [c for c in shared if c not in PROVENANCE_COLUMNS]
    provenance = [c for c in shared if c in PROVENANCE_COLUMNS]
    if key is not None and not all(c in compared for c in key):
        key = None  # a key column missing from either file: compared without a key
    keyed = key is not None
    sides = [side for side, columns in (("old", rel.old_columns), ("new", rel.new_columns)) if columns]
    for side in ("old", "new"):
        own = rel.old_columns if side == "old" else rel.new_columns
        if side in sides:
            hashed = compared if shared else [c for c in own if c not in PROVENANCE_COLUMNS]
            place = provenance if shared else [c for c in own if c in PROVENANCE_COLUMNS]
            con.execute(
                f"create or replace temp table h_{side} as select {key_json(key)} as k, {row_hash(hashed)} as h, "
                f"{row_hash(place) if place else 'cast(null as varchar)'} as p from {rel.source(side)}"
            )
        else:
            con.execute(f"create or replace temp table h_{side} (k varchar, h varchar, p varchar)")
    # Per key: a = OLD rows left once the identical ones are matched, b = NEW ones; k follows h
    # (the key's columns are compared columns), so counting by (k, h) counts by h.
    con.execute(f"""
        create or replace temp table per_key as
        with old_counts as (select k, h, count(*) as c from h_old group by all),
             new_counts as (select k, h, count(*) as c from h_new group by all),
             by_hash as (
                select coalesce(o.k, n.k) as k, coalesce(o.c, 0) as o, coalesce(n.c, 0) as n
                from old_counts o full join new_counts n on o.h = n.h),
             by_key as (
                select k, sum(o)::bigint as n_old, sum(n)::bigint as n_new, sum(least(o, n))::bigint as n_identical,
                       sum(o - least(o, n))::bigint as a, sum(n - least(o, n))::bigint as b
                from by_hash group by k)
        select *, case when {keyed} and n_old <= 1 and n_new <= 1 then least(a, b) else 0 end as m
        from by_key
    """)
    n_same_place = con.execute("""
        with o as (select h, p, count(*) as c from h_old group by all),
             n as (select h, p, count(*) as c from h_new group by all)
        select coalesce(sum(least(o.c, n.c)), 0) from o join n on o.h = n.h and o.p is not distinct from n.p
    """).fetchone()[0]
    con.execute(
        """
        insert into out.relations
        select ?, ?, ?, ?, coalesce(sum(n_old), 0), coalesce(sum(n_new), 0), coalesce(sum(n_identical), 0),
               coalesce(sum(n_identical), 0) - ?, coalesce(sum(b - m), 0), coalesce(sum(a - m), 0), coalesce(sum(m), 0),
               ?, ?
        from per_key
        """,
        [rel.label, "old" in sides, "new" in sides, key, n_same_place,
         [c for c in rel.new_columns if c not in rel.old_columns] if len(sides) == 2 else [],
         [c for c in rel.old_columns if c not in rel.new_columns] if len(sides) == 2 else []],
    )
    if not keyed:
        return
    con.execute("""
        insert into out.row_changes
        select ?, k, status, null from (
            select k, 'removed' as status, a - m as n from per_key where a > m
            union all select k, 'added', b - m from per_key where b > m) changed, range(changed.n)
    """, [rel.label])
    if not con.execute("select count(*) from per_key where m > 0").fetchone()[0]:
        return
    differs = ", ".join(
        f"case when cast(o.{q(c)} as varchar) is distinct from cast(n.{q(c)} as varchar) then '{c.replace(chr(39), chr(39) * 2)}' end"
        for c in compared
    )
    modified = "(select k from per_key where m > 0)"
    con.execute(f"""
        create or replace temp table modified as
        select o.k, list_filter([{differs}], lambda c: c is not null) as changed_columns
        from (select {key_json(key)} as k, * from {rel.source('old')}) o
        join (select {key_json(key)} as k, * from {rel.source('new')}) n on o.k = n.k
        where o.k in {modified} and n.k in {modified}
    """)
    con.execute("insert into out.row_changes select ?, k, 'modified', changed_columns from modified", [rel.label])
    con.execute("""
        insert into out.column_changes
        select ?, column_name, count(*) from (select unnest(changed_columns) as column_name from modified)
        group by column_name
    """, [rel.label])


# --------------------------------------------------------------------------------------------
# training pairs

PAIR_COLUMNS = ("pair_id", "dataset", "prompt", "chosen", "rejected", "split", "margin", "integrity_flags")


def diff_pairs(con, relations: dict[str, Relation]) -> None:
    """``pair_changes`` (see the module's doc)."""
    rel = relations.get(".".join(PAIRS))
    sides = {side: rel is not None and all(c in getattr(rel, f"{side}_columns") for c in PAIR_COLUMNS)
             for side in ("old", "new")}
    if not any(sides.values()):
        con.execute("""
            create table out.pair_changes (dataset varchar, change varchar, prompt varchar, chosen varchar,
                rejected varchar, old_split varchar, new_split varchar, old_margin double, new_margin double,
                old_flags varchar[], new_flags varchar[], old_pair_id varchar, new_pair_id varchar)""")
        return
    for side, present in sides.items():
        source = rel.source(side) if present else f"(select * from {rel.source('new' if side == 'old' else 'old')} where false)"
        # the match key: dataset, prompt and the two responses unordered; occurrence counts repeats of it
        con.execute(f"""
            create or replace temp table p_{side} as
            select *, row_number() over (
                       partition by dataset, prompt_hash, least(chosen_hash, rejected_hash), greatest(chosen_hash, rejected_hash)
                       order by chosen_hash, split, margin, cast(integrity_flags as varchar), pair_id) as occurrence
            from (select pair_id, dataset, split, margin, integrity_flags,
                         md5(cast(prompt as varchar)) as prompt_hash, md5(cast(chosen as varchar)) as chosen_hash,
                         md5(cast(rejected as varchar)) as rejected_hash
                  from {source})
        """)
    changes = " union all ".join(
        f"select '{change}' as change, * from matched where {condition}"
        for change, condition in (
            ("added", "o.pair_id is null"),
            ("removed", "n.pair_id is null"),
            ("flipped", "o.chosen_hash != n.chosen_hash"),
            ("split_changed", "o.split is distinct from n.split and o.pair_id is not null and n.pair_id is not null"),
            ("margin_changed", "o.margin is distinct from n.margin and o.pair_id is not null and n.pair_id is not null"),
        )
    )
    empty = f"(select * from {rel.source('new' if sides['new'] else 'old')} where false)"
    con.execute(f"""
        create table out.pair_changes as
        with matched as (
                select po as o, pn as n from p_old po full join p_new pn
                on po.dataset = pn.dataset and po.prompt_hash = pn.prompt_hash and po.occurrence = pn.occurrence
                   and least(po.chosen_hash, po.rejected_hash) = least(pn.chosen_hash, pn.rejected_hash)
                   and greatest(po.chosen_hash, po.rejected_hash) = greatest(pn.chosen_hash, pn.rejected_hash)),
             changes as ({changes}),
             texts as (
                select 'old' as side, pair_id, prompt, chosen, rejected from {rel.source('old') if sides['old'] else empty}
                union all
                select 'new', pair_id, prompt, chosen, rejected from {rel.source('new') if sides['new'] else empty})
        select coalesce(c.n.dataset, c.o.dataset) as dataset, c.change, t.prompt, t.chosen, t.rejected,
               c.o.split as old_split, c.n.split as new_split, c.o.margin as old_margin, c.n.margin as new_margin,
               c.o.integrity_flags as old_flags, c.n.integrity_flags as new_flags,
               c.o.pair_id as old_pair_id, c.n.pair_id as new_pair_id
        from changes c
        join texts t on t.side = case when c.change = 'removed' then 'old' else 'new' end
                    and t.pair_id = coalesce(c.n.pair_id, c.o.pair_id)
        order by dataset, list_position({sql_list(list(PAIR_CHANGES))}, c.change), coalesce(c.n.pair_id, c.o.pair_id)
    """)


# --------------------------------------------------------------------------------------------
# the summary


def _count(n: int) -> str:
    return f"{n:,}"


def summary(con, old_path: Path, new_path: Path, old_revision: str) -> str:
    """diff.md: the training pairs per dataset and the relations with most changes."""
    lines = [f"# Changes since {old_revision}", "",
             f"From `{old_path.name}` to `{new_path.name}` (`preftools diff`; every row behind these counts is in "
             f"`{DIFF_DB}`: tables `relations`, `column_changes`, `row_changes`, `pair_changes`).", ""]
    pairs = con.execute(f"""
        select dataset, {", ".join(f"count(*) filter (where change = '{c}')" for c in PAIR_CHANGES)}
        from out.pair_changes group by dataset order by dataset
    """).fetchall()
    lines += ["## Training pairs (`preference_pairs`)", ""]
    if pairs:
        lines += ["| dataset | added | removed | flipped | moved between splits | margin changed |",
                  "|---|---:|---:|---:|---:|---:|"]
        lines += [f"| {d} | " + " | ".join(_count(n) for n in counts) + " |" for d, *counts in pairs]
    else:
        lines += ["No pair added, removed, flipped, moved between splits or re-margined."]
    lines += [""]
    changed = con.execute(f"""
        select relation, in_old, in_new, n_old, n_new, n_added, n_removed, n_modified, n_moved,
               len(columns_added) + len(columns_dropped) as n_columns,
               (select count(*) from out.relations) as n_relations,
               count(*) over () as n_changed
        from out.relations
        where n_added + n_removed + n_modified + n_moved > 0 or not (in_old and in_new) or n_columns > 0
        order by n_added + n_removed + n_modified desc, n_moved desc, relation
        limit {TOP_RELATIONS}
    """).fetchall()
    lines += ["## Relations with most changes", ""]
    if changed:
        n_relations, n_changed = changed[0][-2], changed[0][-1]
        lines += [f"{n_changed:,} of {n_relations:,} tables and views of {' and '.join(SCHEMAS)} changed; "
                  f"the {min(TOP_RELATIONS, n_changed)} with most added, removed and modified rows:", "",
                  "| relation | rows old | rows new | added | removed | modified | moved upstream |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for relation, in_old, in_new, n_old, n_new, added, removed, modified, moved, n_columns, *_ in changed:
            note = "" if in_old and in_new else (" (new)" if in_new else " (gone)")
            note += " (columns changed)" if n_columns else ""
            lines.append(f"| `{relation}`{note} | {_count(n_old)} | {_count(n_new)} | {_count(added)} | "
                         f"{_count(removed)} | {_count(modified)} | {_count(moved)} |")
    else:
        n = con.execute("select count(*) from out.relations").fetchone()[0]
        lines += [f"None: the {n:,} tables and views of {' and '.join(SCHEMAS)} are identical."]
    lines += [""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# the diff


def diff(old_path: Path, new_path: Path, out_dir: Path, progress: bool = True) -> str:
    """Write out_dir/diff.duckdb and out_dir/diff.md; return the summary. With ``progress``, a
    progress bar on stderr: the relations compared, the rows read so far and the one being read."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DiffError(os_error_message(exc, out_dir, option="--out")) from None
    partial = out_dir / f".{DIFF_DB}.tmp"
    partial.unlink(missing_ok=True)
    con = duckdb.connect()
    try:
        warehouse.apply_resource_settings(con, DiffError)
        con.execute("set temp_directory = ?", [str(out_dir / ".diff.tmp")])
        for alias, path in (("old", old_path), ("new", new_path)):
            try:
                warehouse.attach_read_only(con, path, alias, THEN, POINT)
            except warehouse.WarehouseError as exc:
                raise DiffError(f"{alias.upper()}: {exc}") from None
            if not has_table(con, alias, BUILD_INFO_TABLE):
                raise DiffError(f"{alias.upper()}: {path} is not a warehouse (no {BUILD_INFO_TABLE}); {POINT}")
        # the warehouse's storage format (the dbt profile), so DuckDB >= 1.5 clients read it too
        con.execute("attach ? as out (storage_version 'v1.5.0')", [str(partial)])
        con.execute(OUTPUT_SCHEMA)
        relations = list_relations(con)
        keys = read_keys(con)
        n_rows = 0
        with tqdm(total=len(relations), desc="relations", unit="relation", disable=not progress, leave=True) as bar:
            for label, rel in relations.items():
                bar.set_postfix_str(f"{n_rows:,} rows compared; {label}")
                diff_relation(con, rel, keys.get(label))
                n_rows += con.execute("select n_old + n_new from out.relations where relation = ?", [label]).fetchone()[0]
                bar.update()
            bar.set_postfix_str(f"{n_rows:,} rows compared; matching the training pairs")
            diff_pairs(con, relations)
            bar.set_postfix_str(f"{n_rows:,} rows compared")
        text = summary(con, old_path, new_path, revision(con, "old"))
        con.execute("detach out")
    except duckdb.Error as exc:
        raise DiffError(f"diffing {old_path} and {new_path}: {exc}") from None
    finally:
        con.close()
    try:
        partial.replace(out_dir / DIFF_DB)
        (out_dir / DIFF_MD).write_text(text)
    except OSError as exc:
        raise DiffError(os_error_message(exc, out_dir, option="--out")) from None
    finally:
        partial.unlink(missing_ok=True)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="preftools diff",
        description="What changed between two warehouse builds: every table and view of main and audits, "
                    "row by row (OUT/diff.duckdb), and the training pairs added, removed, flipped or moved "
                    "between splits (OUT/diff.md, also printed). Both files are opened read-only.",
        epilog="Put the summary into the dataset cards of an export of NEW: "
               "preftools export --card-note OUT/diff.md",
    )
    parser.add_argument("old", help="the earlier build's .duckdb file")
    parser.add_argument("new", help="the later build's .duckdb file")
    parser.add_argument("--out", default="diff", help="folder for diff.duckdb and diff.md (default: diff/)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        text = diff(Path(args.old), Path(args.new), Path(args.out), progress=not args.no_progress)
    except DiffError as exc:
        print(f"diff: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(text, end="")
    print(f"written: {Path(args.out) / DIFF_DB}, {Path(args.out) / DIFF_MD}")
    return 0


if __name__ == "__main__":
    sys.exit(run("preftools diff", main))
