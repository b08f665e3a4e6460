"""The VADER scoring pool gives exactly VADER's own scores (SentimentIntensityAnalyzer's), in order,
whatever the number of workers, on texts with and without emoji."""

import subprocess
import sys

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from preftools.dbt_runtime import sentiment


def test_pool_equals_one_process():
    texts = [
        "The response is incorrect and misleading.",
        "Excellent, accurate and complete answer.",
        None,
        "   ",
        "It is fine.",
        # emoji, which VADER rewrites as their descriptions: alone, inside a word, at the edges
        "Great answer \U0001F44D",
        "\U0001F600bad and wrong\u2639",
        "  \u263A  ",
        "not \U0001F622 helpful, kind of poor",
    ] * 40
    analyzer = SentimentIntensityAnalyzer()
    expected = [analyzer.polarity_scores(t)["compound"] if t and t.strip() else None for t in texts]
    for workers in (1, 3):
        assert sentiment.compound_scores_stream([texts[:70], texts[70:]], workers=workers, chunk=10) == expected
    assert expected[0] < 0 < expected[1] and expected[2] is None and expected[3] is None
    assert expected[6] != analyzer.polarity_scores("bad and wrong")["compound"]  # the emoji count


def test_workers_do_not_rerun_the_parents_script(tmp_path):
    """Under dbt the parent process is the `dbt` script; a spawned worker would run it again
    (seconds of imports) before scoring. A script that notes every run of its top level: its
    workers score the texts without running it, and the parent's __file__ is back after."""
    runs = tmp_path / "runs.txt"
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys\n"
        f"open({str(runs)!r}, 'a').write(__name__ + '\\n')\n"
        "if __name__ == '__main__':\n"
        "    from preftools.dbt_runtime import sentiment\n"
        "    texts = ['good', 'bad', None, 'fine'] * 50\n"
        "    batches = [texts[i : i + 40] for i in range(0, len(texts), 40)]\n"
        "    assert sentiment.compound_scores_stream(batches, workers=2, chunk=20) == sentiment._score_chunk(texts)\n"
        "    assert sys.modules['__main__'].__file__ == __file__\n"
    )
    subprocess.run([sys.executable, str(script)], check=True, cwd=tmp_path, timeout=120)
    assert runs.read_text().split() == ["__main__"]
