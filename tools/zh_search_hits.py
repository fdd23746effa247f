"""How many of the built guide's sections that contain a Chinese word the site's search can find by it.

    python tools/zh_search_hits.py site/search/search_index.json 切换 显卡驱动 动态链接库

Material's search splits each section's text at the index's `separator` and a query matches a word by its start
(it appends a wildcard), so a section is found by WORD when one of its words starts with WORD. Chinese has no
spaces: without segmentation a whole clause is one word, and only the sections where WORD starts a clause are
found. jieba at build time puts a zero-width space (U+200B) between words, which the separator must split at.
"""

import json
import re
import sys


def hits(index: dict, word: str):
    sep = re.compile(index["config"]["separator"])
    contain = found = 0
    for doc in index["docs"]:
        text = re.sub(r"<[^>]+>", " ", f"{doc.get('title', '')} {doc.get('text', '')}").lower()
        if word not in text.replace("\u200b", ""):
            continue
        contain += 1
        found += any(tok.startswith(word) for tok in sep.split(text))
    return found, contain


def main(argv):
    with open(argv[0], encoding="utf-8") as fh:
        index = json.load(fh)
    for word in argv[1:]:
        found, contain = hits(index, word)
        print(f"{word}: {found} of {contain} sections that contain it")


if __name__ == "__main__":
    main(sys.argv[1:])
