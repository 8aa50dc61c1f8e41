"""Words that carry a sentence's stance, in the languages brainchat's users write.

The answer check reads what a sentence *does*: says something was done (a success), denies or
hedges it (a negation), or judges results (a verdict). Each is a word list per language, joined
into one pattern; English words are matched as whole words, CJK words as they stand (they have
no spaces around them). A language missing here makes the check lenient for it, never strict:
an unrecognised sentence is taken as claiming nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def words(latin: Iterable[str] = (), cjk: Iterable[str] = ()) -> re.Pattern[str]:
    """One pattern: `latin` as whole words (case-insensitive), `cjk` as plain substrings."""
    parts = []
    latin, cjk = list(latin), list(cjk)
    if latin:
        parts.append(r"(?<![\w-])(?:" + "|".join(latin) + r")(?![\w-])")
    if cjk:
        parts.append("(?:" + "|".join(cjk) + ")")
    return re.compile("|".join(parts) or r"(?!x)x", re.IGNORECASE)


# A sentence that denies, hedges, plans or asks does not claim that something happened.
NEGATION = words(
    latin=[
        # English
        "not", "no", "never", "failed", "fails?", "unable", "cannot", "could ?n[o']t",
        "did ?n[o']t", "was ?n[o']t", "were ?n[o']t", "is ?n[o']t", "remains?", "pending",
        "skipped", "refused", "error", "instead", "unverified", "would", "will", "should",
        "can", "could", "if", "tried", "try", "attempted", "may", "might", "whether", "\\w+n't",
        # German, French, Spanish
        "nicht", "kein\\w*", "nie", "fehlgeschlagen", "wird", "würde", "pas", "jamais",
        "échoué", "sera", "si", "nunca", "falló", "será",
    ],
    cjk=[
        "未", "没有", "没能", "没", "無法", "无法", "不能", "不會", "不会", "失败", "失敗",
        "尚未", "还没", "還沒", "并未", "並未", "跳过", "跳過", "拒绝", "拒絕", "如果", "若",
        "将会", "將會", "可以", "應該", "应该", "需要", "尝试", "嘗試", "不是", "是否",
        "吗", "嗎", "可能", "或许", "或許",
        "ない", "ません", "できな",  # Japanese
    ],
)  # fmt: skip

# Words that deny outright (a subset of NEGATION: no hedge, plan or promise). A sentence about
# a call the user did not approve must deny it: "I will clear the study" says it happens.
DENIAL = words(
    latin=[
        "not", "no", "never", "\\w+n't", "without", "declin\\w*", "refus\\w*", "unapproved",
        "nicht", "kein\\w*", "nie", "pas", "jamais", "nunca",
    ],
    cjk=["未", "没", "沒", "不", "拒绝", "拒絕", "无法", "無法", "ない", "ません"],
)  # fmt: skip

# Words that make a sentence a condition ("if you approve it, ..."): it says what would happen,
# not that it did or will.
CONDITION = words(
    latin=["if", "unless", "once you", "when you", "wenn", "falls", "si", "cuando"],
    cjk=["如果", "假如", "要是", "若", "的话", "的話", "一旦", "なら"],
)  # fmt: skip

# Words that say a step or a call happened (beside a step's or a tool's name).
SUCCESS = words(
    latin=[
        "success\\w*", "succeeded", "loaded", "completed", "done", "ran", "performed",
        "trained", "applied", "finished", "filtered", "band-?passed", "epoched", "evaluated",
        "created", "called", "executed", "cross-?validated", "computed",
        "erfolgreich", "abgeschlossen", "durchgeführt", "terminé", "effectué", "completado",
    ],
    cjk=[
        "已", "完成", "成功", "进行了", "進行了", "执行了", "執行了", "做了", "应用了",
        "應用了", "调用了", "調用了", "运行了", "運行了", "得到了", "完毕", "完畢", "好了",
        "しました", "完了",
    ],
)  # fmt: skip

# Words that judge results: a ranking, separability or significance.
VERDICT = words(
    latin=[
        "better", "worse", "outperform\\w*", "beats?", "superior", "inferior", "more accurate",
        "less accurate", "separable", "distinguishable", "significant\\w*", "above chance",
        "at chance", "best", "worst", "wins?", "winner", "outscor\\w*", "ahead of",
        "besser", "schlechter", "signifikant", "trennbar", "meilleur\\w*", "pire",
        "significati\\w*", "séparable", "mejor", "peor",
    ],
    cjk=[
        "优于", "優於", "好于", "好於", "更好", "更优", "更優", "更差", "不如", "胜过",
        "勝過", "强于", "強於", "弱于", "弱於", "显著", "顯著", "可分", "可区分", "可區分",
        "区分开", "區分開", "最好", "最佳", "最优", "最優", "领先", "領先", "较好", "較好",
        "较差", "較差", "より良い", "優れ", "有意",
    ],
)  # fmt: skip

# Words that compare quantities: a verdict only when they compare named results ("CSP's score
# is higher than MDM's"); beside a threshold ("above 80 µV", "超过阈值") they judge nothing.
COMPARISON = words(
    latin=["higher than", "lower than", "greater than", "less than", "exceeds?", "above", "below"],
    cjk=["高于", "高於", "低于", "低於", "超过", "超過", "高出", "多于", "少于"],
)  # fmt: skip

# Marks that end a sentence. A Latin full stop ends one only before a space or the end, so a
# decimal (0.812) stays whole; CJK marks end one wherever they stand.
SENTENCE_END = re.compile(r"(?<=[。！？；])|(?<=[.!?;])\s+|\n+")
