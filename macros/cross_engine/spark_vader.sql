{#- VADER sentiment on Spark, in SQL. dbt-spark runs Python models only on Databricks (its
    job/all-purpose-cluster submission); with the session, thrift or http methods a dbt Python
    model cannot run. Spark SQL's TRANSFORM ... USING (script transformation) pipes rows
    through a program on each executor instead, so the scoring stays the vaderSentiment
    package itself, with the same rule as the DuckDB Python model
    (int_ultrafeedback__critique_sentiment_scores.py): compound score of the text, NULL for a NULL
    or blank (str.strip() == '') text.

    `relation`: a relation or CTE name with a text key and the text. Returns a query with
    columns (<key_column> string, critique_sentiment double). Rows cross the pipe as
    `key TAB hex(UTF-8 text)` lines, so tabs and newlines in the text are safe; scores come
    back as Python's repr(float), which Java parses to the same double.

    The program runs with $PYSPARK_PYTHON (default python3), as read where dbt compiles, in
    each executor's working directory and environment: with a local Spark that is this process's,
    so the interpreter's own vaderSentiment is used. On a cluster the path must exist on every
    executor, and the package comes with the job: the spark_cluster target ships it as
    spark.archives=<zip>#vader with PYTHONPATH=vader in the executors' environment (profiles.yml,
    preftools/devtools/spark_cluster.py), so the executors' Python needs nothing but its standard library. -#}
{% macro spark_vader_compound(relation, key_column, text_column, score_column='critique_sentiment') -%}
    {%- set python = env_var('PYSPARK_PYTHON', 'python3') -%}
    {%- set program -%}
import sys
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
analyzer = SentimentIntensityAnalyzer()
NULL, TAB, EOL = chr(92) + chr(78), chr(9), chr(10)
for line in sys.stdin:
    key, _, hexed = line.rstrip(EOL).partition(TAB)
    text = None if hexed == NULL else bytes.fromhex(hexed).decode()
    score = analyzer.polarity_scores(text)[COMPOUND] if text is not None and text.strip() else None
    sys.stdout.write(key + TAB + (NULL if score is None else repr(score)) + EOL)
    {%- endset -%}
    {#- bash -c '<python> -c "<program>"': the program has no double quote, no backslash and
        no single quote (the dict key is a bash-quoted word), so it survives every layer. -#}
    {%- set command = python ~ ' -c "COMPOUND=\\"compound\\"' ~ '\n' ~ program ~ '"' -%}
    select transform({{ key_column }}, hex({{ text_column }}))
        using '{{ command | replace("\\", "\\\\") | replace("'", "\\'") }}'
        as ({{ key_column }} string, {{ score_column }} double)
    from {{ relation }}
{%- endmacro %}
