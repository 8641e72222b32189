"""The index run's check for facet values the corpus writes in lower case (tasks/index/ordinary._lower_case_phrases):
one pass over each text's words against one regular expression of every phrase, side by side on the same text.

    .venv/bin/python -m benchmarks.bench_phrases
"""

import random
import re
import time

from tasks.index.corpus import Document
from tasks.index.ordinary import _lower_case_phrases


def main() -> None:
    random.seed(1)
    words = ["".join(random.choice("abcdefghij") for _ in range(random.randint(3, 8))) for _ in range(3000)]
    docs = [Document(f"d{n}", " ".join(random.choice(words) for _ in range(200)) + ".", {}, f"d{n}")
            for n in range(1800)]  # about 2 MB
    phrases = sorted({" ".join(random.sample(words, random.randint(2, 3))) for _ in range(1000)})
    t = time.perf_counter()
    new = _lower_case_phrases(phrases, lambda: (d.text for d in docs))
    words_s = time.perf_counter() - t
    either = "|".join(r"\W+".join(map(re.escape, p.split())) for p in phrases)
    pattern = re.compile(rf"(?<!\w)(?:{either})(?!\w)")
    t = time.perf_counter()
    old = {" ".join(re.findall(r"[^\W\d_]+", m.group())) for d in docs for m in pattern.finditer(d.text)}
    regex_s = time.perf_counter() - t
    print(f"text {sum(len(d.text) for d in docs) / 1e6:.1f} MB, {len(phrases)} phrases: word pass {words_s:.2f} s, "
          f"one regex {regex_s:.2f} s ({regex_s / words_s:.0f}x); same phrases found: {new == old} ({len(new)})")


if __name__ == "__main__":
    main()
