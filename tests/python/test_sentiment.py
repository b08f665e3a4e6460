"""The VADER scoring pool gives exactly the single-process scores, in order, whatever the
number of workers."""

from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from preftools import sentiment


def test_pool_equals_one_process(monkeypatch):
    texts = [
        "The response is incorrect and misleading.",
        "Excellent, accurate and complete answer.",
        None,
        "   ",
        "It is fine.",
    ] * 40
    analyzer = SentimentIntensityAnalyzer()
    expected = [analyzer.polarity_scores(t)["compound"] if t and t.strip() else None for t in texts]
    monkeypatch.setattr(sentiment, "MIN_TEXTS_PER_WORKER", 10)
    assert sentiment.compound_scores(texts, workers=1) == expected
    assert sentiment.compound_scores(texts, workers=3) == expected
    assert expected[0] < 0 < expected[1] and expected[2] is None and expected[3] is None
