"""What a demo question asks for, read from its words in English and Chinese (简体 and 繁體).

The demo's models are scripted: they read the question's words, as a keyword bot does (a real
model reads its meaning). Each kind of request has its English words and its Chinese ones, so a
question in either language gets the same work; what none of them matches gets the plain "this
is a scripted demo, here is what it can do" reply, in the question's language.
"""

from __future__ import annotations

import re
from typing import Literal

from brainchat.grounding.lexicon import words

Intent = Literal["compare", "train", "result", "plot", "files", "search", "other"]

MODEL_NAMES = {  # train_model's names, as a user writes them
    "eegnet": "EEGNet",
    "shallowconvnet": "ShallowConvNet",
    "sccnet": "SCCNet",
    "csp_lda": "CSP+LDA",
}
# the decoders train_model knows, by the words that name them (first match wins)
MODELS = (
    ("csp_lda", re.compile(r"(?<![a-z])(?:csp|lda)(?![a-z])", re.I)),
    ("shallowconvnet", re.compile(r"shallow\s*(?:conv\s*net)?", re.I)),
    ("sccnet", re.compile(r"sccnet", re.I)),
    ("eegnet", re.compile(r"eeg\s?net", re.I)),
)
# "what is EEGNet?" asks the literature about a model; "train / use EEGNet" asks for work
_DEFINE = words(
    ["what (?:is|are|does)", "what's", "explain\\w*", "how does"],
    ["什么是", "什麼是", "是什么", "是什麼", "介绍", "介紹", "原理"],
)
_COMPARE = words(
    ["compar\\w*", "vs\\.?", "versus", "better", "best", "side by side", "which (?:one|model)"],
    ["比较", "比較", "对比", "對比", "哪个好", "哪個好", "哪个更", "哪個更"],
)
_TRAIN = words(
    ["train\\w*", "retrain\\w*", "fit\\w*", "decod\\w*", "classif\\w*", "pipeline",
     "do the same", "same with", "again"],
    ["训练", "訓練", "解码", "解碼", "分类", "分類", "再做", "再来", "再來", "同样", "同樣", "换成",
     "換成", "重新"],
)  # fmt: skip
_RESULT = words(
    ["accura\\w*", "scores?", "results?", "kappa", "performance", "evaluat\\w*", "overfit\\w*",
     "leak\\w*", "so (?:high|low|good)"],
    ["准确率", "準確率", "正确率", "正確率", "结果", "結果", "分数", "分數", "得分", "表现", "表現",
     "过拟合", "過擬合", "泄漏", "洩漏", "这么高", "這麼高"],
)  # fmt: skip
_PLOT = words(
    ["plot\\w*", "draw\\w*", "psd", "spectr\\w*", "power spectr\\w*", "topomap"],
    ["画", "畫", "绘制", "繪製", "功率谱", "功率譜", "频谱", "頻譜", "谱图", "譜圖"],
)
_FILES = words(
    ["files?", "recordings?", "data ?sets?", "demo set", "subjects?", "sessions?", "channels?",
     "load\\w*", "what(?: is|'s) in"],
    ["文件", "檔案", "数据", "數據", "资料", "資料", "被试", "被試", "通道", "加载", "載入", "读取",
     "讀取", "里面有什么", "裡面有什麼"],
)  # fmt: skip
_SEARCH = words(
    ["search\\w*", "cite\\w*", "citations?", "sources?", "papers?", "literature", "stud(?:y|ies)",
     "references?", "what (?:is|are|does)", "why", "how (?:does|do|is)", "explain\\w*", "erd",
     "ers", "desynchroni[sz]\\w*", "rhythms?", "motor imagery", "mu", "beta", "alpha", "bci"],
    ["文献", "文獻", "论文", "論文", "出处", "出處", "为什么", "為什麼", "什么是", "什麼是", "运动想象",
     "運動想像", "運動想象", "去同步", "节律", "節律", "脑机接口", "腦機接口"],
)  # fmt: skip
EEG_WORDS = words(
    ["eeg", "brain\\w*", "motor", "imagery", "mu", "beta", "alpha", "erd", "cortex", "neuro\\w*"],
    ["脑电", "腦電", "大脑", "大腦", "运动想象", "運動想像", "皮层", "皮層", "神经", "神經"],
)
# a split the question names: "split by session", "按会话划分", "across sessions"
_BY = (
    ("session", words(["by session", "across sessions?", "per session", "session-wise"],
                      ["按会话", "按會話", "跨会话", "跨會話", "按场次", "按場次"])),
    ("subject", words(["by subject", "across subjects?", "per subject", "subject-wise"],
                      ["按被试", "按被試", "跨被试", "跨被試"])),
)  # fmt: skip


def models_named(question: str) -> list[str]:
    """The decoders the question names, in train_model's names, in the order named."""
    found = [(m.start(), name) for name, pattern in MODELS if (m := pattern.search(question))]
    return [name for _, name in sorted(found)]


def split_named(question: str) -> str | None:
    """The split the question asks for ("session", "subject"), None when it names none."""
    return next((by for by, pattern in _BY if pattern.search(question)), None)


def intent(question: str) -> Intent:
    """What the question asks for. A comparison first; then work (training, a named model or
    split); then a question about a result; a plot; the files; the literature."""
    named = models_named(question)
    if named and _DEFINE.search(question) and not _TRAIN.search(question):
        return "search"  # "what is EEGNet?": read about it, do not train it
    if _COMPARE.search(question):
        return "compare"
    if _TRAIN.search(question) or named or split_named(question):
        return "train"
    for kind, pattern in (
        ("result", _RESULT),
        ("plot", _PLOT),
        ("files", _FILES),
        ("search", _SEARCH),
    ):
        if pattern.search(question):
            return kind  # type: ignore[return-value]
    return "other"


# characters only Traditional Chinese writes (a few common ones): a question with them is
# answered in 繁體中文, other Han text in 简体中文
_TRADITIONAL = re.compile("[麼這們為訓練據檔圖畫請與個說會經確較對關麼裡實讀載與]")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def language(question: str) -> str:
    """The question's language as i18n names it: zh-TW, zh-CN or en."""
    if not _HAN.search(question):
        return "en"
    return "zh-TW" if _TRADITIONAL.search(question) else "zh-CN"
