"""EEG's words for the answer check, in English and Chinese (simplified and traditional).

The steps an answer can claim as done (with the tools that do them and how the study's summary
shows an earlier turn's), the quantities EEG counts (so "22 events" is not grounded by "22 ch"),
the pipelines and models a verdict can name, and the words that point at the user's own data.
cross_validate splits, trains and tests on each fold itself: it does those steps too.
"""

from __future__ import annotations

import re

from brainchat.eeg.core.analyses import ANALYSES
from brainchat.grounding import StepWords, Vocabulary
from brainchat.grounding.lexicon import words


def _step(
    name: str,
    latin: list[str],
    cjk: list[str],
    tools: tuple[str, ...],
    shown: str,
    done: tuple[str, ...] | list[str] = (),
) -> StepWords:
    said, seen = words(latin, cjk), re.compile(shown, re.IGNORECASE)
    return StepWords(name, said, tools, seen, words(done) if done else None)


STEP_WORDS = (
    _step("loading", ["loaded", "loading", "load"], ["加载", "載入", "载入", "读取", "讀取", "导入", "導入"],
          ("load_data",), r"stage=(?!empty)"),
    _step("filtering", ["band-?pass\\w*", "filter(?!-?\\s?bank)\\w*", "notch\\w*", "high-?pass\\w*",
                        "low-?pass\\w*"],
          ["滤波(?!器组)", "濾波(?!器組)", "带通", "帶通", "陷波", "高通", "低通"],
          ("bandpass_filter", "notch_filter"), r"band-?pass|high-pass|low-pass|notch",
          ["band-?passed", "high-?passed", "low-?passed", "notch-?filtered", "filtered"]),
    _step("re-referencing", ["re-?referenc\\w*", "average reference"], ["重参考", "重參考", "平均参考", "平均參考"],
          ("set_reference",), r"reference", ["re-?referenced"]),
    _step("resampling", ["resampl\\w*", "downsampl\\w*"], ["重采样", "重採樣", "降采样", "降採樣"],
          ("resample_data",), r"resample", ["resampled", "downsampled"]),
    _step("ICA", ["ica"], ["独立成分", "獨立成分"], ("ica_fit", "ica_apply"), r"\bICA\b"),
    _step("epoching", ["epoched", "epoching", "epochs? (?:were|was) (?:created|made|extracted|cut)"],
          ["分段", "切段", "切分成", "分割成"], ("epoch_data",), r"\bepochs:", ["epoched"]),
    _step("splitting", ["split", "splitting", "train/test"], ["划分", "劃分", "拆分"],
          ("split_dataset", "cross_validate"), r"split by|cross-validated:",
          ["(?:was|were|been) split"]),
    _step("training", ["trained", "training", "train"], ["训练", "訓練"],
          ("train_model", "cross_validate"), r"models:|cross-validated:"),
    _step("evaluation", ["evaluated", "evaluation", "tested"], ["评估", "評估"],
          ("evaluate_model", "cross_validate"), r"test acc|cross-validated:"),
    _step("cross-validation", ["cross-?validat\\w*"], ["交叉验证", "交叉驗證"],
          ("cross_validate",), r"cross-validated:"),
    # a clearing shows in no summary: the study it leaves is an empty one
    _step("clearing", ["clear(?:ed|ing)?", "discard(?:ed|ing)?", "wip(?:e|ed|ing)", "reset",
                       "start(?:ed|ing)? over", "throw\\w* away"],
          ["清空", "重置", "撤销", "撤銷"], ("clear_study", "reset_preprocessing"), r"(?!x)x"),
    # the analyses (eeg/core/analyses.py); the study's summary names those done in earlier turns
    _step("band power", ["band[- ]power", "(?:alpha|beta|theta|mu) power", "relative power",
                         "peak (?:alpha )?frequency"],
          ["频段功率", "頻段功率", "频带功率", "頻帶功率", "波段功率", "峰值频率", "峰值頻率"],
          ("band_power",), r"analyses done:[^\n]*band power"),
    _step("ERP", ["erps?", "event-related potentials?", "difference waves?"],
          ["事件相关电位", "事件相關電位", "诱发电位", "誘發電位", "差异波", "差異波"],
          ("erp_analysis",), r"analyses done:[^\n]*\bERP"),
    _step("time-frequency", ["time-?frequency", "erd/ers", "morlet"],
          ["时频", "時頻", "事件相关去同步", "事件相關去同步"],
          ("time_frequency",), r"analyses done:[^\n]*time-frequency"),
    _step("cluster test", ["cluster[- ]based", "cluster[- ]permutation", "permutation cluster"],
          ["聚类置换", "聚類置換", "簇置换", "簇置換", "基于簇", "基於簇", "聚类检验", "聚類檢驗"],
          ("cluster_test",), r"analyses done:[^\n]*cluster test"),
    _step("artifact detection", ["bad channels? (?:were|was) (?:found|detected)",
                                 "bad segments? (?:were|was) (?:found|detected)"],
          ["检测到坏", "檢測到壞", "发现坏", "發現壞"],
          ("find_artifacts", "ica_find_artifacts"), r"analyses done:[^\n]*artifact scan"),
)  # fmt: skip

UNITS = {
    "channels": words(
        ["ch", "channels?", "electrodes?", "sensors?", "kanäle", "canaux"],
        ["通道", "導聯", "导联", "电极", "電極"],
    ),  # fmt: skip
    "events": words(
        ["events?", "trials?", "epochs?", "markers?", "cues?", "ereignisse", "essais"],
        ["事件", "试次", "試次", "试验", "試驗", "trials?", "epochs?"],
    ),  # fmt: skip
    "files": words(["files?", "recordings?", "dateien"], ["文件", "檔案", "记录", "記錄"]),
    "subjects": words(
        ["subjects?", "participants?", "people", "persons", "probanden"],
        ["被试", "被試", "受试者", "受試者", "参与者", "參與者"],
    ),  # fmt: skip
    "sessions": words(["sessions?", "sitzungen"], ["会话", "會話", "场次", "場次"]),
    "samples": words(["samples?", "time points"], ["采样点", "採樣點", "样本点", "樣本點"]),
    "folds": words(["folds?"], ["折"]),
    "permutations": words(["perms?", "permutations?"], ["置换", "置換", "排列"]),
    "components": words(["components?"], ["成分", "分量"]),
}

ENTITIES = {
    "csp_lda": re.compile(
        r"(?<![a-z])csp(?![a-z])(?:\s*(?:\+|/|_|-|and|with|和|与|與)?\s*lda)?", re.I
    ),  # fmt: skip
    "ts_lr": re.compile(
        r"tangent[- ]?space|(?<![a-z])ts\s*[_+/-]?\s*lr(?![a-z])|切空间|切空間|切线空间|切線空間",
        re.I,
    ),  # fmt: skip
    "mdm": re.compile(
        r"(?<![a-z])mdm(?![a-z])|minimum distance to (?:the )?(?:riemannian )?mean|最小距离|最小距離",
        re.I,
    ),  # fmt: skip
    "fbcsp": re.compile(r"fbcsp|filter[- ]?bank|滤波器组|濾波器組", re.I),
    "eegnet": re.compile(r"eeg\s?net", re.I),
    "shallowconvnet": re.compile(r"shallow\s*conv\s*net", re.I),
    "sccnet": re.compile(r"sccnet", re.I),
}

DATA_REFS = re.compile(
    r"(?<![a-z])(?:sub(?:ject)?[- ]?\d+|ses(?:sion)?[- ]?\d+|your (?:data|recordings?|files?|"
    r"subjects?|eeg)|this data|these data|the data set)|被试\s*\d+|被試\s*\d+|受试者\s*\d+|"
    r"受試者\s*\d+|你的数据|您的数据|你的數據|您的數據|这些数据|這些數據|该数据|該數據",
    re.I,
)

VOCABULARY = Vocabulary(
    steps=STEP_WORDS,
    units=UNITS,
    entities=ENTITIES,
    result_tools=frozenset(
        {"evaluate_model", "cross_validate", "train_model", *(a.tool for a in ANALYSES.values())}
    ),
    data_refs=DATA_REFS,
)
