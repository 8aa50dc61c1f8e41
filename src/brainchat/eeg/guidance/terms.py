"""The field's words for each workflow step and for the choices a request names in words.

A researcher asks for "epoching" as 分段 or 切分试次, for a cross-session protocol as 跨会话 or
"across sessions". These lists are the terms of the field (English, simplified and traditional
Chinese), not phrasings of any one request. Two readers use them:
- the record's prompt shows a step's terms in the request's script beside its English line, so a
  model reading a Chinese request maps 分段 to `epoch`, not to `split`;
- worked-example retrieval (examples.py) adds one token per step or choice a text names, so a
  request and an example that name the same step or protocol meet, whatever other words they
  share ("机会水平" in both weighs less than "跨会话" in both).
CJK terms are matched as substrings, Latin ones as whole words (grounding.lexicon.words).
These are the words a request names a step with; vocabulary.py holds the words an answer claims
one was done with ("epoched", "已分段"), which must not read "20 epochs" as a claim.
"""

from __future__ import annotations

import re

from brainchat.grounding.lexicon import words

# step id -> (Latin terms, CJK terms); simplified Chinese first, the prompt shows the first few
STEP_TERMS: dict[str, tuple[list[str], list[str]]] = {
    "list": (["list", "which files", "what files"],
             ["列出", "哪些文件(?!格式)", "文件列表", "数据文件夹", "資料夾"]),
    "fetch": (["download", "fetch", "moabb", "openneuro"], ["下载", "下載"]),
    "load": (["loads?", "read in", "open"],
             ["加载", "载入", "读取", "导入", "載入", "讀取", "導入"]),
    "inspect": (["state", "status", "what is loaded"], ["状态", "概况", "进度", "狀態", "進度"]),
    "preprocess": (["band-?pass", "filter", "filtering", "high-?pass", "low-?pass", "notch",
                    "resample", "downsample", "re-?reference", "montage"],
                   ["滤波", "带通", "陷波", "工频", "降采样", "重采样", "参考", "濾波", "帶通",
                    "降採樣", "參考"]),
    "artifacts": (["artifacts?", "bad channels?", "bad segments?", "ica", "blinks?", "eog", "ecg"],
                  ["伪迹", "坏导", "坏段", "眼电", "心电", "独立成分", "偽跡", "壞導", "壞段",
                   "眼電"]),
    "epoch": (["epochs?", "epoching", "epoched", "trial windows?"],
              ["分段", "切段", "切分试次", "试次", "切分", "試次"]),
    "split": (["split", "train/test", "hold out", "held-out", "test set"],
              ["划分", "训练集", "测试集", "劃分", "訓練集", "測試集"]),
    "train": (["train", "training", "fit"], ["训练", "訓練"]),
    "evaluate": (["evaluate", "evaluation", "test accuracy"], ["评估", "测试准确率", "評估"]),
    "cross_validate": (["cross-?validat\\w*", "chance level", "p-?values?", "separable",
                        "generali[sz]\\w*", "decod\\w*"],
                       ["交叉验证", "机会水平", "泛化", "可分", "分开", "解码", "交叉驗證",
                        "機會水平", "分開", "解碼"]),
    "spectra": (["band power", "alpha power", "peak frequency", "power"],
                ["频段功率", "功率", "峰值频率", "頻段功率"]),
    "erp": (["erps?", "evoked", "difference waves?", "latency"],
            ["事件相关电位", "诱发", "差异波", "潜伏期", "事件相關電位", "誘發"]),
    "time_frequency": (["time-?frequency", "erd", "ers", "erd/ers", "morlet"],
                       ["时频", "去同步", "時頻"]),
    "statistics": (["cluster", "cluster-based", "cluster permutation"],
                   ["簇", "聚类", "聚類"]),
    "plot": (["plot", "figure", "draw", "topomap", "psd"],
             ["画", "图", "绘制", "可视化", "畫", "圖", "繪製"]),
    "export": (["export", "script", "report", "bids"], ["导出", "脚本", "报告", "導出", "報告"]),
    "clear": (["clear", "undo", "discard", "start over", "reset", "throw away", "wipe", "erase"],
              ["清空", "撤销", "重新开始", "重置", "撤銷"]),
}  # fmt: skip

# an argument's allowed values as requests name them (the cross-validation's protocols)
CHOICE_TERMS: dict[str, tuple[list[str], list[str]]] = {
    "within_session": (["within[- ](?:each |a |the )?(?:recording )?sessions?"],
                       ["会话内", "同一会话", "會話內"]),
    "cross_session": (["across sessions", "cross-?session", "between sessions",
                       "later sessions?", "other sessions?", "new sessions?"],
                      ["跨会话", "跨会話", "跨會話", "不同会话", "另一个会话", "新会话"]),
    "cross_subject": (["across subjects", "cross-?subject",
                       "new (?:subject|person|participant)s?", "unseen", "never seen",
                       "leave[- ]one[- ]subject[- ]out"],
                      ["跨被试", "留一被试", "新被试", "没见过", "未见过", "跨被試", "留一被試",
                       "沒見過"]),
}  # fmt: skip


# a question for the web, which no EEG step answers
WEB_TERMS = (["search", "look up", "literature", "sources?", "cite", "citations?", "papers?",
              "internet", "web", "online"],
             ["搜索", "搜一下", "查一下", "上网", "网上", "文献", "引用", "出处", "来源", "论文",
              "網上", "文獻", "出處", "來源", "論文"])  # fmt: skip


# the study itself (研究 is the app's word for it): a text that names it and no step asks what
# it holds; beside a step ("clear the study", "清空当前的研究") it is that step's object
STUDY_TERMS = (["my study", "the study"], ["研究"])
STUDY = words(*STUDY_TERMS)


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    table = {**STEP_TERMS, **CHOICE_TERMS, "web": WEB_TERMS}
    return [(name, words(latin, cjk)) for name, (latin, cjk) in table.items()]


PATTERNS = _patterns()


def cjk_terms(step: str) -> list[str]:
    """A step's CJK terms as the record's prompt shows them: the study's word first for
    `inspect`, whose step it names when alone."""
    cjk = [LOOK.sub("", t) for t in STEP_TERMS.get(step, ([], []))[1]]  # words, not patterns
    return STUDY_TERMS[1] + cjk if step == "inspect" else cjk


LOOK = re.compile(r"\(\?<?[!=][^)]*\)")


def named(text: str) -> list[str]:
    """The steps and choices `text` names by any of their terms; the study named alone is
    `inspect`."""
    found = [name for name, pattern in PATTERNS if pattern.search(text)]
    steps = [name for name in found if name in STEP_TERMS]
    return found + ["inspect"] if not steps and STUDY.search(text) else found


def choices(text: str) -> set[str]:
    """The allowed values (CHOICE_TERMS) `text` names, and "web" for a question for the web:
    what decides a call's tool or its arguments, whatever else a request says."""
    return {name for name in named(text) if name in CHOICE_TERMS or name == "web"}
