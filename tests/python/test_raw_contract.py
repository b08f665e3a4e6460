"""The representation-tolerant raw contract.

Files written by different tools store the same values in different Arrow types. The rule
(preftools/inputs/contract.py, generated into macros/raw_contract.sql, applied by
macros/raw_inputs.sql): a type that carries the contract's values unchanged is accepted and
cast back to the contract type in staging; anything that would change values or lose data is
rejected before the build, one line per file and column, with the fix.

* the generated macro is up to date with contract.py;
* the rule on pairs of DuckDB types (one `dbt run-operation`), including the integer cases the
  upstream schemas don't have;
* DuckDB's `read_parquet(..., union_by_name = true)` on files of one dataset that differ in
  representation: one unified type, which the staging cast turns into the contract type;
* every accepted variation, written with pyarrow into one file of a dataset split in two:
  staging (types and rows) equals staging of the unmodified files;
* every rejection with its one-line message.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from conftest import REPO, generate_raw, operation_cases, run_dbt
from preftools.inputs import contract as C
from preftools.inputs.fetch import schema_problems

STAGING = {
    "ultrafeedback": "stg_ultrafeedback__prompts",
    "code_ultrafeedback": "stg_code_ultrafeedback__prompts",
    "code_ultrafeedback_standard": "stg_code_ultrafeedback__published_pairs",
    "rever_judge": "stg_rever__trajectories",
    "rever_rubric": "stg_rever__rubrics",
}
README = ' (README: "Raw data contract")'
DOUBLE_FIX = ("write it as float64 (pyarrow) or as a type whose values DOUBLE holds exactly "
              "(FLOAT, INTEGER, SMALLINT, TINYINT, UINTEGER, USMALLINT, UTINYINT)")
CHECK_ONLY = ["run", "-s", "warehouse_build_info"]


# ------------------------------------------------------------------------------ Arrow types
def _map_type(t: pa.DataType, leaf, struct=None, list_=None) -> pa.DataType:
    """``t`` rebuilt bottom-up: leaves through ``leaf``, structs' fields through ``struct``,
    lists through ``list_`` (a function of the new element type)."""
    if pa.types.is_struct(t):
        fields = [pa.field(f.name, _map_type(f.type, leaf, struct, list_)) for f in t]
        return pa.struct(struct(fields) if struct else fields)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        element = _map_type(t.value_type, leaf, struct, list_)
        return list_(element) if list_ else pa.list_(element)
    return leaf(t)


def large(t):
    """string -> large_string, list -> large_list (pyarrow's 64-bit offsets)."""
    return _map_type(t, lambda x: pa.large_string() if pa.types.is_string(x) else x, list_=pa.large_list)


def reordered(t):
    """Every struct's fields in reverse order."""
    return _map_type(t, lambda x: x, struct=lambda fields: fields[::-1])


def extra_field(t):
    """Every struct with one more field, `note` (int64), NULL in the data."""
    return _map_type(t, lambda x: x, struct=lambda fields: fields + [pa.field("note", pa.int64())])


def with_type(table: pa.Table, name: str, typ: pa.DataType) -> pa.Table:
    """The column rebuilt from its Python values in another representation (structs by name)."""
    column = table[name]
    if pa.types.is_null(typ):
        assert column.null_count == len(column), name
        array = pa.nulls(len(table))
    elif pa.types.is_nested(typ) or pa.types.is_dictionary(typ):
        array = pa.array(column.to_pylist(), type=typ)
    else:
        array = column.cast(typ)  # a safe cast: it raises if a value would change
    return table.set_column(table.schema.get_field_index(name), name, array)


# ------------------------------------------------------------------------------ helpers
def split_in_two(raw: Path, adjust=None) -> None:
    """Every dataset in two Parquet files (the row order kept), after ``adjust(key, table)``."""
    for d in C.DATASETS:
        table = d.read(raw).select(d.schema.names).cast(d.schema)
        if adjust:
            table = adjust(d.key, table)
        half = len(table) // 2
        for f in d.data_files(raw):
            f.unlink()
        d.data_dir(raw).mkdir(parents=True, exist_ok=True)
        pq.write_table(table.slice(0, half), d.data_dir(raw) / "train-00000-of-00002.parquet")
        pq.write_table(table.slice(half), d.data_dir(raw) / "train-00001-of-00002.parquet")


def rewrite(raw: Path, key: str, index: int, transform) -> Path:
    path = C.DATASETS_BY_KEY[key].data_dir(raw) / f"train-0000{index}-of-00002.parquet"
    pq.write_table(transform(pq.read_table(path)), path)
    return path


def all_null(table: pa.Table, name: str) -> pa.Table:
    typ = table.schema.field(name).type
    return table.set_column(table.schema.get_field_index(name), name, pa.nulls(len(table), typ))


def problem_lines(output: str) -> list[str]:
    return [line.strip()[2:] for line in output.splitlines() if line.strip().startswith("- schema mismatch")]


# ------------------------------------------------------------------------------ the macro
def test_macro_is_generated_from_the_contract():
    """macros/raw_contract.sql is `python -m preftools.inputs.contract --write-macro`'s output, byte for byte."""
    assert C.MACRO_PATH.read_text() == C.render_macro(), \
        "macros/raw_contract.sql is stale: run `python -m preftools.inputs.contract --write-macro`"
    assert C.main(["--check-macro"]) == 0


# ------------------------------------------------------------------------------ the rule
RULE_CASES = [
    # (contract type, file type, verdict)
    ("DOUBLE", "DOUBLE", "ok"),
    ("DOUBLE", "FLOAT", "ok"),
    ("DOUBLE", "INTEGER", "ok"),
    ("DOUBLE", "UTINYINT", "ok"),
    ("DOUBLE", '"NULL"', "ok"),
    ("DOUBLE", "BIGINT", "expected DOUBLE, found BIGINT -- " + DOUBLE_FIX),
    ("DOUBLE", "DECIMAL(18,3)", "expected DOUBLE, found DECIMAL(18,3) -- " + DOUBLE_FIX),
    ("DOUBLE", "VARCHAR", "expected DOUBLE, found VARCHAR -- " + DOUBLE_FIX),
    ("BIGINT", "INTEGER", "ok"),
    ("BIGINT", "UINTEGER", "ok"),
    ("BIGINT", "DOUBLE", "expected BIGINT, found DOUBLE -- write it as int64 (pyarrow) or as a type whose values "
                         "BIGINT holds exactly (INTEGER, SMALLINT, TINYINT, UINTEGER, USMALLINT, UTINYINT)"),
    ("BIGINT", "UBIGINT", "expected BIGINT, found UBIGINT -- write it as int64 (pyarrow) or as a type whose values "
                          "BIGINT holds exactly (INTEGER, SMALLINT, TINYINT, UINTEGER, USMALLINT, UTINYINT)"),
    ("INTEGER", "SMALLINT", "ok"),
    ("INTEGER", "BIGINT", "expected INTEGER, found BIGINT -- write it as int32 (pyarrow) or as a type whose values "
                          "INTEGER holds exactly (SMALLINT, TINYINT, USMALLINT, UTINYINT)"),
    ("INTEGER", "UINTEGER", "expected INTEGER, found UINTEGER -- write it as int32 (pyarrow) or as a type whose "
                            "values INTEGER holds exactly (SMALLINT, TINYINT, USMALLINT, UTINYINT)"),
    ("BOOLEAN", "BOOLEAN", "ok"),
    ("BOOLEAN", "TINYINT", "expected BOOLEAN, found TINYINT -- write it as bool (pyarrow)"),
    ("VARCHAR", "VARCHAR", "ok"),
    ("VARCHAR", "BLOB", "expected VARCHAR, found BLOB -- write it as string (pyarrow)"),
    ("VARCHAR", "VARCHAR[]", "expected VARCHAR, found VARCHAR[] -- write it as string (pyarrow)"),
    ("VARCHAR[]", "VARCHAR", "expected VARCHAR[], found VARCHAR -- cast it back to the upstream type when writing the file"),
    ("VARCHAR[]", '"NULL"[]', "ok"),
    ("VARCHAR[]", "VARCHAR[4]", "expected VARCHAR[], found VARCHAR[4] -- cast it back to the upstream type when writing the file"),
    ('STRUCT("role" VARCHAR, "content" VARCHAR)[]', 'STRUCT("content" VARCHAR, "role" VARCHAR)[]', "ok"),
    ('STRUCT("role" VARCHAR, "content" VARCHAR)[]', 'STRUCT("role" VARCHAR, "content" VARCHAR, "name" VARCHAR)[]', "ok"),
    ('STRUCT("role" VARCHAR, "content" VARCHAR)[]', 'STRUCT("role" VARCHAR, "content" "NULL")[]', "ok"),
    ('STRUCT("role" VARCHAR, "content" VARCHAR)[]', 'STRUCT("role" VARCHAR)[]',
     "nested field `c[].content` (VARCHAR) is missing -- write the field, NULL where there is no value"),
    ('STRUCT("role" VARCHAR, "content" VARCHAR)[]', 'STRUCT("Role" VARCHAR, "content" VARCHAR)[]',
     "nested field `c[].role` (VARCHAR) is missing -- write the field, NULL where there is no value"),
    ('STRUCT("role" VARCHAR, "content" VARCHAR)[]', 'STRUCT("role" VARCHAR, "content" VARCHAR)',
     'expected STRUCT("role" VARCHAR, "content" VARCHAR)[], found STRUCT("role" VARCHAR, "content" VARCHAR) '
     "-- cast it back to the upstream type when writing the file"),
    ('STRUCT("role" VARCHAR, "content" VARCHAR)[]', 'STRUCT("role" VARCHAR, "content" VARCHAR[])[]',
     "nested field `c[].content` expected VARCHAR, found VARCHAR[] -- write it as string (pyarrow)"),
    # deeper: quoted names with spaces, reordered and extended at two levels, numbers widened
    ('STRUCT(a STRUCT("Rationale For Rating" VARCHAR, "Type" VARCHAR[]), score DOUBLE)',
     'STRUCT(x MAP(VARCHAR, INTEGER), score INTEGER, a STRUCT("Type" VARCHAR[], y INTEGER, "Rationale For Rating" VARCHAR))',
     "ok"),
    ('STRUCT(a STRUCT("Rationale For Rating" VARCHAR, "Type" VARCHAR[]), score DOUBLE)',
     'STRUCT(score DOUBLE, a STRUCT("Type" BIGINT[], "Rationale For Rating" VARCHAR))',
     "nested field `c.a.Type[]` expected VARCHAR, found BIGINT -- write it as string (pyarrow)"),
    ('STRUCT(a STRUCT("Rationale For Rating" VARCHAR, "Type" VARCHAR[]), score DOUBLE)',
     'STRUCT(a STRUCT("Rationale For Rating" VARCHAR, "Type" VARCHAR[]), score BIGINT)',
     "nested field `c.score` expected DOUBLE, found BIGINT -- " + DOUBLE_FIX),
]


def test_rule_on_pairs_of_types(tmp_path):
    """The macro's verdict on each (contract type, file type) pair, word for word."""
    got = operation_cases("raw_type_cases", [[expected, found] for expected, found, _ in RULE_CASES], "raw type case", tmp_path)
    assert got == [verdict for _, _, verdict in RULE_CASES]


@pytest.mark.parametrize("expected, found, verdict", RULE_CASES)
def test_the_fetcher_takes_what_the_build_takes(expected, found, verdict):
    """The fetcher's check of a downloaded file (preftools.inputs.fetch.schema_problems, on Arrow types)
    accepts exactly the (contract type, file type) pairs the build's check accepts."""
    con = duckdb.connect()
    arrow = [con.sql(f"select cast(null as {t}) as c").to_arrow_table().schema for t in (expected, found)]
    assert (schema_problems(*arrow) == []) == (verdict == "ok")


# ------------------------------------------------------------------------------ DuckDB's union
MESSAGES = C.REVER_JUDGE_SCHEMA.field("messages").type
UNION_VARIANTS = {
    # name: (contract type, values, variant type)
    "large_string": (pa.string(), ["a", None, "ü"], pa.large_string()),
    "string_view": (pa.string(), ["a", None, "ü"], pa.string_view()),
    "dictionary": (pa.string(), ["a", None, "a"], pa.dictionary(pa.int32(), pa.string())),
    "int32": (pa.float64(), [1.0, None, -3.0], pa.int32()),
    "float32": (pa.float64(), [1.5, None, -0.25], pa.float32()),
    "large_list": (MESSAGES, [[{"role": "user", "content": "q"}, None], None, []], large(MESSAGES)),
    "reordered": (MESSAGES, [[{"role": "user", "content": "q"}, None], None, []], reordered(MESSAGES)),
    "extra_field": (MESSAGES, [[{"role": "user", "content": "q"}, None], None, []], extra_field(MESSAGES)),
    "null": (MESSAGES, [None, None, None], pa.null()),
    "nested_null": (MESSAGES, [[{"role": "user", "content": None}], None, []],
                    pa.list_(pa.struct([("role", pa.string()), ("content", pa.null())]))),
}


@pytest.mark.parametrize("variant", sorted(UNION_VARIANTS))
def test_union_by_name_unifies_representations(variant, tmp_path):
    """Two files of one dataset, one in the contract's type and one in the variant, read with
    union_by_name in either order: DuckDB gives the column one type, and the staging cast to the
    contract type gives the contract's values. Without the cast the type may be the variant's
    (struct field order and extra fields follow the file read first)."""
    contract_type, values, variant_type = UNION_VARIANTS[variant]
    base = pa.table({"c": pa.array(values, contract_type), "k": pa.array([0, 1, 2])})
    pq.write_table(base, tmp_path / "a.parquet")
    pq.write_table(with_type(base, "c", variant_type), tmp_path / "b.parquet")
    con = duckdb.connect()
    con.register("contract", base.slice(0, 0))
    (contract_duck,) = [t for n, t, *_ in con.execute("describe select c from contract").fetchall()]
    for files in (["a", "b"], ["b", "a"]):
        glob = [str(tmp_path / f"{f}.parquet") for f in files]
        read = f"read_parquet({glob!r}, union_by_name = true, filename = true)"
        described = con.execute(f"describe select * from {read}").fetchall()
        assert [n for n, *_ in described].count("c") == 1
        cast = f"select cast(c as {contract_duck}) as c, k, filename from {read} order by filename, k"
        assert [t for n, t, *_ in con.execute(f"describe {cast}").fetchall() if n == "c"] == [contract_duck]
        got = con.execute(cast).fetchall()
        for name in files:
            rows = [c for c, _, filename in got if filename.endswith(f"{name}.parquet")]
            assert rows == base["c"].to_pylist(), (variant, files, name)


def test_union_field_order_follows_the_first_file(tmp_path):
    """Why staging casts: the unified struct type takes the field order (and the extra fields) of
    the files, so the raw column's type depends on which file sorts first."""
    base = pa.table({"m": pa.array([[{"role": "user", "content": "q"}]], MESSAGES)})
    pq.write_table(with_type(base, "m", reordered(extra_field(MESSAGES))), tmp_path / "a.parquet")
    pq.write_table(base, tmp_path / "b.parquet")
    con = duckdb.connect()
    read = f"read_parquet({str(tmp_path / '*.parquet')!r}, union_by_name = true)"
    assert con.execute(f"select typeof(m) from {read} limit 1").fetchone()[0] == \
        'STRUCT(note BIGINT, "content" VARCHAR, "role" VARCHAR)[]'


# ------------------------------------------------------------------------------ accepted
@pytest.fixture(scope="module")
def base_raw(tmp_path_factory) -> Path:
    """Generated data, each dataset split in two files; a few columns made such that a variant
    can carry the same values: integral scores (int32), float32-exact scores, all-null columns."""
    raw = tmp_path_factory.mktemp("base_raw")
    generate_raw(raw, scale=0.002)

    def adjust(key: str, table: pa.Table) -> pa.Table:
        if key == "ultrafeedback":
            score = table["score_random_response_for_rated"]
            table = table.set_column(table.schema.get_field_index("score_random_response_for_rated"),
                                     "score_random_response_for_rated", pc.floor(score))
            for name in ("score_best_overall", "score_best_rated"):
                table = table.set_column(table.schema.get_field_index(name), name,
                                         table[name].cast(pa.float32()).cast(pa.float64()))
        if key == "rever_judge":
            table = all_null(table, "tools")
        return table

    split_in_two(raw, adjust)
    # an all-null column in one file only, and an all-null nested field
    rewrite(raw, "code_ultrafeedback", 1, lambda t: all_null(t, "models"))
    annotations = C.CODE_ULTRAFEEDBACK_SCHEMA.field("annotations").type

    def no_rationale(t: pa.Table) -> pa.Table:
        rows = [None if a is None else [None if x is None else {**x, "rationale": None} for x in a]
                for a in t["annotations"].to_pylist()]
        return t.set_column(t.schema.get_field_index("annotations"), "annotations", pa.array(rows, annotations))

    rewrite(raw, "code_ultrafeedback", 1, no_rationale)
    return raw


def build_staging(raw: Path, db: Path, work: Path) -> None:
    run_dbt(["build", "-s", "path:models/staging"], raw, db, work)


VARIANTS = {
    # (dataset, file index): {column: a function of the contract type giving the file's type}
    ("ultrafeedback", 0): {
        "source": lambda t: pa.large_string(),
        "instruction": lambda t: pa.string_view(),
        "score_best_overall": lambda t: pa.float32(),
        "score_random_response_for_rated": lambda t: pa.int32(),
        "completions": lambda t: large(reordered(extra_field(t))),
        "best_rated_response": extra_field,
        "best_overall_score_response": reordered,
    },
    ("ultrafeedback", 1): {
        "score_best_rated": lambda t: pa.float32(),
    },
    ("code_ultrafeedback", 0): {
        "responses": lambda t: large(reordered(t)),
        "preference": lambda t: pa.dictionary(pa.int8(), pa.string()),
        "models": large,
    },
    ("code_ultrafeedback", 1): {
        "models": lambda t: pa.null(),
        "annotations": lambda t: pa.list_(pa.struct([("model", pa.string()), ("rating", pa.string()),
                                                     ("rationale", pa.null())])),
    },
    ("code_ultrafeedback_standard", 0): {  # the first file: its field order would win the union
        "chosen": reordered,
        "rejected": extra_field,
        "chosen_score": lambda t: pa.dictionary(pa.int32(), pa.string()),
    },
    ("rever_judge", 0): {
        "tools": lambda t: pa.null(),
        "id": lambda t: pa.large_string(),
    },
    ("rever_judge", 1): {  # every file of the dataset: the union itself has the null type
        "tools": lambda t: pa.null(),
        "messages": large,
        "candidate": lambda t: pa.string_view(),
    },
    ("rever_rubric", 0): {
        "messages": lambda t: reordered(extra_field(t)),
        "source": lambda t: pa.dictionary(pa.int32(), pa.string()),
    },
}


@pytest.fixture(scope="module")
def variant_builds(base_raw, tmp_path_factory):
    """Staging built on the base files and on a copy with VARIANTS written (one dbt target dir,
    so the second build parses incrementally)."""
    work = tmp_path_factory.mktemp("variants")
    raw = work / "raw"
    shutil.copytree(base_raw, raw)
    for (key, index), columns in VARIANTS.items():
        def transform(table, columns=columns):
            for name, make in columns.items():
                table = with_type(table, name, make(table.schema.field(name).type))
            return table
        rewrite(raw, key, index, transform)
    base_db, variant_db = work / "base.duckdb", work / "variant.duckdb"
    db = work / "wh.duckdb"
    build_staging(base_raw, db, work)
    shutil.move(db, base_db)
    build_staging(raw, db, work)
    shutil.move(db, variant_db)
    return raw, base_db, variant_db


def test_variant_files_hold_the_variants(variant_builds):
    """Guard: the files really are in the other representations."""
    raw, _, _ = variant_builds
    for (key, index), columns in VARIANTS.items():
        path = C.DATASETS_BY_KEY[key].data_dir(raw) / f"train-0000{index}-of-00002.parquet"
        schema = pq.read_schema(path)
        contract = C.DATASETS_BY_KEY[key].schema
        for name, make in columns.items():
            assert schema.field(name).type == make(contract.field(name).type), (key, index, name)
            assert schema.field(name).type != contract.field(name).type, (key, index, name)


@pytest.mark.parametrize("key", sorted(STAGING))
def test_accepted_variants_give_the_same_staging(variant_builds, key):
    """Each staging table on the variant files has the same column types and the same rows
    (every column, keys included) as on the unmodified files."""
    _, base_db, variant_db = variant_builds
    table = f"staging.{STAGING[key]}"
    con = duckdb.connect()
    con.execute(f"attach '{base_db}' as base (read_only)")
    con.execute(f"attach '{variant_db}' as variant (read_only)")
    assert con.execute(f"describe variant.{table}").fetchall() == con.execute(f"describe base.{table}").fetchall()
    n = con.execute(f"select count(*) from base.{table}").fetchone()[0]
    assert n > 0 and con.execute(f"select count(*) from variant.{table}").fetchone()[0] == n
    for a, b in (("base", "variant"), ("variant", "base")):
        differ = con.execute(f"select count(*) from (select * from {a}.{table} except all select * from {b}.{table})")
        assert differ.fetchone()[0] == 0, (key, f"rows of {a} not in {b}")


def test_staging_types_are_the_contract_types(variant_builds):
    """The raw columns staging passes through keep exactly the contract's DuckDB types
    (UltraFeedback's `completions` is a projection of its own)."""
    _, _, variant_db = variant_builds
    con = duckdb.connect(str(variant_db), read_only=True)
    checked = 0
    for key, model in STAGING.items():
        types = dict((n, t) for n, t, *_ in con.execute(f"describe staging.{model}").fetchall())
        contract = C.duckdb_types(C.DATASETS_BY_KEY[key].schema)
        for name in set(types) & set(contract) - {"completions"}:
            checked += 1
            assert types[name] == contract[name], (model, name)
    assert checked == 19


# ------------------------------------------------------------------------------ rejected
def test_rejected_variants_name_file_column_types_and_fix(base_raw, tmp_path):
    """Each representation that would change values or lose data: one line each, before the build."""
    raw = tmp_path / "raw"
    shutil.copytree(base_raw, raw)
    standard_messages = C.CODE_ULTRAFEEDBACK_STANDARD_SCHEMA.field("chosen").type
    uf = rewrite(raw, "ultrafeedback", 1, lambda t: with_type(
        with_type(t, "score_best_rated", pa.float32()),  # accepted: no line
        "best_overall_score_response_critique_sentiment", pa.decimal128(12, 6)).set_column(
        t.schema.get_field_index("score_random_response_for_best_overall"), "score_random_response_for_best_overall",
        t["score_random_response_for_best_overall"].cast(pa.int64(), safe=False)))
    judge = rewrite(raw, "rever_judge", 0, lambda t: with_type(
        t.set_column(t.schema.get_field_index("tools"), "tools",
                     pa.array([["python"]] * len(t), pa.list_(pa.string()))),  # a list for a scalar
        "id", pa.binary()))  # bytes for text
    rubric = rewrite(raw, "rever_rubric", 1, lambda t: t.set_column(
        t.schema.get_field_index("messages"), "messages",
        pa.array([[{"role": m["role"]} for m in ms] for ms in t["messages"].to_pylist()],
                 pa.list_(pa.struct([("role", pa.string())])))))  # a missing nested field staging reads
    standard = rewrite(raw, "code_ultrafeedback_standard", 0, lambda t: t.set_column(
        t.schema.get_field_index("chosen"), "chosen",
        pa.array([None if ms is None else {"content": ms[0]["content"], "role": ms[0]["role"]}
                  for ms in t["chosen"].to_pylist()],
                 standard_messages.value_type)))  # a struct where a list is expected

    result = run_dbt(CHECK_ONLY, raw, tmp_path / "wh.duckdb", tmp_path, check=False)
    assert result.returncode != 0
    assert "Traceback" not in result.output
    head = "schema mismatch in dataset {}, file {}, column `{}`: "
    expected = [
        head.format("argilla/ultrafeedback-binarized-curation", uf, "score_random_response_for_best_overall")
        + "expected DOUBLE, found BIGINT -- " + DOUBLE_FIX + README,
        head.format("argilla/ultrafeedback-binarized-curation", uf, "best_overall_score_response_critique_sentiment")
        + "expected DOUBLE, found DECIMAL(12,6) -- " + DOUBLE_FIX + README,
        head.format("RLHFlow/CodeUltraFeedback-standard", standard, "chosen")
        + 'expected STRUCT("content" VARCHAR, "role" VARCHAR)[], found STRUCT("content" VARCHAR, "role" VARCHAR)'
        + " -- cast it back to the upstream type when writing the file" + README,
        head.format("OpenRubrics/ReVeR-Traces-Judge", judge, "id")
        + "expected VARCHAR, found BLOB -- write it as string (pyarrow)" + README,
        head.format("OpenRubrics/ReVeR-Traces-Judge", judge, "tools")
        + "expected VARCHAR, found VARCHAR[] -- write it as string (pyarrow)" + README,
        head.format("OpenRubrics/ReVeR-Traces-Rubric", rubric, "messages")
        + "nested field `messages[].content` (VARCHAR) is missing -- write the field, NULL where there is no value"
        + README,
    ]
    assert problem_lines(result.output) == expected
    assert f"cannot be built ({len(expected)} problem(s))" in result.output
    assert not (tmp_path / "wh.duckdb").exists() or "stg_" not in result.output
